package asyncpoint

import (
	"encoding/binary"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/machine"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// lock add qword [rip+0xff7], 1 (an aligned word)
var lockAdd = []byte{0xf0, 0x48, 0x83, 0x05, 0xf7, 0x0f, 0x00, 0x00, 0x01}

func TestDecodeAccessesAndRelocatable(t *testing.T) {
	var r trace.Regs
	r[machine.RSP] = 0x7ff000
	in, ok := Decode(lockAdd, 0x401000, &r)
	if !ok || in.Len != 9 || !in.Relocatable || in.Event {
		t.Fatalf("lock add: %+v", in)
	}
	want := uint64(0x401000+9+0xff7) &^ 7
	if len(in.Accesses) != 1 || in.Accesses[0] != want {
		t.Fatalf("accesses %x, want %x", in.Accesses, want)
	}
	for _, c := range []struct {
		code         []byte
		event, reloc bool
	}{
		{[]byte{0x0f, 0x05}, true, false},        // syscall
		{[]byte{0xcc}, true, false},              // int3
		{[]byte{0x0f, 0x31}, true, false},        // rdtsc
		{[]byte{0x75, 0xf0}, false, false},       // jne
		{[]byte{0xf3, 0x48, 0xa5}, false, false}, // rep movsq
		{[]byte{0x48, 0x89, 0xc3}, false, true},  // mov rbx, rax
	} {
		in, ok := Decode(c.code, 0x1000, &r)
		if !ok || in.Event != c.event || in.Relocatable != c.reloc {
			t.Errorf("% x: %+v", c.code, in)
		}
	}
	push, _ := Decode([]byte{0x53}, 0x1000, &r) // push rbx
	if len(push.Accesses) != 1 || push.Accesses[0] != 0x7ff000-8 {
		t.Errorf("push accesses %x", push.Accesses)
	}
}

func noBranches(uint64) bool { return false }

func TestChooseSite(t *testing.T) {
	cycle := []Insn{
		{PC: 0x10, Len: 2, Relocatable: true},
		{PC: 0x12, Len: 3, Relocatable: true},
		{PC: 0x15, Len: 2, Relocatable: false},
	}
	pc, n, ok := ChooseSite(cycle, map[uint64]bool{0x10: true}, noBranches, 0)
	if !ok || pc != 0x10 || n != 5 {
		t.Fatalf("combined site: %x %d %v", pc, n, ok)
	}
	if _, _, ok := ChooseSite(cycle, map[uint64]bool{0x12: true}, noBranches, 0); ok {
		t.Fatal("a site must not contain a branch target after its first byte")
	}
	if _, _, ok := ChooseSite(cycle, nil, func(pc uint64) bool { return pc == 0x12 }, 0); ok {
		t.Fatal("a site must not contain a static branch target after its first byte")
	}
	if _, _, ok := ChooseSite(cycle, nil, nil, 0); ok {
		t.Fatal("without knowledge of the code, a multi-instruction site must not be chosen")
	}
	if _, _, ok := ChooseSite(cycle, nil, noBranches, 0x12); ok {
		t.Fatal("a site must not contain the resume address after its first byte")
	}
	cycle = append(cycle, Insn{PC: 0x30, Len: 7, Relocatable: true})
	if pc, n, _ := ChooseSite(cycle, nil, noBranches, 0); pc != 0x30 || n != 7 {
		t.Fatalf("single long instruction preferred: %x %d", pc, n)
	}
}

func TestBuildPad(t *testing.T) {
	const site, pad = 0x401000, 0x500000
	var regs trace.Regs
	for i := range regs {
		regs[i] = uint64(i) * 0x1111
	}
	p, err := Build(pad, site, lockAdd, &regs, []Word{{Addr: 0x402008, Value: 42}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Jump[0] != 0xe9 || int64(int32(binary.LittleEndian.Uint32(p.Jump[1:])))+site+5 != pad || len(p.Jump) != len(lockAdd) {
		t.Fatalf("jump % x", p.Jump)
	}
	// Decode the whole pad: every jne goes to Miss, the relocated lock add
	// still targets the same address, and the pad ends with a jump back.
	var ops []x86asm.Op
	for off := 0; off < len(p.Code); {
		inst, err := x86asm.Decode(p.Code[off:], 64)
		if err != nil {
			t.Fatalf("pad offset %d: %v", off, err)
		}
		pc := pad + uint64(off)
		next := pc + uint64(inst.Len)
		if inst.Op == x86asm.JNE {
			if tgt := next + uint64(int64(inst.Args[0].(x86asm.Rel))); tgt != p.Miss {
				t.Fatalf("jne at %x to %x, miss is %x", pc, tgt, p.Miss)
			}
		}
		if inst.Op == x86asm.ADD && inst.Prefix[0]&^x86asm.PrefixImplicit == x86asm.PrefixLOCK {
			m := inst.Args[0].(x86asm.Mem)
			if got := next + uint64(m.Disp); got != site+9+0xff7 {
				t.Fatalf("relocated lock add targets %x", got)
			}
		}
		if inst.Op == x86asm.JMP {
			if tgt := next + uint64(int64(inst.Args[0].(x86asm.Rel))); tgt != site+uint64(len(lockAdd)) {
				t.Fatalf("jump back to %x", tgt)
			}
		}
		ops = append(ops, inst.Op)
		off += inst.Len
	}
	if ops[len(ops)-1] != x86asm.JMP || p.Code[p.Trap-pad] != 0xcc {
		t.Fatalf("pad ops %v", ops)
	}
	slots := make([]byte, SlotsLen)
	binary.LittleEndian.PutUint64(slots, 7)
	binary.LittleEndian.PutUint64(slots[8:], 9)
	slots[16], slots[17] = 1, 0x41 // OF; ZF|CF
	eff := p.Effective(trace.Regs{machine.EFLAGS: 0x2 | 0x200 | 0x8d5}, slots)
	if eff[machine.RAX] != 7 || eff[machine.R11] != 9 || eff[machine.RIP] != site || eff[machine.EFLAGS] != 0x2|0x200|0x800|0x41 {
		t.Fatalf("effective regs rax %x r11 %x rip %x flags %x", eff[machine.RAX], eff[machine.R11], eff[machine.RIP], eff[machine.EFLAGS])
	}
}
