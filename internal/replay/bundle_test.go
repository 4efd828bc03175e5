package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Files are bundled at page-aligned offsets, a page of hole apart, once
// each, with their bytes intact and zeros after their ends.
func TestFileBundleOffsets(t *testing.T) {
	dir := t.TempDir()
	p, err := NewFileBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a := bytes.Repeat([]byte("a"), 5000)
	b := bytes.Repeat([]byte("b"), 4096)
	for name, data := range map[string][]byte{"a": a, "b": b} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	offA, ok, err := p.offset("files/a", filepath.Join(dir, "a"), 2*pageSize)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	offB, ok, err := p.offset("files/b", filepath.Join(dir, "b"), pageSize)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	again, ok, err := p.offset("files/a", filepath.Join(dir, "a"), 2*pageSize)
	if err != nil || !ok || again != offA {
		t.Fatalf("second offset of a: %d, %v, %v; want %d", again, ok, err, offA)
	}
	if offA != 0 || offB != 3*pageSize {
		t.Fatalf("offsets %d, %d; want 0 and %d (two pages of a, one of hole)", offA, offB, 3*pageSize)
	}
	got, err := os.ReadFile(filepath.Join(dir, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:len(a)], a) || !bytes.Equal(got[offB:offB+uint64(len(b))], b) {
		t.Fatal("bundled bytes differ from the files")
	}
	if p.end["files/a"] != 2*pageSize || p.end["files/b"] != pageSize {
		t.Fatalf("ends of a, b: %d, %d; want %d, %d", p.end["files/a"], p.end["files/b"], 2*pageSize, pageSize)
	}
	if tail := got[len(a):offB]; !bytes.Equal(tail, make([]byte, len(tail))) {
		t.Fatal("bytes after a's end are not zero")
	}
	if _, _, err := p.offset("files/c", filepath.Join(dir, "missing"), 0); err == nil {
		t.Fatal("bundling a missing file did not fail")
	}
	// A file bigger than openCost is bundled only once enough processes
	// had to open it.
	big := make([]byte, 3*openCost)
	if err := os.WriteFile(filepath.Join(dir, "big"), big, 0o600); err != nil {
		t.Fatal(err)
	}
	// A mapping past a file's last page is never made from the bundle,
	// and its open is not counted (it saves nothing).
	if _, ok, err := p.offset("files/a", filepath.Join(dir, "a"), 3*pageSize); ok || err != nil {
		t.Fatalf("a mapping past a's end: bundled %v, %v", ok, err)
	}
	if _, ok, err := p.offset("files/big", filepath.Join(dir, "big"), 4*openCost); ok || err != nil || p.opens["files/big"] != 0 {
		t.Fatalf("a mapping past big's end: bundled %v, %v, %d opens counted", ok, err, p.opens["files/big"])
	}
	for i := 1; i <= 3; i++ {
		_, ok, err := p.offset("files/big", filepath.Join(dir, "big"), 3*openCost)
		if err != nil || ok != (i == 3) {
			t.Fatalf("open %d of big: bundled %v, %v; want bundled only at the third", i, ok, err)
		}
	}
}
