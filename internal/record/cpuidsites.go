package record

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// cpuidSlot is the space each cpuid trampoline takes in the page.
const cpuidSlot = 32

// plantCpuidTrampolines answers, without a stop, most of the cpuids of
// a fresh address space. For the mapped file holding most cpuid sites
// (ld.so) it writes trampolines into the padding after the file's code in
// its last page (patch.CodePadding) or, when they do not fit there, into
// a page it maps just below the file:
//   - for a cpuid whose inputs are constants (patch.CpuidSite: most of
//     the ~50 that ld.so runs in every process), one that loads the answer
//     the recorder would have emulated (emulatedCpuid); the site's `mov
//     $leaf, %eax` becomes a jump to it;
//   - for one whose inputs come from registers (patch.CpuidRegSite:
//     ld.so's loops over subleaves), one that runs the instructions the
//     jump displaces and looks the answer up in a table of the recorder's
//     answers (patch.CpuidLookup: the leaves and subleaves ld.so is known
//     to ask, and every pair this recording has emulated so far); a miss
//     goes on to the cpuid, which keeps its int3 and is emulated;
//   - with the syscall buffer, for an rdtsc followed by instructions a
//     jump can displace (patch.RdtscSite: ld.so times its start-up with
//     eight), one that reads the counter through the stub (a buffered
//     call, syscallbuf.RdtscNr) and runs the displaced instructions.
//
// Called at exec before the snapshot, so the trampolines, the table and
// the jumps are part of it and replay runs the same code (no event is
// recorded). Only a recorder bound to one CPU plants cpuid trampolines:
// its answers are then constant per leaf and subleaf. It returns the
// maps as they are after it, and the addresses of the rdtscs it
// redirected (whose jumps patchSites must not overwrite with int3s).
func (r *recorder) plantCpuidTrampolines(t *task, maps []tracee.Map) ([]tracee.Map, map[uint64]bool, error) {
	// A process running a seccomp filter of its own makes no call of
	// gorr's number (its filter would judge it).
	withTSC := t.buf != nil && t.buf.mapped && !t.ownFilter
	if r.opts.BindCPU < 0 && !withTSC {
		return maps, nil, nil
	}
	defer r.since(phCpuid, time.Now())
	type plan struct {
		at  uint64 // the mov, the first displaced instruction or the rdtsc, mapped
		s   *patch.CpuidSite
		reg *patch.CpuidRegSite
		tsc *patch.RdtscSite
		f   fileID
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
			return nil, nil, err
		}
		f := fileID{m.Dev, m.Inode}
		c := r.cpuidSites(rel)
		if c.padN > 0 && c.padOff >= m.Offset && c.padOff+c.padN <= m.Offset+m.Size() {
			pads[f] = tracee.Range{Start: m.Start + c.padOff - m.Offset, End: m.Start + c.padOff - m.Offset + c.padN}
		}
		inMap := func(off, n uint64) bool { return off >= m.Offset && off+n <= m.Offset+m.Size() }
		var taken []tracee.Range // file ranges the constant sites rewrite
		for i := range c.tscs {
			s := &c.tscs[i]
			if !withTSC || !inMap(s.Off, s.Len()) || !c.tscInt3s[s.Off] {
				continue
			}
			plans = append(plans, plan{at: m.Start + s.Off - m.Offset, tsc: s, f: f})
			count[f]++
		}
		for i := range c.sites {
			if r.opts.BindCPU < 0 {
				break
			}
			s := &c.sites[i]
			if !inMap(s.Off, s.Len()) || !c.int3s[s.Off+s.Len()-2] {
				continue
			}
			plans = append(plans, plan{at: m.Start + s.Off - m.Offset, s: s, f: f})
			taken = append(taken, tracee.Range{Start: s.Off, End: s.Off + 5})
			count[f]++
		}
		for i := range c.regs {
			if r.opts.BindCPU < 0 {
				break
			}
			s := &c.regs[i]
			if !inMap(s.Off, s.Cpuid()+2-s.Off) || !c.int3s[s.Cpuid()] || slices.ContainsFunc(taken, func(x tracee.Range) bool { return x.Start < s.Cpuid() && s.Off < x.End }) {
				continue
			}
			plans = append(plans, plan{at: m.Start + s.Off - m.Offset, reg: s, f: f})
			count[f]++
		}
		if l, ok := lowest[f]; !ok || m.Start < l {
			lowest[f] = m.Start
		}
	}
	// The file with the most sites (ld.so); the sites of other files,
	// and those out of a rel32's reach of where the trampolines land,
	// keep their int3.
	var file fileID
	best := 0
	for f, n := range count {
		if n > best || n == best && lowest[f] > lowest[file] {
			best, file = n, f
		}
	}
	plans = slices.DeleteFunc(plans, func(p plan) bool { return p.f != file })
	if len(plans) == 0 {
		return maps, nil, nil
	}
	slices.SortFunc(plans, func(a, b plan) int { return cmp.Compare(a.at, b.at) })
	// An rdtsc whose displaced instructions run into a cpuid site (or
	// whose own rdtsc another site displaces) keeps its int3.
	for i := 0; i+1 < len(plans); {
		if plans[i+1].at < plans[i].at+cpuidSiteLen(plans[i].s, plans[i].reg, plans[i].tsc) {
			switch {
			case plans[i].tsc != nil:
				plans = slices.Delete(plans, i, i+1)
				continue
			case plans[i+1].tsc != nil:
				plans = slices.Delete(plans, i+1, i+2)
				continue
			}
		}
		i++
	}
	if plans[len(plans)-1].at-plans[0].at > 64<<20 {
		return maps, nil, nil
	}
	// The space they take: the lookup routine and its table first (the
	// trampolines call it), then the trampolines, each 16-byte aligned.
	// The rdtsc trampolines count with the looked-up ones (regSize): they
	// go where those go, or nowhere. Their slot (the stub's rdtsc entry)
	// follows the table.
	align := func(n uint64) uint64 { return (n + 15) &^ 15 }
	var table []byte
	var constSize, regSize uint64
	regs, tscs := false, false
	for _, p := range plans {
		switch {
		case p.reg != nil:
			regSize += align(p.reg.TrampolineLen())
			regs = true
		case p.tsc != nil:
			regSize += align(p.tsc.TrampolineLen())
			tscs = true
		default:
			constSize += cpuidSlot
		}
	}
	if regSize > 0 {
		if regs {
			table = r.cpuidLookupCode()
		}
		if tscs {
			table = binary.LittleEndian.AppendUint64(append(table, make([]byte, (8-len(table)%8)%8)...), syscallbuf.RdtscEntry)
		}
		regSize += align(uint64(len(table)))
	}
	// The trampolines go into the padding after the file's code in its
	// last page when they fit there and it reads as zeros (ld.so's has
	// 3.8 KB): no system call, no new mapping; the looked-up ones only
	// then. Else the constant ones (and the others if they fit too) go
	// into a page mapped for them, just below the file, where the
	// kernel puts it if that is free (above an executable lies its brk
	// area).
	var base int64
	mapped := false
	if pad, ok := pads[file]; ok {
		for _, need := range []uint64{constSize + regSize, constSize} {
			if need > 0 && pad.End-pad.Start >= need {
				b := make([]byte, need)
				if t.mem.ReadMem(pad.Start, b) == nil && !slices.ContainsFunc(b, func(c byte) bool { return c != 0 }) {
					base = int64(pad.Start)
					if need == constSize {
						regSize = 0
					}
				}
				break
			}
		}
	}
	if base == 0 && constSize+regSize > pageSize {
		regSize = 0
	}
	if regSize == 0 {
		table = nil
		plans = slices.DeleteFunc(plans, func(p plan) bool { return p.reg != nil || p.tsc != nil })
		if base == 0 {
			plans = plans[:min(len(plans), pageSize/cpuidSlot)]
		}
	}
	if len(plans) == 0 {
		return maps, nil, nil
	}
	if base == 0 {
		ret, _, err := tracee.Inject(t.tid, t.sc, unix.SYS_MMAP, lowest[file]-pageSize, pageSize, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
		if err != nil {
			return nil, nil, fmt.Errorf("map the cpuid trampolines: %w", err)
		}
		if ret < 0 && ret > -4096 {
			r.logf("tid %d: no cpuid trampolines: mmap: %d", t.tid, ret)
			return maps, nil, nil
		}
		base, mapped = ret, true
	}
	// The sites must still read as the file has them (nothing else
	// rewrote them): read in one go.
	last := plans[len(plans)-1]
	code := make([]byte, last.at+cpuidSiteLen(last.s, last.reg, last.tsc)-plans[0].at)
	if n := t.mem.ReadPartial(plans[0].at, code); n < len(code) {
		code = code[:n]
	}
	// The lookup routine and its table come first (the trampolines
	// call it), the trampolines after.
	page := table
	lookup := uint64(base)
	slot := uint64(base) + uint64(len(table)) - 8 // with rdtsc trampolines
	var writes []trace.MemWrite
	nconst, nreg, ntsc := 0, 0, 0
	redirected := map[uint64]bool{}
	for _, p := range plans {
		for len(page)%16 != 0 {
			page = append(page, 0xcc)
		}
		tr := uint64(base) + uint64(len(page))
		o := p.at - plans[0].at
		n := cpuidSiteLen(p.s, p.reg, p.tsc)
		if o+n > uint64(len(code)) || !patch.InRel32(p.at, tr) {
			continue
		}
		tc, jump, ok := r.trampoline(p.s, p.reg, p.tsc, p.at, tr, code[o:o+n], lookup, slot)
		if !ok {
			continue
		}
		page = append(page, tc...)
		writes = append(writes, trace.MemWrite{Addr: p.at, Data: jump})
		switch {
		case p.tsc != nil:
			redirected[p.at] = true
			ntsc++
		case p.reg != nil:
			nreg++
		default:
			nconst++
		}
	}
	if len(writes) > 0 {
		if err := t.mem.WriteMem(uint64(base), page); err != nil {
			return nil, nil, fmt.Errorf("write the cpuid trampolines: %w", err)
		}
		if err := t.mem.WriteCode(writes); err != nil {
			return nil, nil, fmt.Errorf("redirect the cpuids: %w", err)
		}
	}
	r.logf("tid %d: %d constant and %d looked-up cpuid trampolines, %d rdtsc trampolines at 0x%x", t.tid, nconst, nreg, ntsc, base)
	if !mapped {
		return maps, redirected, nil
	}
	maps, err := tracee.Maps(t.tid)
	return maps, redirected, err
}

