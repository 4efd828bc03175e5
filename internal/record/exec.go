package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

const pageSize = 4096

// onExecDone snapshots a freshly exec'd address space: it patches the
// vDSO, sets rdtsc and cpuid trapping (traps.go), and records every
// mapping with the bytes replay needs to rebuild it without the
// original files.
func (r *recorder) onExecDone(t *task, former int) error {
	defer r.since(phExec, time.Now())
	maps, err := tracee.Maps(t.tid)
	if err != nil {
		return err
	}
	for _, m := range maps {
		if m.Name == "[vdso]" {
			if t.sc, err = r.vdso.Patch(t.mem, m); err != nil {
				return err
			}
		}
	}
	if t.sc == 0 {
		return fmt.Errorf("tid %d has no vDSO after exec", t.tid)
	}
	// Exec clears cpuid faulting and keeps the TSC mode. The kernel
	// traps rdtsc and cpuid only if some code of the new process is not
	// covered by the int3s planted below (traps.go); gorr's own code,
	// mapped next, has neither.
	t.kern.cpuid = false
	t.vmWith = 0                  // an address space of its own now
	delete(r.stdioShared, t.tgid) // and a descriptor table of its own
	t.uncovered = !r.execCovered(t, maps)
	if t.uncovered {
		r.warnUntrappedTSC(t)
	}
	trapped := r.wantTraps(t)
	if err := r.setTraps(t, trapped); err != nil {
		return err
	}
	r.trapCount.execs++
	if trapped {
		r.trapCount.atExec++
	}
	t.buf = nil
	if r.bufOn {
		bufMaps, err := r.setupBuf(t, maps)
		if err != nil {
			return err
		}
		if bufMaps != nil {
			// Read after the buffer was mapped (the patching since
			// changes no mapping).
			maps = bufMaps
		} else if maps, err = tracee.Maps(t.tid); err != nil {
			return err
		}
	}
	maps, redirected, err := r.plantCpuidTrampolines(t, maps)
	if err != nil {
		return err
	}
	regs, err := t.thread().GetRegs()
	if err != nil {
		return err
	}
	ev := &trace.Event{Kind: trace.KindExec, Tid: int32(former), NewTid: int32(t.tid), Regs: &regs}
	if !trapped {
		ev.Flags = trace.ExecUntrapped
	}
	cmdline, _ := osfile.ReadFile(fmt.Sprintf("/proc/%d/cmdline", t.tid))
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", t.tid))
	ev.Text = exe + "\x00\x00" + strings.TrimRight(string(cmdline), "\x00")
	for _, m := range maps {
		switch m.Name {
		case "[vvar]", "[vvar_vclock]", "[vsyscall]":
			continue
		}
		tm := trace.Mapping{Start: m.Start, End: m.End, Prot: m.Prot, Offset: m.Offset, Name: m.Name}
		if m.Shared {
			tm.Flags = unix.MAP_SHARED
		} else {
			tm.Flags = unix.MAP_PRIVATE
		}
		var file io.ReaderAt
		if m.Inode != 0 && strings.HasPrefix(m.Name, "/") {
			rel, f, err := r.capture(t, m)
			if err != nil {
				return err
			}
			tm.File, file = rel, f
			if m.Prot&unix.PROT_EXEC != 0 {
				// Patched before the snapshot, so the int3s are part of it.
				if _, err := r.patchSites(t, tm, redirected); err != nil {
					return err
				}
			}
		}
		if tm.File == "" {
			tm.Flags |= unix.MAP_ANONYMOUS
		}
		ev.Maps = append(ev.Maps, tm)
		if file != nil {
			ev.Mem = append(ev.Mem, r.diffPages(t, m.Start, m.End, m.Name, file, m.Offset, !m.Shared)...)
			r.releaseSpare()
		} else {
			ev.Mem = append(ev.Mem, r.diffPages(t, m.Start, m.End, m.Name, nil, 0, false)...)
		}
	}
	t.setLast(regs, false)
	t.at = atSignal
	if err := r.emit(ev); err != nil {
		return err
	}
	if b := t.buf; b != nil && b.vclockCode != 0 {
		// After the snapshot: replay never has it (syscallbuf.VclockSlot).
		if err := t.mem.WriteMem(syscallbuf.VclockSlot, binary.LittleEndian.AppendUint64(nil, b.vclockCode)); err != nil {
			return err
		}
	}
	return nil
}

