package replay

import "github.com/gorr-debugger/gorr/internal/debugapi"

// Pos is an exact position on the replay's timeline (internal/debugapi):
// the engine names the base read-watch stepping counts from
// (StopReadWatch). The rest of the debugger vocabulary is the session's
// (internal/session).
type Pos = debugapi.Pos