// trampoline returns the trampoline at tr for the site at at (one of
// s, reg and tsc) and the jump that replaces the site's bytes, which read
// code; ok is false when they are not the file's any more or the
// trampoline does not reach. Looked-up cpuid trampolines call the lookup
// routine at lookup, rdtsc ones the stub through the slot at slot.
func (r *recorder) trampoline(s *patch.CpuidSite, reg *patch.CpuidRegSite, tsc *patch.RdtscSite, at, tr uint64, code []byte, lookup, slot uint64) (tc, jump []byte, ok bool) {
	switch {
	case tsc != nil:
		if !slices.Equal(code, append([]byte{0x0f, 0x31}, tsc.Disp...)) {
			return nil, nil, false
		}
		tc, ok = patch.RdtscTrampoline(tr, at, tsc, slot)
		return tc, patch.RdtscJump(at, tr, tsc), ok
	case reg != nil:
		if !slices.Equal(code[:len(reg.Disp)], reg.Disp) {
			return nil, nil, false
		}
		tc, ok = patch.CpuidRegTrampoline(tr, at, reg, lookup)
		return tc, patch.CpuidRegJump(at, tr, reg), ok
	}
	if !patch.InRel32(tr+uint64(len(s.Mid))+20, at+s.Len()) || code[0] != 0xb8 || binary.LittleEndian.Uint32(code[1:]) != s.Leaf {
		return nil, nil, false
	}
	a, b, c, d := r.emulatedCpuid(s.Leaf, s.Sub)
	return patch.CpuidTrampoline(tr, at, s, a, b, c, d), patch.CpuidJump(at, tr), true
}

