package tracedir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSaveDirPrecedence(t *testing.T) {
	t.Setenv("GORR_TRACE_DIR", "/a")
	t.Setenv("XDG_DATA_HOME", "/b")
	if SaveDir() != "/a" {
		t.Fatal(SaveDir())
	}
	t.Setenv("GORR_TRACE_DIR", "")
	if SaveDir() != "/b/gorr" {
		t.Fatal(SaveDir())
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	if SaveDir() != "/home/u/.local/share/gorr" {
		t.Fatal(SaveDir())
	}
}

func TestNewLatestResolve(t *testing.T) {
	save := t.TempDir()
	t.Setenv("GORR_TRACE_DIR", save)
	p0, err := New("/usr/bin/prog")
	if err != nil || p0 != filepath.Join(save, "prog-0") {
		t.Fatalf("%q %v", p0, err)
	}
	os.Mkdir(p0, 0o700)
	p1, _ := New("prog")
	if p1 != filepath.Join(save, "prog-1") {
		t.Fatal(p1)
	}
	os.Mkdir(p1, 0o700)
	if err := SetLatest(p1); err != nil {
		t.Fatal(err)
	}
	if got, err := Resolve(""); err != nil || got != p1 {
		t.Fatalf("latest: %q %v", got, err)
	}
	if got, err := Resolve("prog-0"); err != nil || got != p0 {
		t.Fatalf("by name: %q %v", got, err)
	}
	if _, err := Resolve("nope"); err == nil {
		t.Fatal("resolved a missing trace")
	}
	if st, _ := os.Stat(save); st.Mode().Perm() != 0o700 && st.Mode().Perm() != 0o755 {
		t.Logf("save dir mode %v", st.Mode().Perm())
	}
}
