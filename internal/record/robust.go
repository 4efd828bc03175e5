package record

import (
	"encoding/binary"
	"sort"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Robust futex words (futex(2), set_robust_list(2)).
const (
	futexWaiters   = 0x80000000
	futexOwnerDied = 0x40000000
	futexTidMask   = 0x3fffffff
	robustLimit    = 2048 // the kernel's ROBUST_LIST_LIMIT
)

// robustExit does what the kernel does to the robust futexes of a dying
// thread (futex_exit_release: each word on its robust list, and the one in
// list_op_pending, that holds the thread's tid gets FUTEX_OWNER_DIED), at
// its PTRACE_EVENT_EXIT stop, and returns the words it wrote. Replay
// applies them at the same stop: there the kernel would not, because the
// words hold the recorded tid, not replay's (as rr does).
//
// A word with FUTEX_WAITERS is left to the kernel, which also wakes a
// waiter; the recorder then waits until the thread has finished exiting
// (settle), so that the write is done before anything else runs.
func robustExit(t *task) (writes []trace.MemWrite, settle bool) {
	for _, w := range robustWords(t) {
		switch {
		case binary.LittleEndian.Uint32(w.Data)&futexWaiters != 0:
			settle = true
		case t.mem.WriteMem(w.Addr, w.Data) != nil:
			continue
		}
		writes = append(writes, w)
	}
	return writes, settle
}

// robustWords returns the writes the kernel makes to t's robust futex
// words when t dies, without making them (a word that keeps
// FUTEX_WAITERS is one whose waiter the kernel also wakes).
func robustWords(t *task) (writes []trace.MemWrite) {
	var head uint64
	var size uintptr
	_, _, e := unix.Syscall(unix.SYS_GET_ROBUST_LIST, uintptr(t.tid), uintptr(unsafe.Pointer(&head)), uintptr(unsafe.Pointer(&size)))
	if e != 0 || head == 0 || size != 24 {
		return nil
	}
	var h [24]byte
	if t.mem.ReadMem(head, h[:]) != nil {
		return nil
	}
	next := binary.LittleEndian.Uint64(h[0:])
	offset := int64(binary.LittleEndian.Uint64(h[8:]))
	pending := binary.LittleEndian.Uint64(h[16:]) &^ 1
	nstid := -1
	mark := func(entry uint64) {
		if entry == 0 {
			return
		}
		addr := uint64(int64(entry) + offset)
		if addr%4 != 0 {
			return
		}
		var b [4]byte
		if t.mem.ReadMem(addr, b[:]) != nil {
			return
		}
		v := binary.LittleEndian.Uint32(b[:])
		owner := int(v & futexTidMask)
		if owner == 0 {
			return
		}
		if nstid < 0 {
			nstid = tracee.NSTid(t.tid)
		}
		if owner != nstid {
			return
		}
		binary.LittleEndian.PutUint32(b[:], v&futexWaiters|futexOwnerDied)
		writes = append(writes, trace.MemWrite{Addr: addr, Data: b[:]})
	}
	for entry, n := next&^1, 0; entry != head && entry != 0 && n < robustLimit; n++ {
		var nb [8]byte
		if t.mem.ReadMem(entry, nb[:]) != nil {
			break
		}
		if entry != pending {
			mark(entry)
		}
		entry = binary.LittleEndian.Uint64(nb[:]) &^ 1
	}
	mark(pending)
	return writes
}

// waitExited waits (up to a second) until tid has finished exiting, its
// robust futexes handled by the kernel.
func waitExited(tid int) {
	deadline := time.Now().Add(time.Second)
	for !tracee.IsZombie(tid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Microsecond)
	}
}

