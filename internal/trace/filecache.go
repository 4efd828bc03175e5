package trace

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The file cache keeps, per user, the private copies that captures made,
// so that a later recording that maps the same version of a file
// hard-links that copy into its trace instead of copying and hashing the
// file again (docs/trace-format.md, "Captured files"). Its directory
// (mode 0700) holds:
//
//	k-<dev>-<ino>-<size>-<mtime>-<ctime>  a symbolic link naming the copy
//	                                      of that version of a file
//	d-<sha256>-<mtime>                    a copy (mode 0400): its digest
//	                                      and its own modification time
//	tmp-*                                 entries being made
//	pruned                                its time is the last eviction
//
// (numbers in hex, times in ns). A system file is never linked, only
// copies the cache made; the trace's link is the trace's copy, shared
// with the cache and the other traces that link it.
type fileCache struct {
	dir string
	// link is os.Link (tests replace it to simulate EXDEV).
	link func(oldname, newname string) error
	now  func() time.Time
	// maxUnused is maxUnusedBytes (tests make it smaller).
	maxUnused int64
}

const (
	// FileCacheEnv turns the file cache off when set to "off" or "0".
	FileCacheEnv = "GORR_FILE_CACHE"
	// stableAge: a file changed less long ago is not entered in the
	// cache, so that a later change cannot keep its times (times are
	// kept at the clock tick's granularity, and writes through a shared
	// mapping can update them late).
	stableAge = time.Minute
	// evictAge: a cached copy that no trace links to (link count 1) is
	// removed when no link was made or removed for this long.
	evictAge = 7 * 24 * time.Hour
	// maxUnusedBytes bounds the bytes of the copies no trace links to: beyond
	// it, the oldest (by their last link change) are removed first.
	maxUnusedBytes = 1 << 30
	// pruneEvery: the cache is swept for such copies at most this often.
	pruneEvery = time.Hour
	// tmpAge: a temporary entry older than this was left by a recorder
	// that died.
	tmpAge = time.Hour
)

// DefaultFileCacheDir is the file cache of the user:
// $XDG_CACHE_HOME/gorr/files-v1 or ~/.cache/gorr/files-v1, next to the
// site cache. It is "" (no cache) when neither exists or when
// $GORR_FILE_CACHE is "off" or "0".
func DefaultFileCacheDir() string {
	switch os.Getenv(FileCacheEnv) {
	case "off", "0":
		return ""
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "gorr", "files-v1")
}

// UseFileCache makes the captures of w use the file cache in dir (made
// if needed; "" for none), and evicts its unused copies when that was
// not done within the hour. A cache that cannot be made is not used:
// captures then copy, as without one.
func (w *Writer) UseFileCache(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cache = nil
	if dir == "" {
		return
	}
	if os.MkdirAll(dir, 0o700) != nil || os.Chmod(dir, 0o700) != nil {
		return
	}
	c := &fileCache{dir: dir, link: os.Link, now: time.Now, maxUnused: maxUnusedBytes}
	c.maybePrune()
	w.cache = c
}

func (k fileKey) cacheName() string {
	return fmt.Sprintf("k-%x-%x-%x-%x-%x", k.dev, k.ino, k.size, k.mtimeNs, k.ctimeNs)
}

// lookup returns the name in the cache of the copy of the file version
// k, and its digest.
func (c *fileCache) lookup(k fileKey) (data string, d FileDigest, ok bool) {
	data, err := os.Readlink(filepath.Join(c.dir, k.cacheName()))
	if err != nil {
		return "", d, false
	}
	sha, _, ok := parseDataName(data)
	if !ok {
		return "", d, false
	}
	return data, FileDigest{Size: k.size, SHA256: sha}, true
}

// parseDataName splits d-<sha256>-<mtime>.
func parseDataName(name string) (sha string, mtime int64, ok bool) {
	rest, ok := strings.CutPrefix(name, "d-")
	if !ok || strings.Contains(name, "/") {
		return "", 0, false
	}
	sha, m, ok := strings.Cut(rest, "-")
	if !ok || len(sha) != 64 {
		return "", 0, false
	}
	mtime, err := strconv.ParseInt(m, 16, 64)
	return sha, mtime, err == nil
}

