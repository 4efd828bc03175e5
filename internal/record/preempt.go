package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/asyncpoint"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Limits of the search for a point.
const (
	maxLearnSteps = 20000 // single steps (about 10 µs each)
	maxWords      = 16    // memory words in a point's identity
	fxCompareLen  = 416   // FXSAVE bytes up to the end of xmm15
)

// pointResult says how the search for a point ended.
type pointResult int

const (
	pointTaken   pointResult = iota // the thread is stopped at a recorded point
	pointAtEvent                    // the thread is about to stop at an event by itself
	pointHandled                    // a stop of its own (fault, exit) was handled instead
)

// asyncPoint moves t, stopped at an arbitrary instruction of user code,
// to a point replay can find again and records it (a KindSched event).
//
// Single steps run t through its current loop until an instruction
// repeats; one iteration of that loop is then known: its instructions
// and the memory words they touch. The point is taken at an instruction
// of that iteration where replay can plant a jump (a site, see
// asyncpoint.ChooseSite) when t next arrives there. Its identity is the
// full register file, the values of the touched memory words (in a loop
// whose registers repeat, a counter in memory tells iterations apart),
// the SSE registers and a checksum of writable memory.
func (r *recorder) asyncPoint(t *task) (pointResult, error) {
	var run []asyncpoint.Insn
	seen := map[uint64]int{}
	words := map[uint64]int{} // word -> last step that touched it
	var site uint64
	siteLen := 0
	code := make([]byte, 16)
	for step := 0; ; step++ {
		regs, err := ptrace.GetRegs(t.tid)
		if err != nil {
			return pointHandled, r.lost(t, err)
		}
		if step > 0 && regs[ptrace.EFLAGS]&0x100 != 0 {
			// The trap flag of our steps, which the kernel stops counting
			// as ours once a popf was stepped: the program never set it.
			regs[ptrace.EFLAGS] &^= 0x100
			if err := ptrace.SetRegs(t.tid, &regs); err != nil {
				return pointHandled, r.lost(t, err)
			}
		}
		pc := regs[ptrace.RIP]
		if site != 0 && pc == site || step == maxLearnSteps {
			if pc != site {
				// No loop found (or its site not reached): take the
				// point here, found in replay by a breakpoint that
				// checks every arrival.
				siteLen = 0
			}
			return pointTaken, r.emitPoint(t, &regs, siteLen, words, step)
		}
		n := t.mem.ReadPartial(pc, code)
		in, ok := asyncpoint.Decode(code[:n], pc, &regs)
		if !ok || in.Event {
			// A system call or a trapped instruction comes next: that
			// event is a switching point already.
			return pointAtEvent, nil
		}
		for _, w := range in.Accesses {
			words[w] = step
		}
		if first, ok := seen[pc]; ok && site == 0 {
			if s, l, ok := asyncpoint.ChooseSite(run[first:], asyncpoint.Targets(run), r.branchTargets(t), t.lastRegs[ptrace.RIP]); ok {
				site, siteLen = s, l
				if pc == site {
					return pointTaken, r.emitPoint(t, &regs, siteLen, words, step)
				}
			}
		}
		if _, ok := seen[pc]; !ok {
			seen[pc] = len(run)
		}
		run = append(run, in)
		if in.RepString {
			// Finish it at native speed (stepping stops after every
			// iteration, and a point inside it is not an instruction
			// boundary replay could find).
			if res, err := r.runTo(t, pc+uint64(in.Len)); res != pointTaken || err != nil {
				return res, err
			}
			continue
		}
		if res, err := r.singleStep(t); res != pointTaken || err != nil {
			return res, err
		}
		if in.PushesFlags {
			// The step's trap flag went onto the stack with the flags;
			// a later popf would restore it.
			if after, err := ptrace.GetRegs(t.tid); err == nil {
				if v, err := t.mem.ReadU64(after[ptrace.RSP]); err == nil && v&0x100 != 0 {
					var b [8]byte
					binary.LittleEndian.PutUint64(b[:], v&^0x100)
					_ = t.mem.WriteMem(after[ptrace.RSP], b[:])
				}
			}
		}
	}
}

// singleStep executes one instruction of t. Asynchronous signals that
// arrive meanwhile are held for later; anything else (a fault, an exit)
// is handled as usual and ends the search.
func (r *recorder) singleStep(t *task) (pointResult, error) {
	for {
		if err := ptrace.Resume(t.tid, ptrace.Step, 0); err != nil {
			return pointHandled, r.lost(t, err)
		}
		st, _, err := ptrace.Wait(t.tid, false)
		if err != nil {
			return pointHandled, err
		}
		si, held := r.holdDuringSearch(t, st)
		if held {
			continue
		}
		if si != nil && st.Signal == int(unix.SIGTRAP) && si.Code() == 2 /* TRAP_TRACE */ {
			return pointTaken, nil
		}
		return pointHandled, r.handle(st)
	}
}

// holdDuringSearch absorbs a stop met while a point is searched for that
// must not end the search: a late timeslice signal (dropped) or an
// asynchronous signal (held for delivery at the point, with its original
// siginfo). Otherwise it returns the stop's siginfo, if it has one.
func (r *recorder) holdDuringSearch(t *task, st ptrace.Stop) (si *ptrace.SigInfo, held bool) {
	if st.Kind != ptrace.StopSignal {
		return nil, false
	}
	info, err := ptrace.GetSigInfo(t.tid)
	if err != nil {
		return nil, false
	}
	switch {
	case st.Signal == watchdogSignal && isOurs(&info):
		return nil, true
	case !synchronous(&info):
		if saved, ok := t.reraised[st.Signal]; ok {
			delete(t.reraised, st.Signal)
			info = saved
		}
		t.deferred = append(t.deferred, info)
		return nil, true
	}
	return &info, false
}

