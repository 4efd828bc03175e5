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
		{Start: 0x10000, End: 0x20000, Prot: 0},                       // guard
		{Start: 0x20000, End: 0x40000, Prot: 3},                       // pthread stack
		{Start: 0x50000, End: 0x60000, Prot: 3},                       // anonymous, no guard
		{Start: 0x60000, End: 0x70000, Prot: 3, Name: "[heap]"},       // heap
		{Start: 0x7f000, End: 0x80000, Prot: 0},                       // guard
		{Start: 0x80000, End: 0x90000, Prot: 3, Inode: 7, Name: "/f"}, // file
		{Start: 0xa0000, End: 0xc0000, Prot: 3, Name: "[stack]"},      // main stack
		{Start: 0xc0000, End: 0xd0000, Prot: 3, Shared: true},         // shared
	}
	cases := []struct {
		rsp  uint64
		want trace.Span
		ok   bool
	}{
		{0x30000, trace.Span{Addr: 0x20000, Len: 0x10000 - redZone}, true},
		{0xb1000, trace.Span{Addr: 0xa0000, Len: 0x11000 - redZone}, true},
		{0xa0040, trace.Span{}, false}, // red zone reaches the bottom
		{0x58000, trace.Span{}, false},
		{0x68000, trace.Span{}, false},
		{0x88000, trace.Span{}, false},
		{0xc8000, trace.Span{}, false},
		{0x45000, trace.Span{}, false}, // unmapped
	}
	for _, c := range cases {
		got, ok := deadStack(maps, c.rsp)
		if ok != c.ok || got != c.want {
			t.Errorf("deadStack(rsp 0x%x) = %+v, %v; want %+v, %v", c.rsp, got, ok, c.want, c.ok)
		}
	}
}
