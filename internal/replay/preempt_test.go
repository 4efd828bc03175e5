package replay

import (
	"testing"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// A point recorded (by an older gorr) with the stack page below its red
// zone, which its Skip covers whole, compares nothing of that page: the
// bytes there are whatever callees left (ld.so's lazy binding saves an
// XSAVE area there, written or not as the CPU's XINUSE bits were, which
// a context switch can change), and a pad comparing them missed the
// point for good (preempt_itimer_compute, about 1 in 100 recordings
// under load).
func TestPointIdentityLeavesOutSkippedPages(t *testing.T) {
	var regs trace.Regs
	regs[ptrace.RSP] = 0x7ffc8cdc92a0
	xs := make([]byte, 1024)
	ev := &trace.Event{Kind: trace.KindSched, Regs: &regs, XState: xs,
		Skip: []trace.Span{{Addr: 0x7ffc8cdaa000, Len: 0x7ffc8cdc9220 - 0x7ffc8cdaa000}},
		Mem: []trace.MemWrite{
			{Addr: 0x7ffc8cdc9000, Data: make([]byte, 4096)}, // rsp's page: compared from rsp-128
			{Addr: 0x7ffc8cdca000, Data: make([]byte, 4096)},
			{Addr: 0x7ffc8cdc8000, Data: make([]byte, 4096)}, // below the red zone: skipped whole
		}}
	id := pointIdentity(ev, nil)
	if len(id.Pages) != 2 || id.Pages[0].Addr != 0x7ffc8cdc9000 || id.Pages[1].Addr != 0x7ffc8cdca000 {
		t.Fatalf("pages %+v", id.Pages)
	}
	if r := id.Pages[0].Ranges; len(r) != 1 || r[0] != [2]int{0x220, 4096} {
		t.Fatalf("rsp's page ranges %v", r)
	}
}