// clearTidAtDeath returns the write the kernel makes at t's
// clear_child_tid address as t dies outside an exit call (killed): 0, if
// another live task shares its address space (mm_release writes only
// then; a task about to die with it does not count). Such a death comes at no system call of t, so the write must be
// an event of its own where it happens: the kernel also wakes a futex
// waiter there (pthread_join, or another process's thread sharing the
// memory).
func (r *recorder) clearTidAtDeath(t *task) (trace.MemWrite, bool) {
	if t.clearTid == 0 {
		return trace.MemWrite{}, false
	}
	tgid := tracee.Tgid(t.tid)
	for _, o := range r.tasks {
		// A thread dying outside an exit call dies with its whole
		// process (a fatal signal, exit_group, an exec by a sibling):
		// only another process sharing the memory (CLONE_VM) can see
		// the write. One with SIGKILL pending dies too, and an exec'ing
		// one leaves the memory.
		if o == t || o.dying || tracee.Tgid(o.tid) == tgid || o.inExecve() ||
			tracee.PendingSignals(o.tid)&(1<<(unix.SIGKILL-1)) != 0 {
			continue
		}
		ret, _, e := unix.Syscall6(unix.SYS_KCMP, uintptr(t.tid), uintptr(o.tid), kcmpVM, 0, 0, 0)
		if e == 0 && ret == 0 {
			return trace.MemWrite{Addr: t.clearTid, Data: make([]byte, 4)}, true
		}
	}
	return trace.MemWrite{}, false
}

const kcmpVM = 1 // KCMP_VM

// exitStop handles t at its PTRACE_EVENT_EXIT stop when it dies outside
// an exit call (killed), with no other task running user code.
func (r *recorder) exitStop(t *task) error {
	// Killed (or exiting) outside an exit call: the robust futex
	// words change now, so the event goes here, not at the exit
	// event, which may come much later.
	words, settle := robustExit(t)
	if r.execing(t) {
		// Killed by a sibling's execve: replay lets such threads die
		// as the exec runs, before this point; their memory goes.
		words, settle = nil, false
	}
	if w, ok := r.clearTidAtDeath(t); ok {
		words = append(words, w)
		settle = true
	}
	if len(words) > 0 {
		if err := r.emit(&trace.Event{Kind: trace.KindPtraceWrite, Tid: int32(t.tid), Mem: words}); err != nil {
			return err
		}
	}
	if stopped, err := r.ptraceExitStop(t); stopped || err != nil {
		return err
	}
	t.dying = true
	t.state = stKernel
	if err := r.lost(t, t.thread().Resume(ptrace.Cont, 0)); err != nil {
		return err
	}
	if settle {
		waitExited(t.tid)
	}
	return nil
}

// releaseExits lets the tasks held at their PTRACE_EVENT_EXIT stop go on
// dying, once no task runs user code (in tid order, so that the
// events come in a stable order).
func (r *recorder) releaseExits() error {
	var held []*task
	for _, t := range r.tasks {
		if t.exitHeld {
			held = append(held, t)
		}
	}
	if len(held) == 0 || r.runsUser() {
		return nil
	}
	sort.Slice(held, func(i, j int) bool { return held[i].tid < held[j].tid })
	for _, t := range held {
		t.exitHeld = false
		if err := r.exitStop(t); err != nil {
			return err
		}
	}
	return nil
}

// runsUser reports whether the running task may still run user code: not
// if it is dying (SIGKILL pending, or already dead). A thread-group
// leader killed from outside may die without an exit stop, and the
// kernel reports its end only once its other threads have been reaped:
// threads held at their exit stops until it stops would wait forever.
func (r *recorder) runsUser() bool {
	t := r.running
	if t == nil {
		return false
	}
	return tracee.PendingSignals(t.tid)&(1<<(unix.SIGKILL-1)) == 0 && !tracee.IsZombie(t.tid)
}

// execing reports whether another thread of t's process is in execve.
func (r *recorder) execing(t *task) bool {
	tgid := tracee.Tgid(t.tid)
	for _, o := range r.tasks {
		if o != t && o.inExecve() && tracee.Tgid(o.tid) == tgid {
			return true
		}
	}
	return false
}
