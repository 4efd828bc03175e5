package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/asyncpoint"
	"github.com/gorr-debugger/gorr/internal/cpu"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// pointDeadline bounds the search for one preemption point (time at
// debugger stops excluded): a thread that diverged could otherwise loop
// forever.
const pointDeadline = 60 * time.Second

// pointSearch is the state of a run towards a preemption point (a
// KindSched event): the task, the event and either a pad or a plain
// breakpoint at the site.
type pointSearch struct {
	ev        *trace.Event
	t         *rtask
	pad       *asyncpoint.Pad
	site      uint64
	n         int             // bytes of the site (at least 1)
	timer     *time.Timer     // kills the thread when it does not arrive in time
	orig      byte            // the byte under our own breakpoint (no pad)
	ownBp     bool            // our breakpoint is planted (no pad)
	dbgBp     bool            // a debugger breakpoint is (also) at the site
	padOrig   []byte          // the site's bytes under the pad's jump
	padSaved  *asyncpoint.Pad // the pad while a debugger breakpoint in its site displaces it
	page      uint64          // the pad's page (mapped until the search ends)
	words     []asyncpoint.Word
	found     bool
	arrivals  int                  // arrivals examined by the tracer
	sums      []asyncpoint.PageSum // pages the pad digests (refinePad)
	refines   int
	lastDiffs []string // why the last examined arrival was not the point
	// diagPad is the latest pad installed; diagAt its DiagAddr, for the
	// time box's goroutine.
	diagPad *asyncpoint.Pad
	diagAt  atomic.Uint64
}

// usePad notes p as the pad whose diagnostics a divergence report reads.
func (ps *pointSearch) usePad(p *asyncpoint.Pad) {
	ps.diagPad = p
	ps.diagAt.Store(p.DiagAddr())
}

// padDiag describes what the pad's diagnostics b say about the arrivals
// at the site ("" without a pad).
func (ps *pointSearch) padDiag(b []byte) string {
	if ps.diagPad == nil || b == nil {
		return ""
	}
	matched, what := ps.diagPad.Diag(b)
	switch {
	case matched == 0:
		return "no arrival at the site matched the recorded general registers and memory words"
	case what == "":
		return fmt.Sprintf("%d arrival(s) at the site matched the recorded general registers and memory words", matched)
	}
	return fmt.Sprintf("%d arrival(s) at the site matched the recorded general registers and memory words; the last of them differed in %s", matched, what)
}

// pointFinder finds asynchronous points in replay, for the strategy the
// trace header names (asyncpoint.Strategy*; record's pointTaker).
type pointFinder interface {
	find(rp *replayer, ev *trace.Event) error
}

// stateFinder finds points identified by state (findByState).
type stateFinder struct{}

func (stateFinder) find(rp *replayer, ev *trace.Event) error { return rp.findByState(ev) }

// strategy is the point strategy of the trace being replayed.
func (rp *replayer) strategy() string {
	if rp.opts.Reader == nil {
		return asyncpoint.StrategyState
	}
	return rp.opts.Reader.Header().PointStrategy
}

// preempt replays a KindSched event with the finder of the trace's
// strategy.
func (rp *replayer) preempt(ev *trace.Event) error {
	s := rp.strategy()
	if !asyncpoint.Known(s) {
		return rp.diverge(ev, fmt.Sprintf("the trace's preemption points were taken by strategy %q, which this gorr cannot find", s))
	}
	var f pointFinder = stateFinder{}
	return f.find(rp, ev)
}

