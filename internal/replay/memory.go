package replay

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// failedCallActs says whether a memory call that failed in the recording
// still changed the address space, so that replay must run it too: the
// kernel applies mprotect and madvise page by page and reports ENOMEM
// (a hole in the range) or EINVAL (a locked page) only after changing the
// pages before the problem; mlock may lock part of a range.
func failedCallActs(nr int, a [6]uint64) bool {
	switch nr {
	case unix.SYS_MPROTECT:
		return true
	case unix.SYS_MLOCK, unix.SYS_MLOCK2, unix.SYS_MUNLOCK:
		return true
	case unix.SYS_MADVISE:
		switch a[2] {
		case unix.MADV_DONTNEED, unix.MADV_REMOVE, 24 /* MADV_DONTNEED_LOCKED */ :
			return true
		}
	}
	return false
}

// fileBacked says whether the mmap whose outcome is out maps a captured
// file: replay then maps that file (or, for MAP_SHARED, the replay's own
// copy of it) at the recorded address, so that pages past the end of the
// file raise SIGBUS, MADV_DONTNEED brings back the file's content, two
// shared mappings of one file share their pages, and a huge sparse file
// costs nothing to map.
func fileBacked(out *trace.Event) bool {
	return len(out.Maps) > 0 && out.Maps[0].File != ""
}

// mapTarget returns the file that replay maps for m, and how to open
// it: the replay's own copy where a mapping needs one (needsCopy), else
// the captured file.
func (rp *replayer) mapTarget(m *trace.Mapping) (string, uint64, error) {
	path, oflag := rp.opts.Reader.Path(m.File), uint64(unix.O_RDONLY)
	if rp.needsCopy(m, path) {
		var err error
		if path, err = rp.emuFile(m.File); err != nil {
			return "", 0, fmt.Errorf("event %d: %w", rp.n, err)
		}
		if m.Flags&unix.MAP_SHARED != 0 {
			oflag = unix.O_RDWR
		}
	}
	return rp.realPath(path), oflag, nil
}

// needsCopy says whether replay maps its own copy of m's file (at path),
// which follows the recorded size changes and writes through shared
// mappings: for a shared mapping, and for a private one of a file that
// a shared mapping used in the recording (its pages show those writes
// until the process writes them itself). The trace header lists these
// files (SharedFilesListed); in a trace without the list every file is
// copied, except, in format 1, the system files linked into the trace
// (link count above 1), which did not change. (The links of format 2
// traces are to gorr's file cache: copies of any file.)
func (rp *replayer) needsCopy(m *trace.Mapping, path string) bool {
	if m.Flags&unix.MAP_SHARED != 0 {
		return true
	}
	h := rp.opts.Reader.Header()
	switch {
	case h.SharedFilesListed:
		return slices.Contains(h.SharedFiles, m.File)
	case h.Version >= 2:
		return true
	}
	var st unix.Stat_t
	return unix.Stat(path, &st) != nil || st.Nlink == 1
}

// mapFlags are the mmap flags that map m's file at its recorded place.
func mapFlags(m *trace.Mapping) uint64 {
	return uint64(m.Flags&(unix.MAP_SHARED|unix.MAP_PRIVATE|unix.MAP_NORESERVE|unix.MAP_POPULATE|unix.MAP_LOCKED|unix.MAP_STACK)) | unix.MAP_FIXED
}

// mapSource returns the descriptor and file offset through which t's
// process maps m without opening its file first: from the bundle if the
// file is there, else through a descriptor of the file (path, opened
// with oflag) the process has, else from the bundle if the file is worth
// copying there now. ok is false when the caller must open the file.
func (rp *replayer) mapSource(t *rtask, m *trace.Mapping, path string, oflag uint64) (fd int64, off uint64, ok bool, err error) {
	if fd, off, ok, err = rp.bundled(t, m, true); ok || err != nil {
		return fd, off, ok, err
	}
	if fd, ok = rp.openedIn(t, path, oflag); ok {
		return fd, m.Offset, true, nil
	}
	return rp.bundled(t, m, false)
}

