package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileKey identifies a version of a file for deduplication.
type fileKey struct {
	dev, ino uint64
	size     int64
	mtimeNs  int64
}

type fileStat struct {
	key  fileKey
	dev  uint64
	uid  uint32
	mode uint32
}

func statOf(fi os.FileInfo) (fileStat, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}, errors.New("no stat information")
	}
	return fileStat{
		key: fileKey{
			dev:     uint64(st.Dev),
			ino:     uint64(st.Ino),
			size:    st.Size,
			mtimeNs: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		},
		dev:  uint64(st.Dev),
		uid:  st.Uid,
		mode: st.Mode,
	}, nil
}

func statPath(path string) (fileStat, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{}, err
	}
	return statOf(fi)
}

// maxBaseLen keeps captured names well below NAME_MAX (255).
const maxBaseLen = 200

// CaptureFile saves the current content of the file at path (a mapped
// file) in the trace and returns its name relative to the trace
// directory, "files/<n>-<basename>". A file already captured (same
// device, inode, size and modification time) is not captured again: its
// first name is returned.
//
// The file is hard-linked when it lives in a system directory managed by
// the package manager (/usr, /lib, /lib64, /bin, /sbin, /etc), is on the
// filesystem of the trace, owned by root and not writable by group or
// others: such files are replaced by rename, never rewritten in place, so
// the link keeps the recorded content. Anything else (a program being
// developed, its input files) may be rewritten in place and is copied. A linked file keeps its owner and
// mode. Otherwise (or when the link fails) the content is copied to a new
// file of mode 0600.
func (w *Writer) CaptureFile(path string) (rel string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return "", ErrWriterClosed
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("trace: capture %s: %w", path, err)
		}
	}()
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	st, err := statOf(fi)
	if err != nil {
		return "", err
	}
	if rel, ok := w.captured[st.key]; ok {
		return rel, nil
	}

	base := filepath.Base(path)
	if base == "." || base == "/" || base == ".." {
		base = "file"
	}
	base = strings.ToValidUTF8(base, "_")
	if len(base) > maxBaseLen {
		base = strings.ToValidUTF8(base[:maxBaseLen], "")
	}
	w.nfiles++
	rel = FilesDir + "/" + strconv.Itoa(w.nfiles) + "-" + base
	dst := filepath.Join(w.dir, rel)

	linked := false
	if st.dev == w.filesDev && st.uid == 0 && st.mode&0o022 == 0 && systemPath(path) {
		linked = linkFD(src, dst, st.key)
	}
	if !linked {
		if err := copyFile(src, dst); err != nil {
			return "", err
		}
	}
	w.captured[st.key] = rel
	return rel, nil
}

// linkFD hard-links the open file f at dst. It links the open file (via
// /proc/self/fd), not the path, so that a rename of the path meanwhile
// cannot make it link another file. It reports false on any failure.
func linkFD(f *os.File, dst string, key fileKey) bool {
	proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW); err != nil {
		return false
	}
	st, err := statPath(dst)
	if err != nil || st.key.dev != key.dev || st.key.ino != key.ino {
		os.Remove(dst)
		return false
	}
	return true
}

func copyFile(src *os.File, dst string) (err error) {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(dst)
		}
	}()
	if err := out.Chmod(0o600); err != nil {
		return err
	}
	if err := CopySparse(out, src); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}

// CopySparse copies the content of src to the empty file dst, keeping
// src's holes as holes (a sparse file of a terabyte with a few written
// pages copies in a moment).
func CopySparse(dst, src *os.File) error {
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	for off := int64(0); off < size; {
		data, err := unix.Seek(int(src.Fd()), off, unix.SEEK_DATA)
		if err != nil {
			if err == unix.ENXIO { // only a hole is left
				break
			}
			data = off // no SEEK_DATA support: copy everything
		}
		hole, err := unix.Seek(int(src.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			hole = size
		}
		if _, err := io.Copy(io.NewOffsetWriter(dst, data), io.NewSectionReader(src, data, hole-data)); err != nil {
			return err
		}
		off = hole
	}
	return dst.Truncate(size)
}

// systemPath reports whether path is under a directory whose files are
// installed and replaced by the package manager.
func systemPath(path string) bool {
	for _, dir := range []string{"/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/etc/"} {
		if strings.HasPrefix(filepath.Clean(path), dir) {
			return true
		}
	}
	return false
}
