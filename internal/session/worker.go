package session

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// ptraceWorker is the one OS thread of a Session that traces every
// process the session owns: the replayed processes of each run one after
// another, the snapshot copies kept between runs, diversion copies. A
// tracee is traced by a thread, not a process, so processes forked in
// one run can only be driven by the next run if both run here.
type ptraceWorker struct {
	jobs   chan func()
	done   chan struct{}
	tmp    string // holds the replay stub
	stub   string
	bundle *replay.FileBundle // the files the runs map privately, in tmp
}

func newPtraceWorker(bindCPU int) (*ptraceWorker, error) {
	w := &ptraceWorker{jobs: make(chan func()), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		defer close(w.done)
		// Never unlocked: the thread ends with the goroutine, and with it
		// any tracing that was left (PTRACE_O_EXITKILL kills the tracees).
		runtime.LockOSThread()
		if bindCPU >= 0 {
			var set unix.CPUSet
			set.Set(bindCPU)
			_ = unix.SchedSetaffinity(0, &set)
		}
		var err error
		if w.tmp, err = os.MkdirTemp("", "gorr-replay-"); err == nil {
			if w.stub, err = tracee.WriteStub(w.tmp); err == nil {
				w.bundle, err = replay.NewFileBundle(w.tmp)
			}
		}
		ready <- err
		if err != nil {
			return
		}
		for f := range w.jobs {
			f()
		}
	}()
	if err := <-ready; err != nil {
		if w.tmp != "" {
			os.RemoveAll(w.tmp)
		}
		return nil, err
	}
	return w, nil
}

// call runs f on the worker thread and waits for it.
func (w *ptraceWorker) call(f func()) {
	done := make(chan struct{})
	w.jobs <- func() { defer close(done); f() }
	<-done
}

// start runs f on the worker thread (which must be idle) without waiting.
func (w *ptraceWorker) start(f func()) { w.jobs <- f }

// stop ends the worker thread.
func (w *ptraceWorker) stop() {
	close(w.jobs)
	<-w.done
	w.bundle.Close()
	os.RemoveAll(w.tmp)
}
