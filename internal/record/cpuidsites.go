package record

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// cpuidSlot is the space each cpuid trampoline takes in the page.
const cpuidSlot = 32

// plantCpuidTrampolines answers, without a stop, the cpuids of a fresh
// address space whose inputs are constants (patch.CpuidSite: most of the
// ~50 that ld.so runs in every process, each otherwise an int3 trap on a
// CPU without cpuid faulting). It maps one page just below the mapped file
// holding most such sites (ld.so), writes there a trampoline per site that loads the
// answer the recorder would have emulated (emulatedCpuid), and replaces
// each site's `mov $leaf, %eax` with a jump to its trampoline. Called at
// exec before the snapshot, so the page and the jumps are part of it and
// replay runs the same code (no event is recorded). Only a recorder bound
// to one CPU does this: its answers are then constant per leaf and
// subleaf. It returns the maps as they are after it.
func (r *recorder) plantCpuidTrampolines(t *task, maps []tracee.Map) ([]tracee.Map, error) {
	if r.opts.BindCPU < 0 {
		return maps, nil
	}
	type plan struct {
		at uint64 // the mov, mapped
		s  *patch.CpuidSite
	}
	var plans []plan
	count := map[uint64]int{}     // plans by inode
	lowest := map[uint64]uint64{} // lowest mapping of each inode
	for _, m := range maps {
		if m.Prot&unix.PROT_EXEC == 0 || m.Inode == 0 || !strings.HasPrefix(m.Name, "/") {
			continue
		}
		rel, _, err := r.capture(t, m)
		if err != nil {
			return nil, err
		}
		sites, int3s := r.cpuidSites(rel)
		for i := range sites {
			s := &sites[i]
			if s.Off < m.Offset || s.Off+s.Len() > m.Offset+m.Size() || !int3s[s.Off+s.Len()-2] {
				continue
			}
			plans = append(plans, plan{at: m.Start + s.Off - m.Offset, s: s})
			count[m.Inode]++
		}
		if l, ok := lowest[m.Inode]; !ok || m.Start < l {
			lowest[m.Inode] = m.Start
		}
	}
	// Just below the file with the most sites (ld.so), where the kernel
	// puts it if that is free (above an executable lies its brk area);
	// the sites out of a rel32's reach of where it lands keep their
	// int3.
	var hint uint64
	best := 0
	for ino, n := range count {
		if n > best || n == best && lowest[ino]-pageSize > hint {
			best, hint = n, lowest[ino]-pageSize
		}
	}
	if len(plans) == 0 {
		return maps, nil
	}
	plans = plans[:min(len(plans), pageSize/cpuidSlot)]
	base, _, err := tracee.Inject(t.tid, t.sc, unix.SYS_MMAP, hint, pageSize, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
	if err != nil {
		return nil, fmt.Errorf("map the cpuid trampolines: %w", err)
	}
	if base < 0 && base > -4096 {
		r.logf("tid %d: no cpuid trampolines: mmap: %d", t.tid, base)
		return maps, nil
	}
	page := make([]byte, 0, pageSize)
	var jumps []plan
	for _, p := range plans {
		tr := uint64(base) + uint64(len(page))
		if !patch.InRel32(p.at, tr) || !patch.InRel32(tr+uint64(len(p.s.Mid))+20, p.at+p.s.Len()) {
			continue
		}
		// The site must still read as the file has it (nothing else
		// rewrote it).
		var code [5]byte
		if t.mem.ReadMem(p.at, code[:]) != nil || code[0] != 0xb8 || uint32(code[1])|uint32(code[2])<<8|uint32(code[3])<<16|uint32(code[4])<<24 != p.s.Leaf {
			continue
		}
		a, b, c, d := r.emulatedCpuid(p.s.Leaf, p.s.Sub)
		page = append(page, patch.CpuidTrampoline(tr, p.at, p.s, a, b, c, d)...)
		for len(page)%cpuidSlot != 0 {
			page = append(page, 0xcc)
		}
		jumps = append(jumps, plan{at: p.at, s: &patch.CpuidSite{Off: tr}})
	}
	if len(jumps) > 0 {
		if err := t.mem.WriteMem(uint64(base), page); err != nil {
			return nil, fmt.Errorf("write the cpuid trampolines: %w", err)
		}
		for _, j := range jumps {
			if err := t.mem.WriteMem(j.at, patch.CpuidJump(j.at, j.s.Off)); err != nil {
				return nil, fmt.Errorf("redirect the cpuid at 0x%x: %w", j.at, err)
			}
		}
	}
	r.logf("tid %d: %d cpuid trampolines at 0x%x", t.tid, len(jumps), base)
	return tracee.Maps(t.tid)
}

// cpuidSites returns the constant cpuid sites of the captured file rel
// and the offsets of its int3 sites (found once per recording, and kept
// in the site cache between recordings).
func (r *recorder) cpuidSites(rel string) ([]patch.CpuidSite, map[uint64]bool) {
	if c, ok := r.cpuidFiles[rel]; ok {
		return c.sites, c.int3s
	}
	defer r.since(phScan, time.Now())
	var digest string
	if d, ok := r.w.FileDigest(rel); ok {
		digest = d.SHA256
	}
	path := r.w.Dir() + "/" + rel
	sites, _ := patch.CachedScan(path, "cpuid", digest, r.opts.SiteCache, patch.ScanCpuid) // not an ELF file: none
	int3s := map[uint64]bool{}
	if len(sites) > 0 {
		all, _ := r.int3Sites(rel, path)
		for _, s := range all {
			if s.Kind == patch.Cpuid {
				int3s[s.Off] = true
			}
		}
	}
	sites = slices.Clip(sites)
	r.cpuidFiles[rel] = cpuidFile{sites: sites, int3s: int3s}
	return sites, int3s
}

// cpuidFile is what cpuidSites found in one captured file.
type cpuidFile struct {
	sites []patch.CpuidSite
	int3s map[uint64]bool
}
