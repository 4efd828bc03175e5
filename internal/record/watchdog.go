package record

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// watchdogSignal interrupts a thread whose timeslice is over.
const watchdogSignal = int(unix.SIGSTKFLT)

// watchdog ends the timeslice of a thread that runs user code without a
// system call while another thread is ready (after the timeslice) or
// while a signal waits for it (after the shorter signal slice): it sends
// watchdogSignal, and the recorder preempts the thread at a point replay
// can find again (see asyncPoint). The tracer thread publishes the
// running task; the watchdog goroutine only reads it and sends a signal.
type watchdog struct {
	tid     atomic.Int64 // running task, 0 when none
	since   atomic.Int64 // unix nanoseconds
	others  atomic.Bool  // another task is ready
	sigHeld atomic.Bool  // a signal waits for the running task
	fired   atomic.Int64 // tid the watchdog signalled
	// stopSent is the tid the watchdog sent SIGSTOP instead of
	// watchdogSignal, because the thread blocks that (a thread that
	// spins with every signal blocked cannot be interrupted otherwise).
	stopSent atomic.Int64
	slice    atomic.Int64 // the running task's timeslice in nanoseconds (0: the default)
	// pointCost is how long the latest preemption point in the running
	// task's address space took, in nanoseconds (0: none yet).
	pointCost atomic.Int64
	desched   atomic.Bool // the syscall buffer is on: look for threads blocked in it
	// yield: a timeslice that ends while the running task's process
	// has the syscall buffer (mem, nil otherwise) first sets the stub's
	// HdrYield (askYield). yieldMu orders that write with the tracer's
	// look at it (takeYield); yieldTid is the task asked, yieldRun the
	// run (since) it was asked in.
	yield    atomic.Bool
	mem      atomic.Pointer[tracee.Mem]
	yieldMu  sync.Mutex
	yieldTid atomic.Int64
	yieldRun atomic.Int64
	// kick wakes the watchdog for a timeslice shorter than its tick
	// (chaos mode), which it then times with nanosleep, and wakes it
	// from idle.
	kick chan struct{}
	// idle: the watchdog stopped its ticker and waits for a kick, as
	// no task but the running one is ready and no signal waits (it
	// would have nothing to end a timeslice for). Its tick, every 0.5
	// ms, woke a thread of gorr's 2000 times a second: in a recording
	// of a single-threaded program, 700 futex calls and as many context
	// switches in 0.15 s, on a machine of two CPUs one of which runs
	// the tracees.
	idle atomic.Bool
	// start starts the watchdog's goroutine; startOnce runs it the first
	// time a timeslice can end (wanted), from the tracer's thread.
	start     func()
	startOnce sync.Once
}

