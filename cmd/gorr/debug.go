package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gorr-debugger/gorr/internal/debugserver"
	"github.com/gorr-debugger/gorr/internal/replay"
)

// gdbInit defines rr's gdb commands on top of the qRRCmd packet.
const gdbInit = `set pagination off
set unwindonsignal on
python
import gdb
def _gorr_cmd(name, arg=""):
    tid = gdb.selected_thread().ptid[1] if gdb.selected_thread() else -1
    pkt = "qRRCmd:%s:%d" % (name, tid)
    if arg:
        pkt += ":" + arg.encode().hex()
    out = gdb.execute("maint packet " + pkt, to_string=True)
    start = out.find('received: "')
    if start < 0:
        return out
    hexs = out[start + len('received: "'):].split('"')[0]
    try:
        return bytes.fromhex(hexs).decode()
    except ValueError:
        return hexs
class _GorrCommand(gdb.Command):
    def __init__(self, name):
        super().__init__(name, gdb.COMMAND_USER)
        self._name = name
    def invoke(self, arg, from_tty):
        gdb.write(_gorr_cmd(self._name, arg))
for _n in ("when", "when-ticks", "when-tid", "when-end", "elapsed-time"):
    _GorrCommand(_n)
def _gorr_where():
    try:
        f = gdb.selected_frame()
        sal = f.find_sal()
        where = "%s" % (f.name() or "0x%x" % f.pc())
        if sal.symtab:
            where += " at %s:%d" % (sal.symtab.filename, sal.line)
        return where
    except gdb.error:
        return ""
class _GorrCheckpoint(gdb.Command):
    """checkpoint: remember this position (restart N goes back to it)."""
    def __init__(self):
        super().__init__("checkpoint", gdb.COMMAND_USER)
    def invoke(self, arg, from_tty):
        gdb.write(_gorr_cmd("checkpoint", arg.strip() or _gorr_where()))
_GorrCheckpoint()
class _GorrDelete(gdb.Command):
    """delete checkpoint N: forget an rr/gorr checkpoint."""
    def __init__(self):
        super().__init__("delete checkpoint", gdb.COMMAND_USER)
    def invoke(self, arg, from_tty):
        gdb.write(_gorr_cmd("delete checkpoint", arg.strip()))
_GorrDelete()
class _GorrInfoCheckpoints(gdb.Command):
    """info checkpoints: list checkpoints."""
    def __init__(self):
        super().__init__("info checkpoints", gdb.COMMAND_STATUS)
    def invoke(self, arg, from_tty):
        gdb.write(_gorr_cmd("info checkpoints"))
_GorrInfoCheckpoints()
class _GorrRestart(gdb.Command):
    """restart [N]: go back to the start, or to checkpoint N."""
    def __init__(self):
        super().__init__("restart", gdb.COMMAND_RUNNING)
    def invoke(self, arg, from_tty):
        # gdb's run remembers its arguments: always pass one (c0 = start).
        gdb.execute("run c" + (arg.strip() or "0"), to_string=False)
_GorrRestart()
end
`

// debugReplay serves the replay to a debugger: with -s it prints rr's
// launch lines and waits for one; otherwise it runs gdb itself.
func debugReplay(opts replay.Options, p parsed, gdbArgs []string) int {
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
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return fatalf("replay: listen on 127.0.0.1:%d: %v", port, err)
	}
	defer l.Close()
	sess, first, err := replay.StartSession(opts)
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
		for first.Kind != replay.StopExiting && first.Kind != replay.StopExited && first.Kind != replay.StopEnd {
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
	addr := l.Addr().String()
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
