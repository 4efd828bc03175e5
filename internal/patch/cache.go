package patch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ScanFile is Scan of the file at path, with the result kept in cacheDir
// (if not empty) under the SHA-256 of the file's content, so that system
// libraries are decoded once, not at every recording. A cache entry that cannot be read or written is ignored.
func ScanFile(path, cacheDir string) ([]Site, error) {
	return ScanFileKeyed(path, "", cacheDir)
}

// ScanFileKeyed is ScanFile with the cache keyed by digest, a hash of the
// file's content the caller already has (the trace manifest's, for a
// captured file), so the file is not read once more to hash it. An empty
// digest makes it ScanFile.
func ScanFileKeyed(path, digest, cacheDir string) ([]Site, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Only ELF files have sites; checked first so that a huge file of
	// another kind (a memfd holding JIT code, a data file mapped
	// executable) is not hashed for the cache.
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || string(magic[:]) != "\x7fELF" {
		return nil, fmt.Errorf("%s: not an ELF file", path)
	}
	var key string
	if cacheDir != "" && digest != "" {
		key = "digest-" + digest + ".json"
		if b, err := os.ReadFile(filepath.Join(cacheDir, key)); err == nil {
			var sites []Site
			if json.Unmarshal(b, &sites) == nil {
				return sites, nil
			}
		}
	} else if cacheDir != "" {
		// Keyed by content: the recorder scans its private copies of
		// mapped files, a new inode at every recording.
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			key = "sha256-" + hex.EncodeToString(h.Sum(nil)) + ".json"
			if b, err := os.ReadFile(filepath.Join(cacheDir, key)); err == nil {
				var sites []Site
				if json.Unmarshal(b, &sites) == nil {
					return sites, nil
				}
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
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
