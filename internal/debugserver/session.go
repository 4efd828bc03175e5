package debugserver

import (
	"time"

	"github.com/gorr-debugger/gorr/internal/debugapi"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Session is what the server needs from a replay: *session.Session
// implements it (checked in server_test.go); tests (and the fuzz target)
// use fakes.
type Session interface {
	// Where the replay is.
	Threads() []int32
	Regs(tid int32) (trace.Regs, []byte, error)
	ReadMem(addr uint64, n int) ([]byte, error)
	Auxv() []byte
	ExecFile() (captured, original string)
	EventCount() uint64
	ElapsedTime() time.Duration
	// Files as the recorded program saw them (hostio.go).
	CapturedFile(path string) (string, bool)
	ProcMaps() ([]byte, error)

	// Going forwards and backwards.
	Continue() (debugapi.Stop, error)
	Step(tid int32) (debugapi.Stop, error)
	Interrupt()
	ReverseContinue() (debugapi.Stop, error)
	ReverseStep() (debugapi.Stop, error)
	Restart() (debugapi.Stop, error)
	Goto(event uint64) (debugapi.Stop, error)

	// Breakpoints and watchpoints.
	SetBreakpoint(addr uint64) error
	ClearBreakpoint(addr uint64) error
	SetWatchpoint(w debugapi.Watch) error
	ClearWatchpoint(w debugapi.Watch) error

	// Checkpoints.
	Checkpoint() (int, debugapi.Pos)
	Checkpoints() map[int]debugapi.Pos
	DeleteCheckpoint(n int) bool
	RestartCheckpoint(n int) (debugapi.Stop, error)

	// Diversions (diversion.go).
	Diverted() (int32, bool)
	StartDiversion(tid int32) error
	EndDiversion()
	DiversionRestored() bool
	WriteRegs(tid int32, regs trace.Regs, fx []byte) error
	WriteMem(addr uint64, data []byte) error
	DivResume(step bool, sig int) (debugapi.Stop, error)

	Close()
}