// cpuidSiteLen is how many bytes from a site's start to the end of its
// cpuid (of an rdtsc site: to the end of the displaced instructions).
func cpuidSiteLen(s *patch.CpuidSite, reg *patch.CpuidRegSite, tsc *patch.RdtscSite) uint64 {
	switch {
	case tsc != nil:
		return tsc.Len()
	case reg != nil:
		return reg.Cpuid() + 2 - reg.Off
	}
	return s.Len()
}

// cpuidLookupCode is the lookup routine and table of cpuidTable, kept
// while cpuidTrapped does not grow (a recording plants it in each
// process). Appending to it copies it.
func (r *recorder) cpuidLookupCode() []byte {
	if c := &r.cpuidLookup; c.code == nil || c.trapped != len(r.cpuidTrapped) {
		c.code, c.trapped = slices.Clip(patch.CpuidLookup(r.cpuidTable())), len(r.cpuidTrapped)
	}
	return r.cpuidLookup.code
}

// cpuidTable is what the lookup trampolines answer: the leaves and
// subleaves ld.so is known to ask from its register-input sites (its
// cache loops over leaf 4 on Intel and 0x8000001d on AMD, the feature
// subleaves of leaves 7, 0xd, 0x14 and 0x19), those the CPU has, and
// every pair this recording has emulated at a trap so far, each with the
// recorder's answer (emulatedCpuid). A leaf that ignores ecx has one
// entry for any subleaf. Kept small, so that it fits ld.so's padding
// with the trampolines.
func (r *recorder) cpuidTable() []patch.CpuidEntry {
	want := map[[2]uint32]bool{}
	maxBasic, _, _, _ := r.emulatedCpuid(0, 0)
	maxExt, _, _, _ := r.emulatedCpuid(0x80000000, 0)
	for _, k := range []struct{ leaf, subs uint32 }{{0, 1}, {4, 5}, {7, 2}, {0xd, 2}, {0x14, 1}, {0x19, 1}, {0x8000001d, 5}} {
		max := maxBasic
		if k.leaf >= 0x80000000 {
			max = maxExt
		}
		for sub := uint32(0); k.leaf <= max && sub < k.subs; sub++ {
			want[[2]uint32{k.leaf, sub}] = true
		}
	}
	for k := range r.cpuidTrapped {
		want[k] = true
	}
	var out []patch.CpuidEntry
	seen := map[uint32]bool{} // leaves that ignore ecx, entered once
	for _, k := range slices.SortedFunc(maps.Keys(want), func(a, b [2]uint32) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		e := patch.CpuidEntry{Leaf: k[0], Sub: k[1], Kind: patch.CpuidExact}
		if patch.EcxFree(k[0]) {
			if seen[k[0]] {
				continue
			}
			seen[k[0]] = true
			e.Sub, e.Kind = 0, patch.CpuidAnySub
		}
		e.A, e.B, e.C, e.D = r.emulatedCpuid(e.Leaf, e.Sub)
		out = append(out, e)
	}
	return out
}

