package record

import (
	"testing"

	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// The dead part of a stack (below rsp and its red zone) leaves a point's
// identity only in mappings that are certainly stacks.
func TestDeadStack(t *testing.T) {
	maps := []tracee.Map{
		{Start: 0x1f000, End: 0x20000, Prot: 0},                       // guard
		{Start: 0x20000, End: 0x40000, Prot: 3},                       // pthread stack
		{Start: 0x50000, End: 0x60000, Prot: 3},                       // anonymous, no guard
		{Start: 0x60000, End: 0x70000, Prot: 3, Name: "[heap]"},       // heap
		{Start: 0x7f000, End: 0x80000, Prot: 0},                       // guard
		{Start: 0x80000, End: 0x90000, Prot: 3, Inode: 7, Name: "/f"}, // file
		{Start: 0xa0000, End: 0xc0000, Prot: 3, Name: "[stack]"},      // main stack
		{Start: 0xc0000, End: 0xd0000, Prot: 3, Shared: true},         // shared
		// Go's heap: the rest of its reservation below it, PROT_NONE.
		{Start: 0x1000000, End: 0x3c00000, Prot: 0},
		{Start: 0x3c00000, End: 0x4000000, Prot: 3},
		// A small PROT_NONE reservation below a Go heap mapping.
		{Start: 0x4fe0000, End: 0x5000000, Prot: 0},
		{Start: 0x5000000, End: 0x5400000, Prot: 3},
	}
	const tcb = 0x3f700 // a thread pointer at the top of the pthread stack
	cases := []struct {
		rsp, fs uint64
		want    trace.Span
		ok      bool
	}{
		{0x30000, tcb, trace.Span{Addr: 0x20000, Len: 0x10000 - redZone}, true},
		{0x30000, 0x3c00100, trace.Span{}, false}, // its TCB is elsewhere: not a pthread stack
		{0xb1000, 0, trace.Span{Addr: 0xa0000, Len: 0x11000 - redZone}, true},
		{0xa0040, 0, trace.Span{}, false}, // red zone reaches the bottom
		{0x58000, tcb, trace.Span{}, false},
		{0x68000, tcb, trace.Span{}, false},
		{0x88000, tcb, trace.Span{}, false},
		{0xc8000, tcb, trace.Span{}, false},
		{0x45000, tcb, trace.Span{}, false}, // unmapped
		// A Go thread's g0 stack in the heap, its m (and fs_base) there too.
		{0x3f97ef0, 0x3f80090, trace.Span{}, false},
		{0x5397ef0, 0x5380090, trace.Span{}, false},
		{0x5397ef0, 0x53ff000, trace.Span{}, false}, // even with fs_base near the top
	}
	for _, c := range cases {
		got, ok := deadStack(maps, c.rsp, c.fs)
		if ok != c.ok || got != c.want {
			t.Errorf("deadStack(rsp 0x%x, fs_base 0x%x) = %+v, %v; want %+v, %v", c.rsp, c.fs, got, ok, c.want, c.ok)
		}
	}
}

// Identity words in the bytes a point leaves out (the dead stack, other
// threads' in-flight buffers) are left out too.
func TestInSpans(t *testing.T) {
	spans := []trace.Span{{Addr: 0x1000, Len: 0x100}}
	for _, c := range []struct {
		addr uint64
		want bool
	}{{0xff8, false}, {0xffc, true}, {0x1000, true}, {0x10f8, true}, {0x10fc, true}, {0x1100, false}} {
		if got := inSpans(spans, c.addr, 8); got != c.want {
			t.Errorf("inSpans(0x%x) = %v, want %v", c.addr, got, c.want)
		}
	}
}
