package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/asyncpoint"
	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Limits of the search for a point.
const (
	maxLearnSteps = 20000 // single steps (about 10 µs each)
	maxWords      = 16    // memory words in a point's identity
	// After sitesAfter steps without reaching a site, the thread runs at
	// native speed to the first of up to maxSiteRuns places it executed
	// (runToSites).
	sitesAfter   = 48
	maxSiteRuns  = 8
	fxCompareLen = 416 // FXSAVE bytes up to the end of xmm15
)

// pointResult says how the search for a point ended.
type pointResult int

const (
	pointTaken   pointResult = iota // the thread is stopped at a recorded point
	pointAtEvent                    // the thread is about to stop at an event by itself
	pointHandled                    // a stop of its own (fault, exit) was handled instead
)

// pointTaker takes asynchronous points in record: it moves a thread
// stopped at an arbitrary instruction of user code to a point replay can
// find again and records it. Its name goes into the trace header
// (asyncpoint.Strategy*), and replay picks the matching pointFinder.
type pointTaker interface {
	Name() string
	take(r *recorder, t *task) (pointResult, error)
}

// statePoints identifies points by the thread's whole state (asyncPoint).
type statePoints struct{}

func (statePoints) Name() string { return asyncpoint.StrategyState }

func (statePoints) take(r *recorder, t *task) (pointResult, error) { return r.asyncPoint(t) }

// takePoints is the strategy of this recorder (the only one without a
// PMU); cmd/gorr writes its name into the header.
var takePoints pointTaker = statePoints{}

// asyncPoint moves t, stopped at an arbitrary instruction of user code,
// to a point replay can find again and records it (a KindSched event).
//
// Single steps run t through its current loop until an instruction
// repeats; one iteration of that loop is then known: its instructions
// and the memory words they touch. The point is taken at an instruction
// of that iteration where replay can plant a jump (a site, see
// asyncpoint.ChooseSite) when t next arrives there; it is chosen again
// when t goes round a loop without passing it (asyncpoint.Loop: a
// search begun in an inner loop's last iteration). Its identity is the
// full register file, the values of the touched memory words (in a loop
// whose registers repeat, a counter in memory tells iterations apart),
// the SSE registers and a checksum of writable memory.
func (r *recorder) asyncPoint(t *task) (pointResult, error) {
	start := time.Now()
	var entered func(pc uint64) bool   // the file's branch targets, read when a site is first chosen
	resumeAt := t.lastRegs[ptrace.RIP] // where replay resumes t
	lp := &asyncpoint.Loop{Resumes: func(a uint64) bool { return a == resumeAt || r.interruptedAt[a] }, Entered: func(pc uint64) bool {
		if entered == nil {
			if entered = r.branchTargets(t); entered == nil {
				return true
			}
		}
		return entered(pc)
	}}
	words := map[uint64]int{} // word -> last step that touched it
	code := make([]byte, 16)
	// The registers at the latest arrival at each address: at the point,
	// those of the previous arrival at the site tell which register
	// changes from one iteration to the next (the pad's first test).
	prev := map[uint64]trace.Regs{}
	for step := 0; ; step++ {
		regs, err := t.thread().GetRegs()
		if err != nil {
			return pointHandled, r.lost(t, err)
		}
		if step > 0 && regs[ptrace.EFLAGS]&0x100 != 0 {
			// The trap flag of our steps, which the kernel stops counting
			// as ours once a popf was stepped: the program never set it.
			regs[ptrace.EFLAGS] &^= 0x100
			if err := t.thread().SetRegs(&regs); err != nil {
				return pointHandled, r.lost(t, err)
			}
		}
		pc := regs[ptrace.RIP]
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
		if lp.Arrive(in) {
			_, siteLen := lp.Site()
			return pointTaken, r.emitPoint(t, &regs, siteLen, hintFlag(prev, &regs), words, step, start)
		}
		if step == maxLearnSteps {
			// No loop found (or its site not reached): take the point
			// here, found in replay by a breakpoint that checks every
			// arrival.
			return pointTaken, r.emitPoint(t, &regs, 0, hintFlag(prev, &regs), words, step, start)
		}
		prev[pc] = regs
		if step == sitesAfter && !t.toSites {
			if sites := lp.Candidates(maxSiteRuns); len(sites) > 0 {
				at, site, res, err := r.runToSites(t, sites)
				if res != pointTaken || err != nil {
					return res, err
				}
				return pointTaken, r.emitPoint(t, &at, site.Len, hintFlag(prev, &at), words, step, start)
			}
		}
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
			if after, err := t.thread().GetRegs(); err == nil {
				if v, err := t.mem.ReadU64(after[ptrace.RSP]); err == nil && v&0x100 != 0 {
					var b [8]byte
					binary.LittleEndian.PutUint64(b[:], v&^0x100)
					_ = t.mem.WriteMem(after[ptrace.RSP], b[:])
				}
			}
		}
	}
}