// capture stores the file behind mapping m in the trace and returns its
// name and the captured copy to read (the recorder keeps it open; see
// capturedFile).
func (r *recorder) capture(t *task, m tracee.Map) (string, io.ReaderAt, error) {
	return r.captureKnown(t, m, nil)
}

// captureKnown is capture, given the mapped file's status when the
// caller has it (a file captured before is then found without a look
// at its name).
func (r *recorder) captureKnown(t *task, m tracee.Map, known *unix.Stat_t) (string, io.ReaderAt, error) {
	defer r.since(phCapture, time.Now())
	if known != nil && known.Ino == m.Inode {
		key := captureKey{dev: known.Dev, ino: known.Ino, size: known.Size, mtime: known.Mtim.Nano()}
		if c, ok := r.captures[key]; ok {
			return c.rel, c.f, nil
		}
	}
	src := fmt.Sprintf("/proc/%d/map_files/%x-%x", t.tid, m.Start, m.End)
	var st unix.Stat_t
	var key captureKey
	if unix.Stat(m.Name, &st) == nil && st.Ino == m.Inode {
		src = m.Name
		// The identity the trace writer deduplicates by: a file seen
		// before in this recording (libc, mapped by every process) is
		// neither opened nor looked up again.
		key = captureKey{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano()}
		if c, ok := r.captures[key]; ok {
			return c.rel, c.f, nil
		}
	}
	rel, err := r.w.CaptureFile(src)
	if err != nil {
		return "", nil, fmt.Errorf("capture mapped file %s: %w", m.Name, err)
	}
	f, err := osfile.Open(r.w.Dir()+"/"+rel, os.O_RDONLY, 0)
	if err != nil {
		return "", nil, fmt.Errorf("read captured %s: %w", m.Name, err)
	}
	if key.ino == 0 || len(r.captures) >= maxOpenCaptures {
		r.spare = append(r.spare, f) // closed at the end (one mapping's use)
		return rel, f, nil
	}
	r.captures[key] = capturedFile{rel: rel, f: f, name: m.Name}
	return rel, f, nil
}

// capturedName is the name a file captured in this recording was mapped
// by, given the file's status; "" if it was not captured or has been
// deleted since.
func (r *recorder) capturedName(st *unix.Stat_t) string {
	if st.Nlink == 0 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ""
	}
	return r.captures[captureKey{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano()}].name
}

// captureKey is a mapped file's identity: device, inode, size and
// modification time (as trace.Writer's deduplication).
type captureKey struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

// capturedFile is a file captured in this recording and its copy in the
// trace, kept open for diffPages.
type capturedFile struct {
	rel  string
	f    *os.File
	name string // the name of the mapping it was captured for
}

// maxOpenCaptures bounds the captured copies kept open.
const maxOpenCaptures = 256

// closeCaptures closes the captured copies at the end of the recording.
func (r *recorder) closeCaptures() {
	for _, c := range r.captures {
		c.f.Close()
	}
	for _, f := range r.spare {
		f.Close()
	}
	r.captures, r.spare = nil, nil
}

// releaseSpare closes the copies opened for one mapping only.
func (r *recorder) releaseSpare() {
	for _, f := range r.spare {
		f.Close()
	}
	r.spare = r.spare[:0]
}