// mapFile replaces the placeholder mapping that the executed mmap made
// at m.Start by a mapping of m's file, opened in the tracee through the
// syscall instruction at sc (the placeholder, readable, holds the path
// while openat reads it).
func (rp *replayer) mapFile(t *rtask, m *trace.Mapping, sc uint64) error {
	path, oflag, err := rp.mapTarget(m)
	if err != nil {
		return err
	}
	fd, off, ok, err := rp.mapSource(t, m, path, oflag)
	if err != nil {
		return err
	}
	if !ok {
		off = m.Offset
		if fd, err = rp.openIn(t, sc, m, path, oflag); err != nil {
			return err
		}
	}
	ret, _, err := tracee.Inject(t.real, sc, unix.SYS_MMAP, m.Start, m.End-m.Start, uint64(m.Prot), mapFlags(m), uint64(fd), off)
	if err == nil && uint64(ret) != m.Start {
		err = fmt.Errorf("mmap returned 0x%x", uint64(ret))
	}
	if err != nil {
		return fmt.Errorf("event %d: map %s at 0x%x: %w", rp.n, m.Name, m.Start, err)
	}
	return nil
}

// tgid is t's process id (cached: /proc/PID/status is slow to read).
func (t *rtask) tgid() int {
	if t.pid == 0 {
		t.pid = tracee.Tgid(t.real)
	}
	return t.pid
}

// fdKey names a descriptor of path opened with oflag (in a process).
func fdKey(oflag uint64, path string) string {
	return strconv.FormatUint(oflag, 10) + ":" + path
}

// openedIn returns the descriptor of path (opened with oflag) that
// t's process has already, if it still has it.
func (rp *replayer) openedIn(t *rtask, path string, oflag uint64) (int64, bool) {
	pid := t.tgid()
	key := fdKey(oflag, path)
	fd, ok := rp.emuFds[pid][key]
	if !ok {
		return 0, false
	}
	if rp.fdSeen[pid][key] {
		return fd, true
	}
	link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if link != rp.realPath(path) {
		return fd, false
	}
	rp.seeFd(pid, key)
	return fd, true
}

// seeFd notes that process pid has the descriptor emuFds names for key
// (it opened it, or /proc showed it), until the process execs (which
// closes those opened O_CLOEXEC) or the pid names another process: no
// call of the program closes it (they are emulated).
func (rp *replayer) seeFd(pid int, key string) {
	if rp.fdSeen == nil {
		rp.fdSeen = map[int]map[string]bool{}
	}
	if rp.fdSeen[pid] == nil {
		rp.fdSeen[pid] = map[string]bool{}
	}
	rp.fdSeen[pid][key] = true
}

// maxInherited bounds the descriptors of mapped files that a process
// passes on through execve: beyond it they are opened O_CLOEXEC.
const maxInherited = 32

// cloexec is the O_CLOEXEC flag to open a mapped file with in t's
// process: none for its first maxInherited files, so that its
// descendants, after fork and after execve (replay's own descriptors
// are the only real ones a tracee has; the program's are emulated),
// map libc and the like without opening them again.
func (rp *replayer) cloexec(t *rtask) uint64 {
	if len(rp.emuFds[t.tgid()]) >= maxInherited {
		return unix.O_CLOEXEC
	}
	return 0
}

// inheritFds gives the new process child the descriptors its parent
// t's process had open (the kernel copied or shares its table).
func (rp *replayer) inheritFds(t, child *rtask) {
	delete(rp.fdSeen, child.tgid())
	fds := rp.emuFds[t.tgid()]
	if len(fds) == 0 {
		return
	}
	rp.emuFds[child.tgid()] = maps.Clone(fds)
}

// realPath is path as the kernel names the file it opens (absolute,
// without symbolic links), cached.
func (rp *replayer) realPath(path string) string {
	if p, ok := rp.realPaths[path]; ok {
		return p
	}
	real := path
	if abs, err := filepath.Abs(path); err == nil {
		real = abs
		if p, err := filepath.EvalSymlinks(abs); err == nil {
			real = p
		}
	}
	if rp.realPaths == nil {
		rp.realPaths = map[string]string{}
	}
	rp.realPaths[path] = real
	return real
}