// findByState replays a KindSched event: task Tid runs until it reaches
// the recorded point (same instruction, registers, identity memory
// words and pages, XSAVE area and memory checksum) and stops there.
func (rp *replayer) findByState(ev *trace.Event) error {
	t, err := rp.task(ev)
	if err != nil {
		return err
	}
	if ev.Regs == nil {
		return rp.diverge(ev, "preemption point without registers")
	}
	if err := rp.resume(t, -1); err != nil {
		return err
	}
	ps := &pointSearch{ev: ev, t: t, site: ev.Regs[ptrace.RIP], n: max(int(ev.Flags&0xff), 1)}
	for _, m := range ev.Mem {
		if len(m.Data) == 8 {
			ps.words = append(ps.words, asyncpoint.Word{Addr: m.Addr, Value: binary.LittleEndian.Uint64(m.Data)})
		}
	}
	cur, err := t.thread().GetRegs()
	if err != nil {
		return err
	}
	if cur[ptrace.RIP] == ps.site && len(rp.pointDiffs(ps, &cur)) == 0 {
		// A pure spin preempted twice in the same state: it is there.
		return nil
	}
	n := int(ev.Flags & 0xff)
	resumesInside := cur[ptrace.RIP] > ps.site && cur[ptrace.RIP] < ps.site+uint64(n)
	if resumesInside && n >= asyncpoint.JumpLen && !rp.driven() && !rp.debugBpIn(t, ps.site, uint64(n)) {
		// The thread stands inside the site, where the pad's jump would
		// go (the recorder avoids that, but it cannot see where replay
		// resumes a thread whose calls the stub replays without a stop:
		// at its point before them). A site is straight-line code, so a
		// few steps take it past the end, and the pad can be used.
		// (Under a debugger, whose watchpoints these steps would pass
		// by, the stub replays no stretch: the thread stops in it.)
		if resumesInside, err = rp.stepOutOf(ev, t, ps.site, uint64(n)); err != nil {
			return err
		}
	}
	// A signal interrupted a thread inside the site earlier: its
	// handler's return (or the Go runtime resuming the goroutine it
	// preempted there) may enter the site there, in the middle of the
	// pad's jump. The breakpoint changes only the site's first byte.
	signalInside := n >= asyncpoint.JumpLen && !resumesInside && asyncpoint.ResumesInside(ps.site, uint64(n), t.proc.resumes)
	if signalInside {
		rp.logf("event %d: no pad at 0x%x (a signal interrupted the code inside its %d bytes); checking every arrival", rp.n, ps.site, n)
	}
	if n >= asyncpoint.JumpLen && !resumesInside && !signalInside && !rp.debugBpIn(t, ps.site, uint64(n)) {
		if ps.pad, ps.padOrig, err = rp.installPad(t, ev, n, ps.words); err != nil {
			rp.logf("event %d: no pad at 0x%x (%v); checking every arrival", rp.n, ps.site, err)
			ps.pad = nil
		} else {
			ps.page = ps.pad.Addr
			ps.usePad(ps.pad)
		}
	}
	if ps.pad == nil {
		if err := rp.plantPointBp(ps); err != nil {
			return err
		}
	}
	var timedOut atomic.Bool
	var pageDiffs []string
	var boxDiag []byte // the pad's diagnostics when the time was up
	ps.timer = time.AfterFunc(pointDeadline, func() {
		// What the pad's pages show when the time is up (read through
		// /proc, as this goroutine is not the tracer thread).
		if f, err := os.Open(fmt.Sprintf("/proc/%d/mem", t.real)); err == nil {
			pageDiffs = recordedPageDiffs(ev, "at the end of the time box", 1, func(addr uint64, b []byte) error {
				_, err := f.ReadAt(b, int64(addr))
				return err
			})
			if at := ps.diagAt.Load(); at != 0 {
				b := make([]byte, asyncpoint.DiagLen)
				if _, err := f.ReadAt(b, int64(at)); err == nil {
					boxDiag = b
				}
			}
			f.Close()
		}
		timedOut.Store(true)
		_ = unix.Tgkill(tracee.Tgid(t.real), t.real, unix.SIGKILL)
	})
	defer ps.timer.Stop()
	rp.point = ps
	_, err = rp.runTo(ev, t, ptrace.Sysemu, ptrace.StopSignal, int(unix.SIGTRAP))
	rp.point = nil
	var diag []byte // the pad's diagnostics
	if timedOut.Load() {
		diag = boxDiag
	} else if err != nil && ps.diagPad != nil && !t.gone {
		b := make([]byte, asyncpoint.DiagLen)
		if t.mem.ReadMem(ps.diagPad.DiagAddr(), b) == nil {
			diag = b
		}
	}
	cleanup := rp.removePoint(ps)
	if err == nil && !ps.found {
		err = rp.diverge(ev, fmt.Sprintf("unexpected SIGTRAP while looking for the preemption point at 0x%x", ps.site))
	}
	if err != nil {
		r := ev.Regs
		ps.lastDiffs = append(ps.lastDiffs, fmt.Sprintf("looked for rip 0x%x rsp 0x%x rax 0x%x rcx 0x%x rdx 0x%x rdi 0x%x rsi 0x%x and %d memory words",
			r[ptrace.RIP], r[ptrace.RSP], r[ptrace.RAX], r[ptrace.RCX], r[ptrace.RDX], r[ptrace.RDI], r[ptrace.RSI], len(ps.words)))
		if d := ps.padDiag(diag); d != "" {
			ps.lastDiffs = append(ps.lastDiffs, d)
		}
		var de *DivergenceError
		if timedOut.Load() {
			ps.lastDiffs = append(ps.lastDiffs, pageDiffs...)
			err = rp.diverge(ev, fmt.Sprintf("thread did not reach its preemption point at 0x%x within %v (%d arrivals there were not it)", ps.site, pointDeadline, ps.arrivals), ps.lastDiffs...)
		} else if errors.As(err, &de) {
			de.What = fmt.Sprintf("thread did not reach its preemption point at 0x%x (%d arrivals there were not it): %s", ps.site, ps.arrivals, de.What)
			de.Diffs = append(de.Diffs, ps.lastDiffs...)
			if ps.arrivals == 0 && !t.gone {
				// Nothing passed the pad: what the recorded pages hold
				// that the thread's memory does not, where it stopped
				// (a difference that never went away, such as one in
				// the frame's red zone, stands out).
				de.Diffs = append(de.Diffs, recordedPageDiffs(ev, "where it stopped", 4, t.mem.ReadMem)...)
			}
		}
		return err
	}
	return cleanup
}

