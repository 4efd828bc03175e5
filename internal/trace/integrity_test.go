package trace

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sealHeader sets HeaderSHA256 of the JSON header b to match its content.
func sealHeader(t testing.TB, b []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	sum, err := headerSum(b)
	if err != nil {
		t.Fatal(err)
	}
	m[headerHashKey], _ = json.Marshal(sum)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNeverLinked: even a root-owned read-only system file is copied, so
// that writing the trace's file cannot write the system's, and the copy
// is read-only.
func TestNeverLinked(t *testing.T) {
	lib := "/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(lib); err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, dir)
	rel, err := w.CaptureFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	if sameInode(t, filepath.Join(dir, rel), lib) {
		t.Fatal("system library hard-linked into the trace")
	}
	fi, _ := os.Stat(filepath.Join(dir, rel))
	if fi.Mode().Perm() != 0o400 {
		t.Errorf("captured copy has mode %v, want 0400", fi.Mode())
	}
	rd, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if err := rd.VerifyFiles(); err != nil {
		t.Fatal(err)
	}
}

// TestContentDedupe: two inodes with the same content are stored once.
func TestContentDedupe(t *testing.T) {
	root := t.TempDir()
	w := mustCreate(t, filepath.Join(root, "trace"))
	defer mustClose(t, w)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	os.WriteFile(a, []byte("same"), 0o644)
	os.WriteFile(b, []byte("same"), 0o644)
	ra, _ := w.CaptureFile(a)
	rb, _ := w.CaptureFile(b)
	if ra != rb || ra != "files/1-a" {
		t.Errorf("same content captured as %q and %q", ra, rb)
	}
	os.WriteFile(b, []byte("other"), 0o644)
	if rb, _ := w.CaptureFile(b); rb != "files/2-b" {
		t.Errorf("new content captured as %q", rb)
	}
}

// TestTamperEveryFile: changing, truncating or removing any captured file
// or editing the header is reported with the file's name, before any
// event is read; the manifest is written while recording.
func TestTamperEveryFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "trace")
	w := mustCreate(t, dir)
	for i, c := range []string{"one", "two", "three"} {
		p := filepath.Join(root, "f"+string(rune('0'+i)))
		os.WriteFile(p, []byte(c), 0o644)
		if _, err := w.CaptureFile(p); err != nil {
			t.Fatal(err)
		}
	}
	// Before Close, within flushInterval of the captures (without any
	// event or flush after them), the header already lists the files.
	listed := false
	for deadline := time.Now().Add(20 * flushInterval); !listed && time.Now().Before(deadline); time.Sleep(flushInterval / 4) {
		rd, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		listed = len(rd.Header().Files) == 3 && rd.VerifyFiles() == nil
		rd.Close()
	}
	if !listed {
		t.Fatal("incomplete trace: the header does not list the captured files")
	}
	mustClose(t, w)
	rd, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := rd.Header()
	rd.Close()
	if err := VerifyFiles(dir, h); err != nil {
		t.Fatal(err)
	}
	for name := range h.Files {
		p := filepath.Join(dir, name)
		orig, _ := os.ReadFile(p)
		for _, how := range []string{"flip", "truncate", "remove"} {
			os.Chmod(p, 0o600)
			switch how {
			case "flip":
				b := append([]byte(nil), orig...)
				b[0] ^= 1
				os.WriteFile(p, b, 0o600)
			case "truncate":
				os.WriteFile(p, orig[:1], 0o600)
			case "remove":
				os.Remove(p)
			}
			err := VerifyFiles(dir, h)
			var te *TamperError
			if !errors.As(err, &te) || te.File != name || !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), name+": ") {
				t.Errorf("%s %s: %v", how, name, err)
			}
			os.Remove(p)
			os.WriteFile(p, orig, 0o400)
		}
	}
	// An extra file is reported.
	os.WriteFile(filepath.Join(dir, FilesDir, "9-extra"), nil, 0o600)
	if err := VerifyFiles(dir, h); err == nil || !strings.Contains(err.Error(), "files/9-extra: not part of the recording") {
		t.Errorf("extra file: %v", err)
	}
	os.Remove(filepath.Join(dir, FilesDir, "9-extra"))
	// Every header key edited, and the hash removed, are reported.
	hb, _ := os.ReadFile(filepath.Join(dir, HeaderFile))
	var m map[string]json.RawMessage
	json.Unmarshal(hb, &m)
	for k := range m {
		edited := map[string]json.RawMessage{}
		for k2, v := range m {
			edited[k2] = v
		}
		if k == headerHashKey {
			delete(edited, k)
		} else {
			edited[k] = json.RawMessage(`"edited"`)
			if string(m[k]) == `"edited"` {
				edited[k] = json.RawMessage(`"x"`)
			}
		}
		b, _ := json.Marshal(edited)
		os.WriteFile(filepath.Join(dir, HeaderFile), b, 0o600)
		_, err := Open(dir)
		if err == nil || !strings.Contains(err.Error(), HeaderFile) {
			t.Errorf("header key %s edited: %v", k, err)
		}
	}
	// Reformatting without changing a value is not an edit.
	var pretty map[string]any
	json.Unmarshal(hb, &pretty)
	b, _ := json.MarshalIndent(pretty, "", "    ")
	os.WriteFile(filepath.Join(dir, HeaderFile), b, 0o600)
	if rd, err := Open(dir); err != nil {
		t.Errorf("reformatted header: %v", err)
	} else {
		rd.Close()
	}
}

var libcFiles = []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2", "/etc/ld.so.cache"}

// BenchmarkCaptureLibc: the record-time cost of capturing what a C
// program maps (copy or reflink, hash, header rewrite), without the file
// cache ("copy") and with it, after a first capture ("cached": links).
func BenchmarkCaptureLibc(b *testing.B) {
	for _, p := range libcFiles {
		if _, err := os.Stat(p); err != nil {
			b.Skip(err)
		}
	}
	for _, cached := range []bool{false, true} {
		name := "copy"
		if cached {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			root := b.TempDir()
			cache := ""
			if cached {
				cache = filepath.Join(root, "cache")
			}
			for i := 0; i < b.N; i++ {
				dir := filepath.Join(root, "t"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('0'+i/26%10)))
				b.StopTimer()
				os.RemoveAll(dir)
				w, err := Create(dir, testHeader())
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				w.UseFileCache(cache)
				for _, p := range libcFiles {
					if _, err := w.CaptureFile(p); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				w.Close(w.Header())
				b.StartTimer()
			}
		})
	}
}

// BenchmarkVerifyLibc: the replay-time cost of verifying those files.
func BenchmarkVerifyLibc(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "t")
	w, err := Create(dir, testHeader())
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range libcFiles {
		if _, err := w.CaptureFile(p); err != nil {
			b.Skip(err)
		}
	}
	w.Close(w.Header())
	rd, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := rd.VerifyFiles(); err != nil {
			b.Fatal(err)
		}
	}
}