// diffPages returns the writes that turn base at offset off (zero past
// its end; all zeros when base is nil) into the content of [start,end),
// read from the tracee: the changed bytes of the pages that differ
// (appendChanges). Only pages with memory of their own are read
// (Mem.PopulatedPages): the others read as base, or as zeros in an
// anonymous mapping, so a huge sparse mapping costs only its few pages.
// Mappings the kernel provides ([vdso] and the like) are read whole. In
// a private mapping of base (private) only the pages copied on write are
// read: the others are the file's own pages.
func (r *recorder) diffPages(t *task, start, end uint64, name string, base io.ReaderAt, off uint64, private bool) []trace.MemWrite {
	defer r.since(phDiff, time.Now())
	ranges := []tracee.Range{{Start: start, End: end}}
	if !strings.HasPrefix(name, "[") || name == "[heap]" || name == "[stack]" {
		if rs, err := t.mem.PopulatedPages(start, end, private); err == nil {
			ranges = rs
		}
	}
	var out []trace.MemWrite
	const chunk = 64 * pageSize
	if r.diffBuf == nil {
		r.diffBuf, r.diffWant = make([]byte, chunk), make([]byte, chunk)
	}
	buf, want := r.diffBuf, r.diffWant
	for _, rg := range ranges {
		for a := rg.Start; a < rg.End; {
			n := int(min(rg.End-a, chunk))
			got := t.mem.ReadPartial(a, buf[:n]) &^ (pageSize - 1)
			clear(want[:got])
			if base != nil && got > 0 {
				_, _ = base.ReadAt(want[:got], int64(off+a-start))
			}
			for p := 0; p < got; p += pageSize {
				page := buf[p : p+pageSize]
				if !bytes.Equal(page, want[p:p+pageSize]) {
					out = appendChanges(out, a+uint64(p), page, want[p:p+pageSize])
				}
			}
			if got < n {
				got += pageSize // skip the page that could not be read
			}
			a += uint64(got)
		}
	}
	return out
}

// changeGap is the longest run of unchanged bytes appendChanges keeps
// inside one write rather than starting another (a write costs its
// address and length in the trace, and a system call in replay).
const changeGap = 32

// appendChanges appends to out the writes that turn old into cur, both
// the bytes at addr: the runs of changed bytes, joined across runs of
// fewer than changeGap unchanged ones (up to seven more: it compares
// eight bytes at a time), and joined to the last write of out
// when that ends at the first. A patched code page (int3s and jumps at a
// few sites) costs its changed bytes instead of the whole page.
func appendChanges(out []trace.MemWrite, addr uint64, cur, old []byte) []trace.MemWrite {
	n := len(cur)
	for i := 0; i < n; {
		// Skip equal bytes, eight at a time where they are.
		for i+8 <= n && binary.LittleEndian.Uint64(cur[i:]) == binary.LittleEndian.Uint64(old[i:]) {
			i += 8
		}
		for i < n && cur[i] == old[i] {
			i++
		}
		if i == n {
			break
		}
		start, end := i, i+1
		for j := end; j < n && j-end < changeGap; {
			if j+8 <= n {
				// Eight bytes at a time: a changed page (a trampoline,
				// a stack) is mostly runs like this one.
				if x := binary.LittleEndian.Uint64(cur[j:]) ^ binary.LittleEndian.Uint64(old[j:]); x != 0 {
					end = j + 8 - bits.LeadingZeros64(x)/8 // past its last changed byte
				}
				j += 8
				continue
			}
			if cur[j] != old[j] {
				end = j + 1
			}
			j++
		}
		at := addr + uint64(start)
		if k := len(out); k > 0 && out[k-1].Addr+uint64(len(out[k-1].Data)) == at {
			out[k-1].Data = append(out[k-1].Data, cur[start:end]...)
		} else {
			out = append(out, trace.MemWrite{Addr: at, Data: append([]byte(nil), cur[start:end]...)})
		}
		i = end
	}
	return out
}

