package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/session"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracedir"
)

var replayFlags = []flagSpec{
	{"a", "autopilot", false},
	{"q", "no-redirect-output", false},
	{"u", "cpu-unbound", false},
	{"s", "dbgport", true},
	{"d", "debugger", true},
	{"g", "goto", true},
	{"p", "onprocess", true},
	{"f", "onfork", true},
	{"e", "goto-exit", false},
	{"x", "gdb-x", true},
	{"", "verbose", false},
}

func cmdReplay(args []string) int {
	p, err := parseFlags(args, replayFlags)
	if err != nil {
		return fatalf("replay: %v (see 'gorr help replay')", err)
	}
	name := ""
	var gdbArgs []string
	for i, a := range p.rest {
		if a == "--" {
			gdbArgs = p.rest[i+1:]
			break
		}
		if name == "" {
			name = a
		}
	}
	dir, err := tracedir.Resolve(name)
	if err != nil {
		return fatalf("replay: %v", err)
	}
	rd, err := trace.Open(dir)
	if err != nil {
		return fatalf("replay: %v", err)
	}
	defer rd.Close()
	prefaultHeap(rd.Header().EventCount)
	// Every captured file must be what was recorded (files that matched
	// before and were not modified since are not hashed again), and this
	// CPU must have what the trace needs, before anything runs.
	if err := rd.VerifyFilesCached(trace.DefaultVerifyCacheDir()); err != nil {
		return fatalf("replay: %v", err)
	}
	if err := checkCPU(rd.Header()); err != nil {
		return fatalf("replay: %v", err)
	}
	if err := syscallbuf.CheckTrace(rd.Header()); err != nil {
		return fatalf("replay: %v", err)
	}
	opts := replay.Options{Reader: rd, Stdout: os.Stdout, Stderr: os.Stderr, BindCPU: replayCPU(rd.Header().BindCPU)}
	if !p.has("autopilot") {
		so := session.Options{Options: opts}
		so.Reopen = func() (*trace.Reader, error) { return trace.Open(dir) }
		so.OnProcess = p.get("onprocess")
		if v := p.get("onfork"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fatalf("replay: --onfork wants a pid, got %q", v)
			}
			so.OnFork = int32(n)
		}
		if p.has("cpu-unbound") {
			so.BindCPU = -1
		}
		if p.has("no-redirect-output") {
			so.Stdout, so.Stderr = nil, nil
		}
		return debugReplay(so, p, gdbArgs)
	}
	if p.has("no-redirect-output") {
		opts.Stdout, opts.Stderr = nil, nil
	}
	if p.has("cpu-unbound") {
		opts.BindCPU = -1
	}
	if p.has("verbose") {
		opts.Log = os.Stderr
	}
	opts.Tamper = testTamper()
	signal.Ignore(syscall.SIGINT)
	// As in record: the kernel drops the SIGCHLD of each tracee stop
	// instead of Go's handler taking it. Autopilot starts no child it
	// waits for but its tracees, which are ptraced (never reaped
	// automatically); a debugging session runs gdb, so keeps it.
	restore := ptrace.IgnoreSIGCHLD()
	res, err := replay.Replay(opts)
	restore()
	if err != nil {
		var div *replay.DivergenceError
		if errors.As(err, &div) {
			return fatalf("replay: %v", err)
		}
		return fatalf("replay: %v", err)
	}
	if res.Incomplete != nil {
		fmt.Fprintf(os.Stderr, "gorr: replayed %d events; the recording ended abnormally: %v\n", res.Events, res.Incomplete)
		return 1
	}
	return exitLike(res.Status)
}

// signalReset sets sig's disposition to SIG_DFL with a raw rt_sigaction,
// bypassing the Go runtime (whose own handlers turn SIGABRT into a Go
// traceback).
func signalReset(sig syscall.Signal) {
	signal.Reset(sig)
	var act [4]uint64 // handler SIG_DFL, flags, restorer, mask
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act[0])), 0, 8, 0, 0)
}
