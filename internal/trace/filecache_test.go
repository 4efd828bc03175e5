package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cachedWriter creates a trace in dir whose captures use the file cache
// in cache, with a clock late enough that files written by the test
// count as unchanged for stableAge.
func cachedWriter(t *testing.T, dir, cache string) *Writer {
	t.Helper()
	w := mustCreate(t, dir)
	w.UseFileCache(cache)
	if w.cache == nil {
		t.Fatal("no file cache")
	}
	w.cache.now = func() time.Time { return time.Now().Add(2 * stableAge) }
	return w
}

func captureOne(t *testing.T, w *Writer, path string) (string, FileDigest) {
	t.Helper()
	rel, err := w.CaptureFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := w.FileDigest(rel)
	if !ok {
		t.Fatalf("%s: no digest", rel)
	}
	return rel, d
}

func closeVerified(t *testing.T, w *Writer) {
	t.Helper()
	mustClose(t, w)
	rd, err := Open(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if err := rd.VerifyFiles(); err != nil {
		t.Fatal(err)
	}
}

// cacheFixture makes a directory holding lib.so (with content) and
// names the cache directory in it.
func cacheFixture(t *testing.T, content string) (root, cache, lib string) {
	t.Helper()
	root = t.TempDir()
	cache = filepath.Join(root, "cache")
	lib = filepath.Join(root, "lib.so")
	if err := os.WriteFile(lib, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, cache, lib
}

// captureCached captures path into a new trace in dir through the cache,
// closes and verifies it, and returns the writer, the captured name and
// its digest.
func captureCached(t *testing.T, dir, cache, path string) (*Writer, string, FileDigest) {
	t.Helper()
	w := cachedWriter(t, dir, cache)
	rel, d := captureOne(t, w, path)
	closeVerified(t, w)
	return w, rel, d
}

func nlinkOf(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Sys().(*syscall.Stat_t).Nlink)
}

func cacheEntries(t *testing.T, cache, prefix string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(cache, prefix+"*"))
	return m
}

// TestFileCacheHit: the second capture of a file links the cache's copy
// (never the original), with the digest of the first.
func TestFileCacheHit(t *testing.T) {
	root, cache, lib := cacheFixture(t, strings.Repeat("library ", 3000))
	w1, rel1, d1 := captureCached(t, filepath.Join(root, "t1"), cache, lib)
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("cache directory: %v %v", fi, err)
	}
	data := cacheEntries(t, cache, "d-")
	if len(data) != 1 || len(cacheEntries(t, cache, "k-")) != 1 {
		t.Fatalf("cache holds %v", data)
	}
	if !sameInode(t, data[0], filepath.Join(w1.Dir(), rel1)) {
		t.Error("the cache's copy is not the first trace's")
	}

	w2, rel2, d2 := captureCached(t, filepath.Join(root, "t2"), cache, lib)
	got := filepath.Join(w2.Dir(), rel2)
	if !sameInode(t, got, data[0]) || sameInode(t, got, lib) {
		t.Error("second capture did not link the cache's copy")
	}
	if d2 != d1 {
		t.Errorf("digest %v, want %v", d2, d1)
	}
	if fi, _ := os.Stat(got); fi.Mode().Perm() != 0o400 {
		t.Errorf("mode %v", fi.Mode())
	}
	if n := nlinkOf(t, got); n != 3 {
		t.Errorf("link count %d, want 3 (cache and two traces)", n)
	}
}

// TestFileCacheChanged: a file changed in place, even to the same size,
// is a new version: copied, with its new content.
func TestFileCacheChanged(t *testing.T) {
	root, cache, lib := cacheFixture(t, "version 1")
	captureCached(t, filepath.Join(root, "t1"), cache, lib)

	f, _ := os.OpenFile(lib, os.O_WRONLY, 0)
	f.WriteString("version 2")
	f.Close()
	w2, rel, _ := captureCached(t, filepath.Join(root, "t2"), cache, lib)
	if b, _ := os.ReadFile(filepath.Join(w2.Dir(), rel)); string(b) != "version 2" {
		t.Errorf("captured %q", b)
	}
	if n := len(cacheEntries(t, cache, "d-")); n != 2 {
		t.Errorf("%d copies in the cache, want 2", n)
	}
}

