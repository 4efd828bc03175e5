package main

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/gorr-debugger/gorr/internal/cpu"
	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracedir"
)

// helpWanted prints the usage of command name and reports true when args
// ask for it.
func helpWanted(name string, args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" {
			cmdHelp([]string{name})
			return true
		}
	}
	return false
}

// openVerified resolves and opens a trace and verifies its files.
func openVerified(name string) (*trace.Reader, error) {
	dir, err := tracedir.Resolve(name)
	if err != nil {
		return nil, err
	}
	rd, err := trace.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := rd.VerifyFiles(); err != nil {
		rd.Close()
		return nil, err
	}
	return rd, nil
}

func cmdPack(args []string) int {
	if helpWanted("pack", args) {
		return 0
	}
	share := true
	var names []string
	for _, a := range args {
		switch {
		case a == "--self-contained":
			share = false
		case strings.HasPrefix(a, "-"):
			return fatalf("pack: unknown option %s (see 'gorr help pack')", a)
		default:
			names = append(names, a)
		}
	}
	if len(names) == 0 {
		names = []string{""}
	}
	var dirs []string
	for _, n := range names {
		dir, err := tracedir.Resolve(n)
		if err != nil {
			return fatalf("pack: %v", err)
		}
		dirs = append(dirs, dir)
	}
	st, err := tracedir.Pack(dirs, share)
	if err != nil {
		return fatalf("%v", err)
	}
	fmt.Fprintf(os.Stderr, "gorr: packed %d trace(s): %d captured files, %d bytes stored (%d bytes before deduplication); %d made private copies, %d moved to the shared store\n",
		st.Traces, st.Files, st.After, st.Before, st.Copied, st.Shared)
	return 0
}

func cmdLs(args []string) int {
	if helpWanted("ls", args) {
		return 0
	}
	long := false
	for _, a := range args {
		if a != "-l" {
			return fatalf("ls: unknown argument %s (see 'gorr help ls')", a)
		}
		long = true
	}
	save := tracedir.SaveDir()
	ents, err := os.ReadDir(save)
	if errors.Is(err, os.ErrNotExist) {
		return 0 // no trace recorded yet
	}
	if err != nil {
		return fatalf("ls: %v", err)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
	if long {
		fmt.Fprintln(tw, "NAME\tSIZE\tDATE\tEXIT\tCMD")
	}
	for _, e := range ents {
		if !e.IsDir() || e.Name() == trace.StoreDir {
			continue
		}
		dir := filepath.Join(save, e.Name())
		if _, err := os.Stat(filepath.Join(dir, trace.HeaderFile)); err != nil {
			continue
		}
		if !long {
			fmt.Fprintln(tw, e.Name())
			continue
		}
		size := dirSize(dir)
		rd, err := trace.Open(dir)
		if err != nil {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t(unreadable: %v)\n", e.Name(), humanSize(size), err)
			continue
		}
		h := rd.Header()
		rd.Close()
		exit := "-"
		if h.Complete {
			ws := syscall.WaitStatus(h.ExitStatus)
			if ws.Signaled() {
				exit = linux.SignalName(int(ws.Signal()))
			} else {
				exit = fmt.Sprint(ws.ExitStatus())
			}
		} else {
			exit = "incomplete"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name(), humanSize(size), h.Created.Local().Format(time.DateTime), exit, strings.Join(h.Argv, " "))
	}
	tw.Flush()
	return 0
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fK", float64(n)/(1<<10))
	}
	return fmt.Sprint(n)
}

func cmdRm(args []string) int {
	if helpWanted("rm", args) {
		return 0
	}
	if len(args) == 0 {
		return fatalf("rm: usage: gorr rm TRACE...")
	}
	rc := 0
	for _, a := range args {
		dir, err := tracedir.Resolve(a)
		if err != nil {
			rc = fatalf("rm: %v", err)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, trace.HeaderFile)); err != nil {
			rc = fatalf("rm: %s is not a gorr trace", dir)
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			rc = fatalf("rm: %v", err)
			continue
		}
		parent := filepath.Dir(dir)
		for _, save := range []string{parent, tracedir.SaveDir()} {
			latest := filepath.Join(save, tracedir.Latest)
			if t, err := os.Readlink(latest); err == nil && (t == dir || filepath.Join(save, t) == dir) {
				_ = os.Remove(latest)
			}
		}
		if err := tracedir.CollectStore(parent); err != nil {
			rc = fatalf("rm: pack store of %s: %v", parent, err)
		}
	}
	return rc
}

