package patch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ScanFile is Scan of the file at path, with the result kept in cacheDir
// (if not empty) under the file's device, inode, size and modification
// time, so that system libraries are decoded once, not at every
// recording. A cache entry that cannot be read or written is ignored.
func ScanFile(path, cacheDir string) ([]Site, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var key string
	if fi, err := f.Stat(); err == nil && cacheDir != "" {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			key = fmt.Sprintf("%x-%x-%x-%x.json", st.Dev, st.Ino, st.Size, fi.ModTime().UnixNano())
			if b, err := os.ReadFile(filepath.Join(cacheDir, key)); err == nil {
				var sites []Site
				if json.Unmarshal(b, &sites) == nil {
					return sites, nil
				}
			}
		}
	}
	sites, err := Scan(f)
	if err != nil {
		return nil, err
	}
	if key != "" {
		if b, err := json.Marshal(sites); err == nil && os.MkdirAll(cacheDir, 0o700) == nil {
			tmp, err := os.CreateTemp(cacheDir, "tmp-")
			if err == nil {
				_, werr := tmp.Write(b)
				if cerr := tmp.Close(); werr == nil && cerr == nil {
					_ = os.Rename(tmp.Name(), filepath.Join(cacheDir, key))
				} else {
					_ = os.Remove(tmp.Name())
				}
			}
		}
	}
	return sites, nil
}

// DefaultCacheDir is where recordings keep scan results:
// $XDG_CACHE_HOME/gorr/sites or ~/.cache/gorr/sites ("" if neither).
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "gorr", "sites")
}
