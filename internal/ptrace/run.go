package ptrace

import (
	"time"

	"golang.org/x/sys/unix"
)

// Action tells RunUntil and WaitUntil what to do after a stop.
type Action struct {
	op   actionOp
	mode int // resume mode for this once (0: the run's)
	sig  int
}

type actionOp uint8

const (
	opAgain actionOp = iota
	opAccept
	opResumed
)

var (
	// Accept ends the run: RunUntil returns the stop, the thread stays in it.
	Accept = Action{op: opAccept}
	// Again resumes the thread with the run's mode, without a signal
	// (the stop's signal, if any, is not delivered), and waits again.
	Again = Action{op: opAgain}
	// Resumed waits again without resuming: the caller resumed the
	// thread itself.
	Resumed = Action{op: opResumed}
)

// AcceptIf is Accept if ok, else Again.
func AcceptIf(ok bool) Action {
	if ok {
		return Accept
	}
	return Again
}

// AcceptAny accepts the first stop: a run of one resume and one wait.
func AcceptAny(Stop) (Action, error) { return Accept, nil }

// Deliver resumes the thread with the run's mode and signal sig, and
// waits again.
func Deliver(sig int) Action { return Action{op: opAgain, sig: sig} }

// ResumeOnce resumes the thread with mode and signal sig this once (later
// resumes use the run's mode again), and waits again.
func ResumeOnce(mode, sig int) Action { return Action{op: opAgain, mode: mode, sig: sig} }

// RunUntil is the resume-and-wait loop: it resumes the thread with mode
// and signal sig, then waits for its stops, asking next what to do about
// each, until next accepts one (Accept) or returns an error; it returns
// that stop and error. A wait or resume error ends the run too.
func (th Thread) RunUntil(mode, sig int, next func(Stop) (Action, error)) (Stop, error) {
	return th.RunVia(th.Wait, mode, sig, next)
}

// WaitUntil is RunUntil for a thread that already runs: it waits first.
func (th Thread) WaitUntil(mode int, next func(Stop) (Action, error)) (Stop, error) {
	return th.loop(th.Wait, mode, next)
}

// RunVia is RunUntil for a tracer that does not wait for the thread
// itself: wait returns the thread's next stop. The recorder waits for
// any task (WaitAny) and queues the stops of the tasks it is not waiting
// for; its runs of one task take that task's stops through the queue.
func (th Thread) RunVia(wait func() (Stop, error), mode, sig int, next func(Stop) (Action, error)) (Stop, error) {
	if err := th.Resume(mode, sig); err != nil {
		return Stop{}, err
	}
	return th.loop(wait, mode, next)
}

// WaitVia is RunVia for a thread that already runs: it waits first.
func (th Thread) WaitVia(wait func() (Stop, error), mode int, next func(Stop) (Action, error)) (Stop, error) {
	return th.loop(wait, mode, next)
}

func (th Thread) loop(wait func() (Stop, error), mode int, next func(Stop) (Action, error)) (Stop, error) {
	for {
		st, err := wait()
		if err != nil {
			return st, err
		}
		a, err := next(st)
		if a.op == opAccept || err != nil {
			return st, err
		}
		if a.op == opResumed {
			continue
		}
		m := mode
		if a.mode != 0 {
			m = a.mode
		}
		if err := th.Resume(m, a.sig); err != nil {
			return st, err
		}
	}
}

// PollUntil waits without blocking for a thread that runs towards an end
// no stop reports, such as a thread-group leader becoming a zombie (its
// exit is reported only after its threads'): it polls for the thread's
// stops, asking next about each as WaitUntil does (resumes are with
// Cont), and between polls asks done, with a growing sleep (up to a
// millisecond) in between. It returns the stop next accepted (stopped),
// or stopped=false once done says so. Resume errors are ignored: a thread
// that died meanwhile is reported by the next poll.
func (th Thread) PollUntil(done func() bool, next func(Stop) (Action, error)) (st Stop, stopped bool, err error) {
	for i := 0; ; i++ {
		st, ok, err := th.Poll()
		if err != nil {
			return st, false, err
		}
		if ok {
			a, err := next(st)
			if a.op == opAccept || err != nil {
				return st, true, err
			}
			if a.op != opResumed {
				m := Cont
				if a.mode != 0 {
					m = a.mode
				}
				_ = th.Resume(m, a.sig) // a death meanwhile: the next poll reports it
			}
		}
		if done() {
			return Stop{}, false, nil
		}
		time.Sleep(time.Duration(min(i, 100)) * 10 * time.Microsecond)
	}
}

// KillAndReap kills the thread's process with SIGKILL and waits until the
// thread is gone, letting it on from the stops (PTRACE_EVENT_EXIT) it
// still reports. Resume errors are ignored: a task that died meanwhile is
// reaped by the next wait.
func (th Thread) KillAndReap() {
	_ = unix.Kill(th.tid, unix.SIGKILL)
	_, _ = th.WaitUntil(Cont, func(st Stop) (Action, error) {
		if st.Kind == StopExited {
			return Accept, nil
		}
		return Again, nil
	})
}

// KillAll kills the processes of threads with SIGKILL and reaps the
// threads, letting each on from the stops it still reports, for at most
// timeout. It polls instead of waiting for one thread at a time: a
// thread-group leader is reported only after its other threads, which
// may wait in their PTRACE_EVENT_EXIT stops to be let on. A thread whose
// wait fails (reaped already, not ours) counts as gone. It returns the
// threads still there at the timeout.
func KillAll(threads []Thread, timeout time.Duration) []Thread {
	live := map[Thread]bool{}
	for _, th := range threads {
		if th.tid > 0 {
			live[th] = true
			_ = unix.Kill(th.tid, unix.SIGKILL)
		}
	}
	deadline := time.Now().Add(timeout)
	for len(live) > 0 && time.Now().Before(deadline) {
		progressed := false
		for th := range live {
			st, ok, err := th.Poll()
			switch {
			case err != nil || ok && st.Kind == StopExited:
				delete(live, th)
				progressed = true
			case ok:
				progressed = true
				_ = th.Resume(Cont, 0)
			}
		}
		if !progressed {
			time.Sleep(100 * time.Microsecond)
		}
	}
	var left []Thread
	for th := range live {
		left = append(left, th)
	}
	return left
}
