package replay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// The bundle: replay maps a captured file privately (libc, a locale file)
// through a descriptor of the file open in the tracee. A process that
// has none (a new cat maps a dozen locale files its parent never
// opened) had to open it first, two stops more per file (openAtEntry).
// Instead the files mapped privately are copied (once the opens saved
// pay for the copy: offset) into one file, the bundle, at page-aligned
// offsets with a page of hole between two files (so that the kernel never merges mappings
// of two files into one); the first replayed process inherits a
// descriptor of the bundle (bundleFd) from gorr, and every other replayed
// process inherits it from its parent (the program's own descriptors are
// emulated in replay, so none of its calls closes it). A file is then
// mapped from the bundle at its offset there plus the recorded offset:
// the same bytes at the same addresses. The names /proc/PID/maps shows
// are the recorded ones (session.ProcMaps renames every line). Files
// that replay keeps a writable copy of (needsCopy) are never bundled,
// nor is a mapping past its file's last page made from the bundle.

// bundleFd is the bundle's descriptor number in every replayed process (the
// first of exec.Cmd's ExtraFiles).
const bundleFd = 3

// FileBundle is the bundle of a replay, or of the runs of a debugging
// session (Options.Bundle).
type FileBundle struct {
	f    *os.File // read and written by gorr
	ro   *os.File // what the first tracee inherits
	name string   // what /proc/PID/fd/bundleFd shows of it
	off  map[string]uint64
	end  map[string]uint64 // where each file's last page ends, from its start
	size uint64
	// opens counts, for each file not in the bundle yet, the processes
	// that had to open it to map it (offset).
	opens map[string]int
}

// NewFileBundle creates an empty bundle in dir; Close removes nothing (dir
// is the caller's).
func NewFileBundle(dir string) (*FileBundle, error) {
	name := filepath.Join(dir, "bundle")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("replay: create the file bundle: %w", err)
	}
	ro, err := os.Open(name)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("replay: open the file bundle: %w", err)
	}
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		real = name
	}
	return &FileBundle{f: f, ro: ro, name: real, off: map[string]uint64{}, end: map[string]uint64{}, opens: map[string]int{}}, nil
}

// Close closes the bundle's descriptors.
func (b *FileBundle) Close() {
	if b != nil {
		b.f.Close()
		b.ro.Close()
	}
}

// openCost is what a process's first mapping of a file it has no
// descriptor of costs without the bundle (openAtEntry: two stops, about
// 60 µs), counted in the bytes a copy into the bundle takes as long
// for (about 2 GB/s).
const openCost = 128 << 10

// offset returns where the captured file rel (at path) starts in the
// bundle, for a mapping that reaches reach bytes into the file. ok is
// false for a mapping past the file's last page (its pages there raise
// SIGBUS in a mapping of the file itself, not in the bundle; ld.so's
// first mapping of a library spans its bss too, which it then maps
// over). A file not in the bundle yet is copied in when copying costs no
// more than the opens it saves: when the processes that had to open it
// so far (this one included) would have paid openCost each for its
// size; until then ok is false (a dozen-kilobyte locale file is copied
// at its first such mapping, a 20 MB libpython only after 160).
func (b *FileBundle) offset(rel, path string, reach uint64) (off uint64, ok bool, err error) {
	if off, in := b.off[rel]; in {
		return off, reach <= b.end[rel], nil
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, false, fmt.Errorf("replay: bundle %s: %w", rel, err)
	}
	size := uint64(st.Size)
	if reach > pageUp(size) {
		return 0, false, nil
	}
	b.opens[rel]++
	if uint64(b.opens[rel])*openCost < size {
		return 0, false, nil
	}
	off, err = b.add(rel, path, size)
	return off, err == nil, err
}

// add copies the captured file rel (at path, size bytes) into the
// bundle.
func (b *FileBundle) add(rel, path string, size uint64) (uint64, error) {
	src, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("replay: bundle %s: %w", rel, err)
	}
	defer src.Close()
	off := b.size
	if err := copyInto(b.f, off, src, int64(size)); err != nil {
		return 0, fmt.Errorf("replay: bundle %s: %w", rel, err)
	}
	// The file's last page, then a page of hole.
	b.off[rel], b.end[rel] = off, pageUp(size)
	b.size = off + pageUp(size) + pageSize
	delete(b.opens, rel)
	return off, nil
}

// copyInto copies n bytes of src, from its start, into dst at off.
func copyInto(dst *os.File, off uint64, src *os.File, n int64) error {
	in, out := int64(0), int64(off)
	for in < n {
		k, err := unix.CopyFileRange(int(src.Fd()), &in, int(dst.Fd()), &out, int(n-in), 0)
		if err != nil {
			if errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EOPNOTSUPP) {
				return copyPlain(dst, out, src, in, n)
			}
			return err
		}
		if k == 0 {
			return fmt.Errorf("copy stopped at %d of %d bytes", in, n)
		}
	}
	return nil
}

// copyPlain copies src's bytes [in, n) to dst at out, by reads and writes.
func copyPlain(dst *os.File, out int64, src *os.File, in, n int64) error {
	buf := make([]byte, 1<<20)
	for in < n {
		k, err := src.ReadAt(buf[:min(int64(len(buf)), n-in)], in)
		if k > 0 {
			if _, werr := dst.WriteAt(buf[:k], out); werr != nil {
				return werr
			}
			in += int64(k)
			out += int64(k)
		}
		if err != nil && in < n {
			return err
		}
	}
	return nil
}

// bundled tells how t's process maps m from the bundle: the descriptor
// and the offset in it. ok is false when m's file is not bundled (shared,
// a file replay keeps a copy of, or not worth copying yet) or the process
// has no bundle. Callers ask only when the process has no descriptor of
// the file already (openedIn), or, with onlyIn, to use the bundle if the
// file is there but not to count an open (the batch of an exec opens its
// files at no cost).
func (rp *replayer) bundled(t *rtask, m *trace.Mapping, onlyIn bool) (fd int64, off uint64, ok bool, err error) {
	b := rp.opts.Bundle
	if b == nil || m.File == "" {
		return 0, 0, false, nil
	}
	if onlyIn {
		if _, in := b.off[m.File]; !in {
			return 0, 0, false, nil
		}
	}
	path := rp.opts.Reader.Path(m.File)
	if m.Flags&unix.MAP_SHARED != 0 || rp.needsCopy(m, path) || !rp.hasBundle(t) {
		return 0, 0, false, nil
	}
	base, ok, err := b.offset(m.File, path, m.Offset+(m.End-m.Start))
	if !ok || err != nil {
		return 0, 0, false, err
	}
	return bundleFd, base + m.Offset, true, nil
}

// hasBundle tells whether t's process has the bundle as bundleFd (checked
// once per address space: every replayed process inherits it).
func (rp *replayer) hasBundle(t *rtask) bool {
	if t.proc.bundle == 0 {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", t.real, bundleFd))
		t.proc.bundle = -1
		if link == rp.opts.Bundle.name {
			t.proc.bundle = 1
		}
	}
	return t.proc.bundle > 0
}
