package trace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sameInode(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(fa, fb)
}

func TestCaptureDedupe(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "trace")
	w := mustCreate(t, dir)
	defer mustClose(t, w)
	a := filepath.Join(root, "lib.so")
	os.WriteFile(a, []byte("version 1"), 0o644)
	rel1, err := w.CaptureFile(a)
	if err != nil {
		t.Fatal(err)
	}
	if rel1 != "files/1-lib.so" {
		t.Errorf("rel = %q", rel1)
	}
	rel2, err := w.CaptureFile(a)
	if err != nil {
		t.Fatal(err)
	}
	// Another name of the same inode is the same file.
	sym := filepath.Join(root, "sym.so")
	os.Symlink(a, sym)
	rel3, err := w.CaptureFile(sym)
	if err != nil {
		t.Fatal(err)
	}
	if rel2 != rel1 || rel3 != rel1 {
		t.Errorf("same file captured as %q, %q, %q", rel1, rel2, rel3)
	}
	// Another file gets another name.
	b := filepath.Join(root, "other.so")
	os.WriteFile(b, []byte("x"), 0o644)
	relB, err := w.CaptureFile(b)
	if err != nil || relB != "files/2-other.so" {
		t.Errorf("other: %q %v", relB, err)
	}
}

// TestCaptureCopy: files that may be rewritten in place are copied; the
// copy keeps the content of the time of capture.
func TestCaptureCopy(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "trace")
	w := mustCreate(t, dir)
	defer mustClose(t, w)

	writable := filepath.Join(root, "prog")
	os.WriteFile(writable, []byte("original program"), 0o775)
	os.Chmod(writable, 0o775) // group-writable
	rel, err := w.CaptureFile(writable)
	if err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(dir, rel)
	if sameInode(t, got, writable) {
		t.Fatal("group-writable file was linked")
	}
	if fi, _ := os.Stat(got); fi.Mode() != 0o400 {
		t.Errorf("copy has mode %v", fi.Mode())
	}
	// Overwritten in place (same inode): the copy keeps the old content.
	f, _ := os.OpenFile(writable, os.O_WRONLY|os.O_TRUNC, 0)
	f.WriteString("changed!")
	f.Close()
	if b, _ := os.ReadFile(got); string(b) != "original program" {
		t.Errorf("copy content %q", b)
	}
	// The changed file (new size and mtime) is captured anew.
	rel2, err := w.CaptureFile(writable)
	if err != nil || rel2 == rel {
		t.Errorf("changed file: %q %v", rel2, err)
	}
	// Deleted: the copy stays.
	os.Remove(writable)
	if b, _ := os.ReadFile(got); string(b) != "original program" {
		t.Errorf("copy content after delete %q", b)
	}

	if os.Geteuid() == 0 {
		// Not owned by root: copied even though not writable by others.
		user := filepath.Join(root, "user.so")
		os.WriteFile(user, []byte("user lib"), 0o644)
		if err := os.Chown(user, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		rel, err := w.CaptureFile(user)
		if err != nil {
			t.Fatal(err)
		}
		if sameInode(t, filepath.Join(dir, rel), user) {
			t.Error("file owned by uid 1000 was linked")
		}
	}
}

// TestCaptureNoLink: a root-owned read-only file in a system directory on
// the filesystem of the trace is copied too (it used to be hard-linked):
// an in-place rewrite of the original leaves the trace unchanged.
func TestCaptureNoLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own a file as root")
	}
	sys, err := os.MkdirTemp("/usr/local/lib", "gorr-capture-test-")
	if err != nil {
		t.Skipf("cannot create a directory under /usr: %v", err)
	}
	defer os.RemoveAll(sys)
	dir := filepath.Join(sys, "trace")
	w := mustCreate(t, dir)
	defer mustClose(t, w)
	lib := filepath.Join(sys, "libc.so.6")
	os.WriteFile(lib, []byte("libc v1"), 0o644)
	os.Chmod(lib, 0o755)
	rel, err := w.CaptureFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(dir, rel)
	if sameInode(t, got, lib) {
		t.Fatal("root-owned read-only system file was linked, want a copy")
	}
	os.WriteFile(lib, []byte("libc v2"), 0o755) // in place
	if b, _ := os.ReadFile(got); string(b) != "libc v1" {
		t.Errorf("captured content %q", b)
	}
}

func TestCaptureErrors(t *testing.T) {
	root := t.TempDir()
	w := mustCreate(t, filepath.Join(root, "trace"))
	missing := filepath.Join(root, "missing.so")
	_, err := w.CaptureFile(missing)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "capture "+missing) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := w.CaptureFile(root); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	// Long names are shortened.
	long := filepath.Join(root, strings.Repeat("n", 250))
	os.WriteFile(long, []byte("x"), 0o600)
	rel, err := w.CaptureFile(long)
	if err != nil || len(filepath.Base(rel)) > 255 {
		t.Errorf("long name: %q %v", rel, err)
	}
	mustClose(t, w)
	if _, err := w.CaptureFile(long); !errors.Is(err, ErrWriterClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestManifestBeforeEvents: the flush that writes the events after a
// capture writes the manifest first, so a trace whose recorder dies
// right after it lists every file its flushed events can name.
func TestManifestBeforeEvents(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "trace")
	w := mustCreate(t, dir)
	defer mustClose(t, w)
	var rels []string
	for _, c := range []string{"one", "two"} {
		p := filepath.Join(root, c)
		os.WriteFile(p, []byte(c), 0o644)
		rel, err := w.CaptureFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	writeAll(t, w, randEvents(1, 3))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rd, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for _, rel := range rels {
		if _, ok := rd.Header().Files[rel]; !ok {
			t.Errorf("%s not in the manifest after the flush", rel)
		}
	}
	if err := rd.VerifyFiles(); err != nil {
		t.Error(err)
	}
}
