package patch

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
	"time"
)

// The constant forms are found by the offset of their mov; a leaf that
// depends on ecx needs ecx set between the mov and the cpuid, and any
// other instruction there, or none before the cpuid, is no site.
func TestDecodeCpuid(t *testing.T) {
	code := []byte{
		0xb8, 0x00, 0x00, 0x00, 0x80, 0x0f, 0xa2, // 0: mov $0x80000000, %eax; cpuid
		0xb8, 0x07, 0x00, 0x00, 0x00, 0x0f, 0xa2, // 7: mov $7, %eax; cpuid (ecx unknown: no)
		0xb8, 0x0d, 0x00, 0x00, 0x00, 0x31, 0xc9, 0x0f, 0xa2, // 14: mov $0xd, %eax; xor %ecx, %ecx; cpuid
		0xb8, 0x1d, 0x00, 0x00, 0x80, 0xb9, 0x03, 0x00, 0x00, 0x00, 0x0f, 0xa2, // 23: mov $0x8000001d, %eax; mov $3, %ecx; cpuid
		0x89, 0xf8, 0x89, 0xf1, 0x0f, 0xa2, // 35: mov %edi, %eax; mov %esi, %ecx; cpuid (no)
		0xb8, 0x01, 0x00, 0x00, 0x00, 0x89, 0xf1, 0x0f, 0xa2, // 41: mov $1, %eax; mov %esi, %ecx; cpuid (no)
		0xc3,
	}
	found := map[int]CpuidSite{}
	decodeCpuid(code, 0, len(code), found)
	want := map[int]CpuidSite{
		0:  {Leaf: 0x80000000, Mid: []byte{}},
		14: {Leaf: 0xd, Mid: []byte{0x31, 0xc9}},
		23: {Leaf: 0x8000001d, Sub: 3, Mid: []byte{0xb9, 3, 0, 0, 0}},
	}
	if len(found) != len(want) {
		t.Fatalf("found %v, want %v", found, want)
	}
	for off, w := range want {
		g, ok := found[off]
		if !ok || g.Leaf != w.Leaf || g.Sub != w.Sub || !bytes.Equal(g.Mid, w.Mid) {
			t.Errorf("at %d: %+v, want %+v", off, g, w)
		}
	}
}

// The trampoline replays Mid, loads the answer and jumps back behind the
// cpuid; the jump from the site reaches the trampoline.
func TestCpuidTrampoline(t *testing.T) {
	s := CpuidSite{Leaf: 0xd, Mid: []byte{0x31, 0xc9}}
	const site, tr = 0x7f0000001000, 0x7f0000400000
	code := CpuidTrampoline(tr, site, &s, 1, 2, 3, 4)
	want := []byte{0x31, 0xc9, 0xb8, 1, 0, 0, 0, 0xbb, 2, 0, 0, 0, 0xb9, 3, 0, 0, 0, 0xba, 4, 0, 0, 0, 0xe9}
	if len(code) != len(want)+4 || !bytes.Equal(code[:len(want)], want) || len(code) > CpuidTrampolineLen {
		t.Fatalf("trampoline % x", code)
	}
	back := uint64(int64(tr+uint64(len(code))) + int64(int32(binary.LittleEndian.Uint32(code[len(want):]))))
	if back != site+s.Len() {
		t.Fatalf("jumps back to 0x%x, want 0x%x", back, site+s.Len())
	}
	j := CpuidJump(site, tr)
	if len(j) != 5 || j[0] != 0xe9 || uint64(int64(site+5)+int64(int32(binary.LittleEndian.Uint32(j[1:])))) != tr {
		t.Fatalf("jump % x", j)
	}
	if !InRel32(site, tr) || InRel32(site, site+1<<32) {
		t.Fatal("InRel32")
	}
}

// ld.so's cpu-feature code has constant sites, each a mov before a cpuid
// that Scan patches.
func TestScanCpuidLdso(t *testing.T) {
	f, cpuids := ldsoCpuids(t)
	sites, err := ScanCpuid(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) < 5 {
		t.Fatalf("%d constant cpuid sites in %s", len(sites), ldso)
	}
	for _, s := range sites {
		b := make([]byte, s.Len())
		if _, err := f.ReadAt(b, int64(s.Off)); err != nil {
			t.Fatal(err)
		}
		if b[0] != 0xb8 || binary.LittleEndian.Uint32(b[1:]) != s.Leaf || !bytes.Equal(b[len(b)-2:], []byte{0x0f, 0xa2}) || !cpuids[s.Off+s.Len()-2] {
			t.Errorf("site %+v: % x", s, b)
		}
	}
}

const ldso = "/lib64/ld-linux-x86-64.so.2"

// ldsoCpuids opens ld.so (the test is skipped without it) and returns it
// with the offsets of its cpuids (Scan's cpuid sites).
func ldsoCpuids(t *testing.T) (*os.File, map[uint64]bool) {
	f, err := os.Open(ldso)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { f.Close() })
	all, err := Scan(f)
	if err != nil {
		t.Fatal(err)
	}
	cpuids := map[uint64]bool{}
	for _, s := range all {
		if s.Kind == Cpuid {
			cpuids[s.Off] = true
		}
	}
	return f, cpuids
}

// CachedScan keeps each kind of scan apart.
func TestCachedScanKinds(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	if _, err := ScanFileKeyed(exe, "abc", cache); err != nil {
		t.Fatal(err)
	}
	got, err := CachedScan(exe, "cpuid", "abc", cache, ScanCpuid)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ScanCpuid(mustOpen(t, exe))
	if len(got) != len(want) {
		t.Fatalf("cpuid scan from the cache of another kind: %d sites, want %d", len(got), len(want))
	}
	for _, name := range []string{"digest-abc.bin", "cpuid-digest-abc.bin"} {
		if _, err := os.Stat(cache + "/" + name); err != nil {
			t.Error(err)
		}
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// ld.so's text segment ends inside a page: the rest of it is padding.
func TestCodePaddingLdso(t *testing.T) {
	f, err := os.Open("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	off, n := CodePadding(f)
	if n == 0 || (off+n)%4096 != 0 {
		t.Fatalf("padding [0x%x, +0x%x)", off, n)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, int64(off)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, make([]byte, n)) {
		t.Fatalf("padding at 0x%x is not zeros", off)
	}
}

// Pruning removes the unversioned entries and the build directories
// unused for longer than the age, and keeps the recent ones.
func TestPruneCacheDirs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"build-old", "build-new", "other"} {
		if err := os.Mkdir(root+"/"+d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(root+"/digest-x.json", []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(root+"/build-old", old, old); err != nil {
		t.Fatal(err)
	}
	pruneCacheDirs(root, 7*24*time.Hour)
	for name, want := range map[string]bool{"build-old": false, "build-new": true, "other": true, "digest-x.json": false} {
		if _, err := os.Stat(root + "/" + name); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
	if id := selfBuildID(); id == "" {
		t.Error("the test binary has no build ID")
	}
}
