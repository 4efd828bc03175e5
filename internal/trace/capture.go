package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
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

	"github.com/gorr-debugger/gorr/internal/osfile"
)

// fileKey identifies a version of a file for deduplication.
type fileKey struct {
	dev, ino uint64
	size     int64
	mtimeNs  int64
	ctimeNs  int64
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
			ctimeNs: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
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
// device, inode, size, modification and change times, or the same content) is not
// captured again: its first name is returned.
//
// The content is always a private copy, never a hard link to the original
// (writing through a link would write the system's file, and an in-place
// update of the original would change the trace): a reflink (FICLONE)
// where the filesystem supports it, else a copy. The copy is read-only
// (mode 0400), and its size and SHA-256 go to the manifest of the header
// (Header.Files), which is written with the next flush (before the
// events that name the file) so that even the trace of a recorder that
// dies later can be verified.
//
// With a file cache (UseFileCache), a version of a file (device, inode,
// size, modification and change times) captured before is not copied
// again: the cache's copy, made by an earlier capture, is hard-linked
// into the trace, and its digest is known. When that fails the file is
// copied.
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
	src, err := osfile.Open(path, os.O_RDONLY, 0)
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
	if w.cache != nil {
		if data, d, ok := w.cache.lookup(st.key); ok {
			if prev, ok := w.byHash[d.SHA256]; ok && w.hdr.Files[prev].Size == d.Size {
				w.captured[st.key] = prev
				return prev, nil
			}
			err := w.cache.linkInto(data, d.Size, dst)
			if err == nil {
				// The cached copy's data was fsynced when it was
				// captured; the new name is made durable by Close's
				// fsync of files/, as a hard link is.
				return w.addCaptured(st.key, rel, "", d)
			}
			if isCrossDevice(err) {
				w.cache = nil
			}
		}
	}
	d, err := cloneOrCopy(src, dst)
	if err != nil {
		return "", err
	}
	if prev, ok := w.byHash[d.SHA256]; ok && w.hdr.Files[prev].Size == d.Size {
		// Same content under another inode: store it once.
		os.Remove(dst)
		w.captured[st.key] = prev
		w.cacheCapture(st.key, src, filepath.Join(w.dir, prev), d)
		return prev, nil
	}
	if rel, err = w.addCaptured(st.key, rel, dst, d); err != nil {
		return "", err
	}
	w.cacheCapture(st.key, src, dst, d)
	return rel, nil
}

// cacheCapture enters the capture at path of the file version k (open as
// src) in the file cache, if w has one; a cache on another filesystem
// than the trace is not used again.
func (w *Writer) cacheCapture(k fileKey, src *os.File, path string, d FileDigest) {
	if w.cache == nil {
		return
	}
	if err := w.cache.add(k, src, path, d); isCrossDevice(err) {
		w.cache = nil
	}
}

// addCaptured enters the file rel (at dst, with digest d) of version k
// in the manifest, and starts its fsync (dst "": none needed).
func (w *Writer) addCaptured(k fileKey, rel, dst string, d FileDigest) (string, error) {
	w.nfiles++
	w.captured[k] = rel
	w.byHash[d.SHA256] = rel
	if w.hdr.Files == nil {
		w.hdr.Files = make(map[string]FileDigest)
	}
	w.hdr.Files[rel] = d
	if dst != "" {
		w.syncInBackground(dst)
	}
	// The manifest goes to header.json with the next flush, before the
	// events that name the file (within flushInterval).
	w.hdrDirty = true
	w.armTimer()
	return rel, nil
}

// syncInBackground fsyncs the captured file at path on a goroutine of
// its own, so that its data reaches the disk while the recording goes
// on; syncCaptured waits for it.
func (w *Writer) syncInBackground(path string) {
	w.syncs.Add(1)
	go func() {
		defer w.syncs.Done()
		if err := syncFile(path); err != nil {
			w.syncMu.Lock()
			if w.syncErr == nil {
				w.syncErr = err
			}
			w.syncMu.Unlock()
		}
	}()
}

// syncCaptured waits until the captured files are fsynced (Close calls
// it: like the streams, captured files need not be on disk while
// recording, but their fsyncs start at their capture).
func (w *Writer) syncCaptured() error {
	w.syncs.Wait()
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	return w.syncErr
}