// hintFlag returns the pad hint for a point with registers regs (the
// site's length goes in the low byte of the event's Flags): a general
// register whose value at the previous arrival at the site differed
// from the point's, as 1 + its trace.Regs index in bits 8-15 (0: none
// known). Replay's pad tests it first, with two instructions that leave
// the flags alone, so that most iterations of the loop pass the site at
// nearly native speed.
func hintFlag(prev map[uint64]trace.Regs, regs *trace.Regs) int {
	p, ok := prev[regs[ptrace.RIP]]
	if !ok {
		return 0
	}
	if i := asyncpoint.HintReg(&p, regs); i >= 0 {
		return (i + 1) << 8
	}
	return 0
}

// singleStep executes one instruction of t. Asynchronous signals that
// arrive meanwhile are held for later; anything else (a fault, an exit)
// is handled as usual and ends the search.
func (r *recorder) singleStep(t *task) (pointResult, error) {
	var si *ptrace.SigInfo
	st, lost, err := r.runUntil(t, ptrace.Step, 0, func(st ptrace.Stop) (ptrace.Action, error) {
		var held bool
		si, held = r.holdDuringSearch(t, st)
		return ptrace.AcceptIf(!held), nil
	})
	if lost || err != nil {
		return pointHandled, err
	}
	if si != nil && st.Signal == int(unix.SIGTRAP) && si.Code() == 2 /* TRAP_TRACE */ {
		return pointTaken, nil
	}
	return pointHandled, r.handle(st)
}

