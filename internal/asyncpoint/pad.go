package asyncpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/machine"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/x86decode"
)

// MaxPages is the number of memory pages a pad compares at most.
const MaxPages = 8

// PadSize is the size of the mapping that holds a pad: a page of code,
// a page of data (save slots, the thread's FXSAVE image and ymm upper
// halves, their recorded values), a page for the AVX-512 registers and
// the recorded copies of up to MaxPages pages of memory.
const PadSize = (3 + MaxPages) * 4096

// Offsets in the pad's mapping.
const (
	codeMax   = 4096
	dataOff   = 4096
	slotRAX   = dataOff + 0x00
	slotR11   = dataOff + 0x08
	slotFlags = dataOff + 0x10
	slotRCX   = dataOff + 0x18
	slotRSI   = dataOff + 0x20
	slotRDI   = dataOff + 0x28
	probeOff  = dataOff + 0x40 // a byte lodsb reads to learn DF
	// What the pad leaves for a divergence report (Pad.Diag): how many
	// arrivals matched the general registers, the last check such an
	// arrival failed (1 + index in Pad.Checks), and for a memory compare
	// the address after the differing word and the word read there.
	diagOff     = dataOff + 0x80
	diagMatched = diagOff + 0x00
	diagStage   = diagOff + 0x08
	diagAddr    = diagOff + 0x10
	diagValue   = diagOff + 0x18
	// DiagLen is the number of bytes at DiagAddr that Diag reads.
	DiagLen   = 0x20
	fxOff     = dataOff + 0x100 // the thread's FXSAVE image (16-byte aligned)
	fxRecOff  = dataOff + 0x300 // the recorded one
	ymmOff    = dataOff + 0x500 // the thread's ymm upper halves
	ymmRecOff = dataOff + 0x600 // the recorded ones
	sumsOff   = dataOff + 0x700 // digested pages: (address, digest) pairs, 0-terminated
	zmmOff    = 2 * 4096        // the thread's zmm0-15 upper halves
	zmmRecOff = zmmOff + 0x200  // the recorded ones
	kRecOff   = zmmOff + 0x400  // the recorded opmask registers k0-7
	pagesOff  = 3 * 4096        // recorded page copies
)

// Page is a page of memory of a point's identity, as recorded.
type Page struct {
	Addr uint64 // page aligned
	Data []byte // 4096 bytes
	// Ranges are the parts of the page compared, [from, to) byte
	// offsets that are multiples of 8 (nil: the whole page; empty:
	// none).
	Ranges [][2]int
}

// fromSP reorders the ranges of the stack page so that the bytes from
// the stack pointer on (the current frame: an unoptimised loop's
// variables) are compared first.
func fromSP(ranges [][2]int, off int) [][2]int {
	var hi, lo [][2]int
	for _, r := range ranges {
		switch {
		case r[0] >= off:
			hi = append(hi, r)
		case r[1] <= off:
			lo = append(lo, r)
		default:
			lo = append(lo, [2]int{r[0], off})
			hi = append(hi, [2]int{off, r[1]})
		}
	}
	return append(hi, lo...)
}

// PageRanges returns the parts of the page at pg outside the spans skip
// (output buffers of system calls in flight, the stack below the red
// zone), widened to whole qwords: empty, not nil, when skip covers the
// whole page.
func PageRanges(pg uint64, skip []trace.Span) [][2]int {
	out := [][2]int{{0, 4096}}
	for _, s := range skip {
		if s.Addr >= pg+4096 || s.Addr+s.Len <= pg {
			continue
		}
		lo := int(max(s.Addr, pg)-pg) &^ 7
		hi := (int(min(s.Addr+s.Len, pg+4096)-pg) + 7) &^ 7
		var next [][2]int
		for _, r := range out {
			if r[1] <= lo || r[0] >= hi {
				next = append(next, r)
				continue
			}
			if r[0] < lo {
				next = append(next, [2]int{r[0], lo})
			}
			if hi < r[1] {
				next = append(next, [2]int{hi, r[1]})
			}
		}
		out = next
	}
	if out == nil {
		out = [][2]int{}
	}
	return out
}