func syncFile(path string) error {
	f, err := osfile.Open(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("trace: sync %s: %w", path, err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("trace: sync %s: %w", path, err)
	}
	return nil
}

// cloneOrCopy makes dst (which must not exist) a private copy of the open
// file src: a reflink when the filesystem can share the extents, else a
// copy (copy_file_range). It then hashes what dst holds and makes it
// read-only (0400).
func cloneOrCopy(src *os.File, dst string) (d FileDigest, err error) {
	out, err := osfile.Open(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
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
		if err := CopySparse(out, src); err != nil {
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

// digestOf returns the size and content hash of f: SHA-256 over the
// offset and bytes of every 4 KiB page that is not all zero, then the
// size. Holes (found with SEEK_DATA/SEEK_HOLE) are not read, so a huge
// sparse file hashes in a moment, and a copy that stores zero pages as
// holes or holes as zero pages (cp, tar without -S) has the same digest.
func digestOf(f *os.File) (FileDigest, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileDigest{}, err
	}
	size := fi.Size()
	h := sha256.New()
	buf := make([]byte, 256<<10)
	var zero [pageSize]byte
	var off8 [8]byte
	err = forEachExtent(f, size, func(start, end int64) error {
		for off := start; off < end; {
			n, err := f.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
			if n == 0 && err != nil {
				return err
			}
			for p := 0; p < n; p += pageSize {
				page := buf[p:min(p+pageSize, n)]
				if bytes.Equal(page, zero[:len(page)]) {
					continue
				}
				binary.LittleEndian.PutUint64(off8[:], uint64(off+int64(p)))
				h.Write(off8[:])
				h.Write(page)
			}
			off += int64(n)
		}
		return nil
	})
	if err != nil {
		return FileDigest{}, err
	}
	binary.LittleEndian.PutUint64(off8[:], uint64(size))
	h.Write(off8[:])
	return FileDigest{Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

const pageSize = 4096

// forEachExtent calls fn for each data extent [start, end) of f (of the
// given size), skipping holes; without SEEK_DATA support the whole file
// is one extent. Extents are page-aligned at their start.
func forEachExtent(f *os.File, size int64, fn func(start, end int64) error) error {
	for off := int64(0); off < size; {
		data, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
		if err != nil {
			if err == unix.ENXIO { // only a hole is left
				return nil
			}
			data = off // no SEEK_DATA support: read everything
		}
		data &^= pageSize - 1
		hole, err := unix.Seek(int(f.Fd()), data, unix.SEEK_HOLE)
		if err != nil || hole > size {
			hole = size
		}
		if hole <= data {
			hole = min(data+pageSize, size)
		}
		if err := fn(max(data, off), hole); err != nil {
			return err
		}
		off = hole
	}
	return nil
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
	inKernel := true
	err = forEachExtent(src, size, func(start, end int64) error {
		if inKernel {
			n, err := copyRange(dst, src, start, end)
			if err == nil {
				return nil
			}
			// Not supported between these files: copy the rest by hand.
			inKernel = false
			start += n
		}
		_, err := io.Copy(io.NewOffsetWriter(dst, start), io.NewSectionReader(src, start, end-start))
		return err
	})
	if err != nil {
		return err
	}
	return dst.Truncate(size)
}

// copyRange copies [start, end) of src to the same offsets of dst with
// copy_file_range (in the kernel, no copy through user memory); it
// returns how much it copied before an error.
func copyRange(dst, src *os.File, start, end int64) (int64, error) {
	roff, woff := start, start
	for roff < end {
		n, err := unix.CopyFileRange(int(src.Fd()), &roff, int(dst.Fd()), &woff, int(min(end-roff, 1<<30)), 0)
		if err != nil {
			return roff - start, err
		}
		if n == 0 {
			return roff - start, io.ErrUnexpectedEOF
		}
	}
	return roff - start, nil
}

// FileDigest returns the manifest entry of a captured file (rel as
// CaptureFile returned it).
func (w *Writer) FileDigest(rel string) (FileDigest, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.hdr.Files[rel]
	return d, ok
}
