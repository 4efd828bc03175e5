package patch

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestScanFileCache(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	bin := filepath.Join(dir, "bin")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	want, err := ScanFile(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ScanFile(bin, cache)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("first scan: %v %v, want %v", got, err, want)
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Fatalf("cache holds %d entries, want 1", len(entries))
	}
	// A poisoned entry is what a second scan returns: it comes from the cache.
	entry := filepath.Join(cache, entries[0].Name())
	if err := os.WriteFile(entry, mustFlat(t, []Site{{Off: 7, Kind: 1}}), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := ScanFile(bin, cache); len(got) != 1 || got[0].Off != 7 {
		t.Fatalf("cached scan: %v", got)
	}
	// A copy (another inode, same content) hits the cache.
	cp := filepath.Join(dir, "copy")
	if err := os.WriteFile(cp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := ScanFile(cp, cache); len(got) != 1 || got[0].Off != 7 {
		t.Fatalf("cached scan of a copy: %v", got)
	}
	// A changed file (new content) is scanned again.
	if err := os.WriteFile(bin, append(data, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := ScanFile(bin, cache); !reflect.DeepEqual(got, want) {
		t.Fatalf("scan after a change: %v, want %v", got, want)
	}
}

// BranchTargets finds the targets of direct branches: in any real binary
// (this test's own), thousands, including the entry of a function that is
// called directly.
func TestBranchTargets(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := BranchTargets(f)
	if err != nil || len(set) < 1000 {
		t.Fatalf("%d targets, %v", len(set), err)
	}
}

// With a digest from the caller the cache is keyed by it: the file is
// not hashed, another digest is another entry.
func TestScanFileKeyed(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	want, err := ScanFile(exe, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ScanFileKeyed(exe, "abc", cache); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("first keyed scan: %v %v, want %v", got, err, want)
	}
	entry := filepath.Join(cache, "digest-abc.bin")
	if err := os.WriteFile(entry, mustFlat(t, []Site{{Off: 9, Kind: 2}}), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := ScanFileKeyed(exe, "abc", cache); len(got) != 1 || got[0].Off != 9 {
		t.Fatalf("cached keyed scan: %v", got)
	}
	if got, _ := ScanFileKeyed(exe, "def", cache); !reflect.DeepEqual(got, want) {
		t.Fatalf("scan under another digest: %v, want %v", got, want)
	}
}
