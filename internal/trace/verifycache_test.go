package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A file that matched is not hashed again while its identity stays the
// same; a write (even one that keeps the size and the modification
// time) is seen, and a file changed too recently gets no marker.
func TestVerifyCache(t *testing.T) {
	root, dir, rel, _ := traceWithOneFile(t)
	h := headerOf(t, dir)
	cacheDir := filepath.Join(root, "verified")
	markers := func() int {
		ents, _ := os.ReadDir(cacheDir)
		return len(ents)
	}

	// The copy was made just now: not old enough for a marker.
	if err := verifyFiles(dir, h, verifyCache{dir: cacheDir, settle: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if n := markers(); n != 0 {
		t.Fatalf("%d markers for a file changed less than the settle time ago", n)
	}
	c := verifyCache{dir: cacheDir}
	if err := verifyFiles(dir, h, c); err != nil {
		t.Fatal(err)
	}
	if n := markers(); n != 1 {
		t.Fatalf("%d markers after a verification, want 1", n)
	}
	if err := verifyFiles(dir, h, c); err != nil {
		t.Fatal(err)
	}

	// Same size, same modification time, other content: the change time
	// differs, the marker no longer applies, and the damage is found.
	p := filepath.Join(dir, rel)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// (Past the file system's timestamp granularity, which the settle
	// time covers outside tests.)
	time.Sleep(50 * time.Millisecond)
	os.Chmod(p, 0o600)
	if err := os.WriteFile(p, []byte("THE library's bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := verifyFiles(dir, h, c); !errors.Is(err, ErrTampered) {
		t.Fatalf("a rewritten file verified with the cache: %v", err)
	}
	if err := VerifyFiles(dir, h); !errors.Is(err, ErrTampered) {
		t.Fatalf("a rewritten file verified: %v", err)
	}
}

// Past verifyCacheMax markers, the least recently used half goes.
func TestVerifyCacheTrim(t *testing.T) {
	c := verifyCache{dir: t.TempDir()}
	old := time.Now().Add(-time.Hour)
	for i := 0; i <= verifyCacheMax; i++ {
		p := filepath.Join(c.dir, "m"+strconv.Itoa(i))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			os.Chtimes(p, old, old)
		}
	}
	c.trim()
	ents, _ := os.ReadDir(c.dir)
	if len(ents) != verifyCacheMax+1-(verifyCacheMax+1)/2 {
		t.Fatalf("%d markers left of %d", len(ents), verifyCacheMax+1)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "m1")); err != nil {
		t.Errorf("a recently used marker was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "m0")); err == nil {
		t.Error("the least recently used marker was kept")
	}
}

// The recorder marks the files it captured at once (no settle time): the
// first verification finds the markers, and a later write is still seen.
func TestMarkCaptured(t *testing.T) {
	root, dir, rel, w := traceWithOneFile(t)
	cacheDir := filepath.Join(root, "verified")
	w.MarkCaptured(cacheDir)()
	ents, _ := os.ReadDir(cacheDir)
	if len(ents) != 1 {
		t.Fatalf("%d markers after MarkCaptured, want 1", len(ents))
	}
	h := headerOf(t, dir)
	c := verifyCache{dir: cacheDir, settle: time.Hour}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(dir, rel), &st); err != nil {
		t.Fatal(err)
	}
	if !c.matched(&st, h.Files[rel]) {
		t.Fatal("the recorder's marker does not match the captured file")
	}
	if err := verifyFiles(dir, h, c); err != nil {
		t.Fatal(err)
	}
	// A write after the recording changes the change time: the marker no
	// longer applies and the damage is found.
	p := filepath.Join(dir, rel)
	time.Sleep(50 * time.Millisecond)
	os.Chmod(p, 0o600)
	if err := os.WriteFile(p, []byte("THE library's bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := verifyFiles(dir, h, c); !errors.Is(err, ErrTampered) {
		t.Fatalf("a file rewritten after the recording verified with the recorder's marker: %v", err)
	}
	// No cache directory: nothing is written.
	w.MarkCaptured("")()
}

// traceWithOneFile records, in a new directory root, a complete trace
// (root/trace) that captured one small file, and returns root, the
// trace's directory, the captured file's name in it and the closed
// writer.
func traceWithOneFile(t *testing.T) (root, dir, rel string, w *Writer) {
	t.Helper()
	root = t.TempDir()
	dir = filepath.Join(root, "trace")
	w = mustCreate(t, dir)
	src := filepath.Join(root, "lib.so")
	if err := os.WriteFile(src, []byte("the library's bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := w.CaptureFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	return root, dir, rel, w
}

// headerOf returns the header of the trace in dir.
func headerOf(t *testing.T, dir string) Header {
	t.Helper()
	rd, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	return rd.Header()
}
