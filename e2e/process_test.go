package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A three-thread program killed from outside with SIGKILL: the replay
// prints exactly what the recording printed, and dies the same way.
const killedThreadsProg = `#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static void *worker(void *arg) {
	struct timespec ts;
	for (long i = 0;; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		dprintf(1, "thread %ld line %ld t=%ld.%09ld\n", (long)arg, i, (long)ts.tv_sec, ts.tv_nsec);
		usleep(300);
	}
	return NULL;
}
int main(void) {
	pthread_t a, b;
	dprintf(1, "pid %d\n", getpid());
	pthread_create(&a, NULL, worker, (void *)1);
	pthread_create(&b, NULL, worker, (void *)2);
	worker((void *)0);
	return 0;
}
`

func TestKilledFromOutside(t *testing.T) {
	// Guards a recorder hang after a SIGKILL from outside: a thread held
	// at its exit stop while the killed leader "ran" (the leader dies
	// without an exit stop, reported only after the others are reaped).
	bin := cprog(t, "killed3", killedThreadsProg)
	for i := 0; i < 3; i++ {
		traceDir := filepath.Join(t.TempDir(), "trace")
		cmd := exec.Command(gorrBin, "record", "-o", traceDir, bin)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill the recorded program (not gorr) once it has printed a while.
		deadline := time.Now().Add(20 * time.Second)
		pid := 0
		for pid == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			out, _ := exec.Command("pgrep", "-P", itoa(cmd.Process.Pid), "-x", "killed3").Output()
			pid = atoi(strings.TrimSpace(string(out)))
		}
		if pid == 0 {
			_ = cmd.Process.Kill()
			t.Fatal("the recorded program did not start")
		}
		time.Sleep(time.Duration(150+50*i) * time.Millisecond)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatal("gorr record did not finish after its program was killed")
		}
		rep, err := run(ctx60(t), t.TempDir(), "", gorrBin, "replay", "-a", traceDir)
		if err != nil {
			t.Fatal(err)
		}
		// On failure the trace's last events tell what happened.
		fail := func(format string, args ...any) {
			t.Helper()
			dump, _ := exec.Command(gorrBin, "dump", traceDir).Output()
			t.Logf("trace tail:\n%s", tail(dump))
			t.Fatalf(format, args...)
		}
		if rep.Signal != int(syscall.SIGKILL) || len(bytes.TrimSpace(rep.Stderr)) != 0 && !bytes.HasPrefix(rep.Stderr, []byte("gorr: ")) {
			fail("run %d: want a replay dying of SIGKILL\n%v", i, rep)
		}
		if !bytes.Equal(stdout.Bytes(), rep.Stdout) {
			fail("run %d: replayed output differs\nrecorded %d bytes, tail %q\nreplayed %d bytes, tail %q", i,
				stdout.Len(), tail(stdout.Bytes()), len(rep.Stdout), tail(rep.Stdout))
		}
	}
}

func tail(b []byte) []byte {
	if len(b) > 1500 {
		return b[len(b)-1500:]
	}
	return b
}

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
