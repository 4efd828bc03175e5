package syscallbuf

import (
	"strings"
	"testing"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// A trace recorded with another buffer layout is refused by name; one
// recorded without the buffer, or with this layout, is not.
func TestCheckTraceLayout(t *testing.T) {
	if err := CheckTrace(trace.Header{}); err != nil {
		t.Errorf("buffer off: %v", err)
	}
	if err := CheckTrace(trace.Header{SyscallBuffer: true, SyscallBufferLayout: Layout}); err != nil {
		t.Errorf("this layout: %v", err)
	}
	err := CheckTrace(trace.Header{SyscallBuffer: true, GorrVersion: "0.4"})
	if err == nil || !strings.Contains(err.Error(), "layout 0") || !strings.Contains(err.Error(), "0.4") {
		t.Errorf("old layout: %v", err)
	}
}