// maxStepsOut bounds the single steps that take a thread out of a site
// it stands inside (a rep-string instruction there steps once per
// iteration): past it, the search uses a breakpoint.
const maxStepsOut = 64

// stepOutOf single-steps t, searching for the point ev and standing
// inside its site [site, site+n), until it leaves the site, and tells
// whether it is still inside after maxStepsOut steps.
func (rp *replayer) stepOutOf(ev *trace.Event, t *rtask, site, n uint64) (inside bool, err error) {
	for range maxStepsOut {
		if err := rp.stepInsn(t); err != nil {
			return true, err
		}
		st, err := rp.waitStop(t, ptrace.SysemuStep)
		if err != nil {
			return true, err
		}
		if st.Kind != ptrace.StopSignal || st.Signal != int(unix.SIGTRAP) {
			return true, rp.diverge(ev, fmt.Sprintf("stepping out of the site at 0x%x gave %v", site, st))
		}
		r, err := t.thread().GetRegs()
		if err != nil {
			return true, err
		}
		if r[ptrace.RIP] <= site || r[ptrace.RIP] >= site+n {
			return false, nil
		}
	}
	return true, nil
}

// recordedPageDiffs compares the whole pages a point recorded (ev.Mem
// entries of 4096 bytes) with memory as read, and describes up to max
// differing words of each page, skipping the bytes the point leaves out
// (ev.Skip).
func recordedPageDiffs(ev *trace.Event, when string, max int, read func(addr uint64, b []byte) error) []string {
	var out []string
	pg := make([]byte, 4096)
	for _, m := range ev.Mem {
		if len(m.Data) != 4096 || read(m.Addr, pg) != nil {
			continue
		}
		n := 0
		for o := 0; o < 4096 && n < max; o += 8 {
			a := m.Addr + uint64(o)
			if bytes.Equal(pg[o:o+8], m.Data[o:o+8]) || skipped(ev.Skip, a) {
				continue
			}
			out = append(out, fmt.Sprintf("%s, memory at 0x%x: recorded %x, replay %x", when, a, m.Data[o:o+8], pg[o:o+8]))
			n++
		}
	}
	return out
}

// skipped tells whether the word at a lies in one of the spans a point
// leaves out.
func skipped(spans []trace.Span, a uint64) bool {
	for _, s := range spans {
		if a+8 > s.Addr && a < s.Addr+s.Len {
			return true
		}
	}
	return false
}

// logf writes to the replay's verbose log.
func (rp *replayer) logf(format string, args ...any) {
	if rp.opts.Log != nil {
		fmt.Fprintf(rp.opts.Log, "gorr: "+format+"\n", args...)
	}
}

// debugBpIn tells whether a debugger breakpoint lies in [addr, addr+n)
// of t's address space.
func (rp *replayer) debugBpIn(t *rtask, addr, n uint64) bool {
	for a := range rp.breakpointsOf(t) {
		if a >= addr && a < addr+n {
			return true
		}
	}
	return false
}

