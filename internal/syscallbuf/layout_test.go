package syscallbuf

import (
	"fmt"
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
	// The stubs of layouts 2 and 3 lack replay fields this replay uses:
	// their traces are refused too.
	for _, old := range []int{2, 3, 4} {
		err = CheckTrace(trace.Header{SyscallBuffer: true, SyscallBufferLayout: old, GorrVersion: "0.5"})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("layout %d ", old)) || !strings.Contains(err.Error(), fmt.Sprintf("layout %d only", Layout)) {
			t.Errorf("layout %d: %v", old, err)
		}
	}
}
