package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// TamperError reports a file of a trace whose content differs from what
// was recorded (errors.Is(err, ErrTampered)).
type TamperError struct {
	Dir    string // the trace directory
	File   string // the file, relative to Dir ("files/1-h", "header.json")
	Reason string
}

func (e *TamperError) Error() string {
	return fmt.Sprintf("trace %s: %s: %s", e.Dir, e.File, e.Reason)
}

// Is makes errors.Is(err, ErrTampered) true.
func (e *TamperError) Is(target error) bool { return target == ErrTampered }

// StoreDir is the directory, next to the traces it serves, where
// 'gorr pack' keeps the files common to several traces; a trace refers to
// them through relative symbolic links in files/.
const StoreDir = ".gorr-files"

// VerifyFiles checks every captured file of the trace against the
// manifest of its header (size and SHA-256) and returns a *TamperError
// naming the first file that is missing, differs, or leaves the trace. A
// captured file may be a symbolic link (made by 'gorr pack') to another
// file of the trace or to the pack store next to the trace. Files in
// files/ that the manifest does not list are reported too, in a complete
// trace. A format 1 trace has no manifest: nothing is checked.
func (r *Reader) VerifyFiles() error {
	return VerifyFiles(r.dir, r.hdr)
}

// VerifyFiles checks the captured files of the trace in dir, whose header
// is h (see Reader.VerifyFiles).
func VerifyFiles(dir string, h Header) error {
	return verifyFiles(dir, h, verifyCache{})
}

func verifyFiles(dir string, h Header, cache verifyCache) error {
	if h.Version < 2 && h.Files == nil {
		return nil
	}
	names := make([]string, 0, len(h.Files))
	for n := range h.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	marked := false
	for _, n := range names {
		m, err := verifyOne(dir, n, h.Files[n], cache)
		if err != nil {
			return err
		}
		marked = marked || m
	}
	if marked {
		cache.trimSometimes()
	}
	if !h.Complete {
		return nil
	}
	ents, err := os.ReadDir(filepath.Join(dir, FilesDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("trace %s: %w", dir, err)
	}
	for _, e := range ents {
		n := FilesDir + "/" + e.Name()
		if _, ok := h.Files[n]; !ok {
			return &TamperError{Dir: dir, File: n, Reason: "not part of the recording"}
		}
	}
	return nil
}

// ResolveFile returns the path of the regular file that name (relative
// to the trace dir) stands for, following the symbolic links 'gorr pack'
// makes, and checks that it stays within the trace or its pack store.
func ResolveFile(dir, name string) (string, error) {
	p := filepath.Join(dir, filepath.Clean("/"+name))
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	rdir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	store := filepath.Join(filepath.Dir(rdir), StoreDir)
	if !strings.HasPrefix(real, rdir+"/") && !strings.HasPrefix(real, store+"/") {
		return "", fmt.Errorf("links to %s, outside the trace", real)
	}
	return real, nil
}

// verifyOne checks the captured file name against want; marked tells
// whether it wrote a marker in the verification cache.
func verifyOne(dir, name string, want FileDigest, cache verifyCache) (marked bool, err error) {
	real, err := ResolveFile(dir, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, &TamperError{Dir: dir, File: name, Reason: "missing from the trace"}
		}
		return false, &TamperError{Dir: dir, File: name, Reason: err.Error()}
	}
	f, err := os.Open(real)
	if err != nil {
		return false, &TamperError{Dir: dir, File: name, Reason: err.Error()}
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, &TamperError{Dir: dir, File: name, Reason: "not a regular file"}
	}
	if st.Size == want.Size && cache.matched(&st, want) {
		return false, nil
	}
	got, err := digestOf(f)
	if err != nil {
		return false, &TamperError{Dir: dir, File: name, Reason: err.Error()}
	}
	if got != want {
		return false, &TamperError{Dir: dir, File: name, Reason: "content does not match the recording"}
	}
	return cache.remember(&st, want), nil
}

// Digest returns the size and SHA-256 of the file at path.
func Digest(path string) (FileDigest, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileDigest{}, err
	}
	defer f.Close()
	return digestOf(f)
}