// installPad maps a page near the site, writes the pad there and the
// jump over the site.
func (rp *replayer) installPad(t *rtask, ev *trace.Event, n int, words []asyncpoint.Word) (*asyncpoint.Pad, []byte, error) {
	site := ev.Regs[ptrace.RIP]
	orig := make([]byte, n)
	if err := t.mem.ReadMem(site, orig); err != nil {
		return nil, nil, err
	}
	maps, err := tracee.Maps(t.real)
	if err != nil {
		return nil, nil, err
	}
	at := tracee.FindGapNear(site, asyncpoint.PadSize, 1<<30, maps)
	if at == 0 {
		return nil, nil, errors.New("no free address within 1 GiB")
	}
	sc := uint64(ev.Result)
	var insn [2]byte
	if sc == 0 || t.mem.ReadMem(sc, insn[:]) != nil || insn != [2]byte{0x0f, 0x05} {
		return nil, nil, fmt.Errorf("no syscall instruction at 0x%x to map the pad with", sc)
	}
	got, err := tracee.MustInject(t.real, sc, unix.SYS_MMAP, at, asyncpoint.PadSize,
		unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uint64(0), 0)
	if err != nil {
		return nil, nil, err
	}
	if uint64(got) != at {
		return nil, nil, fmt.Errorf("pad mapped at 0x%x, wanted 0x%x", got, at)
	}
	id := pointIdentity(ev, words)
	rp.logf("event %d: pad at 0x%x for site 0x%x: %d words, FPU %v, AVX %v, %d pages, skip %x", rp.n, at, site, len(id.Words), id.XState != nil, id.AVX, len(id.Pages), ev.Skip)
	for _, p := range id.Pages {
		rp.logf("  page %x ranges %v", p.Addr, p.Ranges)
	}
	pad, err := asyncpoint.BuildIdentity(at, site, orig, id)
	if err == nil {
		err = t.mem.WriteMem(at, pad.Code)
	}
	if err == nil {
		err = t.mem.WriteMem(site, pad.Jump)
	}
	if err != nil {
		_, _ = tracee.MustInject(t.real, sc, unix.SYS_MUNMAP, at, asyncpoint.PadSize)
		_ = t.mem.WriteMem(site, orig)
		return nil, nil, err
	}
	return pad, orig, nil
}

// plantPointBp puts a breakpoint on the site (when no pad can be used):
// every arrival there is examined by the tracer.
func (rp *replayer) plantPointBp(ps *pointSearch) error {
	t := ps.t
	if _, ok := rp.breakpointsOf(t)[ps.site]; ok {
		ps.dbgBp = true
		return nil
	}
	var b [1]byte
	if err := t.mem.ReadMem(ps.site, b[:]); err != nil {
		return fmt.Errorf("preemption point at 0x%x: %w", ps.site, err)
	}
	ps.orig, ps.ownBp = b[0], true
	return t.mem.WriteMem(ps.site, []byte{0xcc})
}

// removePoint takes the pad or breakpoint away.
func (rp *replayer) removePoint(ps *pointSearch) error {
	t := ps.t
	if t.gone {
		return nil
	}
	if ps.ownBp {
		ps.ownBp = false
		if err := t.mem.WriteMem(ps.site, []byte{ps.orig}); err != nil {
			return err
		}
	}
	if ps.pad != nil {
		if err := t.mem.WriteMem(ps.pad.Site, ps.padOrig); err != nil {
			return err
		}
		ps.pad = nil
	}
	if ps.page != 0 {
		page := ps.page
		ps.page = 0
		if _, err := tracee.MustInject(t.real, uint64(ps.ev.Result), unix.SYS_MUNMAP, page, asyncpoint.PadSize); err != nil {
			return fmt.Errorf("remove pad: %w", err)
		}
	}
	return nil
}

// pointReclaim removes the debugger's breakpoint at addr (with original
// byte orig) inside the site of the search under way: when no debugger
// breakpoint is left in the site, the pad's jump goes back (the search
// runs at native speed again); otherwise a breakpoint at the site itself
// stays, as the search's own.
func (rp *replayer) pointReclaim(ps *pointSearch, addr uint64, orig byte) error {
	t := ps.t
	if addr == ps.site && ps.dbgBp {
		ps.dbgBp, ps.ownBp, ps.orig = false, true, orig
	} else if err := t.mem.WriteMem(addr, []byte{orig}); err != nil {
		return err
	}
	n := int(ps.ev.Flags & 0xff)
	if n < asyncpoint.JumpLen || rp.debugBpIn(t, ps.site, uint64(n)) {
		return nil
	}
	if r, err := t.thread().GetRegs(); err != nil || r[ptrace.RIP] > ps.site && r[ptrace.RIP] < ps.site+uint64(n) {
		return nil // the thread stands inside the site: keep the breakpoint
	}
	if ps.padSaved != nil {
		if err := t.mem.WriteMem(ps.site, ps.padSaved.Jump); err != nil {
			return err
		}
		ps.pad, ps.padSaved, ps.ownBp = ps.padSaved, nil, false
		return nil
	}
	if ps.page == 0 && ps.ownBp {
		// The search began by a breakpoint because the debugger had one
		// in the site: now a pad can take over.
		if err := t.mem.WriteMem(ps.site, []byte{ps.orig}); err != nil {
			return err
		}
		ps.ownBp = false
		pad, orig, err := rp.installPad(t, ps.ev, n, ps.words)
		if err != nil {
			ps.ownBp = true
			return t.mem.WriteMem(ps.site, []byte{0xcc})
		}
		ps.pad, ps.padOrig, ps.page = pad, orig, pad.Addr
		ps.usePad(pad)
	}
	return nil
}

