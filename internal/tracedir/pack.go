package tracedir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// PackStats describes what Pack did.
type PackStats struct {
	Traces int
	Files  int   // captured files named by the manifests
	Before int64 // bytes: the sum of the sizes of the captured files
	After  int64 // bytes stored once each (traces and store), after packing
	Copied int   // files made private copies (were hard links or shared)
	Shared int   // files moved to the pack store shared by the traces
}

type packFile struct {
	trace string // trace directory
	name  string // relative to the trace: files/N-base
	dg    trace.FileDigest
}

// Pack makes the traces in dirs (absolute paths) independent of the
// system they were recorded on: every captured file becomes a private,
// read-only copy with a link count of one, and identical files are stored
// once. Within a trace, a duplicate becomes a relative symbolic link to
// the first copy. When share is set, files common to several of the
// traces that live in the same directory move to the pack store of that
// directory (StoreDir), to which the traces link; such traces must then
// be moved together with their directory. Each trace is verified before
// and after, and every mapping of its events must name a captured file.
func Pack(dirs []string, share bool) (PackStats, error) {
	var st PackStats
	var all []packFile
	for _, dir := range dirs {
		files, err := packOne(dir, &st)
		if err != nil {
			return st, err
		}
		all = append(all, files...)
		st.Traces++
	}
	if share {
		if err := shareCommon(all, &st); err != nil {
			return st, err
		}
	}
	// Verify again and count what is stored.
	seen := map[string]bool{}
	for _, dir := range dirs {
		h, err := readVerified(dir)
		if err != nil {
			return st, err
		}
		for name := range h.Files {
			real, err := trace.ResolveFile(dir, name)
			if err != nil {
				return st, err
			}
			if seen[real] {
				continue
			}
			seen[real] = true
			fi, err := os.Stat(real)
			if err != nil {
				return st, err
			}
			if nlink(fi) > 1 {
				return st, fmt.Errorf("pack %s: %s still has %d links", dir, name, nlink(fi))
			}
			st.After += fi.Size()
		}
	}
	return st, nil
}

func nlink(fi os.FileInfo) uint64 {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}

// readVerified opens the trace in dir and verifies all its files.
func readVerified(dir string) (trace.Header, error) {
	rd, err := trace.Open(dir)
	if err != nil {
		return trace.Header{}, err
	}
	defer rd.Close()
	if err := rd.VerifyFiles(); err != nil {
		return trace.Header{}, err
	}
	return rd.Header(), nil
}

// packOne makes the files of one trace private copies, writes the
// manifest of a trace recorded before manifests existed, checks that
// every mapped file is captured, and links duplicates within the trace.
func packOne(dir string, st *PackStats) ([]packFile, error) {
	h, err := readVerified(dir)
	if err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	if !h.Complete {
		return nil, fmt.Errorf("pack %s: the recording ended abnormally; only complete traces are packed", dir)
	}
	if h.Files == nil {
		// A format 1 trace: its files are listed now, from what they hold.
		ents, err := os.ReadDir(filepath.Join(dir, trace.FilesDir))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("pack %s: %w", dir, err)
		}
		h.Files = map[string]trace.FileDigest{}
		for _, e := range ents {
			name := trace.FilesDir + "/" + e.Name()
			if err := makePrivate(dir, name, st); err != nil {
				return nil, err
			}
			if h.Files[name], err = trace.Digest(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("pack %s: %w", dir, err)
			}
		}
		if err := trace.RewriteHeader(dir, h); err != nil {
			return nil, fmt.Errorf("pack %s: %w", dir, err)
		}
	}
	if err := checkMapped(dir, h); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(h.Files))
	for n := range h.Files {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return fileNum(names[i]) < fileNum(names[j]) })
	first := map[string]string{} // sha -> name of its first copy
	var out []packFile
	for _, n := range names {
		d := h.Files[n]
		st.Files++
		st.Before += d.Size
		if err := makePrivate(dir, n, st); err != nil {
			return nil, err
		}
		if f, ok := first[d.SHA256]; ok {
			if err := replaceWithLink(filepath.Join(dir, n), filepath.Base(f)); err != nil {
				return nil, fmt.Errorf("pack %s: %w", dir, err)
			}
			continue
		}
		first[d.SHA256] = n
		out = append(out, packFile{trace: dir, name: n, dg: d})
	}
	return out, nil
}