// holdDuringSearch absorbs a stop met while a point is searched for that
// must not end the search: a late timeslice signal (dropped) or an
// asynchronous signal (held for delivery at the point, with its original
// siginfo). Otherwise it returns the stop's siginfo, if it has one.
func (r *recorder) holdDuringSearch(t *task, st ptrace.Stop) (si *ptrace.SigInfo, held bool) {
	if st.Kind != ptrace.StopSignal {
		return nil, false
	}
	info, err := t.thread().GetSigInfo()
	if err != nil {
		return nil, false
	}
	switch {
	case st.Signal == watchdogSignal && isOurs(&info):
		// Sent late, for the timeslice this search ends already. The
		// watchdog fires once per thread until the recorder takes its
		// signal (fired): without this, it never interrupted the
		// thread again, nor did chaos mode step it.
		r.dog.fired.CompareAndSwap(int64(t.tid), 0)
		r.logf("tid %d: late timeslice signal dropped during a point search", t.tid)
		return nil, true
	case st.Signal == int(unix.SIGSTOP) && isOurs(&info) && r.dog.stopSent.CompareAndSwap(int64(t.tid), 0):
		// The watchdog's SIGSTOP for a thread blocking its signal.
		r.dog.fired.CompareAndSwap(int64(t.tid), 0)
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
	restore, err := plantInt3s(t, []uint64{addr})
	if err != nil {
		return pointHandled, r.lost(t, err)
	}
	var si *ptrace.SigInfo
	st, lost, err := r.runUntil(t, ptrace.Cont, 0, func(st ptrace.Stop) (ptrace.Action, error) {
		var held bool
		si, held = r.holdDuringSearch(t, st)
		return ptrace.AcceptIf(!held), nil
	})
	if lost || err != nil {
		_ = restore()
		return pointHandled, err
	}
	if si != nil && st.Signal == int(unix.SIGTRAP) && si.Code() == 0x80 {
		regs, err := t.thread().GetRegs()
		if err == nil && regs[ptrace.RIP] == addr+1 {
			regs[ptrace.RIP] = addr
			if err := restore(); err != nil {
				return pointHandled, err
			}
			return pointTaken, t.thread().SetRegs(&regs)
		}
	}
	if err := restore(); err != nil {
		return pointHandled, err
	}
	return pointHandled, r.handle(st)
}

// runToSites moves t, which the search single-stepped through sitesAfter
// instructions without an address repeating, to a site at native speed:
// a long loop body (a Go compiler's loops call functions and run
// hundreds of instructions an iteration) took hundreds of steps, 40-50
// µs each in a PVM guest. It plants an int3 at each of sites (places t
// executed once, asyncpoint.Loop.Candidates) and runs t as it runs user
// code, its buffered calls included, with the watchdog timing the run
// (siteWait). At an int3 it returns t's registers there, rip at the
// site: the point. Any other stop ends the run as it would end any run
// (handle): a traced call, a trapped instruction, a signal, the
// watchdog's signal when t went elsewhere or blocked in a buffered call
// (then the search begins again where t stands, by single steps only,
// toSites).
func (r *recorder) runToSites(t *task, sites []asyncpoint.Site) (trace.Regs, asyncpoint.Site, pointResult, error) {
	var none trace.Regs
	addrs := make([]uint64, len(sites))
	for i, s := range sites {
		addrs[i] = s.PC
	}
	restore, err := plantInt3s(t, addrs)
	if err != nil {
		return none, asyncpoint.Site{}, pointHandled, r.lost(t, err)
	}
	t.toSites = true
	defer func() { t.toSites = false }()
	t.state = stRunning
	r.running = t
	r.dog.running(t.tid, true, len(t.deferred) > 0, siteWait(r.opts.Timeslice), nil, 0)
	r.siteRuns++
	hit := -1
	var at trace.Regs // t's registers at the int3 it met (hit)
	st, lost, err := r.runUntil(t, r.userMode(t), 0, func(st ptrace.Stop) (ptrace.Action, error) {
		if st.Kind != ptrace.StopSignal {
			return ptrace.Accept, nil
		}
		info, err := t.thread().GetSigInfo()
		if err != nil {
			return ptrace.Accept, nil
		}
		if st.Signal == int(unix.SIGTRAP) && info.Code() == 0x80 /* SI_KERNEL: int3 */ {
			if regs, err := t.thread().GetRegs(); err == nil {
				hit = slices.IndexFunc(sites, func(s asyncpoint.Site) bool { return s.PC == regs[ptrace.RIP]-1 })
				at = regs
			}
			return ptrace.Accept, nil
		}
		if st.Signal == watchdogSignal || st.Signal == int(unix.SIGSTOP) || synchronous(&info) {
			return ptrace.Accept, nil
		}
		// Asynchronous: held for the point, as while stepping.
		_, held := r.holdDuringSearch(t, st)
		return ptrace.AcceptIf(!held), nil
	})
	if rerr := restore(); rerr != nil && err == nil && !lost {
		err = r.lost(t, rerr)
	}
	if lost || err != nil || t.dying {
		if r.running == t {
			r.running = nil
			r.dog.stopped()
		}
		return none, asyncpoint.Site{}, pointHandled, err
	}
	if hit >= 0 {
		r.siteHits++
		at[ptrace.RIP] = sites[hit].PC
		if err := t.thread().SetRegs(&at); err != nil {
			return none, asyncpoint.Site{}, pointHandled, r.lost(t, err)
		}
		if err := r.endRun(t); err != nil || t.dying {
			return none, asyncpoint.Site{}, pointHandled, err
		}
		return at, sites[hit], pointTaken, nil
	}
	// The run ends at an event of t's own, or at the watchdog's signal.
	r.sched.Preempted()
	return none, asyncpoint.Site{}, pointHandled, r.handle(st)
}

// plantInt3s writes an int3 at each of addrs in t's code (another
// thread of its process may not run meanwhile: only one runs user code
// at a time) and returns the function that puts the original bytes
// back. When one cannot be written, those written so far are put back.
func plantInt3s(t *task, addrs []uint64) (restore func() error, err error) {
	orig := make([]byte, len(addrs))
	planted := 0
	restore = func() error {
		for i := range planted {
			if err := t.mem.WriteMem(addrs[i], orig[i:i+1]); err != nil {
				return err
			}
		}
		planted = 0
		return nil
	}
	for i, a := range addrs {
		if err := t.mem.ReadMem(a, orig[i:i+1]); err != nil {
			_ = restore()
			return nil, err
		}
		if err := t.mem.WriteMem(a, []byte{0xcc}); err != nil {
			_ = restore()
			return nil, err
		}
		planted++
	}
	return restore, nil
}

// siteWait is how long runToSites lets a thread run to its sites before
// the watchdog interrupts it: a point costs that much more only when
// the thread does not come back to one of them.
func siteWait(slice time.Duration) time.Duration {
	return max(2*time.Millisecond, slice/2)
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
				set = r.scanTargets(t, m)
				r.targets[key] = set
			}
			if set == nil {
				return true
			}
			_, found := slices.BinarySearch(set, pc-m.Start+m.Offset)
			return found
		}
		return true
	}
}