// pointYield makes room for a debugger breakpoint at addr during a
// search: a breakpoint inside the pad's site turns the search into one
// by a breakpoint at the site (the jump goes), and a debugger breakpoint
// at the site takes over the search's own (same int3, with the original
// byte recorded).
func (rp *replayer) pointYield(ps *pointSearch, addr uint64) error {
	if ps.pad != nil && addr >= ps.pad.Site && addr < ps.pad.Site+uint64(len(ps.padOrig)) {
		if err := ps.t.mem.WriteMem(ps.pad.Site, ps.padOrig); err != nil {
			return err
		}
		ps.padSaved, ps.pad = ps.pad, nil
		ps.orig, ps.ownBp = ps.padOrig[0], true
		if err := ps.t.mem.WriteMem(ps.site, []byte{0xcc}); err != nil {
			return err
		}
	}
	if ps.ownBp && addr == ps.site {
		ps.ownBp, ps.dbgBp = false, true
		rp.adoptBreakpoint(addr, ps.orig)
	}
	return nil
}

// pointTrap examines a SIGTRAP of the task searching for its point. It
// returns found when the task stands at the point (registers set as
// they were there), resumed when it let the task run on, and neither
// for a trap that is not the search's.
func (rp *replayer) pointTrap(t *rtask, mode int, stepping bool) (found, resumed bool, err error) {
	ps := rp.point
	if ps == nil || ps.t != t {
		return false, false, nil
	}
	regs, err := t.thread().GetRegs()
	if err != nil {
		return false, false, err
	}
	at := regs[ptrace.RIP] - 1
	switch {
	case ps.pad != nil && at >= ps.site+asyncpoint.JumpLen && at < ps.site+uint64(ps.n) && rp.int3Trap(t):
		// An int3 filling the site after the pad's jump (not a single
		// step that ended after the site): the thread entered the site
		// past its start, where the recorder never puts a point
		// (asyncpoint.ChooseSite).
		return false, false, rp.diverge(ps.ev, fmt.Sprintf("the thread entered the site at 0x%x (%d bytes, covered by the pad's jump) at 0x%x, not at its start", ps.site, ps.n, regs[ptrace.RIP]-1))
	case ps.pad != nil && at == ps.pad.Trap:
		slots := make([]byte, asyncpoint.SlotsLen)
		if err := t.mem.ReadMem(ps.pad.SlotsAddr(), slots); err != nil {
			return false, false, err
		}
		eff := ps.pad.Effective(regs, slots)
		ps.arrivals++
		if ps.lastDiffs = rp.pointDiffs(ps, &eff); len(ps.lastDiffs) == 0 {
			ps.found = true
			return true, false, t.thread().SetRegs(&eff)
		}
		if strings.HasPrefix(ps.lastDiffs[0], checksumDiff) {
			// One pass over the process's pages serves both the report
			// (the first arrivals only) and the pad's refinement.
			if report := ps.arrivals <= 2; report || rp.canRefine(ps) {
				if d, ok := rp.pageDigests(ps); ok {
					if report {
						ps.lastDiffs = append(ps.lastDiffs, rp.pagesDiffering(ps, d)...)
					}
					if err := rp.refinePad(ps, d); err != nil {
						return false, false, err
					}
				}
			}
		}
		regs[ptrace.RIP] = ps.pad.Miss
		if err := t.thread().SetRegs(&regs); err != nil {
			return false, false, err
		}
		if stepping {
			return false, true, rp.stepInsn(t)
		}
		return false, true, t.thread().Resume(mode, 0)
	case ps.pad == nil && at == ps.site:
		eff := regs
		eff[ptrace.RIP] = ps.site
		ps.arrivals++
		if ps.lastDiffs = rp.pointDiffs(ps, &eff); len(ps.lastDiffs) == 0 {
			ps.found = true
			return true, false, t.thread().SetRegs(&eff)
		}
		if ps.dbgBp {
			return false, false, nil // the debugger's breakpoint: its arrival
		}
		// Execute the instruction under our breakpoint, then plant it again.
		if err := t.thread().SetRegs(&eff); err != nil {
			return false, false, err
		}
		if err := t.mem.WriteMem(ps.site, []byte{ps.orig}); err != nil {
			return false, false, err
		}
		if err := rp.stepInsn(t); err != nil {
			return false, false, err
		}
		st, err := rp.waitStop(t, mode)
		if err != nil {
			return false, false, err
		}
		if err := t.mem.WriteMem(ps.site, []byte{0xcc}); err != nil {
			return false, false, err
		}
		if st.Kind != ptrace.StopSignal || st.Signal != int(unix.SIGTRAP) {
			return false, false, rp.diverge(ps.ev, fmt.Sprintf("stepping over 0x%x while looking for a preemption point gave %v", ps.site, st))
		}
		if stepping {
			return false, false, nil // the step is done: let the debugger see it
		}
		return false, true, t.thread().Resume(mode, 0)
	}
	return false, false, nil
}