// recordFileMap records a file mapping created by mmap, at the call's
// exit stop or, for a private mapping made through the syscall buffer
// (drained), when the recorder drains the call at the thread's next
// stop. The stub keeps such a mapping in place until then (it traces
// any call that would unmap or change it, syscallbuf.HdrPendLo), but
// the descriptor may be closed or reused and the program may have
// written to the pages: the file is found through the mapping, and only
// the file is recorded (the pages the program wrote since are its own
// writes, made again in replay).
func (r *recorder) recordFileMap(t *task, ev *trace.Event, addr uint64, a linux.Args, drained bool) error {
	defer r.since(phFileMap, time.Now())
	length := (a[1] + pageSize - 1) &^ (pageSize - 1)
	m := tracee.Map{Start: addr, End: addr + length, Prot: uint32(a[2]), Offset: a[5]}
	src := m // the mapping the file is read through (capture)
	// The file through the mapping (path: its map_files link, or the
	// descriptor's): its status first, which names a file captured
	// before (the loader maps each library four times); its link only
	// for a file not seen yet.
	path := fmt.Sprintf("/proc/%d/map_files/%x-%x", t.tid, m.Start, m.End)
	var st unix.Stat_t
	statErr := unix.Stat(path, &st)
	var name string
	if statErr == nil {
		if name = r.capturedName(&st); name == "" {
			name, _ = os.Readlink(path)
		}
	}
	if name == "" {
		if drained {
			// Merged with a neighbouring mapping of the same file.
			vma, ok, err := r.mappingAt(t, addr)
			if err != nil {
				return err
			}
			if !ok {
				// Killed as it stopped: its memory is gone with the
				// file's name; it makes no call after this drain.
				ev.Maps = append(ev.Maps, trace.Mapping{Start: m.Start, End: m.End, Prot: m.Prot, Flags: uint32(a[3]) | unix.MAP_ANONYMOUS, Offset: m.Offset})
				return nil
			}
			src.Start, src.End, name = vma.Start, vma.End, vma.Name
			path = fmt.Sprintf("/proc/%d/map_files/%x-%x", t.tid, src.Start, src.End)
		} else {
			path = fmt.Sprintf("/proc/%d/fd/%d", t.tid, int32(a[4]))
			name, _ = os.Readlink(path)
		}
		statErr = unix.Stat(path, &st)
	}
	m.Name, src.Name = name, name
	tm := trace.Mapping{Start: m.Start, End: m.End, Prot: m.Prot, Flags: uint32(a[3]), Offset: m.Offset, Name: name}
	isReg := statErr == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
	if isReg && a[3]&unix.MAP_SHARED != 0 {
		defer func() { // after the check: this mapping is not "elsewhere"
			r.everShared[st.Ino] = true
			r.addSharer(t)
		}()
	}
	if m.Prot&unix.PROT_EXEC != 0 && (statErr != nil || !r.coveredMapping(path, &st, name, m.Prot, a[3]&unix.MAP_SHARED != 0)) {
		r.gainUncovered(t, ev)
	}
	switch {
	case name == "anon_inode:[perf_event]":
		// The kernel writes samples into the ring buffer as they come.
		return &UnsupportedError{Tid: t.tid, Name: "mmap of a perf_event_open descriptor", Reason: "the kernel fills its ring buffer asynchronously, which replay cannot reproduce"}
	case name == "/dev/zero":
		tm.Flags |= unix.MAP_ANONYMOUS
	case isReg && r.sharedElsewhere(t, m, st.Ino):
		// The file is mapped shared already: replay's copy of it is
		// current (writes through the mappings share its pages, the
		// others were recorded), and this mapping must see it too.
		tm.File = r.sharedFiles[st.Ino]
	case isReg:
		src.Inode = st.Ino
		rel, f, err := r.captureKnown(t, src, &st)
		if err != nil {
			return err
		}
		// Size changes of the file are recorded from now on (a private
		// mapping too may reach pages that a later ftruncate creates).
		r.sharedFiles[st.Ino] = rel
		tm.File = rel
		// Replay maps the captured file (a copy of it when shared), so
		// only pages that differ from it (the file changed since) are
		// stored; a drained mapping's pages that differ are the
		// program's own writes since the call.
		if !drained {
			ev.Mem = append(ev.Mem, r.diffPages(t, m.Start, m.End, name, f, m.Offset, a[3]&unix.MAP_SHARED == 0)...)
		}
		r.releaseSpare()
		if tm.Prot&unix.PROT_EXEC != 0 {
			patched, err := r.patchSites(t, tm, nil)
			if err != nil {
				return err
			}
			ev.Mem = append(ev.Mem, patched...)
			redirected, err := r.patchBufSites(t, rel, m.Start, m.Offset, m.End-m.Start)
			if err != nil {
				return err
			}
			ev.Mem = append(ev.Mem, redirected...)
		}
	default:
		tm.Flags |= unix.MAP_ANONYMOUS
		if drained {
			// What a device gave the mapping at the call is gone if the
			// program wrote over it since: the pages are read now.
			if r.opts.Warn != nil {
				fmt.Fprintf(r.opts.Warn, "gorr: warning: %s: a private mapping of %s made through the syscall buffer is recorded with its content at the thread's next stop, not at the call: what the program wrote to it in between is replayed from the start\n", describe(t), name)
			}
		}
		ev.Mem = append(ev.Mem, r.diffPages(t, m.Start, m.End, name, nil, 0, false)...)
	}
	ev.Maps = append(ev.Maps, tm)
	return nil
}