// cpuidSites returns the cpuid sites of the captured file rel that
// trampolines can stand for, and the offsets of its int3 sites (found once
// per recording, and kept in the site cache between recordings).
func (r *recorder) cpuidSites(rel string) cpuidFile {
	if c, ok := r.cpuidFiles[rel]; ok {
		return c
	}
	defer r.since(phScan, time.Now())
	var digest string
	if d, ok := r.w.FileDigest(rel); ok {
		digest = d.SHA256
	}
	path := r.w.Dir() + "/" + rel
	sites, _ := patch.CachedScan(path, "cpuid", digest, r.opts.SiteCache, patch.ScanCpuid) // not an ELF file: none
	int3s := map[uint64]bool{}
	tscInt3s := map[uint64]bool{}
	var regs []patch.CpuidRegSite
	var tscs []patch.RdtscSite
	if len(sites) > 0 {
		all, _ := r.int3Sites(rel, path)
		for _, s := range all {
			switch s.Kind {
			case patch.Cpuid:
				int3s[s.Off] = true
			case patch.Rdtsc:
				tscInt3s[s.Off] = true
			}
		}
		regs, _ = patch.CachedScan(path, "cpuidregs", digest, r.opts.SiteCache, patch.ScanCpuidRegs)
		if len(tscInt3s) > 0 {
			tscs, _ = patch.CachedScan(path, "rdtsc", digest, r.opts.SiteCache, patch.ScanRdtsc)
		}
	}
	c := cpuidFile{sites: slices.Clip(sites), regs: slices.Clip(regs), int3s: int3s, tscs: slices.Clip(tscs), tscInt3s: tscInt3s}
	if len(sites) > 0 {
		if f, err := osfile.Open(path, os.O_RDONLY, 0); err == nil {
			c.padOff, c.padN = patch.CodePadding(f)
			f.Close()
		}
	}
	r.cpuidFiles[rel] = c
	return c
}

// fileID is a mapped file's device and inode (as /proc/PID/maps has them).
type fileID struct {
	dev string
	ino uint64
}

// cpuidFile is what cpuidSites found in one captured file.
type cpuidFile struct {
	sites []patch.CpuidSite
	regs  []patch.CpuidRegSite
	int3s map[uint64]bool
	// tscs are the rdtsc sites a trampoline can stand for (with the
	// syscall buffer), tscInt3s the offsets of the rdtscs given int3s.
	tscs     []patch.RdtscSite
	tscInt3s map[uint64]bool
	// padOff and padN are the file range after its code where
	// trampolines may go (patch.CodePadding).
	padOff, padN uint64
}
