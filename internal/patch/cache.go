package patch

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
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
	return CachedScan(path, "", digest, cacheDir, Scan)
}

// CachedScan runs scan (a scanner of ELF files: this package's Scan, or
// the system-call sites of internal/syscallbuf) over the file at path,
// with its result kept in cacheDir (if not empty) (flat.go's encoding) under kind (a
// name telling scanners apart; "" for Scan's) and digest (see
// ScanFileKeyed; the file's SHA-256 when empty). A cache entry that
// cannot be read or written is ignored. Entries are not versioned: the
// directory is (DefaultCacheDir names the gorr binary that wrote them).
func CachedScan[T any](path, kind, digest, cacheDir string, scan func(io.ReaderAt) ([]T, error)) ([]T, error) {
	prefix := ""
	if kind != "" {
		prefix = kind + "-"
	}
	var key string
	if cacheDir != "" && digest != "" {
		// Looked up first: an entry exists only for an ELF file
		// scanned before, and the file itself need not be opened (the
		// 22 lookups of a python recording took 2 ms).
		key = prefix + "digest-" + digest + ".bin"
		if sites, ok := readEntry[T](filepath.Join(cacheDir, key)); ok {
			return sites, nil
		}
	}
	f, err := osfile.Open(path, os.O_RDONLY, 0)
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
	if key == "" && cacheDir != "" {
		// Keyed by content: the recorder scans its private copies of
		// mapped files, a new inode at every recording.
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			key = prefix + "sha256-" + hex.EncodeToString(h.Sum(nil)) + ".bin"
			if sites, ok := readEntry[T](filepath.Join(cacheDir, key)); ok {
				return sites, nil
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
	}
	sites, err := scan(f)
	if err != nil {
		return nil, err
	}
	if key != "" {
		writeEntry(cacheDir, key, sites)
	}
	return sites, nil
}

func readEntry[T any](path string) ([]T, bool) {
	b, ok := readSmallFile(path)
	if !ok {
		return nil, false
	}
	return decodeFlat[T](b)
}

// readSmallFile reads the file at path with plain system calls (an
// os.File costs a stat, a poller registration and a finalizer).
func readSmallFile(path string) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 4096)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if n == 0 {
			return b, true
		}
		b = b[:len(b)+n]
	}
}

// writeEntry stores sites under key, atomically (a temporary file renamed).
func writeEntry[T any](cacheDir, key string, sites []T) {
	b, err := encodeFlat(sites)
	if err != nil || os.MkdirAll(cacheDir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(cacheDir, "tmp-")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil && cerr == nil {
		_ = os.Rename(tmp.Name(), filepath.Join(cacheDir, key))
	} else {
		_ = os.Remove(tmp.Name())
	}
}

// DefaultCacheDir is where recordings keep scan results:
// $XDG_CACHE_HOME/gorr/sites or ~/.cache/gorr/sites ("" if neither), in a
// subdirectory named after the running gorr binary's build ID, so that a
// gorr whose scanners changed never reads another's results. The
// subdirectories of other builds not used for a week are removed when a
// new one is made.
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	root := filepath.Join(d, "gorr", "sites")
	id := selfBuildID()
	if id == "" {
		return "" // no version to key the entries by: no cache
	}
	dir := filepath.Join(root, id)
	now := time.Now()
	if os.Chtimes(dir, now, now) != nil { // (its time says when it was last used)
		pruneCacheDirs(root, 7*24*time.Hour)
	}
	return dir
}

// selfBuildID is a short hash of the running executable's Go build ID
// ("" if it has none).
func selfBuildID() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if note := goBuildIDNote(exe); note != nil {
		sum := sha256.Sum256(note)
		return "build-" + hex.EncodeToString(sum[:8])
	}
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) == 0 {
		return ""
	}
	sum := sha256.Sum256(b)
	return "build-" + hex.EncodeToString(sum[:8])
}

// goBuildIDNote returns the Go build ID note of the executable at path
// (the content of its .note.go.buildid section) when it is where the Go
// linker puts it, near the start of the file (nil otherwise): a read of
// a few KB instead of parsing the section headers of a binary of 10 MB
// (1-2 ms at every recording).
func goBuildIDNote(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 32<<10)
	n, _ := io.ReadFull(f, b)
	b = b[:n]
	// namesz 4, descsz, type 4 (the Go build ID), name "Go\0\0", desc.
	const tag = "\x04\x00\x00\x00Go\x00\x00"
	i := bytes.Index(b, []byte(tag))
	if i < 8 || binary.LittleEndian.Uint32(b[i-8:]) != 4 {
		return nil
	}
	desc := int(binary.LittleEndian.Uint32(b[i-4:]))
	end := i + len(tag) + (desc+3)&^3
	if desc == 0 || end > len(b) {
		return nil
	}
	return b[i-8 : end]
}

// pruneCacheDirs removes the entries of root unused for longer than age:
// the build subdirectories, and the entries of the unversioned layout
// that came before them.
func pruneCacheDirs(root string, age time.Duration) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".json") || strings.HasSuffix(e.Name(), ".bin")) || e.IsDir() && strings.HasPrefix(e.Name(), "build-") && time.Since(fi.ModTime()) > age {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}