// mappingAt returns the file mapping of t that holds addr; false when
// t's process is gone (its memory with it).
func (r *recorder) mappingAt(t *task, addr uint64) (tracee.Map, bool, error) {
	// One mapping asked for (PROCMAP_QUERY) where the kernel can: the
	// loader's and the allocator's mmaps of a file merge with their
	// neighbours, and reading the whole of a big program's maps for each
	// was a tenth of the recorder's work on a python start.
	if m, ok, err := tracee.MapAt(t.tid, addr); err == nil && ok && m.Inode != 0 {
		return m, true, nil
	}
	maps, err := tracee.Maps(t.tid)
	if err != nil {
		return tracee.Map{}, false, r.lost(t, err)
	}
	if m, ok := fileMapHolding(maps, addr); ok {
		return m, true, nil
	}
	if t.dying || len(maps) == 0 {
		return tracee.Map{}, false, nil
	}
	return tracee.Map{}, false, fmt.Errorf("%s: the file mapped at 0x%x through the syscall buffer is no longer mapped when the recorder drains the call", describe(t), addr)
}

// fileMapHolding returns the mapping of a file among maps that holds
// addr.
func fileMapHolding(maps []tracee.Map, addr uint64) (tracee.Map, bool) {
	for _, m := range maps {
		if m.Start <= addr && addr < m.End && m.Inode != 0 {
			return m, true
		}
	}
	return tracee.Map{}, false
}

// sharedElsewhere says whether inode ino, last captured for a MAP_SHARED
// mapping, is still mapped MAP_SHARED by a recorded process outside the
// new mapping m of t. Only the processes in r.sharers can have such a
// mapping; those whose maps are gone (exited) leave the set.
func (r *recorder) sharedElsewhere(t *task, m tracee.Map, ino uint64) bool {
	if r.sharedFiles[ino] == "" || !r.everShared[ino] {
		return false
	}
	defer r.since(phShared, time.Now())
	for pid := range r.sharers {
		maps, err := tracee.Maps(pid)
		if err != nil {
			if !r.processLive(pid) {
				delete(r.sharers, pid)
			}
			continue
		}
		for _, mp := range maps {
			if mp.Shared && mp.Inode == ino && (pid != t.tgid || mp.End <= m.Start || mp.Start >= m.End) {
				return true
			}
		}
	}
	return false
}

