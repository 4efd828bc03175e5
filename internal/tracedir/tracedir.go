// Package tracedir finds where traces are saved and resolves the names
// users give them, following rr's conventions.
package tracedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Latest is the name of the symlink to the newest trace.
const Latest = "latest-trace"

// SaveDir returns $GORR_TRACE_DIR, else $XDG_DATA_HOME/gorr, else
// ~/.local/share/gorr.
func SaveDir() string {
	if d := os.Getenv("GORR_TRACE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "gorr")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "gorr")
	}
	return filepath.Join(home, ".local", "share", "gorr")
}

// New creates the save directory if needed and picks the path of a new
// trace for exe: <save>/<basename>-N with the first free N. The trace
// directory itself is not created.
func New(exe string) (string, error) {
	save := SaveDir()
	if err := os.MkdirAll(save, 0o700); err != nil {
		return "", fmt.Errorf("create trace directory %s: %w", save, err)
	}
	base := filepath.Base(exe)
	for n := 0; ; n++ {
		p := filepath.Join(save, base+"-"+strconv.Itoa(n))
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
	}
}

// SetLatest points latest-trace at dir (relative link, replaced atomically).
func SetLatest(dir string) error {
	save := filepath.Dir(dir)
	tmp := filepath.Join(save, "."+Latest+".tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(dir), tmp); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(save, Latest))
}

// Resolve turns a user's trace argument into a directory: empty means
// the latest trace; a single path component is looked up in the current
// directory, then in the save directory.
func Resolve(name string) (string, error) {
	if name == "" {
		p := filepath.Join(SaveDir(), Latest)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("no latest trace in %s (record one with 'gorr record PROG')", SaveDir())
		}
		return filepath.EvalSymlinks(p)
	}
	if !strings.Contains(name, "/") {
		if st, err := os.Stat(name); err == nil && st.IsDir() {
			return filepath.Abs(name)
		}
		p := filepath.Join(SaveDir(), name)
		if _, err := os.Stat(p); err == nil {
			return filepath.EvalSymlinks(p)
		}
		return "", fmt.Errorf("trace %q not found in the current directory or in %s", name, SaveDir())
	}
	if _, err := os.Stat(name); err != nil {
		return "", fmt.Errorf("trace %s: %w", name, err)
	}
	return filepath.Abs(name)
}
