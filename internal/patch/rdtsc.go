package patch

import (
	"encoding/binary"
	"io"

	"github.com/gorr-debugger/gorr/internal/x86decode"
)

// An RdtscSite is an rdtsc followed by whole instructions that a 5-byte
// jump can displace along with it: at Off (a file offset) the rdtsc, then
// Disp (at least 3 bytes, at most 3 instructions that are neither
// branches nor the like; ld.so's start-up timing has eight such sites,
// run by every dynamically linked process). The recorder replaces the
// rdtsc and Disp with a jump (and int3s for the bytes left over) to an
// RdtscTrampoline, which reads the counter through the system-call
// buffer's stub (a buffered call, no stop) and runs Disp. The boundaries
// after the rdtsc must not be targets of a direct branch in the file
// (BranchTargets); jump tables are not followed, as for CpuidRegSite.
type RdtscSite struct {
	Off  uint64
	Disp []byte
	// PCRel holds the offsets in Disp of rel32 displacements of
	// RIP-relative operands, which move with the code.
	PCRel []byte `json:",omitempty"`
}

// Len is the length the jump replaces: the rdtsc and Disp.
func (s *RdtscSite) Len() uint64 { return 2 + uint64(len(s.Disp)) }

// rdtscOwn is the length of an RdtscTrampoline's own code: the red-zone
// steps (5 and 8 bytes), the call (6) and the jump back (5).
const rdtscOwn = 24

// TrampolineLen is the length of the site's RdtscTrampoline.
func (s *RdtscSite) TrampolineLen() uint64 { return uint64(len(s.Disp)) + rdtscOwn }

// ScanRdtsc returns the RdtscSites of the executable sections of an ELF
// file: the rdtscs Scan confirms whose following instructions can be
// displaced. Files without rdtsc are not decoded for branch targets.
func ScanRdtsc(r io.ReaderAt) ([]RdtscSite, error) {
	all, err := Scan(r)
	if err != nil {
		return nil, err
	}
	at := map[uint64]bool{}
	for _, s := range all {
		if s.Kind == Rdtsc {
			at[s.Off] = true
		}
	}
	if len(at) == 0 {
		return nil, nil
	}
	sections, err := CodeSections(r)
	if err != nil {
		return nil, err
	}
	var out []RdtscSite
	for s := range sections {
		for off := range at {
			if off < s.Offset || off+2 > s.Offset+uint64(len(s.Data)) {
				continue
			}
			if site, ok := rdtscSite(s.Data, int(off-s.Offset)); ok {
				site.Off = off
				out = append(out, site)
			}
		}
	}
	return unbranched(r, out, func(s RdtscSite) (uint64, []byte) { return s.Off, append([]byte{0x0f, 0x31}, s.Disp...) })
}

// rdtscSite decodes the instructions after the rdtsc at data[pc:] and
// returns the site when at most three of them make at least 3 bytes and
// can all be displaced.
func rdtscSite(data []byte, pc int) (RdtscSite, bool) {
	var site RdtscSite
	next := pc + 2
	for n := 0; next-pc < 5; n++ {
		if n == 3 || next >= len(data) {
			return site, false
		}
		inst, err := x86decode.Decode(data[next:])
		if err != nil || inst.Len == 0 || !displaceable(inst) {
			return site, false
		}
		if inst.PCRel != 0 {
			if inst.PCRel != 4 {
				return site, false
			}
			site.PCRel = append(site.PCRel, byte(next-(pc+2)+inst.PCRelOff))
		}
		next += inst.Len
	}
	site.Disp = append([]byte(nil), data[pc+2:next]...)
	return site, true
}

// RdtscTrampoline is the code at t that stands for the site mapped at
// site (its rdtsc): it steps over the red zone, calls the stub's rdtsc
// entry through the 8-byte slot at slot (which holds its address: the
// stub lies beyond a rel32's reach of the libraries), steps back, runs
// the displaced instructions (their RIP-relative operands adjusted) and
// jumps back behind them. ok is false when an operand or a jump does not
// reach (rel32).
func RdtscTrampoline(t, site uint64, s *RdtscSite, slot uint64) (code []byte, ok bool) {
	ok = true
	rel := func(to uint64) {
		d := int64(to) - int64(t+uint64(len(code))+4)
		code = binary.LittleEndian.AppendUint32(code, uint32(int32(d)))
		ok = ok && d == int64(int32(d))
	}
	code = append(code, 0x48, 0x8d, 0x64, 0x24, 0x80) // lea -128(%rsp), %rsp
	code = append(code, 0xff, 0x15)                   // call *slot(%rip)
	rel(slot)
	code = append(code, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00) // lea 128(%rsp), %rsp
	at := len(code)
	code = append(code, s.Disp...)
	for _, o := range s.PCRel {
		p := code[at+int(o):]
		d := int64(int32(binary.LittleEndian.Uint32(p))) + int64(site+2) - int64(t+uint64(at))
		if d != int64(int32(d)) {
			return nil, false
		}
		binary.LittleEndian.PutUint32(p, uint32(int32(d)))
	}
	code = append(code, 0xe9) // jmp back
	rel(site + s.Len())
	return code, ok
}

// RdtscJump is what replaces the rdtsc and the displaced instructions of
// s mapped at site: a jump to the trampoline at t, then int3s.
func RdtscJump(site, t uint64, s *RdtscSite) []byte {
	b := CpuidJump(site, t)
	for uint64(len(b)) < s.Len() {
		b = append(b, 0xcc)
	}
	return b
}
