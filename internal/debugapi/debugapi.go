// Package debugapi is the vocabulary a debugger front end and a replay
// session share: why a replay stopped (Stop, StopKind), watchpoints
// (Watch) and exact positions on the replay timeline (Pos). It is a leaf:
// internal/debugserver uses it without depending on the replay engine,
// and internal/session produces it (session keeps aliases of these
// names, DebugStop among them, so its code reads as before).
package debugapi

import (
	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// StopKind says why a debugged replay stopped.
type StopKind int

const (
	StopStart      StopKind = iota + 1 // at the debugged program's first instruction
	StopBreakpoint                     // a software breakpoint was hit
	StopStep                           // a single step completed
	StopExiting                        // the debugged process is about to exit (reported as SIGKILL, as rr does)
	StopExited                         // the debugged process exited
	StopEnd                            // the end of the trace
	StopWatch                          // a watchpoint triggered (Addr is the watched address)
	StopSignal                         // a signal is about to be delivered (Signal)
	StopExec                           // the debugged process is about to exec (as rr, replay goes no further forwards)
)

// Stop describes where a debugged replay stopped.
type Stop struct {
	Kind   StopKind
	Tid    int32 // recorded thread id of the stopped thread
	Pid    int32 // recorded pid of the debugged process
	Addr   uint64
	Status unix.WaitStatus // StopExited
	Event  uint64          // events completed so far
	Watch  Watch           // StopWatch: which watchpoint
	Signal int             // StopSignal
	// A watch stop found at an event boundary: the event, and whether
	// user code (rather than the kernel) may have made the change (set
	// and read by the replay session only).
	WatchEvent uint64
	WatchUser  bool
}

// Watch is a hardware watchpoint: Kind 2 write, 3 read, 4 access (gdb's
// Z2-Z4 numbering); Size 1, 2, 4 or 8 bytes at an aligned Addr.
type Watch struct {
	Addr uint64
	Size int
	Kind int
}

// Pos is an exact position on the replay timeline, defined so that
// replay can reach it again without a hardware counter:
//
//   - Event is the number of events completed (the timeline between two
//     events is one task's run of user code, so Event also names that
//     stretch);
//   - the base is either the boundary right after Event (Addr == 0), or
//     the Hits-th time thread Tid arrived at instruction Addr after that
//     boundary (counted with a breakpoint at Addr, so two dynamic
//     instances of the same instruction are different positions even
//     when all registers are equal);
//   - then Steps single-steps of Tid.
//
// Regs are the registers at the base, checked when the base is reached
// again.
type Pos struct {
	Event uint64
	Tid   int32
	Addr  uint64
	Hits  int
	Steps int
	Regs  trace.Regs
	// Watch: the base is the Hits-th trigger of the watchpoint on Addr
	// (counted like breakpoint arrivals; Regs are those after the access).
	Watch bool
	// Killed: at an exiting stop (Addr exitingAddr), the process dies of
	// the signal whose stop is at the same event.
	Killed bool
}