func cmdMv(args []string) int {
	if helpWanted("mv", args) {
		return 0
	}
	if len(args) != 2 {
		return fatalf("mv: usage: gorr mv OLD NEW")
	}
	old, err := tracedir.Resolve(args[0])
	if err != nil {
		return fatalf("mv: %v", err)
	}
	if _, err := os.Stat(filepath.Join(old, trace.HeaderFile)); err != nil {
		return fatalf("mv: %s is not a gorr trace", old)
	}
	dst := args[1]
	if !strings.Contains(dst, "/") {
		dst = filepath.Join(filepath.Dir(old), dst) // a bare name stays in the trace's directory
	}
	if dst, err = filepath.Abs(dst); err != nil {
		return fatalf("mv: %v", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fatalf("mv: %s already exists", dst)
	}
	if filepath.Dir(dst) != filepath.Dir(old) && tracedir.StoreLinks(old) {
		// Its links to the shared pack store would dangle elsewhere.
		if err := tracedir.Unshare(old); err != nil {
			return fatalf("mv: %v", err)
		}
	}
	if err := os.Rename(old, dst); err != nil {
		return fatalf("mv: %v", err)
	}
	latest := filepath.Join(filepath.Dir(old), tracedir.Latest)
	if t, err := os.Readlink(latest); err == nil && (t == filepath.Base(old) || t == old) {
		target := dst
		if filepath.Dir(dst) == filepath.Dir(old) {
			target = filepath.Base(dst)
		}
		if err := tracedir.SetLatestTo(filepath.Dir(old), target); err != nil {
			return fatalf("mv: moved, but could not update %s: %v", latest, err)
		}
	}
	tracedir.CollectStore(filepath.Dir(old))
	return 0
}

// mappedELF is an ELF file mapped in a trace.
type mappedELF struct {
	name string // the path at record time
	file string // the captured copy
	exec bool
}

// mappedFiles lists the files mapped in the trace, in order of first
// mapping, with whether any mapping of them was executable.
func mappedFiles(rd *trace.Reader) ([]*mappedELF, error) {
	var out []*mappedELF
	byFile := map[string]*mappedELF{}
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		for _, m := range ev.Maps {
			if m.File == "" {
				continue
			}
			f := byFile[m.File]
			if f == nil {
				p, err := trace.ResolveFile(rd.Dir(), m.File)
				if err != nil {
					return out, fmt.Errorf("%s: %v", m.File, err)
				}
				f = &mappedELF{name: m.Name, file: p}
				byFile[m.File] = f
				out = append(out, f)
			}
			f.exec = f.exec || m.Prot&syscall.PROT_EXEC != 0
		}
	}
}

// buildID returns the GNU build ID of an ELF file, "" when it has none.
func buildID(f *elf.File) string {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		b, err := io.ReadAll(p.Open())
		if err != nil {
			continue
		}
		for len(b) >= 12 {
			nsz, dsz, typ := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
			off := 12 + (int(nsz)+3)&^3
			end := off + (int(dsz)+3)&^3
			if off+int(dsz) > len(b) || end < off {
				break
			}
			if typ == 3 && nsz == 4 && string(b[12:15]) == "GNU" {
				return hex.EncodeToString(b[off : off+int(dsz)])
			}
			if end > len(b) {
				break
			}
			b = b[end:]
		}
	}
	return ""
}

func cmdBuildid(args []string) int {
	if helpWanted("buildid", args) {
		return 0
	}
	if len(args) > 1 {
		return fatalf("buildid: usage: gorr buildid [TRACE]")
	}
	rd, err := openVerified(strings.Join(args, ""))
	if err != nil {
		return fatalf("buildid: %v", err)
	}
	defer rd.Close()
	files, err := mappedFiles(rd)
	if err != nil {
		return fatalf("buildid: %v", err)
	}
	for _, m := range files {
		f, err := elf.Open(m.file)
		if err != nil {
			continue // not ELF (ld.so.cache, data files)
		}
		id := buildID(f)
		f.Close()
		if id == "" {
			id = "-"
		}
		fmt.Printf("%s %s\n", id, m.name)
	}
	return 0
}