// TestFileCacheRecent: a file changed within stableAge is copied but not
// entered in the cache.
func TestFileCacheRecent(t *testing.T) {
	root, cache, lib := cacheFixture(t, "fresh")
	w := mustCreate(t, filepath.Join(root, "t"))
	w.UseFileCache(cache)
	captureOne(t, w, lib)
	closeVerified(t, w)
	if m := cacheEntries(t, cache, "d-"); len(m) != 0 {
		t.Errorf("recent file cached: %v", m)
	}
}

// TestFileCacheDamaged: a cached copy deleted, or written through one of
// its links, is not used: the file is copied anew and the cache mended.
func TestFileCacheDamaged(t *testing.T) {
	root, cache, lib := cacheFixture(t, "the library")
	_, _, want := captureCached(t, filepath.Join(root, "t0"), cache, lib)

	for i, damage := range []func(p string){
		func(p string) { os.Remove(p) },
		func(p string) {
			os.Chmod(p, 0o600)
			os.WriteFile(p, []byte("the LIBRARY"), 0o600)
			os.Chmod(p, 0o400)
		},
		func(p string) {
			os.Chmod(p, 0o600)
			os.Truncate(p, 3)
			os.Chmod(p, 0o400)
		},
	} {
		data := cacheEntries(t, cache, "d-")
		if len(data) != 1 {
			t.Fatalf("case %d: cache holds %v", i, data)
		}
		damage(data[0])
		w, rel, d := captureCached(t, filepath.Join(root, fmt.Sprint("t", i+1)), cache, lib)
		if b, _ := os.ReadFile(filepath.Join(w.Dir(), rel)); string(b) != "the library" || d != want {
			t.Errorf("case %d: captured %q %v", i, b, d)
		}
		if fresh := cacheEntries(t, cache, "d-"); len(fresh) != 1 || !sameInode(t, fresh[0], filepath.Join(w.Dir(), rel)) {
			t.Errorf("case %d: cache not mended: %v", i, fresh)
		}
	}
}

// TestFileCacheConcurrent: recorders capturing the same new file at once
// all get a good copy, and the cache ends with one valid entry.
func TestFileCacheConcurrent(t *testing.T) {
	root, cache, lib := cacheFixture(t, strings.Repeat("shared ", 50000))
	var wg sync.WaitGroup
	ws := make([]*Writer, 6)
	for i := range ws {
		ws[i] = cachedWriter(t, filepath.Join(root, fmt.Sprint("t", i)), cache)
	}
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := w.CaptureFile(lib); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, w := range ws {
		closeVerified(t, w)
	}
	if d, k := cacheEntries(t, cache, "d-"), cacheEntries(t, cache, "k-"); len(k) != 1 || len(d) < 1 {
		t.Errorf("cache holds %v %v", d, k)
	}
	if m := cacheEntries(t, cache, "tmp-"); len(m) != 0 {
		t.Errorf("temporary entries left: %v", m)
	}
	w, rel, _ := captureCached(t, filepath.Join(root, "after"), cache, lib)
	if nlinkOf(t, filepath.Join(w.Dir(), rel)) < 2 {
		t.Error("capture after the race did not use the cache")
	}
}

// TestFileCacheCrossDevice: a cache on another filesystem (EXDEV) is
// given up; the file is copied.
func TestFileCacheCrossDevice(t *testing.T) {
	root, cache, lib := cacheFixture(t, "the library")
	captureCached(t, filepath.Join(root, "t1"), cache, lib) // enters it

	w := cachedWriter(t, filepath.Join(root, "t2"), cache)
	calls := 0
	w.cache.link = func(o, n string) error {
		calls++
		return &os.LinkError{Op: "link", Old: o, New: n, Err: syscall.EXDEV}
	}
	rel, _ := captureOne(t, w, lib)
	other := filepath.Join(root, "other.so")
	os.WriteFile(other, []byte("another"), 0o644)
	captureOne(t, w, other)
	closeVerified(t, w)
	if b, _ := os.ReadFile(filepath.Join(w.Dir(), rel)); string(b) != "the library" || nlinkOf(t, filepath.Join(w.Dir(), rel)) != 1 {
		t.Errorf("captured %q", b)
	}
	if calls != 1 || w.cache != nil {
		t.Errorf("%d links tried, cache %v: want the cache given up after one", calls, w.cache)
	}
}