// Identity is what a pad compares at native speed before it traps: the
// general registers, the memory words the loop touched, the x87 and SSE
// registers and the upper halves of the ymm registers (when XState, the
// recorded XSAVE area, has them: at least LegacyLen bytes; the AVX part
// when it extends past HeaderEnd and the CPU uses AVX), and whole pages
// of memory (the stack around rsp and the pages of the words). The
// tracer checks everything else at the trap.
type Identity struct {
	Regs   *trace.Regs
	Words  []Word
	XState []byte
	AVX    bool // compare the ymm upper halves (the CPU has AVX)
	// AVX512, when set, is where XState holds the opmask registers and
	// the upper halves of zmm0-15 (their offsets differ between CPU
	// vendors): the pad compares those too.
	AVX512 *AVX512Layout
	Pages  []Page
	// Hint is 1 + the trace.Regs index of a general register that
	// changes from one iteration of the loop to the next (0: none
	// known). The pad tests it first, without touching the flags.
	Hint int
	// Sums are pages whose CRC-32C the pad computes and compares (low
	// 16 bits), after everything else: pages that differed at an arrival
	// where all the rest matched.
	Sums []PageSum
}

// AVX512Layout locates the AVX-512 parts of an XSAVE area in the
// standard format: the opmask registers k0-7 (8 bytes each) and the
// upper 256 bits of zmm0-15 (32 bytes each).
type AVX512Layout struct {
	KOff, ZmmHiOff int
}

// HintReg returns the trace.Regs index of the first general register,
// in the pad's order, whose values at two arrivals at a site (prev, then
// cur) differ, or -1 when they are all equal.
func HintReg(prev, cur *trace.Regs) int {
	for _, i := range regOrder {
		if prev[i] != cur[i] {
			return i
		}
	}
	return -1
}

// x87InUse tells whether a recorded XSAVE area has a valid x87 register
// (the abridged tag word of its legacy area is not empty).
func x87InUse(xs []byte) bool { return len(xs) > 4 && xs[4] != 0 }

// HintFromFlags returns the Identity.Hint a point's event Flags carry
// (bits 8-15; the site length is the low byte).
func HintFromFlags(flags uint64) int {
	h := int(flags >> 8 & 0xff)
	if h == 0 || h-1 >= len(trace.Regs{}) {
		return 0
	}
	if _, ok := machineReg[h-1]; !ok {
		return 0
	}
	return h
}

// Word is a memory word of a point's identity: the 8 bytes at Addr.
type Word struct {
	Addr  uint64
	Value uint64
}

// Pad is the code replay installs to find a point at native speed. The
// thread jumps from the site to the pad, which saves rax, r11 and the
// arithmetic flags, compares the identity's memory words and general
// registers with constants, and either executes int3 (all equal) or
// restores what it used, runs the site's original instructions
// (relocated) and jumps back after the site.
type Pad struct {
	Addr uint64 // where Code goes (a fresh page)
	Code []byte
	Site uint64 // where Jump goes
	Jump []byte // replaces the site's original bytes
	Trap uint64 // address of the int3; the trap reports Trap+1
	Miss uint64 // resume here when the trapped state is not the point
	// Checks describe what the pad compares after the general
	// registers, in order (nil: the pad leaves no diagnostics).
	Checks []Check
}

// Check is one compare a pad makes after the general registers: of the
// memory [Addr, Addr+Len) with the recorded copy Rec, or of what Name
// says (Len 0).
type Check struct {
	Name string
	Addr uint64
	Len  uint64
	Rec  []byte
}

// DiagAddr is where the pad's diagnostics are (DiagLen bytes).
func (p *Pad) DiagAddr() uint64 { return p.Addr + diagOff }

// Diag describes, from the DiagLen bytes read at DiagAddr, why arrivals
// at the site were not the point: how many matched the recorded general
// registers and what the last of them differed in ("" when none did or
// the pad leaves no diagnostics).
func (p *Pad) Diag(b []byte) (matched uint64, what string) {
	if len(b) < DiagLen {
		return 0, ""
	}
	matched = binary.LittleEndian.Uint64(b[diagMatched-diagOff:])
	k := int(binary.LittleEndian.Uint16(b[diagStage-diagOff:]))
	if matched == 0 || k == 0 || k > len(p.Checks) {
		return matched, ""
	}
	c := p.Checks[k-1]
	if c.Len == 0 {
		return matched, c.Name
	}
	after := binary.LittleEndian.Uint64(b[diagAddr-diagOff:])
	if after < c.Addr+8 || after > c.Addr+c.Len {
		return matched, c.Name
	}
	at := after - 8
	rec := c.Rec[at-c.Addr : at-c.Addr+8]
	return matched, fmt.Sprintf("%s: the word at 0x%x was %x, recorded %x", c.Name, at, b[diagValue-diagOff:diagValue-diagOff+8], rec)
}