// keepFd remembers that t's process has path open (with oflag) as fd.
func (rp *replayer) keepFd(t *rtask, path string, oflag uint64, fd int64) {
	pid := t.tgid()
	if rp.emuFds == nil {
		rp.emuFds = map[int]map[string]int64{}
	}
	if rp.emuFds[pid] == nil {
		rp.emuFds[pid] = map[string]int64{}
	}
	key := fdKey(oflag, path)
	rp.emuFds[pid][key] = fd
	rp.seeFd(pid, key)
}

// openIn returns a descriptor of path (opened with oflag) in t's
// process, opening it through the placeholder mapping m and the syscall
// instruction at sc the first time. The descriptor stays open (the
// program's own descriptors are emulated, so it sees none of this), so
// that later mappings of the file use the same open file and the kernel
// merges adjacent ones as it did in the recording (an mremap across them
// then works); the first few also stay open through execve (cloexec).
func (rp *replayer) openIn(t *rtask, sc uint64, m *trace.Mapping, path string, oflag uint64) (int64, error) {
	if fd, ok := rp.openedIn(t, path, oflag); ok {
		return fd, nil
	}
	if uint64(len(path)) >= m.End-m.Start {
		return 0, fmt.Errorf("event %d: path of the copy of %s is too long (%d bytes)", rp.n, m.Name, len(path))
	}
	if err := t.mem.WriteMem(m.Start, append([]byte(path), 0)); err != nil {
		return 0, fmt.Errorf("event %d: %w", rp.n, err)
	}
	atFdcwd := int64(unix.AT_FDCWD)
	fd, err := tracee.MustInject(t.real, sc, unix.SYS_OPENAT, uint64(atFdcwd), m.Start, oflag|rp.cloexec(t))
	if err != nil {
		return 0, fmt.Errorf("event %d: open %s in the tracee: %w", rp.n, path, err)
	}
	rp.keepFd(t, path, oflag, fd)
	return fd, nil
}

// openAtEntry opens path (with oflag) in t's process while t is held at
// the entry of a system call, by turning that call into an openat and
// then bringing t back to the entry of the call it was making: the path
// is written below the stack's red zone (the bytes there are put back
// at once), and only where that is private writable memory of the
// stack's mapping. ok is false (and nothing changed) when that cannot
// be done; the caller then takes the slower way (mapFile).
func (rp *replayer) openAtEntry(t *rtask, path string, oflag uint64) (fd int64, ok bool, err error) {
	regs := t.entry
	sp := regs[ptrace.RSP]
	addr := (sp - 8192 - uint64(len(path)) - 1) &^ 15
	m, ok, err := tracee.MapAt(t.real, sp)
	if err != nil || !ok || m.Start > addr || m.Prot&unix.PROT_WRITE == 0 || m.Shared || m.Inode != 0 {
		return 0, false, nil
	}
	saved := make([]byte, len(path)+1)
	if err := t.mem.ReadMem(addr, saved); err != nil {
		return 0, false, nil
	}
	if err := t.mem.WriteMem(addr, append([]byte(path), 0)); err != nil {
		return 0, false, nil
	}
	th := t.thread()
	r := regs
	r[ptrace.ORIGRAX] = unix.SYS_OPENAT
	atFdcwd := int64(unix.AT_FDCWD)
	ptrace.SetSyscallArgs(&r, [6]uint64{uint64(atFdcwd), addr, oflag | rp.cloexec(t), 0, 0, 0})
	if err := th.SetRegs(&r); err != nil {
		return 0, false, err
	}
	// To the openat's exit, then back into the call: its syscall
	// instruction again, with its number.
	for _, want := range []ptrace.StopKind{ptrace.StopSyscallExit, ptrace.StopSyscallEntry} {
		if _, err := th.RunUntil(ptrace.Syscall, 0, func(st ptrace.Stop) (ptrace.Action, error) {
			switch st.Kind {
			case want:
				return ptrace.Accept, nil
			case ptrace.StopSignal, ptrace.StopEvent:
				return ptrace.Again, nil // as Inject: real signals of replay are dropped
			}
			return ptrace.Accept, fmt.Errorf("event %d: open %s in the tracee: unexpected %v", rp.n, path, st)
		}); err != nil {
			return 0, false, err
		}
		if want == ptrace.StopSyscallEntry {
			break
		}
		out, err := th.GetRegs()
		if err != nil {
			return 0, false, err
		}
		fd = int64(out[ptrace.RAX])
		if err := t.mem.WriteMem(addr, saved); err != nil {
			return 0, false, err
		}
		back := regs
		back[ptrace.RIP] -= 2
		back[ptrace.RAX] = regs[ptrace.ORIGRAX]
		if err := th.SetRegs(&back); err != nil {
			return 0, false, err
		}
	}
	got, err := th.GetRegs()
	if err != nil {
		return 0, false, err
	}
	if got[ptrace.RIP] != regs[ptrace.RIP] || got[ptrace.ORIGRAX] != regs[ptrace.ORIGRAX] {
		return 0, false, fmt.Errorf("event %d: open %s in the tracee: back at 0x%x in call %d, not at the entry of call %d", rp.n, path, got[ptrace.RIP], int64(got[ptrace.ORIGRAX]), regs[ptrace.ORIGRAX])
	}
	if fd < 0 {
		return 0, false, fmt.Errorf("event %d: open %s in the tracee: %w", rp.n, path, unix.Errno(-fd))
	}
	rp.keepFd(t, path, oflag, fd)
	return fd, true, nil
}