// TestFileCacheOff: no cache directory, no links.
func TestFileCacheOff(t *testing.T) {
	t.Setenv(FileCacheEnv, "off")
	if d := DefaultFileCacheDir(); d != "" {
		t.Errorf("GORR_FILE_CACHE=off: cache %q", d)
	}
	t.Setenv(FileCacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/x")
	if d := DefaultFileCacheDir(); d != "/x/gorr/files-v1" {
		t.Errorf("cache %q", d)
	}
}

// TestFileCachePrune: copies no trace links to are evicted after
// evictAge, with the key links to them; linked copies stay; the sweep
// runs at most once per pruneEvery.
func TestFileCachePrune(t *testing.T) {
	root := t.TempDir()
	cache := filepath.Join(root, "cache")
	kept := filepath.Join(root, "kept.so")
	gone := filepath.Join(root, "gone.so")
	os.WriteFile(kept, []byte("kept"), 0o644)
	os.WriteFile(gone, []byte("gone"), 0o644)
	w := cachedWriter(t, filepath.Join(root, "t1"), cache)
	captureOne(t, w, kept)
	captureOne(t, w, gone)
	closeVerified(t, w)
	w2, _, _ := captureCached(t, filepath.Join(root, "t2"), cache, kept)
	os.RemoveAll(w.Dir()) // gone.so is now linked by the cache alone
	os.WriteFile(filepath.Join(cache, "tmp-dead"), nil, 0o600)

	c := &fileCache{dir: cache, link: os.Link, now: func() time.Time { return time.Now().Add(evictAge + time.Hour) }, maxUnused: maxUnusedBytes}
	c.maybePrune()
	if d, k := cacheEntries(t, cache, "d-"), cacheEntries(t, cache, "k-"); len(d) != 1 || len(k) != 1 {
		t.Fatalf("after pruning: %v %v", d, k)
	}
	if m := cacheEntries(t, cache, "tmp-"); len(m) != 0 {
		t.Errorf("temporary entries left: %v", m)
	}
	w3, rel, _ := captureCached(t, filepath.Join(root, "t3"), cache, kept)
	if nlinkOf(t, filepath.Join(w3.Dir(), rel)) != 3 {
		t.Error("kept entry not used")
	}
	// Within pruneEvery of the last sweep, nothing is swept.
	os.RemoveAll(w2.Dir())
	os.RemoveAll(w3.Dir())
	c.now = func() time.Time { return time.Now().Add(evictAge + time.Hour + pruneEvery/2) }
	c.maybePrune()
	if d := cacheEntries(t, cache, "d-"); len(d) != 1 {
		t.Errorf("swept again within %v: %v", pruneEvery, d)
	}
}

// TestFileCacheSizeBound: beyond maxUnused bytes of copies no trace
// links to, the oldest go first, however recent.
func TestFileCacheSizeBound(t *testing.T) {
	root, cache, _ := cacheFixture(t, "")
	var libs []string
	for i := 0; i < 4; i++ {
		p := filepath.Join(root, fmt.Sprint("lib", i))
		os.WriteFile(p, []byte(strings.Repeat(fmt.Sprint(i), 1000)), 0o644)
		w, _, _ := captureCached(t, filepath.Join(root, fmt.Sprint("t", i)), cache, p)
		os.RemoveAll(w.Dir())
		libs = append(libs, p)
		time.Sleep(20 * time.Millisecond) // distinct ctimes
	}
	keep, _, _ := captureCached(t, filepath.Join(root, "kept"), cache, libs[0]) // linked: not counted
	c := &fileCache{dir: cache, link: os.Link, now: time.Now, maxUnused: 2500}
	c.prune()
	if d := cacheEntries(t, cache, "d-"); len(d) != 3 {
		t.Fatalf("after pruning to 2500 bytes: %v", d)
	}
	for i, p := range libs {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := statOf(fi)
		data, _, ok := c.lookup(st.key)
		_, err = os.Stat(filepath.Join(cache, data))
		if cached, want := ok && err == nil, i != 1; cached != want {
			t.Errorf("lib%d cached %v, want %v (the oldest unlinked copy goes)", i, cached, want)
		}
	}
	if nlinkOf(t, filepath.Join(keep.Dir(), "files", "1-lib0")) != 2 {
		t.Error("linked copy not kept")
	}
}
