package asyncpoint

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/machine"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/x86decode"
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
	pc, n, ok := ChooseSite(cycle, map[uint64]bool{0x10: true}, noBranches, nil)
	if !ok || pc != 0x10 || n != 5 {
		t.Fatalf("combined site: %x %d %v", pc, n, ok)
	}
	if _, _, ok := ChooseSite(cycle, map[uint64]bool{0x12: true}, noBranches, nil); ok {
		t.Fatal("a site must not contain a branch target after its first byte")
	}
	if _, _, ok := ChooseSite(cycle, nil, func(pc uint64) bool { return pc == 0x12 }, nil); ok {
		t.Fatal("a site must not contain a static branch target after its first byte")
	}
	if _, _, ok := ChooseSite(cycle, nil, nil, nil); ok {
		t.Fatal("without knowledge of the code, a multi-instruction site must not be chosen")
	}
	if _, _, ok := ChooseSite(cycle, nil, noBranches, func(a uint64) bool { return a == 0x12 }); ok {
		t.Fatal("a site must not contain the resume address after its first byte")
	}
	cycle = append(cycle, Insn{PC: 0x30, Len: 7, Relocatable: true})
	if pc, n, _ := ChooseSite(cycle, nil, noBranches, nil); pc != 0x30 || n != 7 {
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

// The hint test: rcx = reg - value by lea, jrcxz to the full comparison,
// else the original instruction and the jump back.
func TestBuildPadHint(t *testing.T) {
	const site, pad = 0x401000, 0x500000
	var regs trace.Regs
	for i := range regs {
		regs[i] = uint64(i)*0x1111 + 0x123456789
	}
	for _, reg := range []int{machine.RDX, machine.RSP, machine.RBP, machine.R12, machine.R13, machine.RCX} {
		p, err := BuildIdentity(pad, site, lockAdd, &Identity{Regs: &regs, Hint: reg + 1})
		if err != nil {
			t.Fatal(err)
		}
		var insts []x86asm.Inst
		var pcs []uint64
		for off := 0; len(insts) < 9 && off < len(p.Code); {
			inst, err := x86asm.Decode(p.Code[off:], 64)
			if err != nil {
				t.Fatalf("reg %d: pad offset %d: %v", reg, off, err)
			}
			insts = append(insts, inst)
			pcs = append(pcs, pad+uint64(off))
			off += inst.Len
		}
		var lea, jrcxz, back = -1, -1, -1
		for k, in := range insts {
			switch in.Op {
			case x86asm.LEA:
				lea = k
			case x86asm.JRCXZ:
				jrcxz = k
			case x86asm.JMP:
				if back < 0 {
					back = k
				}
			}
		}
		if lea < 0 || jrcxz != lea+1+map[bool]int{true: 1}[reg == machine.RCX] || back < 0 {
			t.Fatalf("reg %d: pad starts %v", reg, insts)
		}
		m := insts[lea].Args[1].(x86asm.Mem)
		want := map[int]x86asm.Reg{machine.RDX: x86asm.RDX, machine.RSP: x86asm.RSP, machine.RBP: x86asm.RBP, machine.R12: x86asm.R12, machine.R13: x86asm.R13, machine.RCX: x86asm.RCX}[reg]
		if insts[lea].Args[0] != x86asm.RCX || !(m.Base == want && m.Index == x86asm.RCX || m.Base == x86asm.RCX && m.Index == x86asm.RAX && reg == machine.RCX) || m.Scale != 1 {
			t.Fatalf("reg %d: %v", reg, insts[lea])
		}
		full := pcs[jrcxz] + uint64(insts[jrcxz].Len) + uint64(int64(insts[jrcxz].Args[0].(x86asm.Rel)))
		if full != pcs[back]+uint64(insts[back].Len) {
			t.Fatalf("reg %d: jrcxz to %x, the fast path ends at %x", reg, full, pcs[back]+uint64(insts[back].Len))
		}
	}
}

func TestPageSums(t *testing.T) {
	in := []PageSum{{0x1000, 7}, {0x2000, 0xffff}, {0x7fff0000, 1}}
	got, err := DecodePageSums(EncodePageSums(in))
	if err != nil || len(got) != 3 || got[0x1000] != 7 || got[0x2000] != 0xffff || got[0x7fff0000] != 1 {
		t.Fatalf("round trip: %v %v", got, err)
	}
	if _, err := DecodePageSums([]byte{0x80}); err == nil {
		t.Fatal("truncated sums decoded")
	}
	// A pad digesting pages: its loop is the crc32 instruction, and its
	// table lists the pages with their digests.
	const site, pad = 0x401000, 0x500000
	var regs trace.Regs
	p, err := BuildIdentity(pad, site, lockAdd, &Identity{Regs: &regs, Sums: in})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for off := 0; off < int(p.Trap-pad); {
		inst, err := x86asm.Decode(p.Code[off:], 64)
		if err != nil {
			t.Fatalf("pad offset %d: %v", off, err)
		}
		found = found || inst.Op == x86asm.CRC32
		off += inst.Len
	}
	if !found {
		t.Fatal("no crc32 in the pad")
	}
	for k, s := range in {
		e := p.Code[sumsOff+16*k:]
		if binary.LittleEndian.Uint64(e) != s.Addr || binary.LittleEndian.Uint16(e[8:]) != s.Sum {
			t.Fatalf("table entry %d: % x", k, e[:16])
		}
	}
	if binary.LittleEndian.Uint64(p.Code[sumsOff+16*len(in):]) != 0 {
		t.Fatal("table not terminated")
	}
}

// The AVX-512 compares (x86asm decodes no EVEX, so the bytes are looked
// for): kmovw eax, k_i for k0-7, and vextracti64x4 [rip+img], zmm_i, 1
// for zmm0-15, each storing where the compares after it read.
func TestBuildPadAVX512(t *testing.T) {
	const site, pad = 0x401000, 0x500000
	var regs trace.Regs
	xs := make([]byte, 2440)
	xs[464] = 0xe7 // XCR0: x87, SSE, AVX, opmask, zmm
	for i := 0; i < 64; i++ {
		xs[832+i] = byte(i) // AMD's layout
	}
	p, err := BuildIdentity(pad, site, lockAdd, &Identity{Regs: &regs, XState: xs, AVX: true, AVX512: &AVX512Layout{KOff: 832, ZmmHiOff: 896}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		if !bytes.Contains(p.Code, []byte{0xc5, 0xf8, 0x93, 0xc0 | byte(i)}) {
			t.Errorf("no kmovw eax, k%d", i)
		}
	}
	for i := 0; i < 16; i++ {
		p0 := byte(0xf3)
		if i >= 8 {
			p0 = 0x73
		}
		op := []byte{0x62, p0, 0xfd, 0x48, 0x3b, 0x05 | byte(i&7)<<3}
		k := bytes.Index(p.Code, op)
		if k < 0 {
			t.Fatalf("no vextracti64x4 of zmm%d", i)
		}
		end := uint64(pad + k + len(op) + 5)
		disp := int64(int32(binary.LittleEndian.Uint32(p.Code[k+len(op):])))
		if got := end + uint64(disp); got != pad+zmmOff+32*uint64(i) || p.Code[k+len(op)+4] != 1 {
			t.Errorf("zmm%d stored at %x, want %x", i, got, pad+zmmOff+32*uint64(i))
		}
	}
	if _, err := BuildIdentity(pad, site, lockAdd, &Identity{Regs: &regs, XState: xs[:900], AVX: true, AVX512: &AVX512Layout{KOff: 832, ZmmHiOff: 896}}); err != nil {
		t.Fatalf("a short XSAVE area: %v", err)
	}
}

// A pad that fits its code page without the AVX-512 compares is built,
// without them if need be (a Go program's point with eight pages cut
// into many ranges by in-flight buffers went to a breakpoint instead).
func TestBuildPadAVX512Fallback(t *testing.T) {
	const site, pad = 0x401000, 0x500000
	var regs trace.Regs
	xs := make([]byte, 2440)
	xs[464] = 0xe7
	fits := 0
	for k := 1; k < 40; k++ {
		var pages []Page
		for p := 0; p < MaxPages; p++ {
			var ranges [][2]int
			for r := 0; r < k; r++ {
				ranges = append(ranges, [2]int{r * 64, r*64 + 8})
			}
			pages = append(pages, Page{Addr: uint64(0x600000 + 4096*p), Data: make([]byte, 4096), Ranges: ranges})
		}
		id := &Identity{Regs: &regs, XState: xs, AVX: true, Pages: pages}
		if _, err := BuildIdentity(pad, site, lockAdd, id); err != nil {
			break
		}
		fits = k
		id.AVX512 = &AVX512Layout{KOff: 832, ZmmHiOff: 896}
		if _, err := BuildIdentity(pad, site, lockAdd, id); err != nil {
			t.Fatalf("%d ranges a page: %v", k, err)
		}
	}
	if fits == 0 || fits == 39 {
		t.Fatalf("pads fit up to %d ranges a page: the test does not reach the limit", fits)
	}
}

// A pad with pages notes, for arrivals that matched the registers, the
// compare that failed; Diag turns what it left into words.
func TestPadDiag(t *testing.T) {
	const site, pad = 0x401000, 0x500000
	var regs trace.Regs
	regs[machine.RSP] = 0x7fff1100
	rec := make([]byte, 4096)
	rec[0x208] = 5
	p, err := BuildIdentity(pad, site, lockAdd, &Identity{Regs: &regs, Pages: []Page{{Addr: 0x7fff1000, Data: rec}}})
	if err != nil {
		t.Fatal(err)
	}
	// The direction flag, then the page from rsp (256 bytes), the rest
	// of it above, and below rsp.
	if len(p.Checks) != 4 || p.Checks[1].Addr != 0x7fff1100 || p.Checks[1].Len != 256 || p.Checks[2].Addr != 0x7fff1200 || p.Checks[3].Addr != 0x7fff1000 {
		t.Fatalf("checks %+v", p.Checks)
	}
	b := make([]byte, DiagLen)
	if m, what := p.Diag(b); m != 0 || what != "" {
		t.Fatalf("nothing matched: %d %q", m, what)
	}
	binary.LittleEndian.PutUint64(b, 3)               // matched
	binary.LittleEndian.PutUint16(b[8:], 3)           // the third check
	binary.LittleEndian.PutUint64(b[16:], 0x7fff1210) // past the word at 0x7fff1208
	binary.LittleEndian.PutUint64(b[24:], 9)
	m, what := p.Diag(b)
	if want := "recorded memory: the word at 0x7fff1208 was 0900000000000000, recorded 0500000000000000"; m != 3 || what != want {
		t.Fatalf("got %d %q, want %q", m, what, want)
	}
	binary.LittleEndian.PutUint16(b[8:], 1)
	if _, what := p.Diag(b); what != "the direction flag" {
		t.Fatalf("got %q", what)
	}
}

// A page the skipped spans cover whole has no range to compare (not nil,
// which would mean the whole page): the stack page below the red zone,
// whose bytes (an XSAVE area ld.so's lazy binding stored, more or less of
// it as the CPU's XINUSE bits were) can differ in replay.
func TestPageRangesSkippedWhole(t *testing.T) {
	const pg = 0x7fff0000
	if r := PageRanges(pg, []trace.Span{{Addr: pg - 0x20000, Len: 0x20000 + 4096 + 0x220}}); r == nil || len(r) != 0 {
		t.Fatalf("whole page skipped: %v (nil %v)", r, r == nil)
	}
	if r := PageRanges(pg, []trace.Span{{Addr: pg - 0x20000, Len: 0x20000 + 0x220}}); len(r) != 1 || r[0] != [2]int{0x220, 4096} {
		t.Fatalf("part skipped: %v", r)
	}
	if r := PageRanges(pg, nil); len(r) != 1 || r[0] != [2]int{0, 4096} {
		t.Fatalf("nothing skipped: %v", r)
	}
	var regs trace.Regs
	p, err := BuildIdentity(0x500000, 0x401000, lockAdd, &Identity{Regs: &regs, Pages: []Page{{Addr: pg, Data: make([]byte, 4096), Ranges: [][2]int{}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Checks {
		if c.Len > 0 {
			t.Fatalf("a page with no ranges is compared: %+v", c)
		}
	}
}

// A site of VEX instructions with rip-relative operands (libm's log loads
// its constants so): the pad's copies must address the same memory, and
// Decode must name the word they read. x86asm alone reports such an
// operand as an absolute address, and the pad once ran the loads
// unchanged, from wherever the pad's rip put them.
func TestBuildPadVEXRipRelative(t *testing.T) {
	const site, pad = 0x7f0000401000, 0x7f0000500000
	// vmovsd 0x3c59d(%rip), %xmm2; vaddsd 0xcc3(%rip), %xmm1, %xmm1
	code := []byte{0xc5, 0xfb, 0x10, 0x15, 0x9d, 0xc5, 0x03, 0x00, 0xc5, 0xf3, 0x58, 0x0d, 0xc3, 0x0c, 0x00, 0x00}
	want := []uint64{site + 8 + 0x3c59d, site + 16 + 0xcc3}
	var regs trace.Regs
	in, ok := Decode(code, site, &regs)
	if !ok || len(in.Accesses) == 0 || in.Accesses[0] != want[0]&^7 {
		t.Fatalf("decoded accesses %x, want the word at %x", in.Accesses, want[0]&^7)
	}
	p, err := Build(pad, site, code, &regs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for off := int(p.Miss - pad); off < len(p.Code); {
		inst, err := x86decode.Decode(p.Code[off:])
		if err != nil {
			t.Fatalf("pad offset %d: %v", off, err)
		}
		next := pad + uint64(off) + uint64(inst.Len)
		if inst.Op == x86asm.VMOVSD || inst.Op == x86asm.VADDSD {
			for _, a := range inst.Args {
				if m, ok := a.(x86asm.Mem); ok {
					if m.Base != x86asm.RIP {
						t.Fatalf("pad copy %v is not rip-relative", inst)
					}
					got = append(got, next+uint64(m.Disp))
				}
			}
		}
		if inst.Op == x86asm.JMP {
			break
		}
		off += inst.Len
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("the pad's copies read %x, want %x", got, want)
	}
}
