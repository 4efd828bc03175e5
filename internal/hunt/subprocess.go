package hunt

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// maxOutput bounds the output kept of one run (for the regex and the
// report); a run that writes more keeps its last maxOutput bytes.
const maxOutput = 8 << 20

// Subprocess returns a Runner that runs the command argv(dir, cpu) (a
// `gorr record -o DIR ...` command line) in a session of its own, with
// no terminal and stdin from /dev/null, and reads the recorded program's
// status from the trace it wrote. A cancelled run gets SIGTERM, which
// the recorder forwards to the program before finishing the trace.
func Subprocess(argv func(dir string, cpu int) []string) Runner {
	return func(ctx context.Context, dir string, cpu int) (Outcome, error) {
		args := argv(dir, cpu)
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 10 * time.Second
		var stdout, stderr tailBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			return Outcome{}, fmt.Errorf("run %s: %w", args[0], err)
		}
		r, oerr := trace.Open(dir)
		if oerr != nil {
			return Outcome{}, fmt.Errorf("recording failed (%v): %w\n%s", err, oerr, gorrLines(stderr.Bytes()))
		}
		h := r.Header()
		r.Close()
		if !h.Complete {
			return Outcome{}, fmt.Errorf("recording failed, the trace is incomplete (%v)\n%s", err, gorrLines(stderr.Bytes()))
		}
		out := append(stdout.Bytes(), withoutGorr(stderr.Bytes())...)
		return Outcome{Status: unix.WaitStatus(h.ExitStatus), Output: out}, nil
	}
}

// withoutGorr drops gorr's own messages from a stderr stream.
func withoutGorr(b []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("gorr: ")) {
			out = append(out, line...)
		}
	}
	return out
}

// gorrLines keeps only gorr's own messages (an error's explanation).
func gorrLines(b []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("gorr: ")) {
			out = append(out, line...)
		}
	}
	return bytes.TrimRight(out, "\n")
}

// tailBuffer keeps the last maxOutput bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*maxOutput {
		t.b = append(t.b[:0:0], t.b[len(t.b)-maxOutput:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	if len(t.b) > maxOutput {
		return t.b[len(t.b)-maxOutput:]
	}
	return t.b
}
