package record

import (
	"fmt"
	"os"

	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// watchdogSignal interrupts a thread that has run user code too long.
const watchdogSignal = int(unix.SIGSTKFLT)

// watchdog notices a thread that runs user code without a system call for
// longer than the limit while another thread is ready (or a signal waits
// for it). gorr cannot yet preempt such a thread at an instruction replay
// could find again (issue 3), so the recording stops with an error
// instead of hanging. The tracer thread publishes the running task; the
// watchdog goroutine only reads it and sends a signal.
type watchdog struct {
	tid     atomic.Int64 // running task, 0 when none
	since   atomic.Int64 // unix nanoseconds
	waiting atomic.Bool  // another task is ready or a signal is pending
	fired   atomic.Int64 // tid the watchdog signalled
}

func (d *watchdog) running(tid int, waiting bool) {
	d.waiting.Store(waiting)
	d.since.Store(time.Now().UnixNano())
	d.tid.Store(int64(tid))
}

func (d *watchdog) stopped() { d.tid.Store(0) }

func (d *watchdog) watch(limit time.Duration, done <-chan struct{}) {
	tick := time.NewTicker(limit / 4)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		tid := d.tid.Load()
		if tid == 0 || !d.waiting.Load() || time.Since(time.Unix(0, d.since.Load())) < limit {
			continue
		}
		d.fired.Store(tid)
		_ = unix.Tgkill(tracee.Tgid(int(tid)), int(tid), unix.Signal(watchdogSignal))
	}
}

// onWatchdog handles a stop for watchdogSignal: if gorr sent it, it is
// dropped, and the recording fails if the thread is still over its limit.
// The tracee's own SIGSTKFLT is left to the ordinary signal path.
func (r *recorder) onWatchdog(t *task) (bool, error) {
	si, err := ptrace.GetSigInfo(t.tid)
	if err != nil || si.Code() != -6 /* SI_TKILL */ || int(int32(le32(si[16:]))) != os.Getpid() {
		return false, nil
	}
	t.state = stReady
	t.pendingSig = 0
	if r.dog.fired.Load() != int64(t.tid) {
		return true, nil
	}
	r.dog.fired.Store(0)
	return true, fmt.Errorf("thread %d ran for more than %v without a system call while another thread was ready "+
		"or a signal was waiting for it; gorr cannot yet preempt threads between system calls, "+
		"so this program (a spin-wait or a long computation racing other threads) cannot be recorded", t.tid, r.opts.MaxSlice)
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
