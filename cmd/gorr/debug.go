package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gorr-debugger/gorr/internal/debugserver"
	"github.com/gorr-debugger/gorr/internal/loopback"
	"github.com/gorr-debugger/gorr/internal/session"
)

// debugReplay serves the replay to a debugger: with -s it prints rr's
// launch lines and waits for one; otherwise it runs gdb itself.
func debugReplay(opts session.Options, p parsed, gdbArgs []string) int {
	port := 0
	serveOnly := p.has("dbgport")
	if serveOnly {
		n, err := strconv.Atoi(p.get("dbgport"))
		if err != nil || n < 0 || n > 65535 {
			return fatalf("replay: --dbgport wants a port number, got %q", p.get("dbgport"))
		}
		port = n
	}
	if os.Getenv("GORR_LOG_EVENTS") != "" {
		opts.Log = os.Stderr
	}
	// GORR_SNAPSHOTS: "off", or the replay time between snapshots.
	switch v := os.Getenv("GORR_SNAPSHOTS"); v {
	case "":
	case "off":
		opts.Snapshots.Off = true
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fatalf("replay: GORR_SNAPSHOTS wants \"off\" or a duration, got %q", v)
		}
		opts.Snapshots.Interval = d
	}
	l, err := loopback.Listen(port)
	if err != nil {
		return fatalf("replay: %v", err)
	}
	defer l.Close()
	sess, first, err := session.StartSession(opts)
	if err != nil {
		return fatalf("replay: %v", err)
	}
	defer sess.Close()
	srv := debugserver.New(sess, first) // reads auxv at the start
	if v := p.get("goto"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fatalf("replay: --goto wants an event number, got %q", v)
		}
		if first, err = sess.Goto(n); err != nil {
			return fatalf("replay: go to event %d: %v", n, err)
		}
	}
	if p.has("goto-exit") {
		// No breakpoints yet: run to the stop before the exit.
		for first.Kind != session.StopExiting && first.Kind != session.StopExited && first.Kind != session.StopEnd {
			if first, err = sess.Continue(); err != nil {
				return fatalf("replay: go to the exit: %v", err)
			}
		}
	}
	srv.SetStop(first)
	exe, _ := sess.ExecFile()
	if exe == "" {
		return fatalf("replay: the trace has no executable to debug")
	}
	addr := l.Addr()
	if v := os.Getenv("GORR_LOG_RSP"); v != "" {
		// A path logs to that file (useful when a front end such as
		// Delve swallows gorr's stderr); anything else to stderr.
		srv.Log = os.Stderr
		if strings.HasPrefix(v, "/") {
			if f, err := os.OpenFile(v, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
				defer f.Close()
				srv.Log = f
			}
		}
	}
	if serveOnly {
		fmt.Fprintf(os.Stderr, "Launch debugger with\n  'gdb' '-l' '10000' '-ex' 'set sysroot /' '-ex' 'target extended-remote %s' '%s'\n", addr, exe)
		fmt.Fprintf(os.Stderr, "(for rr's gdb commands, when, checkpoint, restart and the others: 'gorr gdbinit > FILE' and add '-x' 'FILE')\n")
		if err := srv.ServeListener(l); err != nil {
			return fatalf("replay: %v", err)
		}
		return 0
	}
	dir, err := os.MkdirTemp("", "gorr-gdb-")
	if err != nil {
		return fatalf("replay: %v", err)
	}
	defer os.RemoveAll(dir)
	initFile := filepath.Join(dir, "gorr-init.gdb")
	if err := os.WriteFile(initFile, []byte(gdbInit), 0o600); err != nil {
		return fatalf("replay: %v", err)
	}
	gdb := "gdb"
	if d := p.get("debugger"); d != "" {
		gdb = d
	}
	args := []string{"-l", "10000", "-ex", "set sysroot /", "-x", initFile}
	for _, x := range p.vals["gdb-x"] {
		args = append(args, "-x", x)
	}
	args = append(args, "-ex", "target extended-remote "+addr)
	args = append(args, gdbArgs...)
	args = append(args, exe)
	cmd := exec.Command(gdb, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Ctrl-C goes to gdb, which turns it into an interrupt packet.
	signal.Ignore(syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		return fatalf("replay: start %s: %v", gdb, err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeListener(l) }()
	werr := cmd.Wait()
	l.Close()
	select {
	case err := <-served:
		if err != nil && !strings.Contains(err.Error(), "closed") {
			fmt.Fprintf(os.Stderr, "gorr: debug server: %v\n", err)
		}
	default:
	}
	if werr != nil {
		if ee, ok := werr.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return fatalf("replay: %s: %v", gdb, werr)
	}
	return 0
}