func fileNum(name string) int {
	n := 0
	for _, c := range strings.TrimPrefix(name, trace.FilesDir+"/") {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// checkMapped reports a mapping of the events that names a file the
// trace does not hold (replay would need it).
func checkMapped(dir string, h trace.Header) error {
	rd, err := trace.Open(dir)
	if err != nil {
		return err
	}
	defer rd.Close()
	for n := uint64(1); ; n++ {
		ev, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("pack: %w", err)
		}
		for _, m := range ev.Maps {
			if m.File == "" {
				continue
			}
			if _, ok := h.Files[m.File]; !ok {
				return fmt.Errorf("pack %s: event %d maps %s as %s, which the trace does not hold", dir, n, m.Name, m.File)
			}
		}
	}
}

// makePrivate replaces the file name of the trace in dir by a private
// read-only copy when it is a hard link (link count above one) or a
// symbolic link out of the trace. Links within the trace stay.
func makePrivate(dir, name string, st *PackStats) error {
	p := filepath.Join(dir, name)
	fi, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("pack %s: %w", dir, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		if _, err := trace.ResolveFile(dir, name); err == nil {
			return nil // another file of the trace, or the pack store
		}
	} else if fi.Mode().IsRegular() && nlink(fi) == 1 {
		return os.Chmod(p, 0o400)
	}
	if err := copyOver(p, p); err != nil {
		return fmt.Errorf("pack %s: %s: %w", dir, name, err)
	}
	st.Copied++
	return nil
}

// copyOver writes a private read-only copy of src at dst (which may be
// src itself, or a link to it) atomically: a temporary file, fsynced,
// renamed over dst.
func copyOver(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".pack-tmp"
	os.Remove(tmp)
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if err == nil {
		err = out.Chmod(0o400)
	}
	if e := out.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// replaceWithLink atomically replaces path by a symbolic link to target.
func replaceWithLink(path, target string) error {
	tmp := path + ".pack-tmp"
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// shareCommon moves the files that several traces of one directory hold
// to that directory's pack store.
func shareCommon(files []packFile, st *PackStats) error {
	type key struct{ parent, sha string }
	groups := map[key][]packFile{}
	var order []key
	for _, f := range files {
		k := key{filepath.Dir(f.trace), f.dg.SHA256}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		store := filepath.Join(k.parent, trace.StoreDir)
		if err := os.MkdirAll(store, 0o700); err != nil {
			return fmt.Errorf("pack: %w", err)
		}
		if err := os.Chmod(store, 0o700); err != nil {
			return fmt.Errorf("pack: %w", err)
		}
		dst := filepath.Join(store, k.sha)
		if d, err := trace.Digest(dst); err != nil || d != g[0].dg {
			src, err := trace.ResolveFile(g[0].trace, g[0].name)
			if err != nil {
				return fmt.Errorf("pack: %w", err)
			}
			if err := copyOver(src, dst); err != nil {
				return fmt.Errorf("pack: %w", err)
			}
		}
		for _, f := range g {
			p := filepath.Join(f.trace, f.name)
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				continue // already in the store
			}
			target := filepath.Join("..", "..", trace.StoreDir, k.sha)
			if err := replaceWithLink(p, target); err != nil {
				return fmt.Errorf("pack %s: %w", f.trace, err)
			}
			st.Shared++
		}
	}
	return nil
}

// StoreLinks reports whether the trace in dir links to its directory's
// pack store (so that it cannot be moved alone as it is).
func StoreLinks(dir string) bool {
	ents, _ := os.ReadDir(filepath.Join(dir, trace.FilesDir))
	for _, e := range ents {
		if t, err := os.Readlink(filepath.Join(dir, trace.FilesDir, e.Name())); err == nil && strings.Contains(t, trace.StoreDir) {
			return true
		}
	}
	return false
}

// Unshare replaces the links of the trace in dir to its directory's pack
// store by private copies, making the trace movable alone.
func Unshare(dir string) error {
	ents, _ := os.ReadDir(filepath.Join(dir, trace.FilesDir))
	for _, e := range ents {
		p := filepath.Join(dir, trace.FilesDir, e.Name())
		if t, err := os.Readlink(p); err == nil && strings.Contains(t, trace.StoreDir) {
			if err := copyOver(p, p); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
	}
	return nil
}

// CollectStore removes the files of the pack store of directory parent
// that no trace there links to any more, and the store when it is empty.
func CollectStore(parent string) error {
	store := filepath.Join(parent, trace.StoreDir)
	ents, err := os.ReadDir(store)
	if err != nil {
		return nil // no store
	}
	used := map[string]bool{}
	traces, _ := os.ReadDir(parent)
	for _, t := range traces {
		files, _ := os.ReadDir(filepath.Join(parent, t.Name(), trace.FilesDir))
		for _, f := range files {
			if l, err := os.Readlink(filepath.Join(parent, t.Name(), trace.FilesDir, f.Name())); err == nil {
				used[filepath.Base(l)] = true
			}
		}
	}
	for _, e := range ents {
		if !used[e.Name()] {
			if err := os.Remove(filepath.Join(store, e.Name())); err != nil {
				return err
			}
		}
	}
	_ = os.Remove(store) // only when empty
	return nil
}
