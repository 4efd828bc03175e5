package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

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

// mapFile replaces the placeholder mapping that the executed mmap made
// at m.Start by a mapping of m's file, opened in the tracee through the
// syscall instruction at sc (the placeholder, readable, holds the path
// while openat reads it).
func (rp *replayer) mapFile(t *rtask, m *trace.Mapping, sc uint64) error {
	path, oflag := rp.opts.Reader.Path(m.File), uint64(unix.O_RDONLY)
	var st unix.Stat_t
	if m.Flags&unix.MAP_SHARED != 0 || rp.opts.Reader.Header().Version >= 2 || unix.Stat(path, &st) != nil || st.Nlink == 1 {
		// Shared mappings, and private ones of files that are not system
		// files linked into a format 1 trace (and so may change size),
		// map the replay's copy, which follows the recorded size changes
		// and the writes through shared mappings. (The links of format 2
		// traces are to gorr's file cache: copies of any file.)
		var err error
		if path, err = rp.emuFile(m.File); err != nil {
			return fmt.Errorf("event %d: %w", rp.n, err)
		}
		if m.Flags&unix.MAP_SHARED != 0 {
			oflag = unix.O_RDWR
		}
	}
	fd, err := rp.openIn(t, sc, m, path, oflag)
	if err != nil {
		return err
	}
	flags := uint64(m.Flags&(unix.MAP_SHARED|unix.MAP_PRIVATE|unix.MAP_NORESERVE|unix.MAP_POPULATE|unix.MAP_LOCKED|unix.MAP_STACK)) | unix.MAP_FIXED
	ret, _, err := tracee.Inject(t.real, sc, unix.SYS_MMAP, m.Start, m.End-m.Start, uint64(m.Prot), flags, uint64(fd), m.Offset)
	if err == nil && uint64(ret) != m.Start {
		err = fmt.Errorf("mmap returned 0x%x", uint64(ret))
	}
	if err != nil {
		return fmt.Errorf("event %d: map %s at 0x%x: %w", rp.n, m.Name, m.Start, err)
	}
	return nil
}

// openIn returns a descriptor of path (opened with oflag) in t's
// process, opening it through the placeholder mapping m and the syscall
// instruction at sc the first time. The descriptor stays open (with
// O_CLOEXEC; the program's own descriptors are emulated, so it sees none
// of this), so that later mappings of the file use the same open file and
// the kernel merges adjacent ones as it did in the recording (an mremap
// across them then works).
func (rp *replayer) openIn(t *rtask, sc uint64, m *trace.Mapping, path string, oflag uint64) (int64, error) {
	pid := tracee.Tgid(t.real)
	key := fmt.Sprintf("%d:%d:%s", pid, oflag, path)
	if fd, ok := rp.emuFds[key]; ok {
		if link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd)); link == path {
			return fd, nil
		}
	}
	if uint64(len(path)) >= m.End-m.Start {
		return 0, fmt.Errorf("event %d: path of the copy of %s is too long (%d bytes)", rp.n, m.Name, len(path))
	}
	if err := t.mem.WriteMem(m.Start, append([]byte(path), 0)); err != nil {
		return 0, fmt.Errorf("event %d: %w", rp.n, err)
	}
	atFdcwd := int64(unix.AT_FDCWD)
	fd, err := tracee.MustInject(t.real, sc, unix.SYS_OPENAT, uint64(atFdcwd), m.Start, oflag|unix.O_CLOEXEC)
	if err != nil {
		return 0, fmt.Errorf("event %d: open %s in the tracee: %w", rp.n, path, err)
	}
	if rp.emuFds == nil {
		rp.emuFds = map[string]int64{}
	}
	rp.emuFds[key] = fd
	return fd, nil
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
