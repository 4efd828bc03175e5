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
	if _, err := CheckRoot(save); err != nil {
		return "", err
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
	return SetLatestTo(filepath.Dir(dir), filepath.Base(dir))
}

// SetLatestTo makes save/latest-trace a symbolic link to target, replaced
// atomically (a link made under a temporary name, renamed over it). It
// fails with the reason when latest-trace, or the temporary name, is a
// directory or anything else than a symbolic link: it never leaves an
// old link in place silently.
func SetLatestTo(save, target string) error {
	tmp := filepath.Join(save, "."+Latest+".tmp")
	link := filepath.Join(save, Latest)
	if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("cannot update %s: it is not a symbolic link (%s); remove it", link, kind(fi))
	}
	if fi, err := os.Lstat(tmp); err == nil {
		if fi.Mode()&os.ModeSymlink == 0 && !fi.Mode().IsRegular() {
			return fmt.Errorf("cannot update %s: %s is in the way (%s); remove it", link, tmp, kind(fi))
		}
		if err := os.Remove(tmp); err != nil {
			return fmt.Errorf("cannot update %s: %w", link, err)
		}
	}
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("cannot update %s: %w", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot update %s: %w", link, err)
	}
	return nil
}

func kind(fi os.FileInfo) string {
	switch {
	case fi.IsDir():
		return "a directory"
	case fi.Mode().IsRegular():
		return "a regular file"
	}
	return "a " + fi.Mode().Type().String() + " file"
}

// CheckRoot checks the trace root save: a trace holds process memory, so
// a root that other users may write to is refused (they could replace
// traces, or plant links where the next one goes). A root with the sticky
// bit (like /tmp, mode 1777) is accepted with a warning, returned as
// text: others cannot remove or rename what is there, but can still
// create entries.
func CheckRoot(save string) (warning string, err error) {
	fi, err := os.Stat(save)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o022 == 0 {
		return "", nil
	}
	msg := fmt.Sprintf("trace directory %s is writable by other users (mode %04o), and traces hold process memory; use a private directory (chmod go-w %s, or set GORR_TRACE_DIR)",
		save, fi.Mode().Perm()|stickyBits(fi), save)
	if fi.Mode()&os.ModeSticky != 0 {
		return msg, nil
	}
	return "", errors.New(msg)
}

func stickyBits(fi os.FileInfo) os.FileMode {
	if fi.Mode()&os.ModeSticky != 0 {
		return 0o1000
	}
	return 0
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
