package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// Hashing a trace's captured files took a quarter of a short replay
// (libpython alone is 23 MB, 25 ms). A verification cache remembers,
// as an empty marker file named by a hash of the file's identity (device,
// inode, size, modification and change times) and of the digest it was
// found to have, that the file was hashed and matched: a file whose
// identity has not changed since is not hashed again. Any write to a
// file, or a copy of it elsewhere, changes its change time or its
// inode, which the program writing it cannot set back, so the cache
// only skips files the kernel says were not modified since they
// matched. Files changed less than verifyCacheSettle ago get no marker
// (a later write within the file system's timestamp granularity would
// leave the change time as it was). What it gives up: damage that the
// kernel does not see as a write (a failing disk) is found by replay
// only after the marker is gone. 'gorr pack' and the other commands
// verify without the cache.

// verifyCacheSettle is how old a file's change time must be for a
// marker to be written.
const verifyCacheSettle = 2 * time.Second

// verifyCacheMax bounds the markers kept: past it, the least recently
// used half is removed.
const verifyCacheMax = 8192

// DefaultVerifyCacheDir is the per-user verification cache
// (~/.cache/gorr/verified-v1), "" when there is no cache directory or
// when GORR_FILE_CACHE turns the file cache off.
func DefaultVerifyCacheDir() string {
	if DefaultFileCacheDir() == "" {
		return ""
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "gorr", "verified-v1")
}

// VerifyFilesCached is VerifyFiles skipping the files the verification
// cache in cache (DefaultVerifyCacheDir) says matched and have not been
// modified since; cache "" verifies every file.
func (r *Reader) VerifyFilesCached(cache string) error {
	return verifyFiles(r.dir, r.hdr, verifyCache{dir: cache, settle: verifyCacheSettle})
}

// verifyCache is a verification cache in dir ("": none) that marks the
// files whose change time is at least settle old.
type verifyCache struct {
	dir    string
	settle time.Duration
}

// marker returns the path of the marker for the file with status st
// found to have digest d.
func (c verifyCache) marker(st *unix.Stat_t, d FileDigest) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d %d %d %d.%09d %d.%09d %d %s", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec,
		st.Ctim.Sec, st.Ctim.Nsec, d.Size, d.SHA256)
	return filepath.Join(c.dir, hex.EncodeToString(h.Sum(nil)))
}

// matched tells whether the file whose status is st is known to have
// digest d; it marks the use of the marker.
func (c verifyCache) matched(st *unix.Stat_t, d FileDigest) bool {
	if c.dir == "" {
		return false
	}
	m := c.marker(st, d)
	now := time.Now()
	return os.Chtimes(m, now, now) == nil
}

// remember writes the marker for a file with status st that was found
// to have digest d (best effort: the cache only saves time), and tells
// whether it did.
func (c verifyCache) remember(st *unix.Stat_t, d FileDigest) bool {
	if c.dir == "" || time.Since(time.Unix(st.Ctim.Sec, st.Ctim.Nsec)) < c.settle {
		return false
	}
	return c.write(st, d)
}

// write creates the marker for a file with status st and digest d.
func (c verifyCache) write(st *unix.Stat_t, d FileDigest) bool {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return false
	}
	return c.create(st, d)
}

// create is write in a cache directory known to exist.
func (c verifyCache) create(st *unix.Stat_t, d FileDigest) bool {
	fd, err := unix.Open(c.marker(st, d), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// MarkCaptured writes the markers of the verification cache in cache
// (DefaultVerifyCacheDir; "" writes none) for the files this recording
// captured, so that the first replay does not hash them again (python's
// 27 MB of libraries: 25-30 ms, which made its replay slower than its
// recording). It takes the list of captured files at once, writes the
// markers on a goroutine of its own and returns the function that waits
// for them: the recorder calls it once the recording is over and lets it
// run while Close fsyncs the trace (the markers cost 1-1.5 ms for
// python's 8 files). The recorder knows their digests without a
// marker's settle time: it hashed each copy it made, and a copy it linked
// from the file cache carries the digest the cache hashed it with (a copy
// whose modification time changed is not linked). Linking changed each
// file's change time, which the marker records: any later write changes
// it again. What this gives up against markers written by replay is the
// settle time: a write to a (mode 0400) captured file within the same
// clock tick as the recorder's last link of it would go unseen.
func (w *Writer) MarkCaptured(cache string) (wait func()) {
	c := verifyCache{dir: cache, settle: verifyCacheSettle}
	w.mu.Lock()
	files := maps.Clone(w.hdr.Files)
	w.mu.Unlock()
	if c.dir == "" || len(files) == 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.markAll(w.dir, files)
	}()
	return func() { <-done }
}

// markAll writes the markers of the captured files (name -> digest) of
// the trace in dir.
func (c verifyCache) markAll(dir string, files map[string]FileDigest) {
	if os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	wrote := false
	for rel, d := range files {
		// The recorder's captures are regular files in the trace
		// (Lstat: not a link); anything else is resolved as replay does.
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(dir, filepath.Clean("/"+rel)), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			real, err := ResolveFile(dir, rel)
			if err != nil || unix.Stat(real, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
		}
		if st.Size != d.Size {
			continue
		}
		if c.create(&st, d) {
			wrote = true
		}
	}
	if wrote {
		c.trimSometimes()
	}
}

// trimSometimes trims the cache once in 16 calls. Reading the directory
// to trim it costs more than the markers (3-8 ms for a few thousand), so
// it is done after a batch of markers, not after each: a replay that
// hashed python's 13 files again (a new recording had linked them from
// the file cache, which changed their change times) read the directory
// after each marker, 110 ms. The cache holds at most a few hundred
// markers more than verifyCacheMax.
func (c verifyCache) trimSometimes() {
	if rand.IntN(16) == 0 {
		c.trim()
	}
}

// trim removes the least recently used half of the markers once there
// are more than verifyCacheMax.
func (c verifyCache) trim() {
	ents, err := os.ReadDir(c.dir)
	if err != nil || len(ents) <= verifyCacheMax {
		return
	}
	type use struct {
		name string
		at   time.Time
	}
	var uses []use
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			uses = append(uses, use{e.Name(), fi.ModTime()})
		}
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].at.Before(uses[j].at) })
	for _, u := range uses[:len(uses)/2] {
		os.Remove(filepath.Join(c.dir, u.name))
	}
}
