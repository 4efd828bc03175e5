package trace

import (
	"crypto/sha256"
	"encoding/hex"
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

// maxBaseLen keeps captured names well below NAME_MAX (255).
const maxBaseLen = 200

// CaptureFile saves the current content of the file at path (a mapped
// file) in the trace and returns its name relative to the trace
// directory, "files/<n>-<basename>". A file already captured (same
// device, inode, size and modification time, or the same content) is not
// captured again: its first name is returned.
//
// The content is always a private copy, never a hard link to the original
// (writing through a link would write the system's file, and an in-place
// update of the original would change the trace): a reflink (FICLONE)
// where the filesystem supports it, else a copy. The copy is read-only
// (mode 0400), and its size and SHA-256 go to the manifest of the header
// (Header.Files), which is rewritten at once so that even the trace of a
// recorder that dies later can be verified.
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
	n := w.nfiles + 1
	rel = FilesDir + "/" + strconv.Itoa(n) + "-" + base
	dst := filepath.Join(w.dir, rel)
	d, err := cloneOrCopy(src, dst)
	if err != nil {
		return "", err
	}
	if prev, ok := w.byHash[d.SHA256]; ok && w.hdr.Files[prev].Size == d.Size {
		// Same content under another inode: store it once.
		os.Remove(dst)
		w.captured[st.key] = prev
		return prev, nil
	}
	w.nfiles = n
	w.captured[st.key] = rel
	w.byHash[d.SHA256] = rel
	if w.hdr.Files == nil {
		w.hdr.Files = make(map[string]FileDigest)
	}
	w.hdr.Files[rel] = d
	w.unsynced = append(w.unsynced, dst)
	if err := writeHeaderSync(w.dir, &w.hdr, false); err != nil {
		return "", err
	}
	return rel, nil
}

// syncCaptured fsyncs the files captured since the last call (Close calls
// it: like the streams, captured files are not fsynced while recording).
func (w *Writer) syncCaptured() error {
	for _, p := range w.unsynced {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("trace: sync %s: %w", p, err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("trace: sync %s: %w", p, err)
		}
	}
	w.unsynced = nil
	return nil
}

// cloneOrCopy makes dst (which must not exist) a private copy of the open
// file src: a reflink when the filesystem can share the extents, else a
// copy (copy_file_range). It then hashes what dst holds and makes it
// read-only (0400).
func cloneOrCopy(src *os.File, dst string) (d FileDigest, err error) {
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return d, err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(dst)
		}
	}()
	if err := out.Chmod(0o600); err != nil {
		return d, err
	}
	if unix.IoctlFileClone(int(out.Fd()), int(src.Fd())) != nil {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return d, err
		}
		if _, err := io.Copy(out, src); err != nil {
			return d, err
		}
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return d, err
	}
	if d, err = digestOf(out); err != nil {
		return d, err
	}
	if err := out.Chmod(0o400); err != nil {
		return d, err
	}
	return d, out.Close()
}

// digestOf reads r to its end and returns its size and SHA-256.
func digestOf(r io.Reader) (FileDigest, error) {
	h := sha256.New()
	n, err := io.CopyBuffer(h, r, make([]byte, 256<<10))
	if err != nil {
		return FileDigest{}, err
	}
	return FileDigest{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
