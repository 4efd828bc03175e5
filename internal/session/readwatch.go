package session

import (
	"github.com/gorr-debugger/gorr/internal/asyncpoint"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Read and access watchpoints (gdb's rwatch and awatch, Z3/Z4) cannot use
// debug registers here (they do not fire on this project's VMs), and a
// read leaves no trace in memory to compare. While one is set, the
// debugged process's threads run by single steps; before each step the
// instruction is decoded (asyncpoint.Decode: the memory words its
// operands and stack accesses touch), and after it the stop is reported
// when it touched a watched byte, just after the access as the hardware
// would. Positions of such stops are a base plus a number of steps, like
// any stepped position, so reverse-continue finds the last access with
// the same stepping from the start of each run of user code.

// rwState is the read-watch stepping of one task.
type rwState struct {
	t       *replay.Task
	base    Pos // where counting started (a boundary, or a stop)
	steps   int
	pending []uint64 // words the next instruction touches
	// syscallNext: the next instruction is a system call, which is not
	// stepped (the run of user code ends there).
	syscallNext bool
	before      map[Watch]string // read watchpoints' bytes before the step
}

// rwWatches lists the read and access watchpoints.
func (d *driver) rwWatches() []Watch {
	var out []Watch
	for _, w := range d.watches {
		if w.Kind == 3 || w.Kind == 4 {
			out = append(out, w)
		}
	}
	return out
}

// rwApplies tells whether t must run by steps for read watchpoints.
func (d *driver) rwApplies(t *replay.Task) bool {
	if d == nil || !d.started || t.Proc() != d.debugProc() || len(d.rwWatches()) == 0 {
		return false
	}
	return d.goal == nil || d.goal.kind == goalScan
}

// rwStart begins counting t's steps from base.
func (d *driver) rwStart(t *replay.Task, base Pos) {
	d.rw = rwState{t: t, base: base}
	d.rwDecode(t, nil)
}

// rwDecode notes the memory words of the instruction t is about to run
// (with the original bytes under breakpoints and preemption pads); regs
// are its registers when the caller has them (nil: read them).
func (d *driver) rwDecode(t *replay.Task, regs *trace.Regs) {
	d.rw.pending, d.rw.syscallNext = nil, false
	d.rw.before = map[Watch]string{}
	for _, w := range d.rwWatches() {
		if w.Kind == 3 {
			b := make([]byte, w.Size)
			d.rw.before[w] = string(b[:t.Mem().ReadPartial(w.Addr, b)])
		}
	}
	if regs == nil {
		r, err := t.Thread().GetRegs()
		if err != nil {
			return
		}
		regs = &r
	}
	pc := regs[ptrace.RIP]
	code := make([]byte, 16)
	code = code[:t.Mem().ReadPartial(pc, code)]
	if padOrig, ok := d.e.PadAt(t, pc); ok {
		// The site's instructions run relocated in the pad, as one step.
		for off := 0; off < len(padOrig); {
			in, ok := asyncpoint.Decode(padOrig[off:], pc+uint64(off), regs)
			if !ok || in.Len == 0 {
				break
			}
			d.rw.pending = append(d.rw.pending, in.Accesses...)
			off += in.Len
		}
		return
	}
	for i := range code {
		if orig, ok := d.bps[pc+uint64(i)]; ok {
			code[i] = orig
		}
	}
	if in, ok := asyncpoint.Decode(code, pc, regs); ok {
		d.rw.pending = in.Accesses
		d.rw.syscallNext = len(code) >= 2 && code[0] == 0x0f && code[1] == 0x05
	}
}

// rwStep counts a completed step of t and returns the watchpoint the
// stepped instruction touched, if any; regs are t's registers now.
func (d *driver) rwStep(t *replay.Task, regs *trace.Regs) *Watch {
	d.rw.steps++
	var hit *Watch
	for _, w := range d.rwWatches() {
		if old, ok := d.rw.before[w]; ok {
			// A read watchpoint: an access that changed the value was a
			// write (x86 cannot watch reads alone; gdb filters the same way).
			b := make([]byte, w.Size)
			if string(b[:t.Mem().ReadPartial(w.Addr, b)]) != old {
				continue
			}
		}
		for _, word := range d.rw.pending {
			if word < w.Addr+uint64(w.Size) && w.Addr < word+8 {
				w := w
				hit = &w
				break
			}
		}
		if hit != nil {
			break
		}
	}
	d.rwDecode(t, regs)
	return hit
}

// rwPos is t's position after the counted steps.
func (d *driver) rwPos() Pos {
	p := d.rw.base
	p.Steps += d.rw.steps
	return p
}

// rwOnly tells whether a step of t was made only for read watchpoints
// (not asked by the user or needed by the goal).
func (d *driver) rwOnly(t *replay.Task) bool {
	if d.rw.t != t {
		return false
	}
	if g := d.goal; g != nil {
		return g.kind == goalScan && !(g.stepsLeft > 0 && t.Rec() == g.target.Tid)
	}
	return !d.userStep
}

// rwTrap handles a completed single step of t while read watchpoints
// are set. It returns a stop to report, or handled when it resumed t
// (the step was only for the watchpoints).
func (d *driver) rwTrap(t *replay.Task, regs *trace.Regs, mode int, stepping *bool) (stop *DebugStop, handled bool, err error) {
	if d.rw.t != t {
		return nil, false, nil
	}
	only := d.rwOnly(t)
	g := d.goal
	final := g != nil && g.stepsLeft == 1 && t.Rec() == g.target.Tid // this step reaches the scan's target
	if w := d.rwStep(t, regs); w != nil {
		pos := d.rwPos()
		switch {
		case g == nil:
			d.rwSettle(t)
			d.userStep = false
			d.pos = pos
			*stepping = false
			return &DebugStop{Kind: StopWatch, Tid: t.Rec(), Addr: w.Addr, Watch: *w}, true, nil
		case g.kind == goalScan && !final:
			g.last, g.lastRW = &pos, w
		}
	}
	if !only {
		return nil, false, nil
	}
	d.rwSettle(t)
	return nil, true, d.rwResume(t, mode, stepping)
}

// rwResume continues t by a step, or up to the system call that comes
// next (stepping into one would leave a single-step trap pending over a
// call that runs for real).
func (d *driver) rwResume(t *replay.Task, mode int, stepping *bool) error {
	if d.rw.syscallNext {
		*stepping = false
		return t.Thread().Resume(mode, 0)
	}
	*stepping = true
	return d.e.StepInsn(t)
}

// rwSettle re-plants a breakpoint lifted for the step just made.
func (d *driver) rwSettle(t *replay.Task) {
	if d.restoreAt != 0 {
		_ = t.Mem().WriteMem(d.restoreAt, []byte{0xcc})
		d.restoreAt = 0
	}
	d.skipReport = false
}