// linkInto hard-links the cached copy data (as lookup returned it) of a
// file of the given size at dst, and checks that it is still what the
// cache made: a regular file of that size, mode 0400, with the
// modification time its name holds (a write through any link changes
// it). A copy that is not is dropped from the cache. It returns an
// error when dst was not made; EXDEV means the cache is on another
// filesystem than the trace.
func (c *fileCache) linkInto(data string, size int64, dst string) error {
	p := filepath.Join(c.dir, data)
	if err := c.link(p, dst); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(dst, &st); err != nil {
		os.Remove(dst)
		return err
	}
	_, mtime, _ := parseDataName(data)
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o777 != 0o400 || st.Size != size || st.Mtim.Nano() != mtime {
		os.Remove(dst)
		os.Remove(p) // the key's link now dangles: the next capture copies anew
		return errors.New("cached copy changed")
	}
	return nil
}

// add enters the capture made at path (a private copy in a trace, with
// digest d) in the cache as the copy of file version k, which src (the
// open original) must still be, unchanged for stableAge.
func (c *fileCache) add(k fileKey, src *os.File, path string, d FileDigest) error {
	if d.Size != k.size || c.now().Sub(time.Unix(0, max(k.mtimeNs, k.ctimeNs))) < stableAge {
		return nil // changed lately, or while it was copied
	}
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	if st, err := statOf(fi); err != nil {
		return err
	} else if st.key != k {
		return nil
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(int(src.Fd()), &fs) != nil {
		return nil
	}
	switch fs.Type {
	case unix.TMPFS_MAGIC, unix.HUGETLBFS_MAGIC, unix.RAMFS_MAGIC:
		return nil // memfds, shared memory: written through mappings, and short-lived
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err
	}
	data := "d-" + d.SHA256 + "-" + strconv.FormatInt(st.Mtim.Nano(), 16)
	tmp := filepath.Join(c.dir, fmt.Sprintf("tmp-%d-%x", os.Getpid(), rand.Uint64()))
	if err := c.link(path, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, data)); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Symlink(data, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, k.cacheName())); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// maybePrune evicts the unused entries of the cache (prune) unless that
// was done within pruneEvery.
func (c *fileCache) maybePrune() {
	stamp := filepath.Join(c.dir, "pruned")
	now := c.now()
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < pruneEvery {
		return
	}
	if f, err := os.OpenFile(stamp, os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	if os.Chtimes(stamp, now, now) != nil {
		return
	}
	c.prune()
}

// prune removes the copies no trace links to (link count 1) that no
// link was made to or removed from for evictAge (a link changes the
// file's ctime), then the oldest others of them while they take more
// than maxUnusedBytes, the key links whose copy is gone, and the
// temporary entries of recorders that died.
func (c *fileCache) prune() {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	now := c.now()
	var keys []string
	type unused struct {
		path  string
		ctime time.Time
		size  int64
	}
	var idle []unused
	var idleBytes int64
	for _, e := range ents {
		p := filepath.Join(c.dir, e.Name())
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue
		}
		switch {
		case strings.HasPrefix(e.Name(), "k-"):
			keys = append(keys, p)
		case strings.HasPrefix(e.Name(), "d-"):
			if st.Nlink != 1 {
				break
			}
			if ctime := time.Unix(st.Ctim.Unix()); now.Sub(ctime) > evictAge {
				os.Remove(p)
			} else {
				idle = append(idle, unused{p, ctime, st.Size})
				idleBytes += st.Size
			}
		case strings.HasPrefix(e.Name(), "tmp-"):
			if now.Sub(time.Unix(st.Ctim.Unix())) > tmpAge {
				os.Remove(p)
			}
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].ctime.Before(idle[j].ctime) })
	for _, u := range idle {
		if idleBytes <= c.maxUnused {
			break
		}
		os.Remove(u.path)
		idleBytes -= u.size
	}
	for _, k := range keys {
		if _, err := os.Stat(k); errors.Is(err, os.ErrNotExist) {
			os.Remove(k)
		}
	}
}

// isCrossDevice tells whether err is EXDEV (the cache and the trace are
// on different filesystems: the cache cannot serve this trace).
func isCrossDevice(err error) bool {
	return errors.Is(err, syscall.EXDEV)
}
