// Package testrec records programs into traces for the tests of other
// packages (replay, session, debugserver): the set-up each of them would
// otherwise write again.
package testrec

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gorr-debugger/gorr/internal/record"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Options of a test recording.
type Options struct {
	// Header is what the trace is created with.
	Header trace.Header
	// Out receives the program's stdout and stderr (nil: /dev/null).
	Out *os.File
	// SyscallBuffer records with the system-call buffer (and says so in
	// the header).
	SyscallBuffer bool
}

// Record records argv, with the test's environment and unbound, into a
// new trace in dir, which it closes with the program's exit status; any
// error fails the test.
func Record(t testing.TB, dir string, argv []string, o Options) *record.Result {
	t.Helper()
	h := o.Header
	if o.SyscallBuffer {
		h.SyscallBuffer, h.SyscallBufferLayout = true, syscallbuf.Layout
	}
	w, err := trace.Create(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	out := o.Out
	if out == nil {
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer devnull.Close()
		out = devnull
	}
	res, err := record.Record(record.Options{Argv: argv, Env: os.Environ(), Writer: w, BindCPU: -1, Stdout: out, Stderr: out, SyscallBuffer: o.SyscallBuffer})
	if err != nil {
		t.Fatal(err)
	}
	h = w.Header()
	h.ExitStatus = int(res.Status)
	if err := w.Close(h); err != nil {
		t.Fatal(err)
	}
	return res
}

// Shell records `sh -c script` (the test is skipped without sh) into a
// new trace and returns its directory and what the script printed.
func Shell(t testing.TB, script string, buffered bool) (string, []byte) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip(err)
	}
	argv := []string{"sh", "-c", script}
	dir := filepath.Join(t.TempDir(), "trace")
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	Record(t, dir, argv, Options{Header: trace.Header{Argv: argv}, Out: out, SyscallBuffer: buffered})
	b, _ := os.ReadFile(out.Name())
	return dir, b
}

// Symbols returns the addresses of the named symbols of the ELF file at
// path (a name it lacks is not in the map).
func Symbols(t testing.TB, path string, names ...string) map[string]uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	out := map[string]uint64{}
	for _, s := range syms {
		for _, n := range names {
			if s.Name == n {
				out[n] = s.Value
			}
		}
	}
	return out
}