func cmdCpufeatures(args []string) int {
	if helpWanted("cpufeatures", args) {
		return 0
	}
	if len(args) > 0 {
		return fatalf("cpufeatures: usage: gorr cpufeatures")
	}
	_, _, f1c, f1d := cpu.Cpuid(1, 0)
	_, e7b, e7c, e7d := cpu.Cpuid(7, 0)
	xa, _, _, _ := cpu.Cpuid(0xd, 1)
	fmt.Printf("--disable-cpuid-features 0x%x,0x%x --disable-cpuid-features-ext 0x%x,0x%x,0x%x --disable-cpuid-features-xsave 0x%x\n",
		^f1c, ^f1d, ^e7b, ^e7c, ^e7d, ^xa)
	return 0
}

// sourcesReport is the output of 'gorr sources', in rr's layout.
type sourcesReport struct {
	RelevantBinaries  []string            `json:"relevant_binaries"`
	LoadedELFBinaries []string            `json:"loaded_elf_binaries"`
	CompDirSubst      map[string]string   `json:"comp_dir_substitutions"`
	ExternalDebugInfo []any               `json:"external_debug_info"`
	Dwos              []any               `json:"dwos"`
	Symlinks          []any               `json:"symlinks"`
	Files             map[string][]string `json:"files"`
}

func cmdSources(args []string) int {
	if helpWanted("sources", args) {
		return 0
	}
	if len(args) > 1 {
		return fatalf("sources: usage: gorr sources [TRACE]")
	}
	rd, err := openVerified(strings.Join(args, ""))
	if err != nil {
		return fatalf("sources: %v", err)
	}
	defer rd.Close()
	files, err := mappedFiles(rd)
	if err != nil {
		return fatalf("sources: %v", err)
	}
	rep := sourcesReport{RelevantBinaries: []string{}, LoadedELFBinaries: []string{}, CompDirSubst: map[string]string{},
		ExternalDebugInfo: []any{}, Dwos: []any{}, Symlinks: []any{}, Files: map[string][]string{}}
	srcs := map[string]bool{}
	for _, m := range files {
		f, err := elf.Open(m.file)
		if err != nil {
			continue
		}
		rep.LoadedELFBinaries = append(rep.LoadedELFBinaries, m.name)
		names, err := dwarfSources(f)
		f.Close()
		if err != nil || len(names) == 0 {
			continue
		}
		rep.RelevantBinaries = append(rep.RelevantBinaries, m.name)
		for _, n := range names {
			if st, err := os.Stat(n); err == nil && st.Mode().IsRegular() {
				srcs[n] = true
			}
		}
	}
	sort.Strings(rep.LoadedELFBinaries)
	for n := range srcs {
		root := vcsRoot(filepath.Dir(n))
		rel := n
		if root != "" {
			rel = strings.TrimPrefix(n, root+"/")
		}
		rep.Files[root] = append(rep.Files[root], rel)
	}
	for _, v := range rep.Files {
		sort.Strings(v)
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Println(string(b))
	return 0
}

// dwarfSources returns the absolute names of the source files named by
// the DWARF line tables of f.
func dwarfSources(f *elf.File) ([]string, error) {
	d, err := f.DWARF()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != 0x11 { // DW_TAG_compile_unit
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		r.SkipChildren()
		if err != nil || lr == nil {
			continue
		}
		for _, lf := range lr.Files() {
			if lf == nil || lf.Name == "" {
				continue
			}
			n := filepath.Clean(lf.Name)
			if !filepath.IsAbs(n) {
				continue // relative to an unknown directory
			}
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// vcsRoot returns the nearest ancestor of dir holding .git or .hg, or "".
func vcsRoot(dir string) string {
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		for _, v := range []string{".git", ".hg"} {
			if _, err := os.Stat(filepath.Join(d, v)); err == nil {
				return d
			}
		}
	}
	return ""
}