// machine register numbers of the general registers, by trace.Regs index
var machineReg = map[int]byte{
	machine.RAX: 0, machine.RCX: 1, machine.RDX: 2, machine.RBX: 3, machine.RSP: 4, machine.RBP: 5, machine.RSI: 6, machine.RDI: 7,
	machine.R8: 8, machine.R9: 9, machine.R10: 10, machine.R11: 11, machine.R12: 12, machine.R13: 13, machine.R14: 14, machine.R15: 15,
}

// regOrder is the order in which the pad compares registers.
var regOrder = []int{machine.RCX, machine.RDX, machine.RBX, machine.RSI, machine.RDI, machine.R8, machine.R9, machine.R10,
	machine.R12, machine.R13, machine.R14, machine.R15, machine.RBP, machine.RSP, machine.RAX, machine.R11}

type asm struct {
	base uint64
	b    []byte
}

func (a *asm) pc() uint64          { return a.base + uint64(len(a.b)) }
func (a *asm) emit(b ...byte)      { a.b = append(a.b, b...) }
func (a *asm) u32(v uint32)        { a.b = binary.LittleEndian.AppendUint32(a.b, v) }
func (a *asm) u64(v uint64)        { a.b = binary.LittleEndian.AppendUint64(a.b, v) }
func rel32(from, to uint64) uint32 { return uint32(int32(int64(to - from))) }

// ripOp emits opcode bytes followed by a rip-relative disp32 to target.
func (a *asm) ripOp(target uint64, op ...byte) {
	a.emit(op...)
	a.u32(rel32(a.pc()+4, target))
}

// Build generates the pad for the point (regs, words) at site, whose
// original bytes are orig (whole instructions, at least JumpLen bytes),
// to live at padAddr.
func Build(padAddr, site uint64, orig []byte, regs *trace.Regs, words []Word) (*Pad, error) {
	return BuildIdentity(padAddr, site, orig, &Identity{Regs: regs, Words: words})
}

// BuildIdentity generates the pad comparing id for a point at site. A
// pad whose code would not fit its page with the AVX-512 compares is
// built without them (the tracer compares those registers at the trap).
func BuildIdentity(padAddr, site uint64, orig []byte, id *Identity) (*Pad, error) {
	p, err := buildIdentity(padAddr, site, orig, id, true)
	if errors.Is(err, errPadTooLarge) {
		// Without the diagnostics (Pad.Checks) first.
		p, err = buildIdentity(padAddr, site, orig, id, false)
	}
	if errors.Is(err, errPadTooLarge) && id.AVX512 != nil {
		lean := *id
		lean.AVX512 = nil
		return buildIdentity(padAddr, site, orig, &lean, false)
	}
	return p, err
}

var errPadTooLarge = errors.New("pad too large")

