package record

import (
	"time"

	"github.com/gorr-debugger/gorr/internal/asyncpoint"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/sched"
)

// chaosSteps is chaos mode's shortest timeslice: a thread resumed where
// its last event (a system call, a point) left it while another thread is ready is sometimes run for
// a few instructions only (sched.ChaosSteps), single-stepped, and then
// preempted as the watchdog would, at a recorded point. Timers here
// cannot interrupt a thread within its first few tens of microseconds;
// a race in code that runs for less (a loop of 20000 increments takes
// 15 µs) is then still interrupted in its middle. handled tells whether
// t was dealt with (preempted, or a stop met while stepping was
// handled); if not, the caller resumes it as usual.
func (r *recorder) chaosSteps(t *task) (handled bool, err error) {
	if r.rng == nil || t.pendingSig != 0 || len(t.deferred) > 0 || !r.othersReady(t) {
		return false, nil
	}
	if r.dog.fired.Load() != 0 || r.dog.stopSent.Load() != 0 {
		return false, nil // a timeslice signal is on its way: let it arrive first
	}
	// Stepping is slow (about 10 µs an instruction): it may take a
	// quarter of the recording's time, beyond a first allowance.
	if r.chaosStepTime > 20*time.Millisecond+time.Since(r.start)/4 {
		return false, nil
	}
	k := sched.ChaosSteps(r.rng)
	if k == 0 {
		return false, nil
	}
	// Only this call's own time counts: runNext below may resume the
	// next thread through chaosSteps again, which counts its own.
	start := time.Now()
	counted := false
	spent := func() {
		if !counted {
			r.chaosStepTime += time.Since(start)
			counted = true
		}
	}
	defer spent()
	regs, err := t.thread().GetRegs()
	if err != nil || regs != t.lastRegs {
		return false, nil // only where its last event (a call, a point) left it
	}
	if rax := int64(regs[ptrace.RAX]); rax >= -516 && rax <= -512 {
		// A call to be restarted (ERESTARTSYS ...; also after the
		// stop of a signal it was interrupted by): the kernel moves
		// back to its syscall instruction on resumption, and a step
		// would run it without a stop.
		return false, nil
	}
	code := make([]byte, 16)
	for i := 0; i < k; i++ {
		if regs, err = t.thread().GetRegs(); err != nil {
			return true, r.lost(t, err)
		}
		if i > 0 && regs[ptrace.EFLAGS]&0x100 != 0 {
			// Our step's trap flag, left visible after a stepped popf.
			regs[ptrace.EFLAGS] &^= 0x100
			if err := t.thread().SetRegs(&regs); err != nil {
				return true, r.lost(t, err)
			}
		}
		pc := regs[ptrace.RIP]
		n := t.mem.ReadPartial(pc, code)
		in, ok := asyncpoint.Decode(code[:n], pc, &regs)
		if !ok || in.Event || in.RepString || in.PushesFlags {
			// An event of its own, or an instruction stepping would
			// disturb, comes next: stop counting and preempt here.
			if i == 0 {
				return false, nil
			}
			break
		}
		res, err := r.singleStep(t)
		if res != pointTaken || err != nil {
			// The step met a stop, which was handled.
			if err != nil {
				return true, err
			}
			spent()
			return true, r.runNext()
		}
	}
	if regs, err = t.thread().GetRegs(); err != nil {
		return true, r.lost(t, err)
	}
	if regs[ptrace.EFLAGS]&0x100 != 0 {
		// Left by the last step after a popf.
		regs[ptrace.EFLAGS] &^= 0x100
		if err := t.thread().SetRegs(&regs); err != nil {
			return true, r.lost(t, err)
		}
	}
	t.state = stReady
	t.at = atSignal
	if err := r.preempt(t); err != nil {
		return true, err
	}
	r.sched.Starve(t.tid)
	spent()
	r.logf("tid %d: chaos: preempted at %#x after %d instructions (chaos stepping so far %v)", t.tid, regs[ptrace.RIP], k, r.chaosStepTime.Round(time.Microsecond))
	return true, r.runNext()
}

// runNext resumes the next task when nothing runs: the caller of
// resumeUser goes on to wait for a stop.
func (r *recorder) runNext() error {
	if r.running != nil || r.fast != nil {
		return nil
	}
	if n := r.pick(); n != nil {
		return r.resumeUser(n)
	}
	return nil
}