// recordShmat records a System V shared memory segment attached at addr
// like a shared file mapping: its content is captured (through
// /proc/pid/map_files) and replay maps a copy of it.
func (r *recorder) recordShmat(t *task, ev *trace.Event, addr uint64) error {
	maps, err := tracee.Maps(t.tid)
	if err != nil {
		return err
	}
	for _, m := range maps {
		if m.Start != addr {
			continue
		}
		tm := trace.Mapping{Start: m.Start, End: m.End, Prot: m.Prot, Flags: unix.MAP_SHARED, Offset: m.Offset, Name: m.Name}
		shared := r.sharedElsewhere(t, m, m.Inode)
		r.everShared[m.Inode] = true
		r.addSharer(t)
		if shared {
			tm.File = r.sharedFiles[m.Inode]
		} else {
			src := fmt.Sprintf("/proc/%d/map_files/%x-%x", t.tid, m.Start, m.End)
			rel, err := r.w.CaptureFile(src)
			if err != nil {
				return fmt.Errorf("capture shared memory segment %s: %w", m.Name, err)
			}
			tm.File = rel
			r.sharedFiles[m.Inode] = rel
		}
		ev.Maps = append(ev.Maps, tm)
		return nil
	}
	return fmt.Errorf("%s: shmat returned 0x%x, which is not mapped", describe(t), addr)
}

// recordRemap stores the grown part of a file mapping moved or grown by
// mremap (anonymous growth is zero and needs nothing).
func (r *recorder) recordRemap(t *task, ev *trace.Event, addr uint64, a linux.Args) error {
	oldLen, newLen := a[1], a[2]
	if newLen <= oldLen {
		return nil
	}
	maps, err := tracee.Maps(t.tid)
	if err != nil {
		return err
	}
	if m, ok := fileMapHolding(maps, addr); ok {
		ev.Mem = append(ev.Mem, r.diffPages(t, addr+oldLen, addr+newLen, m.Name, nil, 0, false)...)
	}
	return nil
}

// patchSites replaces the first byte of every rdtsc, rdtscp and cpuid in
// the mapping with int3, except at the addresses in skip (rdtscs a
// trampoline stands for, plantCpuidTrampolines), and returns the writes
// made.
func (r *recorder) patchSites(t *task, m trace.Mapping, skip map[uint64]bool) ([]trace.MemWrite, error) {
	defer r.since(phPatch, time.Now())
	sites, err := r.int3Sites(m.File, r.w.Dir()+"/"+m.File)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", m.Name, err)
	}
	var out []trace.MemWrite
	for _, s := range sites {
		if s.Off < m.Offset || s.Off >= m.Offset+(m.End-m.Start) {
			continue
		}
		if at := m.Start + s.Off - m.Offset; !skip[at] {
			out = append(out, trace.MemWrite{Addr: at, Data: []byte{0xcc}})
		}
	}
	if err := t.mem.WriteCode(out); err != nil {
		return nil, fmt.Errorf("patch %s: %w", m.Name, err)
	}
	return out, nil
}

// int3Sites returns the rdtsc, rdtscp and cpuid sites of the captured
// file rel at path (found once per recording, and kept in the site cache
// between recordings).
func (r *recorder) int3Sites(rel, path string) ([]patch.Site, error) {
	if sites, ok := r.sites[rel]; ok {
		return sites, nil
	}
	defer r.since(phScan, time.Now())
	// The manifest's digest of the copy keys the site cache: the copy
	// is not read again to hash it.
	var digest string
	if d, ok := r.w.FileDigest(rel); ok {
		digest = d.SHA256
	} else if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	sites, _ := patch.ScanFileKeyed(path, digest, r.opts.SiteCache) // not an ELF file: nothing to patch
	r.sites[rel] = sites
	return sites, nil
}