// With diag, the checks after the general registers leave what Diag
// reads.
func buildIdentity(padAddr, site uint64, orig []byte, id *Identity, diag bool) (*Pad, error) {
	regs, words := id.Regs, id.Words
	if len(id.Pages) > MaxPages {
		return nil, fmt.Errorf("%d pages in a pad, at most %d", len(id.Pages), MaxPages)
	}
	if len(orig) < JumpLen {
		return nil, fmt.Errorf("site at 0x%x is %d bytes, need %d", site, len(orig), JumpLen)
	}
	if d := int64(padAddr - site); d > math.MaxInt32/2 || d < math.MinInt32/2 {
		return nil, fmt.Errorf("pad at 0x%x is too far from site 0x%x", padAddr, site)
	}
	a := &asm{base: padAddr}
	var jnes []int // offsets of jne rel32 fields to patch to miss
	jneMiss := func() {
		a.emit(0x0f, 0x85)
		jnes = append(jnes, len(a.b))
		a.u32(0)
	}
	var checks []Check
	var cmpJnes []int // those of string compares, to patch to missCmp
	// check starts the compare c (after the general registers): with
	// diag, the pad notes it as the one an arrival reached last.
	check := func(c Check) {
		if !diag {
			return
		}
		checks = append(checks, c)
		a.emit(0x66, 0xc7, 0x05) // mov word [rip+stage], imm16
		a.u32(rel32(a.pc()+4+2, padAddr+diagStage))
		a.emit(byte(len(checks)), byte(len(checks)>>8))
	}
	// The site's original instructions, relocated, and the jump back.
	emitOrig := func() error {
		for off := 0; off < len(orig); {
			inst, err := x86decode.Decode(orig[off:])
			if err != nil {
				return fmt.Errorf("site 0x%x: %w", site+uint64(off), err)
			}
			code, err := relocate(orig[off:off+inst.Len], &inst, site+uint64(off), a.pc())
			if err != nil {
				return err
			}
			a.emit(code...)
			off += inst.Len
		}
		a.emit(0xe9) // jmp back
		a.u32(rel32(a.pc()+4, site+uint64(len(orig))))
		return nil
	}
	if id.Hint > 0 {
		// The register that changes from one iteration to the next:
		// rcx = reg - value with lea (flags untouched), and jrcxz to the
		// full comparison; otherwise straight back to the loop.
		i := id.Hint - 1
		a.ripOp(padAddr+slotRCX, 0x48, 0x89, 0x0d) // mov [slot], rcx
		if m := machineReg[i]; i != machine.RCX {
			a.emit(0x48, 0xb9) // mov rcx, imm64
			a.u64(-regs[i])
			a.emit(0x48|m>>3, 0x8d, 0x4c, 0x08|m&7, 0x00) // lea rcx, [reg + rcx*1 + 0]
		} else {
			a.ripOp(padAddr+slotRAX, 0x48, 0x89, 0x05) // mov [slot], rax
			a.emit(0x48, 0xb8)                         // mov rax, imm64
			a.u64(-regs[i])
			a.emit(0x48, 0x8d, 0x0c, 0x01)             // lea rcx, [rcx + rax*1]
			a.ripOp(padAddr+slotRAX, 0x48, 0x8b, 0x05) // mov rax, [slot]
		}
		a.emit(0xe3, 0) // jrcxz full (patched below)
		jrcxz := len(a.b)
		a.ripOp(padAddr+slotRCX, 0x48, 0x8b, 0x0d) // mov rcx, [slot]
		if err := emitOrig(); err != nil {
			return nil, err
		}
		d := len(a.b) - jrcxz
		if d > 127 {
			return nil, fmt.Errorf("site at 0x%x: %d bytes of original instructions, too long for the hint test", site, len(orig))
		}
		a.b[jrcxz-1] = byte(d)
		a.ripOp(padAddr+slotRCX, 0x48, 0x8b, 0x0d) // full: mov rcx, [slot]
	}
	a.ripOp(padAddr+slotRAX, 0x48, 0x89, 0x05) // mov [rax slot], rax
	a.ripOp(padAddr+slotR11, 0x4c, 0x89, 0x1d) // mov [r11 slot], r11
	a.emit(0x9f)                               // lahf
	a.emit(0x0f, 0x90, 0xc0)                   // seto al
	a.ripOp(padAddr+slotFlags, 0x66, 0x89, 0x05)
	a.ripOp(padAddr+slotRCX, 0x48, 0x89, 0x0d) // mov [slot], rcx
	a.ripOp(padAddr+slotRSI, 0x48, 0x89, 0x35) // mov [slot], rsi
	a.ripOp(padAddr+slotRDI, 0x48, 0x89, 0x3d) // mov [slot], rdi
	for _, w := range words {
		a.emit(0x49, 0xbb) // mov r11, imm64
		a.u64(w.Addr)
		a.emit(0x4d, 0x8b, 0x1b) // mov r11, [r11]
		a.emit(0x48, 0xb8)       // mov rax, imm64
		a.u64(w.Value)
		a.emit(0x49, 0x39, 0xc3) // cmp r11, rax
		jneMiss()
	}
	for _, i := range regOrder {
		a.emit(0x48, 0xb8) // mov rax, imm64
		a.u64(regs[i])
		switch i {
		case machine.RAX:
			a.ripOp(padAddr+slotRAX, 0x48, 0x39, 0x05) // cmp [slot], rax
		case machine.R11:
			a.ripOp(padAddr+slotR11, 0x48, 0x39, 0x05)
		default:
			m := machineReg[i]
			a.emit(0x48|m>>3, 0x39, 0xc0|m&7) // cmp reg, rax
		}
		jneMiss()
	}
	if diag {
		a.ripOp(padAddr+diagMatched, 0x48, 0xff, 0x05) // inc qword [rip+matched]
	}
	data := make([]byte, PadSize-dataOff)
	put := func(off int, b []byte) { copy(data[off-dataOff:], b) }
	// cmpsq compares n qwords at [rip+rec] with those at address at
	// (rsi, rdi, rcx were saved; the direction flag was checked).
	cmpsq := func(rec uint64, at uint64, n uint32) {
		a.ripOp(rec, 0x48, 0x8d, 0x35) // lea rsi, [rip+rec]
		a.emit(0x48, 0xbf)             // mov rdi, imm64
		a.u64(at)
		a.emit(0xb9) // mov ecx, n
		a.u32(n)
		a.emit(0xf3, 0x48, 0xa7) // repe cmpsq
		if !diag {
			jneMiss()
			return
		}
		a.emit(0x0f, 0x85)
		cmpJnes = append(cmpJnes, len(a.b))
		a.u32(0)
	}
	fpu := len(id.XState) >= LegacyLen
	if fpu || len(id.Pages) > 0 {
		// String compares need DF clear: lodsb tells which way it is
		// (a set DF is not the point anyway when it was recorded clear).
		if regs[machine.EFLAGS]&0x400 != 0 {
			return nil, fmt.Errorf("point at 0x%x was recorded with the direction flag set", site)
		}
		check(Check{Name: "the direction flag"})
		a.ripOp(padAddr+probeOff, 0x48, 0x8d, 0x35)   // lea rsi, [rip+probe]
		a.emit(0xac)                                  // lodsb
		a.ripOp(padAddr+probeOff+1, 0x48, 0x8d, 0x0d) // lea rcx, [rip+probe+1]
		a.emit(0x48, 0x39, 0xce)                      // cmp rsi, rcx
		jneMiss()
	}
	// The pages: the current frame (256 bytes from rsp, where an
	// unoptimised loop keeps its variables) right after the ymm
	// registers, the rest after the x87 and SSE registers.
	type cmpOp struct {
		rec, at uint64
		n       uint32
		data    []byte // the recorded bytes
	}
	var early, late []cmpOp
	for k, pg := range id.Pages {
		if len(pg.Data) != 4096 || pg.Addr%4096 != 0 {
			return nil, fmt.Errorf("pad page at 0x%x: %d bytes", pg.Addr, len(pg.Data))
		}
		off := pagesOff + 4096*k
		put(off, pg.Data)
		ranges := pg.Ranges
		if ranges == nil {
			ranges = [][2]int{{0, 4096}}
		}
		spOff := -1
		if sp := regs[machine.RSP]; sp&^4095 == pg.Addr {
			spOff = int(sp&4095) &^ 7
			ranges = fromSP(ranges, spOff)
		}
		for _, r := range ranges {
			if r[0]%8 != 0 || r[1]%8 != 0 || r[0] >= r[1] || r[1] > 4096 {
				return nil, fmt.Errorf("pad page at 0x%x: bad range %v", pg.Addr, r)
			}
			if spOff >= 0 && r[0] >= spOff && r[0] < spOff+256 {
				cut := min(r[1], spOff+256)
				early = append(early, cmpOp{padAddr + uint64(off+r[0]), pg.Addr + uint64(r[0]), uint32(cut-r[0]) / 8, pg.Data[r[0]:cut]})
				r[0] = cut
				if r[0] >= r[1] {
					continue
				}
			}
			late = append(late, cmpOp{padAddr + uint64(off+r[0]), pg.Addr + uint64(r[0]), uint32(r[1]-r[0]) / 8, pg.Data[r[0]:r[1]]})
		}
	}
	emitOps := func(ops []cmpOp) {
		for _, o := range ops {
			check(Check{Name: "recorded memory", Addr: o.at, Len: 8 * uint64(o.n), Rec: o.data})
			cmpsq(o.rec, o.at, o.n)
		}
	}
	if fpu {
		rec := id.XState
		ymm := func() {
			if !id.AVX || len(rec) < ymmOffset+ymmLen {
				return
			}
			// The upper halves of ymm0-15 one at a time, so that a loop
			// counting in one of them misses after a few instructions.
			check(Check{Name: "the upper halves of the ymm registers"})
			put(ymmRecOff, rec[ymmOffset:ymmOffset+ymmLen])
			for i := uint64(0); i < 16; i++ {
				// vextractf128 [rip+ymm+16i], ymm_i, 1
				b1 := byte(0xe3)
				if i >= 8 {
					b1 = 0x63
				}
				a.emit(0xc4, b1, 0x7d, 0x19, 0x05|byte(i&7)<<3)
				a.u32(rel32(a.pc()+5, padAddr+ymmOff+16*i))
				a.emit(1)
				for q := uint64(0); q < 16; q += 8 {
					a.ripOp(padAddr+ymmOff+16*i+q, 0x48, 0x8b, 0x05)    // mov rax, [img]
					a.ripOp(padAddr+ymmRecOff+16*i+q, 0x48, 0x3b, 0x05) // cmp rax, [rec]
					jneMiss()
				}
			}
		}
		avx512 := func() {
			l := id.AVX512
			if l == nil || l.KOff < HeaderEnd || l.ZmmHiOff < HeaderEnd || len(rec) < l.KOff+64 || len(rec) < l.ZmmHiOff+512 {
				return
			}
			// k0-7 one at a time (kmovw: the low 16 bits, all
			// AVX-512F has), then the upper halves of zmm0-15.
			check(Check{Name: "the AVX-512 registers"})
			put(kRecOff, rec[l.KOff:l.KOff+64])
			for i := uint64(0); i < 8; i++ {
				a.emit(0xc5, 0xf8, 0x93, 0xc0|byte(i))         // kmovw eax, k_i
				a.ripOp(padAddr+kRecOff+8*i, 0x66, 0x3b, 0x05) // cmp ax, [rec]
				jneMiss()
			}
			// The zmm halves are stored first and compared with one
			// repe cmpsq: unrolled compares (90 bytes a register) made
			// pads with many page ranges too large for their code page.
			put(zmmRecOff, rec[l.ZmmHiOff:l.ZmmHiOff+512])
			for i := uint64(0); i < 16; i++ {
				// vextracti64x4 [rip+zmm+32i], zmm_i, 1
				p0 := byte(0xf3)
				if i >= 8 {
					p0 = 0x73
				}
				a.emit(0x62, p0, 0xfd, 0x48, 0x3b, 0x05|byte(i&7)<<3)
				a.u32(rel32(a.pc()+5, padAddr+zmmOff+32*i))
				a.emit(1)
			}
			cmpsq(padAddr+zmmRecOff, padAddr+zmmOff, 64)
		}
		fx := func() {
			check(Check{Name: "the x87 and SSE registers"})
			put(fxRecOff, rec[:LegacyLen])
			a.ripOp(padAddr+fxOff, 0x0f, 0xae, 0x05) // fxsave [rip+fx]
			// FCW, FSW (dword at 0), FTW (byte at 4), MXCSR (dword at 24).
			for _, o := range []uint64{0, 24} {
				a.ripOp(padAddr+fxOff+o, 0x8b, 0x05)    // mov eax, [img]
				a.ripOp(padAddr+fxRecOff+o, 0x3b, 0x05) // cmp eax, [rec]
				jneMiss()
			}
			a.ripOp(padAddr+fxOff+4, 0x8a, 0x05)    // mov al, [img]
			a.ripOp(padAddr+fxRecOff+4, 0x3a, 0x05) // cmp al, [rec]
			jneMiss()
			for i := uint64(0); i < 8; i++ { // st0-7: 10 bytes each
				o := 32 + 16*i
				a.ripOp(padAddr+fxOff+o, 0x48, 0x8b, 0x05)    // mov rax, [img]
				a.ripOp(padAddr+fxRecOff+o, 0x48, 0x3b, 0x05) // cmp rax, [rec]
				jneMiss()
				a.ripOp(padAddr+fxOff+o+8, 0x66, 0x8b, 0x05)    // mov ax, [img]
				a.ripOp(padAddr+fxRecOff+o+8, 0x66, 0x3b, 0x05) // cmp ax, [rec]
				jneMiss()
			}
			cmpsq(padAddr+fxRecOff+160, padAddr+fxOff+160, 32) // xmm0-15
		}
		if x87InUse(rec) {
			// The program keeps values on the x87 stack (rare outside
			// long double code): a loop counting there misses at the
			// x87 registers, so they come first (async_x87_spin ran
			// every iteration through the ymm and stack compares and
			// ran out of its time box under load).
			fx()
			ymm()
			avx512()
			emitOps(early)
		} else {
			ymm()
			avx512()
			emitOps(early)
			fx()
		}
		early = nil
	}
	emitOps(early)
	emitOps(late)
	if len(id.Sums) > MaxSumPages {
		return nil, fmt.Errorf("%d digested pages in a pad, at most %d", len(id.Sums), MaxSumPages)
	}
	if len(id.Sums) > 0 {
		check(Check{Name: "the digests of recorded pages"})
		for k, ps := range id.Sums {
			e := make([]byte, 16)
			binary.LittleEndian.PutUint64(e, ps.Addr)
			binary.LittleEndian.PutUint16(e[8:], ps.Sum)
			put(sumsOff+16*k, e)
		}
		a.ripOp(padAddr+sumsOff, 0x48, 0x8d, 0x3d) // lea rdi, [rip+sums]
		outer := len(a.b)
		a.emit(0x48, 0x8b, 0x37) // mov rsi, [rdi]
		a.emit(0x48, 0x85, 0xf6) // test rsi, rsi
		a.emit(0x74, 0)          // jz done
		jz := len(a.b)
		a.emit(0xb8)
		a.u32(0xffffffff) // mov eax, -1
		a.emit(0xb9)
		a.u32(512) // mov ecx, 512
		inner := len(a.b)
		a.emit(0xf2, 0x48, 0x0f, 0x38, 0xf1, 0x06) // crc32 rax, qword [rsi]
		a.emit(0x48, 0x83, 0xc6, 0x08)             // add rsi, 8
		a.emit(0xff, 0xc9)                         // dec ecx
		a.emit(0x75, byte(inner-(len(a.b)+2)))     // jnz inner
		a.emit(0xf7, 0xd0)                         // not eax
		a.emit(0x66, 0x3b, 0x47, 0x08)             // cmp ax, [rdi+8]
		jneMiss()
		a.emit(0x48, 0x83, 0xc7, 0x10)         // add rdi, 16
		a.emit(0xeb, byte(outer-(len(a.b)+2))) // jmp outer
		a.b[jz-1] = byte(len(a.b) - jz)
	}
	restore := func() {
		a.ripOp(padAddr+slotRCX, 0x48, 0x8b, 0x0d) // mov rcx, [slot]
		a.ripOp(padAddr+slotRSI, 0x48, 0x8b, 0x35) // mov rsi, [slot]
		a.ripOp(padAddr+slotRDI, 0x48, 0x8b, 0x3d) // mov rdi, [slot]
	}
	restore()
	trap := a.pc()
	a.emit(0xcc)
	if len(cmpJnes) > 0 {
		// A string compare missed: rdi is past the differing word.
		missCmp := a.pc()
		a.ripOp(padAddr+diagAddr, 0x48, 0x89, 0x3d)  // mov [rip+addr], rdi
		a.emit(0x48, 0x8b, 0x47, 0xf8)               // mov rax, [rdi-8]
		a.ripOp(padAddr+diagValue, 0x48, 0x89, 0x05) // mov [rip+value], rax
		for _, off := range cmpJnes {
			binary.LittleEndian.PutUint32(a.b[off:], rel32(padAddr+uint64(off)+4, missCmp))
		}
	}
	miss := a.pc()
	for _, off := range jnes {
		binary.LittleEndian.PutUint32(a.b[off:], rel32(padAddr+uint64(off)+4, miss))
	}
	restore()
	a.ripOp(padAddr+slotFlags, 0x66, 0x8b, 0x05) // mov ax, [flags slot]
	a.emit(0x04, 0x7f)                           // add al, 0x7f: OF = (al == 1)
	a.emit(0x9e)                                 // sahf
	a.ripOp(padAddr+slotRAX, 0x48, 0x8b, 0x05)   // mov rax, [slot]
	a.ripOp(padAddr+slotR11, 0x4c, 0x8b, 0x1d)   // mov r11, [slot]
	if err := emitOrig(); err != nil {
		return nil, err
	}
	if len(a.b) > codeMax {
		return nil, fmt.Errorf("%w: %d bytes of code for %d words and %d pages, at most %d", errPadTooLarge, len(a.b), len(words), len(id.Pages), codeMax)
	}
	if fpu || len(id.Pages) > 0 || len(id.Sums) > 0 {
		a.b = append(a.b, make([]byte, dataOff-len(a.b))...)
		a.b = append(a.b, data...)
	}
	jump := make([]byte, len(orig))
	jump[0] = 0xe9
	binary.LittleEndian.PutUint32(jump[1:], rel32(site+5, padAddr))
	for i := 5; i < len(jump); i++ {
		jump[i] = 0xcc // never executed: execution enters the site at its start
	}
	return &Pad{Addr: padAddr, Code: a.b, Site: site, Jump: jump, Trap: trap, Miss: miss, Checks: checks}, nil
}