// int3Trap tells whether t's SIGTRAP came from an int3 (SI_KERNEL), not
// from a single step.
func (rp *replayer) int3Trap(t *rtask) bool {
	si, err := t.thread().GetSigInfo()
	return err == nil && si.Code() == 0x80
}

// inPad tells whether rip is inside the pad of the current search (a
// debugger's single steps pass through it without stopping).
func (rp *replayer) inPad(rip uint64) bool {
	ps := rp.point
	return ps != nil && ps.pad != nil && rip >= ps.pad.Addr && rip < ps.pad.Addr+asyncpoint.PadSize
}

// pointDiffs compares the task's state (registers r) with the point's
// identity and returns what differs.
func (rp *replayer) pointDiffs(ps *pointSearch, r *trace.Regs) []string {
	ev, t := ps.ev, ps.t
	if rp.bufPending(t) {
		return []string{"buffered calls before the point are still to be replayed"}
	}
	d := compareRegs(ev.Regs, r)
	if len(d) > 0 {
		return d
	}
	var buf [8]byte
	for _, w := range ps.words {
		if t.mem.ReadMem(w.Addr, buf[:]) != nil {
			return []string{fmt.Sprintf("memory at 0x%x unreadable", w.Addr)}
		}
		if v := binary.LittleEndian.Uint64(buf[:]); v != w.Value {
			return []string{fmt.Sprintf("memory at 0x%x: recorded 0x%x, replay 0x%x", w.Addr, w.Value, v)}
		}
	}
	if len(ev.XState) >= asyncpoint.OldXStateLen {
		if xs, err := t.thread().GetXState(8192); err == nil {
			if d := asyncpoint.XStateDiff(ev.XState, xs); d != "" {
				return []string{d}
			}
		}
	}
	for _, m := range ev.Mem {
		if len(m.Data) != 4096 {
			continue
		}
		pg := make([]byte, 4096)
		if t.mem.ReadMem(m.Addr, pg) != nil {
			return []string{fmt.Sprintf("memory page at 0x%x unreadable", m.Addr)}
		}
		for _, r := range asyncpoint.PageRanges(m.Addr, ev.Skip) {
			if !bytes.Equal(pg[r[0]:r[1]], m.Data[r[0]:r[1]]) {
				return []string{fmt.Sprintf("memory page at 0x%x differs", m.Addr)}
			}
		}
	}
	if ev.StackSum != 0 {
		if sum := tracee.StackSum(t.real, t.mem, r[ptrace.RSP]); sum != ev.StackSum {
			return []string{fmt.Sprintf("stack checksum: recorded 0x%x, replay 0x%x", ev.StackSum, sum)}
		}
	}
	if ev.Checksum != 0 {
		var lo, hi uint64
		if ps.page != 0 {
			lo, hi = ps.page, ps.page+asyncpoint.PadSize
		}
		sum, err := tracee.ChecksumSkip(t.real, t.mem, lo, hi, ev.Skip, rp.strategy() == asyncpoint.StrategyState)
		if err != nil {
			return []string{"memory checksum: " + err.Error()}
		}
		if ps.pad != nil && sum != ev.Checksum {
			// The jump over the site is not part of the recorded memory.
			sum = rp.checksumWithOrig(ps, lo, hi)
		}
		if sum != ev.Checksum {
			return []string{fmt.Sprintf(checksumDiff+" recorded 0x%x, replay 0x%x", ev.Checksum, sum)}
		}
	}
	return nil
}

// pageDigests are a point's recorded page digests (event PageSums) and
// the same pages' digests in the replayed process now.
type pageDigests struct {
	rec, got map[uint64]uint16
}

