package patch

import (
	"crypto/sha256"
	"debug/elf"
	"os"
	"testing"
)

func TestGoBuildIDNoteMatchesSection(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	note := goBuildIDNote(exe)
	if note == nil {
		t.Fatal("no build ID note found in the test binary's first 32 KB")
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := f.Section(".note.go.buildid").Data()
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(note) != sha256.Sum256(want) {
		t.Fatalf("note %q, section %q", note, want)
	}
}
