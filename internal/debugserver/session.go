package debugserver

import (
	"time"

	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Session is what the server needs from a replay: *replay.Session
// implements it; tests (and the fuzz target) use fakes.
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
	Continue() (replay.DebugStop, error)
	Step(tid int32) (replay.DebugStop, error)
	Interrupt()
	ReverseContinue() (replay.DebugStop, error)
	ReverseStep() (replay.DebugStop, error)
	Restart() (replay.DebugStop, error)
	Goto(event uint64) (replay.DebugStop, error)

	// Breakpoints and watchpoints.
	SetBreakpoint(addr uint64) error
	ClearBreakpoint(addr uint64) error
	SetWatchpoint(w replay.Watch) error
	ClearWatchpoint(w replay.Watch) error

	// Checkpoints.
	Checkpoint() (int, replay.Pos)
	Checkpoints() map[int]replay.Pos
	DeleteCheckpoint(n int) bool
	RestartCheckpoint(n int) (replay.DebugStop, error)

	// Diversions (diversion.go).
	Diverted() (int32, bool)
	StartDiversion(tid int32) error
	EndDiversion()
	DiversionRestored() bool
	WriteRegs(tid int32, regs trace.Regs, fx []byte) error
	WriteMem(addr uint64, data []byte) error
	DivResume(step bool, sig int) (replay.DebugStop, error)

	Close()
}

var _ Session = (*replay.Session)(nil)