// pageDigests digests the process's writable pages (outside the pad's
// page and the point's skipped spans) as the recorder did; false when
// the point has no recorded digests or the pages cannot be read.
func (rp *replayer) pageDigests(ps *pointSearch) (pageDigests, bool) {
	ev, t := ps.ev, ps.t
	if len(ev.PageSums) == 0 {
		return pageDigests{}, false
	}
	rec, err := asyncpoint.DecodePageSums(ev.PageSums)
	if err != nil {
		return pageDigests{}, false
	}
	var lo, hi uint64
	if ps.page != 0 {
		lo, hi = ps.page, ps.page+asyncpoint.PadSize
	}
	got := map[uint64]uint16{}
	if _, err := tracee.ChecksumPages(t.real, t.mem, lo, hi, ev.Skip, true, func(pa uint64, c uint32) { got[pa] = uint16(c) }); err != nil {
		return pageDigests{}, false
	}
	return pageDigests{rec: rec, got: got}, true
}

// canRefine tells whether the pad of a search may still be refined.
func (rp *replayer) canRefine(ps *pointSearch) bool {
	return len(ps.ev.PageSums) > 0 && ps.pad != nil && ps.refines < maxRefines && len(ps.sums) < asyncpoint.MaxSumPages
}

// pagesDiffering names the pages (and their mappings) whose digests
// differ from the ones recorded with the point (event PageSums), for
// the divergence report of a memory checksum mismatch: at most four,
// and how many in all.
func (rp *replayer) pagesDiffering(ps *pointSearch, d pageDigests) []string {
	rec, got := d.rec, d.got
	maps, _ := tracee.Maps(ps.t.real)
	where := func(pa uint64) string {
		for _, m := range maps {
			if pa >= m.Start && pa < m.End {
				name := m.Name
				for rel, p := range rp.emu {
					if p == name {
						name = "shared mapping of captured " + rel
					}
				}
				if name == "" {
					name = "anonymous"
				}
				return fmt.Sprintf("%s %x-%x", name, m.Start, m.End)
			}
		}
		return "unmapped"
	}
	var bad []uint64
	for pa, want := range rec {
		if g, ok := got[pa]; !ok || g != want {
			bad = append(bad, pa)
		}
	}
	for pa := range got {
		if _, ok := rec[pa]; !ok {
			bad = append(bad, pa)
		}
	}
	sort.Slice(bad, func(i, j int) bool { return bad[i] < bad[j] })
	var out []string
	for i, pa := range bad {
		if i == 4 {
			break
		}
		_, inRec := rec[pa]
		_, inGot := got[pa]
		state := "digest differs"
		switch {
		case !inGot:
			state = "recorded, not summed in replay"
		case !inRec:
			state = "summed in replay, not recorded"
		}
		out = append(out, fmt.Sprintf("page 0x%x (%s): %s", pa, where(pa), state))
	}
	if len(bad) > 4 {
		out = append(out, fmt.Sprintf("%d pages differ in all", len(bad)))
	}
	for _, o := range out {
		if strings.Contains(o, "shared mapping of captured") {
			out = append(out, "a file mapped shared differs: writes to it by a process outside the recording (Go's telemetry counters in ~/.config/go/telemetry, for one) are not in the trace; see docs/limitations.md")
			break
		}
	}
	return out
}

// checksumWithOrig computes the checksum with the site's original bytes
// in place of the jump (only writable mappings are summed, so this
// matters only for code in writable memory).
func (rp *replayer) checksumWithOrig(ps *pointSearch, lo, hi uint64) uint64 {
	t := ps.t
	_ = t.mem.WriteMem(ps.pad.Site, ps.padOrig)
	sum, _ := tracee.ChecksumSkip(t.real, t.mem, lo, hi, ps.ev.Skip, rp.strategy() == asyncpoint.StrategyState)
	_ = t.mem.WriteMem(ps.pad.Site, ps.pad.Jump)
	return sum
}