// scanTargets returns the direct branch targets (file offsets, sorted)
// of the file mapped by m, nil if it cannot be read. Decoding a file
// takes 100-600 ms, so the result is kept in the site cache under the
// captured copy's digest, as the system-call sites are.
func (r *recorder) scanTargets(t *task, m tracee.Map) []uint64 {
	t0 := time.Now()
	defer r.since(phScan, t0)
	if rel, _, err := r.capture(t, m); err == nil {
		var digest string
		if d, ok := r.w.FileDigest(rel); ok {
			digest = d.SHA256
		}
		if set, err := patch.CachedScan(r.w.Dir()+"/"+rel, "branches", digest, r.opts.SiteCache, patch.BranchTargets); err == nil {
			return set
		}
	}
	f, err := osfile.Open(fmt.Sprintf("/proc/%d/map_files/%x-%x", t.tid, m.Start, m.End), os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	set, _ := patch.BranchTargets(f)
	return set
}

// emitPoint records t's point: registers, up to maxWords of the memory
// words touched most recently, SSE state and a memory checksum.
func (r *recorder) emitPoint(t *task, regs *trace.Regs, siteLen, hint int, words map[uint64]int, step int, start time.Time) error {
	ev := &trace.Event{Kind: trace.KindSched, Tid: int32(t.tid), Regs: regs, Flags: uint64(siteLen | hint), Result: int64(t.sc)}
	// The bytes the identity leaves out (pointSkip).
	maps, _ := tracee.Maps(t.tid)
	skip, full := r.pointSkip(t, regs, maps)
	for len(words) > 0 && len(ev.Mem) < maxWords {
		best, bestStep := uint64(0), -1
		for w, s := range words {
			if s > bestStep || s == bestStep && w < best {
				best, bestStep = w, s
			}
		}
		delete(words, best)
		if inSpans(skip, best, 8) {
			// Touched in a callee's frame, now below the red zone, or
			// in a buffer the kernel may still write: left out like
			// the checksum leaves it out (the pad compares words
			// natively, so a word that differs in replay would hide
			// the point for good).
			continue
		}
		buf := make([]byte, 8)
		if t.mem.ReadMem(best, buf) == nil {
			ev.Mem = append(ev.Mem, trace.MemWrite{Addr: best, Data: buf})
		}
	}
	if xs, err := t.thread().GetXState(r.xsaveSize); err == nil && len(xs) >= fxCompareLen {
		// The whole XSAVE area: x87, SSE, AVX upper halves, AVX-512
		// and PKRU, whatever the CPU has (replay compares all of it).
		ev.XState = xs
	}
	t0 := time.Now()
	if full {
		var sums []asyncpoint.PageSum
		sum, err := tracee.ChecksumPages(t.tid, t.mem, 0, 0, skip, true, func(pa uint64, c uint32) {
			sums = append(sums, asyncpoint.PageSum{Addr: pa, Sum: uint16(c)})
		})
		if err != nil {
			return fmt.Errorf("tid %d: checksum at a preemption point: %w", t.tid, err)
		}
		// The digest of every page lets replay tell which pages differ
		// at an arrival that is not the point (a loop whose registers and
		// nearby memory repeat while it changes memory elsewhere).
		ev.Checksum, ev.Skip, ev.PageSums = sum, skip, asyncpoint.EncodePageSums(sums)
	} else {
		ev.StackSum = tracee.StackSum(t.tid, t.mem, regs[ptrace.RSP])
	}
	// Whole pages the pad compares at native speed: the stack at rsp
	// (where unoptimised loops keep their counters, and callers theirs)
	// and the pages of the identity words (a counter a loop touches only
	// now and then often sits beside the words it touches every time).
	cand := []uint64{regs[ptrace.RSP] &^ 4095, regs[ptrace.RSP]&^4095 + 4096}
	for _, m := range ev.Mem {
		cand = append(cand, m.Addr&^4095)
	}
	for _, m := range ev.Mem {
		cand = append(cand, m.Addr&^4095-4096, m.Addr&^4095+4096)
	}
	// The program's own globals: the writable pages of the file whose
	// code the thread runs.
	for _, m := range maps {
		if m.Inode == 0 || regs[ptrace.RIP] < m.Start || regs[ptrace.RIP] >= m.End {
			continue
		}
		for _, w := range maps {
			if w.Inode == m.Inode && w.Dev == m.Dev && w.Prot&unix.PROT_WRITE != 0 && w.Size() <= 4*4096 {
				for pg := w.Start; pg < w.End; pg += 4096 {
					cand = append(cand, pg)
				}
			}
		}
		// .bss continues in the anonymous mapping right after the file.
		for i, w := range maps {
			if w.Inode == m.Inode && w.Dev == m.Dev && w.Prot&unix.PROT_WRITE != 0 && i+1 < len(maps) {
				if b := maps[i+1]; b.Inode == 0 && b.Start == w.End && b.Prot&unix.PROT_WRITE != 0 && b.Size() <= 4*4096 && b.Name == "" {
					for pg := b.Start; pg < b.End; pg += 4096 {
						cand = append(cand, pg)
					}
				}
			}
		}
		break
	}
	seenPage := map[uint64]bool{}
	site := regs[ptrace.RIP]
	for _, pg := range cand {
		if len(seenPage) == asyncpoint.MaxPages || !full {
			break
		}
		if seenPage[pg] || !pageWritable(maps, pg) || pg < site+uint64(siteLen) && site < pg+4096 {
			continue
		}
		if len(asyncpoint.PageRanges(pg, ev.Skip)) == 0 {
			// Left out whole (the stack below the red zone): nothing
			// of it identifies the point.
			continue
		}
		buf := make([]byte, 4096)
		if t.mem.ReadMem(pg, buf) != nil {
			continue
		}
		seenPage[pg] = true
		ev.Mem = append(ev.Mem, trace.MemWrite{Addr: pg, Data: buf})
	}
	r.logf("tid %d: point at 0x%x after %d steps (site %d bytes, %d memory entries, checksum %v, point %v)", t.tid, regs[ptrace.RIP], step, siteLen, len(ev.Mem), time.Since(t0), time.Since(start))
	if err := r.emit(ev); err != nil {
		return err
	}
	t.setLast(*regs, true)
	t.state = stReady
	t.at = atSignal
	t.pendingSig = 0
	r.points++
	return nil
}

// inSpans tells whether [addr, addr+n) overlaps one of spans.
func inSpans(spans []trace.Span, addr, n uint64) bool {
	for _, s := range spans {
		if addr < s.Addr+s.Len && s.Addr < addr+n {
			return true
		}
	}
	return false
}

// redZone is the x86-64 ABI's red zone: the bytes below rsp a function
// may use without moving rsp (live state of the interrupted code).
const redZone = 128

// maxGuard bounds the guard below a pthread stack (glibc puts one page
// there, musl two, unless pthread_attr_setguardsize asks for more: such a
// thread keeps its dead stack in the identity); tcbWindow bounds how far
// below the top of its stack a thread's TCB lies.
const (
	maxGuard  = 16 << 10
	tcbWindow = 64 << 10
)

// deadStack returns the bytes of the thread's stack below rsp and its red
// zone, which a point's identity leaves out (they join the event's Skip):
// nothing the thread does from the point on can depend on them (a call
// or a signal may overwrite them at any moment), and they are not always
// the same in replay: ld.so's lazy-binding trampoline saves the vector
// registers there with xsavec, which writes a register only when the CPU
// considers its state in use, so stale bytes below rsp differed between
// record and replay and a pad comparing the stack page never matched
// (preempt_alarm_flag under load). Only a mapping that is certainly a
// stack qualifies: the main thread's [stack], or a pthread stack: an
// anonymous mapping directly above a small PROT_NONE guard whose top
// holds the thread's TCB (fs_base, the thread pointer, within tcbWindow
// of the end; glibc and musl put it there, above the static TLS).
// Stacks carved out of larger mappings (Go's heap, a malloc'd stack) keep
// everything: Go's heap is an anonymous mapping above the PROT_NONE rest
// of its reservation too, and leaving out all of it below rsp (megabytes
// of heap: g structs, other goroutines' stacks) let a point match at the
// wrong repetition of a loop (preempt_alloc_threads with the syscall
// buffer under load: a goroutine's trackingSeq differed).
func deadStack(maps []tracee.Map, rsp, fsBase uint64) (trace.Span, bool) {
	for i, m := range maps {
		if rsp < m.Start || rsp >= m.End {
			continue
		}
		pthread := m.Inode == 0 && m.Name == "" && !m.Shared && i > 0 && maps[i-1].End == m.Start && maps[i-1].Prot == 0 &&
			maps[i-1].End-maps[i-1].Start <= maxGuard && fsBase < m.End && fsBase+tcbWindow >= m.End
		stack := m.Name == "[stack]" || pthread
		if !stack || rsp-m.Start <= redZone {
			return trace.Span{}, false
		}
		return trace.Span{Addr: m.Start, Len: rsp - redZone - m.Start}, true
	}
	return trace.Span{}, false
}

// deliverHeld delivers the first signal t holds, at the point where t
// stands (a recorded event), with its original siginfo.
func (r *recorder) deliverHeld(t *task) error {
	if len(t.deferred) == 0 {
		return nil
	}
	si := t.deferred[0]
	t.deferred = t.deferred[1:]
	if err := t.thread().SetSigInfo(&si); err != nil {
		return r.lost(t, err)
	}
	regs, err := t.thread().GetRegs()
	if err != nil {
		return r.lost(t, err)
	}
	return r.deliver(t, si.Signo(), &si, &regs)
}

// pointSkip returns the bytes a point of t (at regs) leaves out of its
// memory checksum and pages. The output buffers of the system calls
// other threads of t's process are inside: the kernel may write them at
// any moment, while replay writes them at those threads' exit events.
// The dead stacks (deadStack) of t and of the other threads of its
// process, each below the stack pointer of its last event, where it
// stands. ok is false when a call's buffers are not known (an exit,
// which clears a tid word the recorder does not know, or a call outside
// the table): the checksum is not taken then.
func (r *recorder) pointSkip(t *task, regs *trace.Regs, maps []tracee.Map) (skip []trace.Span, ok bool) {
	if d, ok := deadStack(maps, regs[ptrace.RSP], regs[ptrace.FSBASE]); ok {
		skip = append(skip, d)
	}
	tgid := tracee.Tgid(t.tid)
	for _, o := range r.tasks {
		if o == t || tracee.Tgid(o.tid) != tgid {
			continue
		}
		if d, ok := deadStack(maps, o.lastRegs[ptrace.RSP], o.lastRegs[ptrace.FSBASE]); ok {
			skip = append(skip, d)
		}
		if o.state != stKernel {
			continue
		}
		if o.sc0 == nil || o.sysno == unix.SYS_EXIT || o.sysno == unix.SYS_EXIT_GROUP {
			return nil, false
		}
		regions, err := inFlightRegions(o.sc0, linux.Args(ptrace.SyscallArgs(&o.entry)), o.mem)
		if err != nil {
			return nil, false
		}
		for _, g := range regions {
			skip = append(skip, trace.Span{Addr: g.Addr, Len: g.Len})
		}
	}
	return skip, true
}

// inFlightRegions bounds the output buffers of call sc (arguments a),
// still in flight: a size given by the result is bounded by the
// buffer's length argument (the next argument in every such call of the
// table, the previous one for sched_getaffinity), custom rules see the
// largest result.
func inFlightRegions(sc *linux.Syscall, a linux.Args, m linux.MemReader) ([]linux.Region, error) {
	bounded := *sc
	bounded.Out = make([]linux.OutParam, len(sc.Out))
	for i, p := range sc.Out {
		if p.Size.Kind == linux.SizeRet {
			n := p.Arg + 1
			if sc.Name == "sched_getaffinity" {
				n = p.Arg - 1
			}
			if n < 0 || n >= len(a) {
				return nil, fmt.Errorf("%s: no length argument for output %d", sc.Name, p.Arg)
			}
			p.Size = linux.Size{Kind: linux.SizeArg, Arg: n, N: p.Size.N}
		}
		p.OnError = true
		bounded.Out[i] = p
	}
	return bounded.OutputRegions(a, linux.MaxRegion, m)
}

// pageWritable tells whether the page at pg lies in a private writable
// mapping.
func pageWritable(maps []tracee.Map, pg uint64) bool {
	for _, m := range maps {
		if pg >= m.Start && pg < m.End {
			return m.Prot&unix.PROT_WRITE != 0 && !m.Shared
		}
	}
	return false
}