// emuFile returns the replay's own copy of captured file rel, made on
// first use. Shared mappings map it, so the trace's copy stays as
// recorded and every mapping of one capture shares its pages, as the
// recorded mappings of the file did.
func (rp *replayer) emuFile(rel string) (string, error) {
	if p, ok := rp.emu[rel]; ok {
		return p, nil
	}
	if rp.emuDir == "" {
		dir, err := os.MkdirTemp(filepath.Dir(rp.stub), "shared-")
		if err != nil {
			return "", err
		}
		rp.emuDir = dir
		rp.emu = map[string]string{}
	}
	src, err := os.Open(rp.opts.Reader.Path(rel))
	if err != nil {
		return "", fmt.Errorf("captured file: %w", err)
	}
	defer src.Close()
	p := filepath.Join(rp.emuDir, strconv.Itoa(len(rp.emu)))
	dst, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	defer dst.Close()
	if err := trace.CopySparse(dst, src); err != nil {
		return "", fmt.Errorf("copy %s: %w", rel, err)
	}
	rp.emu[rel] = p
	return p, nil
}

// resizeShared applies the recorded size changes of files mapped
// MAP_SHARED (Maps entries of a syscall exit with only File and End) to
// the replay's copies, before the event's memory is written to them.
func (rp *replayer) resizeShared(ev *trace.Event) error {
	for _, m := range ev.Maps {
		p, ok := rp.emu[m.File]
		if m.Start != 0 || !ok {
			continue
		}
		if err := os.Truncate(p, int64(m.End)); err != nil {
			return fmt.Errorf("event %d: resize copy of %s: %w", rp.n, m.File, err)
		}
	}
	return nil
}

// shmSize returns how much shmdt(addr) unmaps in replay, where the
// segment attached at addr is a mapping of a copy of it: from addr to the
// end of the last mapping of that copy that follows without a mapping of
// something else in between (the kernel detaches every piece of the
// segment in its span, whatever was unmapped in the middle).
func (rp *replayer) shmSize(t *rtask, addr uint64) (uint64, error) {
	maps, err := tracee.Maps(t.real)
	if err != nil {
		return 0, err
	}
	var ino uint64
	end := uint64(0)
	for _, m := range maps {
		if m.End <= addr {
			continue
		}
		if ino == 0 {
			if !m.Shared || m.Inode == 0 || m.Start-addr != m.Offset {
				break
			}
			ino = m.Inode
		}
		if m.Inode != ino {
			break
		}
		end = m.End
	}
	if end == 0 {
		return 0, fmt.Errorf("shmdt(0x%x): no attached segment there in replay", addr)
	}
	return end - addr, nil
}