// pointIdentity is what the pad for ev compares at native speed: the
// registers, the identity words, the FPU and vector registers (traces
// with the whole XSAVE area) and the recorded pages.
func pointIdentity(ev *trace.Event, words []asyncpoint.Word) *asyncpoint.Identity {
	id := &asyncpoint.Identity{Regs: ev.Regs, Words: words, Hint: asyncpoint.HintFromFlags(ev.Flags)}
	if len(ev.XState) > asyncpoint.OldXStateLen && ev.Regs[ptrace.EFLAGS]&0x400 == 0 {
		id.XState = ev.XState
		id.AVX = asyncpoint.HasAVX(ev.XState)
		if asyncpoint.HasAVX512(ev.XState) {
			// This CPU's layout: replay runs on a CPU with the
			// features the trace needs (a trace recorded on another
			// vendor's CPU compares its XSAVE area byte for byte
			// anyway, at the trap).
			kOff, kLen := cpu.XSaveComponent(5)
			zOff, zLen := cpu.XSaveComponent(6)
			if kLen >= 64 && zLen >= 512 {
				id.AVX512 = &asyncpoint.AVX512Layout{KOff: kOff, ZmmHiOff: zOff}
			}
		}
		for _, m := range ev.Mem {
			if len(m.Data) != 4096 || len(id.Pages) == asyncpoint.MaxPages {
				continue
			}
			// A page the point leaves out whole (older traces record
			// the stack page below the red zone) is not compared: its
			// bytes are whatever callees left there, which can differ
			// in replay (the XSAVE area ld.so's lazy binding stores
			// there depends on the CPU's XINUSE state).
			if r := asyncpoint.PageRanges(m.Addr, ev.Skip); len(r) > 0 {
				id.Pages = append(id.Pages, asyncpoint.Page{Addr: m.Addr, Data: m.Data, Ranges: r})
			}
		}
	}
	return id
}

// checksumDiff begins the difference pointDiffs reports for a memory
// checksum mismatch.
const checksumDiff = "memory checksum:"

// maxRefines bounds how often one search rebuilds its pad.
const maxRefines = 16

// refinePad runs after an arrival at the pad's trap where everything but
// the memory checksum matched (a loop whose registers and nearby memory
// repeat while it changes memory elsewhere): the pages that differ from
// the recorded digests (event PageSums) join the pages the pad digests
// natively, and the pad is rebuilt in place, so that later arrivals that
// differ there too miss at native speed instead of trapping. Exactness
// does not depend on it: the tracer still checks the whole identity at
// every trap.
func (rp *replayer) refinePad(ps *pointSearch, d pageDigests) error {
	ev, t := ps.ev, ps.t
	if !rp.canRefine(ps) {
		return nil
	}
	ps.refines++
	rec, got := d.rec, d.got
	lo, hi := ps.page, ps.page+asyncpoint.PadSize
	maps, err := tracee.Maps(t.real)
	if err != nil {
		return nil
	}
	have := map[uint64]bool{}
	for _, s := range ps.sums {
		have[s.Addr] = true
	}
	siteLo, siteHi := ps.site&^4095, (ps.site+uint64(len(ps.padOrig))+4095)&^4095
	usable := func(pa uint64) bool {
		if have[pa] || pa >= lo && pa < hi || pa >= siteLo && pa < siteHi {
			return false
		}
		for _, s := range ev.Skip {
			if s.Addr < pa+4096 && s.Addr+s.Len > pa {
				return false
			}
		}
		for _, m := range maps {
			if pa >= m.Start && pa < m.End {
				return m.Prot&unix.PROT_READ != 0
			}
		}
		return false
	}
	var add []asyncpoint.PageSum
	for pa, want := range rec {
		if g, ok := got[pa]; (!ok || g != want) && usable(pa) {
			add = append(add, asyncpoint.PageSum{Addr: pa, Sum: want})
		}
	}
	for pa := range got {
		if _, ok := rec[pa]; !ok && usable(pa) {
			add = append(add, asyncpoint.PageSum{Addr: pa, Sum: asyncpoint.ZeroPageSum})
		}
	}
	if len(add) == 0 {
		return nil
	}
	sort.Slice(add, func(i, j int) bool { return add[i].Addr < add[j].Addr })
	sums := append(append([]asyncpoint.PageSum(nil), ps.sums...), add[:min(len(add), asyncpoint.MaxSumPages-len(ps.sums))]...)
	id := pointIdentity(ev, ps.words)
	id.Sums = sums
	pad, err := asyncpoint.BuildIdentity(ps.page, ps.site, ps.padOrig, id)
	if err != nil {
		rp.logf("event %d: pad not refined: %v", rp.n, err)
		return nil
	}
	saved := make([]byte, asyncpoint.SaveLen)
	if err := t.mem.ReadMem(ps.pad.SlotsAddr(), saved); err != nil {
		return err
	}
	if err := t.mem.WriteMem(pad.Addr, pad.Code); err != nil {
		return err
	}
	if err := t.mem.WriteMem(pad.SlotsAddr(), saved); err != nil {
		return err
	}
	rp.logf("event %d: pad refined after %d arrivals: %d pages digested", rp.n, ps.arrivals, len(sums))
	ps.pad, ps.sums = pad, sums
	ps.usePad(pad)
	return nil
}
