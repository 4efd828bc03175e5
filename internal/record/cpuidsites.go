package record

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// cpuidSlot is the space each cpuid trampoline takes in the page.
const cpuidSlot = 32

// plantCpuidTrampolines answers, without a stop, the cpuids of a fresh
// address space whose inputs are constants (patch.CpuidSite: most of the
// ~50 that ld.so runs in every process, each otherwise an int3 trap on a
// CPU without cpuid faulting). For the mapped file holding most such
// sites (ld.so) it writes a trampoline per site that loads the answer the
// recorder would have emulated (emulatedCpuid), into the padding after
// the file's code in its last page (patch.CodePadding) or, when they do
// not fit there, into a page it maps just below the file; and it replaces
// each site's `mov $leaf, %eax` with a jump to its trampoline. Called at
// exec before the snapshot, so the trampolines and the jumps are part of
// it and replay runs the same code (no event is recorded). Only a
// recorder bound to one CPU does this: its answers are then constant per
// leaf and subleaf. It returns the maps as they are after it.
func (r *recorder) plantCpuidTrampolines(t *task, maps []tracee.Map) ([]tracee.Map, error) {
	if r.opts.BindCPU < 0 {
		return maps, nil
	}
	type plan struct {
		at uint64 // the mov, mapped
		s  *patch.CpuidSite
		f  fileID
	}
	var plans []plan
	count := map[fileID]int{}     // plans by file
	lowest := map[fileID]uint64{} // lowest mapping of each file
	pads := map[fileID]tracee.Range{}
	for _, m := range maps {
		if m.Prot&unix.PROT_EXEC == 0 || m.Inode == 0 || !strings.HasPrefix(m.Name, "/") {
			continue
		}
		rel, _, err := r.capture(t, m)
		if err != nil {
			return nil, err
		}
		f := fileID{m.Dev, m.Inode}
		sites, int3s := r.cpuidSites(rel)
		if c := r.cpuidFiles[rel]; c.padN > 0 && c.padOff >= m.Offset && c.padOff+c.padN <= m.Offset+m.Size() {
			pads[f] = tracee.Range{Start: m.Start + c.padOff - m.Offset, End: m.Start + c.padOff - m.Offset + c.padN}
		}
		for i := range sites {
			s := &sites[i]
			if s.Off < m.Offset || s.Off+s.Len() > m.Offset+m.Size() || !int3s[s.Off+s.Len()-2] {
				continue
			}
			plans = append(plans, plan{at: m.Start + s.Off - m.Offset, s: s, f: f})
			count[f]++
		}
		if l, ok := lowest[f]; !ok || m.Start < l {
			lowest[f] = m.Start
		}
	}
	// Just below the file with the most sites (ld.so), where the kernel
	// puts it if that is free (above an executable lies its brk area);
	// the sites of other files, and those out of a rel32's reach of where
	// it lands, keep their int3.
	var hint uint64
	var file fileID
	best := 0
	for f, n := range count {
		if n > best || n == best && lowest[f]-pageSize > hint {
			best, hint, file = n, lowest[f]-pageSize, f
		}
	}
	plans = slices.DeleteFunc(plans, func(p plan) bool { return p.f != file })
	if len(plans) == 0 || plans[len(plans)-1].at-plans[0].at > 64<<20 {
		return maps, nil
	}
	plans = plans[:min(len(plans), pageSize/cpuidSlot)]
	// The trampolines go into the padding after the file's code in its
	// last page when they fit there and it reads as zeros (ld.so's has
	// 3.8 KB): no system call, no new mapping. Else into a page mapped
	// for them.
	var base int64
	mapped := false
	if pad, ok := pads[file]; ok && pad.End-pad.Start >= uint64(len(plans))*cpuidSlot {
		b := make([]byte, uint64(len(plans))*cpuidSlot)
		if t.mem.ReadMem(pad.Start, b) == nil && !slices.ContainsFunc(b, func(c byte) bool { return c != 0 }) {
			base = int64(pad.Start)
		}
	}
	if base == 0 {
		ret, _, err := tracee.Inject(t.tid, t.sc, unix.SYS_MMAP, hint, pageSize, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
		if err != nil {
			return nil, fmt.Errorf("map the cpuid trampolines: %w", err)
		}
		if ret < 0 && ret > -4096 {
			r.logf("tid %d: no cpuid trampolines: mmap: %d", t.tid, ret)
			return maps, nil
		}
		base, mapped = ret, true
	}
	// The sites must still read as the file has them (nothing else
	// rewrote them): read in one go.
	slices.SortFunc(plans, func(a, b plan) int { return cmp.Compare(a.at, b.at) })
	code := make([]byte, plans[len(plans)-1].at+5-plans[0].at)
	if n := t.mem.ReadPartial(plans[0].at, code); n < len(code) {
		code = code[:n]
	}
	page := make([]byte, 0, pageSize)
	var writes []trace.MemWrite
	for _, p := range plans {
		tr := uint64(base) + uint64(len(page))
		if !patch.InRel32(p.at, tr) || !patch.InRel32(tr+uint64(len(p.s.Mid))+20, p.at+p.s.Len()) {
			continue
		}
		o := p.at - plans[0].at
		if o+5 > uint64(len(code)) || code[o] != 0xb8 || binary.LittleEndian.Uint32(code[o+1:]) != p.s.Leaf {
			continue
		}
		a, b, c, d := r.emulatedCpuid(p.s.Leaf, p.s.Sub)
		page = append(page, patch.CpuidTrampoline(tr, p.at, p.s, a, b, c, d)...)
		for len(page)%cpuidSlot != 0 {
			page = append(page, 0xcc)
		}
		writes = append(writes, trace.MemWrite{Addr: p.at, Data: patch.CpuidJump(p.at, tr)})
	}
	if len(writes) > 0 {
		if err := t.mem.WriteMem(uint64(base), page); err != nil {
			return nil, fmt.Errorf("write the cpuid trampolines: %w", err)
		}
		if err := t.mem.WriteCode(writes); err != nil {
			return nil, fmt.Errorf("redirect the cpuids: %w", err)
		}
	}
	r.logf("tid %d: %d cpuid trampolines at 0x%x", t.tid, len(writes), base)
	if !mapped {
		return maps, nil
	}
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
	c := cpuidFile{sites: sites, int3s: int3s}
	if len(sites) > 0 {
		if f, err := osfile.Open(path, os.O_RDONLY, 0); err == nil {
			c.padOff, c.padN = patch.CodePadding(f)
			f.Close()
		}
	}
	r.cpuidFiles[rel] = c
	return sites, int3s
}

// fileID is a mapped file's device and inode (as /proc/PID/maps has them).
type fileID struct {
	dev string
	ino uint64
}

// cpuidFile is what cpuidSites found in one captured file.
type cpuidFile struct {
	sites []patch.CpuidSite
	int3s map[uint64]bool
	// padOff and padN are the file range after its code where
	// trampolines may go (patch.CodePadding).
	padOff, padN uint64
}
