package tracedir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// mkTrace records a trace in dir capturing the files named, with one
// mapping per file so that pack finds them needed.
func mkTrace(t *testing.T, dir string, files ...string) {
	t.Helper()
	w, err := trace.Create(dir, trace.Header{Argv: []string{"prog"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := &trace.Event{Kind: trace.KindExec, Tid: 1, NewTid: 1, Maps: []trace.Mapping{}}
	for _, f := range files {
		rel, err := w.CaptureFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ev.Maps = append(ev.Maps, trace.Mapping{Start: 0x1000, End: 0x2000, Name: f, File: rel})
	}
	if err := w.Write(ev); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(w.Header()); err != nil {
		t.Fatal(err)
	}
}

func links(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(fi.Sys().(*syscall.Stat_t).Nlink)
}

func TestPackFormat1AndShare(t *testing.T) {
	src := t.TempDir()
	lib, exe := filepath.Join(src, "lib.so"), filepath.Join(src, "exe")
	os.WriteFile(lib, []byte("library content"), 0o644)
	os.WriteFile(exe, []byte("program"), 0o755)
	parent := t.TempDir()
	a, b := filepath.Join(parent, "a"), filepath.Join(parent, "b")
	mkTrace(t, a, exe, lib)
	mkTrace(t, b, lib)

	// Make a look like a format 1 trace: no manifest, no hash, and its
	// library a hard link to the original (as format 1 recorded them).
	hb, _ := os.ReadFile(filepath.Join(a, trace.HeaderFile))
	var m map[string]json.RawMessage
	json.Unmarshal(hb, &m)
	delete(m, "Files")
	delete(m, "HeaderSHA256")
	m["Version"] = json.RawMessage("1")
	hb, _ = json.Marshal(m)
	os.WriteFile(filepath.Join(a, trace.HeaderFile), hb, 0o600)
	alib := filepath.Join(a, "files", "2-lib.so")
	os.Remove(alib)
	if err := os.Link(lib, alib); err != nil {
		t.Fatal(err)
	}

	st, err := Pack([]string{a, b}, true)
	if err != nil {
		t.Fatal(err)
	}
	if st.Traces != 2 || st.Files != 3 || st.Copied != 1 || st.Shared != 2 || st.Before != 2*15+7 || st.After != 15+7 {
		t.Errorf("stats %+v", st)
	}
	if links(t, lib) != 1 {
		t.Error("the original library is still linked")
	}
	for _, d := range []string{a, b} {
		rd, err := trace.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := rd.VerifyFiles(); err != nil || rd.Header().Files == nil {
			t.Errorf("%s after pack: %v", d, err)
		}
		rd.Close()
		if l, err := os.Readlink(filepath.Join(d, "files", filepath.Base(map[string]string{a: alib, b: filepath.Join(b, "files", "1-lib.so")}[d]))); err != nil || filepath.Dir(l) != "../../"+trace.StoreDir {
			t.Errorf("%s: library not in the store: %q %v", d, l, err)
		}
	}
	// The original library may now change: the traces keep theirs.
	os.WriteFile(lib, []byte("LIBRARY CONTENT"), 0o644)
	// Moving b out of the directory gives it private copies; removing a
	// then leaves the store unused, and it goes.
	if !StoreLinks(b) {
		t.Fatal("b does not link to the store")
	}
	if err := Unshare(b); err != nil {
		t.Fatal(err)
	}
	if StoreLinks(b) {
		t.Error("b still links to the store")
	}
	if err := trace.VerifyFiles(b, mustHeader(t, b)); err != nil {
		t.Error(err)
	}
	os.RemoveAll(a)
	if err := CollectStore(parent); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(parent, trace.StoreDir)); !os.IsNotExist(err) {
		t.Errorf("store left behind: %v", err)
	}
	// Packing again is harmless.
	if _, err := Pack([]string{b}, true); err != nil {
		t.Fatal(err)
	}
}

func mustHeader(t *testing.T, dir string) trace.Header {
	t.Helper()
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	return rd.Header()
}

func TestSetLatestRefusesDirectories(t *testing.T) {
	for _, blocker := range []string{Latest, "." + Latest + ".tmp"} {
		save := t.TempDir()
		os.Mkdir(filepath.Join(save, blocker), 0o700)
		if err := SetLatestTo(save, "x-0"); err == nil {
			t.Errorf("%s is a directory: no error", blocker)
		}
	}
	save := t.TempDir()
	os.WriteFile(filepath.Join(save, "."+Latest+".tmp"), nil, 0o600) // a stale file is replaced
	if err := SetLatestTo(save, "x-0"); err != nil {
		t.Fatal(err)
	}
	if err := SetLatestTo(save, "x-1"); err != nil {
		t.Fatal(err)
	}
	if l, _ := os.Readlink(filepath.Join(save, Latest)); l != "x-1" {
		t.Errorf("latest -> %q", l)
	}
}