// relocate copies the instruction code (inst, at from) for execution at
// to, fixing a rip-relative displacement.
func relocate(code []byte, inst *x86asm.Inst, from, to uint64) ([]byte, error) {
	out := append([]byte(nil), code...)
	disp, ok := ripRelative(inst)
	if !ok {
		return out, nil
	}
	target := from + uint64(inst.Len) + uint64(disp)
	nd := int64(target - (to + uint64(inst.Len)))
	if nd > math.MaxInt32 || nd < math.MinInt32 {
		return nil, fmt.Errorf("instruction at 0x%x: rip-relative target out of reach of the pad", from)
	}
	// Find the displacement field: the 4 bytes that, changed, change the
	// decoded displacement (and nothing else).
	var want [4]byte
	binary.LittleEndian.PutUint32(want[:], uint32(int32(disp)))
	for p := 0; p+4 <= len(code); p++ {
		if [4]byte(code[p:p+4]) != want {
			continue
		}
		try := append([]byte(nil), code...)
		binary.LittleEndian.PutUint32(try[p:], uint32(int32(disp)+0x01020304))
		ti, err := x86decode.Decode(try)
		if err != nil || ti.Op != inst.Op || ti.Len != inst.Len {
			continue
		}
		if d, ok := ripRelative(&ti); ok && d == disp+0x01020304 {
			binary.LittleEndian.PutUint32(out[p:], uint32(int32(nd)))
			return out, nil
		}
	}
	return nil, fmt.Errorf("instruction at 0x%x: cannot locate its displacement", from)
}

// Effective turns the registers at the pad's trap into the thread's
// registers at the site: rax, r11 and the arithmetic flags come from the
// save slots (given as read from the pad page), rip is the site.
func (p *Pad) Effective(trapped trace.Regs, slots []byte) trace.Regs {
	r := trapped
	r[machine.RAX] = binary.LittleEndian.Uint64(slots[slotRAX-slotRAX:])
	r[machine.R11] = binary.LittleEndian.Uint64(slots[slotR11-slotRAX:])
	al, ah := uint64(slots[slotFlags-slotRAX]), uint64(slots[slotFlags-slotRAX+1])
	r[machine.EFLAGS] = r[machine.EFLAGS]&^0x8d5 | ah&0xd5 | (al&1)<<11
	r[machine.RIP] = p.Site
	return r
}

// SlotsAddr and SlotsLen locate the save slots Effective needs.
func (p *Pad) SlotsAddr() uint64 { return p.Addr + slotRAX }

// SlotsLen is the number of bytes at SlotsAddr that Effective reads.
const SlotsLen = slotFlags - slotRAX + 2

// SaveLen is the number of bytes at SlotsAddr where the pad saves the
// thread's registers (kept when a pad is rebuilt in place).
const SaveLen = slotRDI + 8 - slotRAX
