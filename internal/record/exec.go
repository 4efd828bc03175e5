package record

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

const pageSize = 4096

// onExecDone snapshots a freshly exec'd address space: it patches the
// vDSO, turns on rdtsc and cpuid trapping, and records every mapping with
// the bytes replay needs to rebuild it without the original files.
func (r *recorder) onExecDone(t *task, former int) error {
	maps, err := tracee.Maps(t.tid)
	if err != nil {
		return err
	}
	for _, m := range maps {
		if m.Name == "[vdso]" {
			if t.sc, err = tracee.PatchVDSO(t.mem, m); err != nil {
				return err
			}
		}
	}
	if t.sc == 0 {
		return fmt.Errorf("tid %d has no vDSO after exec", t.tid)
	}
	if _, err := tracee.MustInject(t.tid, t.sc, unix.SYS_PRCTL, unix.PR_SET_TSC, unix.PR_TSC_SIGSEGV); err != nil {
		return fmt.Errorf("trap rdtsc: %w", err)
	}
	// cpuid faulting (ARCH_SET_CPUID) exists on Intel CPUs only; without
	// it cpuid runs natively and replay must happen on the same CPU model.
	if ret, _, err := tracee.Inject(t.tid, t.sc, unix.SYS_ARCH_PRCTL, 0x1012, 0); err != nil {
		return fmt.Errorf("trap cpuid: %w", err)
	} else if ret == 0 {
		r.cpuidFaulting = true
	}
	regs, err := ptrace.GetRegs(t.tid)
	if err != nil {
		return err
	}
	ev := &trace.Event{Kind: trace.KindExec, Tid: int32(former), NewTid: int32(t.tid), Regs: &regs}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", t.tid))
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
		var file []byte
		if m.Inode != 0 && strings.HasPrefix(m.Name, "/") {
			rel, data, err := r.capture(t, m)
			if err != nil {
				return err
			}
			tm.File, file = rel, data
			if m.Prot&unix.PROT_EXEC != 0 {
				// Patched before the snapshot, so the int3s are part of it.
				if _, err := r.patchSites(t, tm); err != nil {
					return err
				}
			}
		}
		if tm.File == "" {
			tm.Flags |= unix.MAP_ANONYMOUS
		}
		ev.Maps = append(ev.Maps, tm)
		ev.Mem = append(ev.Mem, diffPages(t, m.Start, m.End, file)...)
	}
	t.lastRegs = regs
	t.at = atSignal
	if err := r.emit(ev); err != nil {
		return err
	}
	return nil
}

// capture stores the file behind mapping m in the trace and returns its
// name and the mapped part of its content.
func (r *recorder) capture(t *task, m tracee.Map) (string, []byte, error) {
	src := fmt.Sprintf("/proc/%d/map_files/%x-%x", t.tid, m.Start, m.End)
	var st unix.Stat_t
	if unix.Stat(m.Name, &st) == nil && st.Ino == m.Inode {
		src = m.Name
	}
	rel, err := r.w.CaptureFile(src)
	if err != nil {
		return "", nil, fmt.Errorf("capture mapped file %s: %w", m.Name, err)
	}
	f, err := os.Open(r.w.Dir() + "/" + rel)
	if err != nil {
		return "", nil, fmt.Errorf("read captured %s: %w", m.Name, err)
	}
	defer f.Close()
	data := make([]byte, m.Size())
	n, err := f.ReadAt(data, int64(m.Offset))
	if err != nil && err != io.EOF {
		return "", nil, fmt.Errorf("read captured %s: %w", m.Name, err)
	}
	return rel, data[:n], nil
}

// diffPages returns the pages of [start,end) whose content differs from
// base (zero-extended), read from the tracee.
func diffPages(t *task, start, end uint64, base []byte) []trace.MemWrite {
	var out []trace.MemWrite
	page := make([]byte, pageSize)
	zero := make([]byte, pageSize)
	for a := start; a < end; a += pageSize {
		if t.mem.ReadPartial(a, page) != pageSize {
			continue
		}
		off := a - start
		want := zero
		if off < uint64(len(base)) {
			want = make([]byte, pageSize)
			copy(want, base[off:])
		}
		if bytes.Equal(page, want) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Addr+uint64(len(out[n-1].Data)) == a {
			out[n-1].Data = append(out[n-1].Data, page...)
		} else {
			out = append(out, trace.MemWrite{Addr: a, Data: append([]byte(nil), page...)})
		}
	}
	return out
}

// recordFileMap records a file mapping created by mmap.
func (r *recorder) recordFileMap(t *task, ev *trace.Event, addr uint64, a linux.Args) error {
	length := (a[1] + pageSize - 1) &^ (pageSize - 1)
	m := tracee.Map{Start: addr, End: addr + length, Prot: uint32(a[2]), Offset: a[5]}
	name, _ := os.Readlink(fmt.Sprintf("/proc/%d/map_files/%x-%x", t.tid, m.Start, m.End))
	if name == "" {
		name, _ = os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", t.tid, int32(a[4])))
	}
	m.Name = name
	tm := trace.Mapping{Start: m.Start, End: m.End, Prot: m.Prot, Flags: uint32(a[3]), Offset: m.Offset, Name: name}
	var st unix.Stat_t
	isReg := unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", t.tid, int32(a[4])), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
	switch {
	case name == "/dev/zero":
		tm.Flags |= unix.MAP_ANONYMOUS
	case isReg:
		m.Inode = st.Ino
		if a[3]&unix.MAP_SHARED != 0 {
			r.sharedFiles[st.Ino] = true
		}
		rel, data, err := r.capture(t, m)
		if err != nil {
			return err
		}
		tm.File = rel
		// Bytes past the end of the file read as zero; pages that differ
		// (the file changed under the mapping) are stored.
		ev.Mem = append(ev.Mem, diffPages(t, m.Start, m.End, data)...)
		if tm.Prot&unix.PROT_EXEC != 0 {
			patched, err := r.patchSites(t, tm)
			if err != nil {
				return err
			}
			ev.Mem = append(ev.Mem, patched...)
		}
	default:
		tm.Flags |= unix.MAP_ANONYMOUS
		ev.Mem = append(ev.Mem, diffPages(t, m.Start, m.End, nil)...)
	}
	ev.Maps = append(ev.Maps, tm)
	return nil
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
	for _, m := range maps {
		if m.Start <= addr && addr < m.End && m.Inode != 0 {
			ev.Mem = append(ev.Mem, diffPages(t, addr+oldLen, addr+newLen, nil)...)
		}
	}
	return nil
}

// patchSites replaces the first byte of every rdtsc, rdtscp and cpuid in
// the mapping with int3 and returns the writes made.
func (r *recorder) patchSites(t *task, m trace.Mapping) ([]trace.MemWrite, error) {
	sites, ok := r.sites[m.File]
	if !ok {
		path := r.w.Dir() + "/" + m.File
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("scan %s: %w", m.Name, err)
		}
		sites, _ = patch.ScanFile(path, r.opts.SiteCache) // not an ELF file: nothing to patch
		r.sites[m.File] = sites
	}
	var out []trace.MemWrite
	for _, s := range sites {
		if s.Off < m.Offset || s.Off >= m.Offset+(m.End-m.Start) {
			continue
		}
		addr := m.Start + s.Off - m.Offset
		if err := t.mem.WriteMem(addr, []byte{0xcc}); err != nil {
			return nil, fmt.Errorf("patch %s at 0x%x: %w", m.Name, addr, err)
		}
		out = append(out, trace.MemWrite{Addr: addr, Data: []byte{0xcc}})
	}
	return out, nil
}
