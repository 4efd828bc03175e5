package syscallbuf

import (
	"encoding/binary"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/machine"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// rec builds a record as the stub writes it.
func rec(nr int, ret int64, addr uint64, data []byte) []byte {
	size := (recHdr + len(data) + 7) &^ 7
	b := make([]byte, size)
	binary.LittleEndian.PutUint32(b, uint32(size))
	binary.LittleEndian.PutUint32(b[4:], uint32(nr))
	binary.LittleEndian.PutUint64(b[8:], uint64(ret))
	for i := 0; i < 14; i++ {
		binary.LittleEndian.PutUint64(b[16+8*i:], uint64(0x1000+i))
	}
	binary.LittleEndian.PutUint64(b[128:], addr)
	binary.LittleEndian.PutUint64(b[136:], uint64(len(data)))
	copy(b[recHdr:], data)
	return b
}

func TestParseAndEvents(t *testing.T) {
	buf := append(rec(0, 5, 0x5000, []byte("hello")), rec(39, 1234, 0, nil)...)
	recs, err := parseAll(buf)
	if err != nil || len(recs) != 2 {
		t.Fatalf("parse: %v, %d records", err, len(recs))
	}
	if recs[0].Nr != 0 || recs[0].Ret != 5 || recs[0].Addr != 0x5000 || string(recs[0].Data) != "hello" || recs[1].Nr != 39 || recs[1].Data != nil {
		t.Fatalf("records %+v", recs)
	}
	var cur trace.Regs
	cur[machine.CS], cur[21] = 0x33, 0x7f0000001000 // cs, fs_base: from the thread
	entry, exit := Events(&recs[0], 7, &cur)
	r := entry.Regs
	if entry.Kind != trace.KindSyscallEntry || entry.Tid != 7 || r[machine.RDI] != 0x1000 || r[machine.RSI] != 0x1001 || r[machine.RSP] != 0x1000+12 ||
		r[machine.EFLAGS] != 0x1000+13 || r[machine.R11] != r[machine.EFLAGS] || r[machine.RIP] != SyscallRet || r[machine.RCX] != SyscallRet ||
		int64(r[machine.RAX]) != -38 || r[machine.ORIGRAX] != 0 || r[machine.CS] != 0x33 || r[21] != 0x7f0000001000 {
		t.Fatalf("entry registers %x", r)
	}
	if exit.Kind != trace.KindSyscallExit || exit.Result != 5 || len(exit.Mem) != 1 || exit.Mem[0].Addr != 0x5000 || exit.Regs[machine.RAX] != 5 {
		t.Fatalf("exit %+v", exit)
	}
	if _, exit := Events(&recs[1], 7, &cur); len(exit.Mem) != 0 {
		t.Fatalf("getpid wrote memory: %+v", exit.Mem)
	}
	// Damaged buffers are errors, not events.
	bad := rec(0, 5, 0x5000, []byte("hello"))
	binary.LittleEndian.PutUint32(bad, 3)
	if _, err := parseAll(bad); err == nil {
		t.Error("a record with a bad size parsed")
	}
	if _, err := parseAll(rec(59, 0, 0, nil)); err == nil {
		t.Error("a record for execve (not buffered) parsed")
	}
	if _, err := parseAll(buf[:100]); err == nil {
		t.Error("a truncated record parsed")
	}
}

// The stub and the Go side agree on the buffered set: the numbers the
// stub's entry compares eax with are exactly Buffered.
func TestStubSet(t *testing.T) {
	seen := map[int]bool{}
	for pc := 0; pc < offScInsn; {
		inst, err := x86asm.Decode(stubCode[pc:], 64)
		if err != nil {
			t.Fatalf("decode the stub at %d: %v", pc, err)
		}
		if inst.Op == x86asm.CMP && inst.Args[0] == x86asm.EAX {
			if imm, ok := inst.Args[1].(x86asm.Imm); ok {
				seen[int(imm)] = true
			}
		}
		pc += inst.Len
	}
	for _, nr := range Buffered {
		if !seen[nr] {
			t.Errorf("call %d is in Buffered but not in the stub", nr)
		}
		delete(seen, nr)
	}
	for nr := range seen {
		t.Errorf("the stub buffers call %d, which is not in Buffered", nr)
	}
}

// YieldJcc is the jump right after the stub reads HdrYield, and the
// yield path runs from YieldPath to the traced syscall: a thread stopped
// there has taken the yield (YieldTaken) whatever the word reads.
func TestYieldTaken(t *testing.T) {
	at := func(addr uint64) x86asm.Inst {
		inst, err := x86asm.Decode(stubCode[addr-Base:], 64)
		if err != nil {
			t.Fatalf("decode the stub at 0x%x: %v", addr, err)
		}
		return inst
	}
	jcc := at(YieldJcc)
	if jcc.Op != x86asm.JNE {
		t.Fatalf("YieldJcc is %v, want a jne", jcc)
	}
	if inst := at(YieldPath); inst.Op != x86asm.CMP {
		t.Fatalf("YieldPath is %v, want the cmp of HdrReplayLeft", inst)
	}
	if inst := at(TracedRet - 2); inst.Op != x86asm.SYSCALL {
		t.Fatalf("TracedRet-2 is %v, want the traced syscall", inst)
	}
	var regs trace.Regs
	for _, c := range []struct {
		rip, flags uint64
		want       bool
	}{
		{YieldJcc, 0x202, true},                    // read 1: jumps
		{YieldJcc, 0x246, false},                   // read 0 (ZF): goes on to buffer the call
		{YieldPath, 0x246, true},                   // on the path
		{TracedRet - 3, 0x246, true},               // inside the path
		{TracedRet - 2, 0x246, false},              // at the syscall: the word is clear already
		{TracedRet, 0x246, false},                  // a traced call's stop
		{SyscallRet, 0x246, false},                 // a buffered call
		{YieldJcc + uint64(jcc.Len), 0x202, false}, // past the jump, not taken
	} {
		regs[machine.RIP], regs[machine.EFLAGS] = c.rip, c.flags
		if got := YieldTaken(&regs); got != c.want {
			t.Errorf("rip 0x%x flags 0x%x: YieldTaken %v, want %v", c.rip, c.flags, got, c.want)
		}
	}
}

// parseAll decodes every record of buf with Next, as a drain does.
func parseAll(buf []byte) ([]Record, error) {
	var out []Record
	for off := 0; off < len(buf); {
		r, next, err := Next(buf, off)
		if err != nil {
			return out, err
		}
		out = append(out, r)
		off = next
	}
	return out, nil
}
