package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracedir"
)

var replayFlags = []flagSpec{
	{"a", "autopilot", false},
	{"q", "no-redirect-output", false},
	{"u", "cpu-unbound", false},
	{"s", "dbgport", true},
	{"", "verbose", false},
}

func cmdReplay(args []string) int {
	p, err := parseFlags(args, replayFlags)
	if err != nil {
		return fatalf("replay: %v (see 'gorr help replay')", err)
	}
	if !p.has("autopilot") {
		return fatalf("replay: the debug server is not implemented yet; use 'gorr replay -a' to replay without a debugger")
	}
	name := ""
	if len(p.rest) > 0 {
		name = p.rest[0]
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
	opts := replay.Options{Reader: rd, Stdout: os.Stdout, Stderr: os.Stderr, BindCPU: chooseCPU()}
	if p.has("no-redirect-output") {
		opts.Stdout, opts.Stderr = nil, nil
	}
	if p.has("cpu-unbound") {
		opts.BindCPU = -1
	}
	if p.has("verbose") {
		opts.Log = os.Stderr
	}
	signal.Ignore(syscall.SIGINT)
	res, err := replay.Replay(opts)
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

func signalReset(sig syscall.Signal) { signal.Reset(sig) }