// sleeping tells whether thread tid is in an interruptible sleep (state
// S in /proc/TID/stat).
func sleeping(tid int) bool {
	b, err := osfile.ReadFile("/proc/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'S'
}

// idleAfter is how many ticks in a row with no timeslice to end stop
// the watchdog's ticker (10 ms at the default tick).
const idleAfter = 20

// maxPointWait bounds, in timeslices, how long the watchdog waits for a
// thread past its slice to yield at a call before it takes a point.
const maxPointWait = 4

// shortSlice is the timeslice below which the watchdog times the slice
// itself instead of waiting for its next tick.
const shortSlice = 2 * time.Millisecond

func (d *watchdog) running(tid int, others, sigHeld bool, slice time.Duration, mem *tracee.Mem, pointCost time.Duration) {
	d.pointCost.Store(int64(pointCost))
	d.others.Store(others)
	d.sigHeld.Store(sigHeld)
	d.mem.Store(mem)
	d.slice.Store(int64(slice))
	d.since.Store(time.Now().UnixNano())
	d.tid.Store(int64(tid))
	d.startIfWanted()
	if slice < shortSlice && others || d.wanted() && d.idle.Load() {
		d.wake()
	}
}

func (d *watchdog) set(others, sigHeld bool) {
	d.others.Store(others)
	d.sigHeld.Store(sigHeld)
	d.startIfWanted()
	if d.wanted() && d.idle.Load() {
		d.wake()
	}
}

// startIfWanted starts the watchdog's goroutine the first time a
// timeslice can end.
func (d *watchdog) startIfWanted() {
	if d.start != nil && d.wanted() {
		d.startOnce.Do(d.start)
	}
}

// wanted tells whether the running task's timeslice can end: another
// task is ready or a signal waits for it.
func (d *watchdog) wanted() bool { return d.others.Load() || d.sigHeld.Load() }

// wake kicks the watchdog (without waiting: one kick pending is enough).
func (d *watchdog) wake() {
	if d.kick == nil {
		return
	}
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

func (d *watchdog) stopped() { d.tid.Store(0) }

func (d *watchdog) watch(slice, sigSlice time.Duration, done <-chan struct{}) {
	period := min(slice, sigSlice, time.Millisecond) / 2
	period = max(period, 200*time.Microsecond)
	tick := time.NewTicker(period)
	defer tick.Stop()
	// Short timeslices are timed on this goroutine's own thread with
	// nanosleep and no timer slack (Go's timers fire a millisecond late
	// at best; nanosleep here wakes within a few tens of microseconds).
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	ticking := true
	unwanted := 0 // ticks in a row at which no timeslice could end
	for {
		// Idle once no timeslice could end for idleAfter ticks (not at
		// once: threads that block and wake often would have the
		// recorder wake the watchdog at every switch). The recorder
		// stores others and sigHeld before it loads idle, the watchdog
		// stores idle before it loads them: one of the two sees the
		// other's store, so a kick is never missed.
		if d.wanted() {
			unwanted = 0
		} else if unwanted++; unwanted >= idleAfter {
			unwanted = 0
			d.idle.Store(true)
			if !d.wanted() {
				if ticking {
					tick.Stop()
					ticking = false
				}
				select {
				case <-done:
					return
				case <-d.kick:
					// Again, for the ticking select below, which times
					// a short timeslice.
					d.wake()
				}
			}
			d.idle.Store(false)
			continue
		}
		if !ticking {
			tick.Reset(period)
			ticking = true
		}
		select {
		case <-done:
			return
		case <-tick.C:
		case <-d.kick:
			tid, since := d.tid.Load(), d.since.Load()
			if s := time.Duration(d.slice.Load()); tid != 0 && s > 0 && s < shortSlice {
				if left := time.Until(time.Unix(0, since).Add(s)); left > 0 {
					ts := unix.NsecToTimespec(int64(left))
					_ = unix.Nanosleep(&ts, nil)
				}
				if d.tid.Load() != tid || d.since.Load() != since {
					continue // that run ended already
				}
			}
		}
		tid := d.tid.Load()
		if tid == 0 || d.fired.Load() == tid || d.stopSent.Load() != 0 {
			// (One SIGSTOP at a time: the recorder knows only one tid
			// it sent one to, and another's would look like the
			// program's own.)
			continue
		}
		ran := time.Since(time.Unix(0, d.since.Load()))
		this := slice
		if s := time.Duration(d.slice.Load()); s > 0 {
			this = s
		}
		// A running thread asleep in the kernel is blocked in a call
		// made through the syscall buffer (traced calls stop first): it
		// is interrupted after 0.3-0.8 ms, as rr's desched event does,
		// so that the call continues under ptrace while others run.
		asleep := d.desched.Load() && d.others.Load() && ran >= 300*time.Microsecond && sleeping(int(tid))
		over := d.others.Load() && ran >= this
		sigDue := d.sigHeld.Load() && ran >= sigSlice
		if !(over || sigDue || asleep) {
			continue
		}
		if over && !asleep && !sigDue {
			// The next call through the stub stops. The signal follows
			// (an asynchronous point) only if the thread makes none for
			// a while more: as long as the last point in its address
			// space took (a quarter of its slice at least, four slices
			// at most). A point costs single steps and a checksum of
			// memory, 20-45 ms in a Go compiler, whose threads mostly
			// call the vDSO's clock within that; the waiting costs no
			// more than the point it may spare. (A held signal does not
			// wait for a yield: a run restarts at each stop, and a timer
			// signal that comes back sooner than the yield's wait would
			// then never be delivered.)
			wait := max(this/4, min(time.Duration(d.pointCost.Load()), maxPointWait*this))
			if d.askYield(tid) || d.yieldRun.Load() == d.since.Load() && ran < this+wait+period {
				continue
			}
		}
		d.fired.Store(tid)
		sig := unix.Signal(watchdogSignal)
		if tracee.BlockedSignals(int(tid))&(1<<(watchdogSignal-1)) != 0 {
			// Blocked signals never stop the thread; SIGSTOP cannot be
			// blocked, and the recorder drops it at its stop.
			d.stopSent.Store(tid)
			sig = unix.SIGSTOP
		}
		_ = unix.Tgkill(tracee.Tgid(int(tid)), int(tid), sig)
	}
}

// askYield sets the syscall buffer's HdrYield in the address space of
// the running task tid, once per run: the stub then sends the thread's
// next call through ptrace, and the recorder switches threads at that
// stop instead of at an asynchronous point, which costs single steps
// and a checksum of memory (5-25 ms for a Go program). It returns false
// when it did not (no buffer, asked in this run already, the run over).
func (d *watchdog) askYield(tid int64) bool {
	if !d.yield.Load() {
		return false
	}
	d.yieldMu.Lock()
	defer d.yieldMu.Unlock()
	// running stores mem before since: read in the other order, mem is
	// that run's (not the address space before an exec).
	since := d.since.Load()
	mem := d.mem.Load()
	if mem == nil || d.yieldRun.Load() == since {
		return false
	}
	// Published before tid is read again: the tracer clears tid at the
	// thread's stop and then reads yieldTid, so one of the two sees the
	// other (takeYield).
	d.yieldTid.Store(tid)
	if d.tid.Load() != tid || d.since.Load() != since || d.mem.Load() != mem {
		d.yieldTid.Store(0)
		return false
	}
	d.yieldRun.Store(since)
	if mem.WriteMem(syscallbuf.Hdr+syscallbuf.HdrYield, []byte{1, 0, 0, 0}) != nil {
		d.yieldTid.Store(0)
		return false
	}
	return true
}

// takeYield, at a stop of t (after the watchdog was told it stopped),
// clears a yield the watchdog asked of t and the stub did not take, or
// notes that the stub took it: the stub cleared HdrYield and is on its
// way to the traced call it then makes, which onEntry marks
// syscallbuf.YieldFlag. The flag is clear whenever the thread is
// stopped, so replay, which sets it only for a marked call, sees the
// same stub decisions.
func (r *recorder) takeYield(t *task) error {
	d := &r.dog
	if d.yieldTid.Load() != int64(t.tid) {
		return nil
	}
	d.yieldMu.Lock()
	defer d.yieldMu.Unlock()
	if d.yieldTid.Load() != int64(t.tid) {
		return nil
	}
	d.yieldTid.Store(0)
	var w [4]byte
	if err := t.mem.ReadMem(syscallbuf.Hdr+syscallbuf.HdrYield, w[:]); err != nil {
		return nil // gone with its address space
	}
	if w == [4]byte{} {
		t.yielded = true
		return nil
	}
	// The stub may have read the word and be on its way to the traced
	// call, clearing it only just before: that yield is taken too. (The
	// recording of buffered_pipeline had such a call unmarked, about
	// once in 200, which replay then buffered.)
	if regs, err := t.thread().GetRegs(); err == nil && syscallbuf.YieldTaken(&regs) {
		t.yielded = true
		return nil
	}
	if err := t.mem.WriteMem(syscallbuf.Hdr+syscallbuf.HdrYield, make([]byte, 4)); err != nil {
		// The process may have lost its address space since the read
		// (another thread's exit_group: the write then makes no
		// progress): nothing is left to clear.
		if t.mem.ReadMem(syscallbuf.Hdr+syscallbuf.HdrYield, w[:]) != nil {
			return nil
		}
		return r.lost(t, err)
	}
	return nil
}

// isOurs tells whether a watchdogSignal stop was sent by gorr.
// fromOutsideNS reports whether si is the watchdog's tkill seen by a
// task in a PID namespace of its own: gorr's pid is not visible there, so
// the kernel gives si_pid 0 (fired: the watchdog did signal this task).
func fromOutsideNS(si *ptrace.SigInfo, fired bool) bool {
	return fired && si.Code() == -6 /* SI_TKILL */ && le32(si[16:]) == 0
}

func isOurs(si *ptrace.SigInfo) bool {
	return si.Code() == -6 /* SI_TKILL */ && int(int32(le32(si[16:]))) == os.Getpid()
}

// onWatchdog handles a stop for watchdogSignal: if gorr sent it, it is
// dropped and, if the timeslice of the thread is still over, the thread
// is preempted. The tracee's own SIGSTKFLT is left to the ordinary
// signal path.
func (r *recorder) onWatchdog(t *task, sig int) (bool, error) {
	if sig == int(unix.SIGSTOP) && !r.dog.stopSent.CompareAndSwap(int64(t.tid), 0) {
		return false, nil // the program's, or another of gorr's SIGSTOPs
	}
	si, err := t.thread().GetSigInfo()
	if err != nil || !isOurs(&si) && !fromOutsideNS(&si, r.dog.fired.Load() == int64(t.tid)) {
		return false, nil
	}
	t.state = stReady
	t.at = atSignal
	t.pendingSig = 0
	if !r.dog.fired.CompareAndSwap(int64(t.tid), 0) {
		// Late: the slice it ended is over already.
		if r.bufOn {
			if regs, err := t.thread().GetRegs(); err == nil {
				return true, r.reprobe(t, &regs)
			}
		}
		return true, nil
	}
	if r.bufOn {
		if regs, err := t.thread().GetRegs(); err == nil && (syscallbuf.IsStub(regs[ptrace.RIP]) || t.buf.inVclock(regs[ptrace.RIP])) {
			return true, r.stubInterrupted(t, &regs)
		}
	}
	return true, r.preempt(t)
}

// preempt ends t's timeslice: t moves on to a recorded point (or to an
// event of its own), the scheduler gives the next ready thread its turn,
// and a signal t held is delivered there.
func (r *recorder) preempt(t *task) error {
	regs, err := t.thread().GetRegs()
	if err != nil {
		return r.lost(t, err)
	}
	if !r.atLastEvent(t, &regs) {
		t0 := time.Now()
		res, err := takePoints.take(r, t)
		r.since(phPoint, t0)
		if t.buf != nil {
			t.buf.pointCost = time.Since(t0)
		}
		if err != nil {
			return err
		}
		switch res {
		case pointHandled:
			return nil
		case pointAtEvent:
			// It switches at that event; others go first after it.
			r.sched.Preempted()
			return r.resumeUser(t)
		}
	}
	r.sched.Preempted()
	return r.deliverHeld(t)
}

// atLastEvent tells whether t still stands where its last system call
// left it (it ran no instruction since).
func (r *recorder) atLastEvent(t *task, regs *trace.Regs) bool {
	if *regs != t.lastRegs {
		return false
	}
	var code [2]byte
	return t.mem.ReadMem(regs[ptrace.RIP]-2, code[:]) == nil && bytes.Equal(code[:], []byte{0x0f, 0x05})
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
