package session

import "github.com/gorr-debugger/gorr/internal/debugapi"

// The debugger vocabulary lives in internal/debugapi (a leaf that the
// debug server uses without importing the session); these aliases keep
// the session's names.
type (
	StopKind  = debugapi.StopKind
	DebugStop = debugapi.Stop
	Watch     = debugapi.Watch
	Pos       = debugapi.Pos
)

const (
	StopStart      = debugapi.StopStart
	StopBreakpoint = debugapi.StopBreakpoint
	StopStep       = debugapi.StopStep
	StopExiting    = debugapi.StopExiting
	StopExited     = debugapi.StopExited
	StopEnd        = debugapi.StopEnd
	StopWatch      = debugapi.StopWatch
	StopSignal     = debugapi.StopSignal
	StopExec       = debugapi.StopExec
)