// runTo runs t until it reaches addr (the instruction after a rep string
// instruction), with a temporary int3 there.
func (r *recorder) runTo(t *task, addr uint64) (pointResult, error) {
	var orig [1]byte
	if err := t.mem.ReadMem(addr, orig[:]); err != nil {
		return pointHandled, r.lost(t, err)
	}
	if err := t.mem.WriteMem(addr, []byte{0xcc}); err != nil {
		return pointHandled, r.lost(t, err)
	}
	restore := func() error { return t.mem.WriteMem(addr, orig[:]) }
	for {
		if err := ptrace.Resume(t.tid, ptrace.Cont, 0); err != nil {
			_ = restore()
			return pointHandled, r.lost(t, err)
		}
		st, _, err := ptrace.Wait(t.tid, false)
		if err != nil {
			_ = restore()
			return pointHandled, err
		}
		si, held := r.holdDuringSearch(t, st)
		if held {
			continue
		}
		if si != nil && st.Signal == int(unix.SIGTRAP) && si.Code() == 0x80 {
			regs, err := ptrace.GetRegs(t.tid)
			if err == nil && regs[ptrace.RIP] == addr+1 {
				regs[ptrace.RIP] = addr
				if err := restore(); err != nil {
					return pointHandled, err
				}
				return pointTaken, ptrace.SetRegs(t.tid, &regs)
			}
		}
		if err := restore(); err != nil {
			return pointHandled, err
		}
		return pointHandled, r.handle(st)
	}
}

// branchTargets returns a function telling whether a direct branch in
// the file mapped at an address of t's address space may lead there
// (true as well for code outside file mappings, which cannot be
// scanned). The scans are kept per mapped file for the recording.
func (r *recorder) branchTargets(t *task) func(pc uint64) bool {
	maps, err := tracee.Maps(t.tid)
	if err != nil {
		return nil
	}
	return func(pc uint64) bool {
		for _, m := range maps {
			if pc < m.Start || pc >= m.End {
				continue
			}
			if m.Inode == 0 {
				return true
			}
			key := fmt.Sprintf("%s:%d:%d", m.Dev, m.Inode, m.Offset)
			set, ok := r.targets[key]
			if !ok {
				if f, err := os.Open(fmt.Sprintf("/proc/%d/map_files/%x-%x", t.tid, m.Start, m.End)); err == nil {
					set, _ = patch.BranchTargets(f)
					f.Close()
				}
				r.targets[key] = set
			}
			if set == nil {
				return true
			}
			return set[pc-m.Start+m.Offset]
		}
		return true
	}
}

// emitPoint records t's point: registers, up to maxWords of the memory
// words touched most recently, SSE state and a memory checksum.
func (r *recorder) emitPoint(t *task, regs *trace.Regs, siteLen int, words map[uint64]int, step int) error {
	ev := &trace.Event{Kind: trace.KindSched, Tid: int32(t.tid), Regs: regs, Flags: uint64(siteLen), Result: int64(t.sc)}
	for len(words) > 0 && len(ev.Mem) < maxWords {
		best, bestStep := uint64(0), -1
		for w, s := range words {
			if s > bestStep || s == bestStep && w < best {
				best, bestStep = w, s
			}
		}
		delete(words, best)
		buf := make([]byte, 8)
		if t.mem.ReadMem(best, buf) == nil {
			ev.Mem = append(ev.Mem, trace.MemWrite{Addr: best, Data: buf})
		}
	}
	if xs, err := ptrace.GetXState(t.tid, r.xsaveSize); err == nil && len(xs) >= fxCompareLen {
		ev.XState = xs[:fxCompareLen]
	}
	t0 := time.Now()
	if !r.kernelMayWrite(t) {
		sum, err := tracee.Checksum(t.tid, t.mem)
		if err != nil {
			return fmt.Errorf("tid %d: checksum at a preemption point: %w", t.tid, err)
		}
		ev.Checksum = sum
	} else {
		ev.StackSum = tracee.StackSum(t.tid, t.mem, regs[ptrace.RSP])
	}
	r.logf("tid %d: point at 0x%x after %d steps (site %d bytes, %d words, checksum %v)", t.tid, regs[ptrace.RIP], step, siteLen, len(ev.Mem), time.Since(t0))
	if err := r.emit(ev); err != nil {
		return err
	}
	t.lastRegs = *regs
	t.state = stReady
	t.at = atSignal
	t.pendingSig = 0
	r.points++
	return nil
}

// deliverHeld delivers the first signal t holds, at the point where t
// stands (a recorded event), with its original siginfo.
func (r *recorder) deliverHeld(t *task) error {
	if len(t.deferred) == 0 {
		return nil
	}
	si := t.deferred[0]
	t.deferred = t.deferred[1:]
	if err := ptrace.SetSigInfo(t.tid, &si); err != nil {
		return r.lost(t, err)
	}
	regs, err := ptrace.GetRegs(t.tid)
	if err != nil {
		return r.lost(t, err)
	}
	return r.deliver(t, si.Signo(), &si, &regs)
}

// kernelMayWrite tells whether another thread of t's process is inside
// a system call: the kernel may write its results (or clear a tid at
// exit) into memory at any moment, while replay writes them at that
// thread's event, so a memory checksum taken now is not reproducible.
func (r *recorder) kernelMayWrite(t *task) bool {
	tgid := tracee.Tgid(t.tid)
	for _, o := range r.tasks {
		if o != t && o.state == stKernel && tracee.Tgid(o.tid) == tgid {
			return true
		}
	}
	return false
}
