// Package x86decode decodes one x86-64 instruction for gorr's code
// patching and preemption-point pads: golang.org/x/arch's x86asm, with
// its RIP-relative operands made right for every encoding.
//
// x86asm reports the memory operand of a VEX- or EVEX-encoded
// instruction whose ModRM byte selects RIP-relative addressing (mod 00,
// r/m 101) as an absolute address with no base and no PC-relative field
// (PCRel 0): `vmovsd 0x3c59d(%rip), %xmm2` comes out as
// `VMOVSD X2, [+0x3c59d]`. Code that moves such an instruction and
// trusts that report copies its displacement unchanged, so the moved
// instruction loads from somewhere else: glibc's libm loads its
// constants that way, and a preemption pad at such a site made
// `log()` return other values in replay than in the recording. Decode
// sets the operand's base to RIP and the PC-relative field, as x86asm
// does for legacy encodings.
package x86decode

import (
	"encoding/binary"
	"errors"

	"golang.org/x/arch/x86/x86asm"
)

// Decode decodes the 64-bit instruction at the start of code.
func Decode(code []byte) (x86asm.Inst, error) {
	inst, err := x86asm.Decode(code, 64)
	if err != nil || inst.PCRel != 0 {
		return inst, err
	}
	modrm, ok := vexModRM(code[:min(len(code), inst.Len)])
	if !ok || code[modrm]&0xc7 != 0x05 {
		return inst, nil
	}
	if modrm+5 > inst.Len {
		return inst, errors.New("x86decode: truncated VEX/EVEX displacement")
	}
	disp := int64(int32(binary.LittleEndian.Uint32(code[modrm+1:])))
	for i, a := range inst.Args {
		m, isMem := a.(x86asm.Mem)
		if !isMem || m.Base != 0 || m.Index != 0 || m.Disp != disp {
			continue
		}
		m.Base = x86asm.RIP
		inst.Args[i] = m
		inst.PCRel, inst.PCRelOff = 4, modrm+1
		return inst, nil
	}
	return inst, errors.New("x86decode: RIP-relative VEX/EVEX operand not among the decoded arguments")
}

// vexModRM returns the offset of the ModRM byte of a VEX (c4, c5) or
// EVEX (62) instruction in code; ok is false for other encodings.
// x86asm decodes no prefix before a VEX or EVEX one (it returns the
// prefix alone as an instruction), so there are none to skip here.
func vexModRM(code []byte) (modrm int, ok bool) {
	if len(code) == 0 {
		return 0, false
	}
	switch code[0] {
	case 0xc5: // c5 RvvvvLpp opcode modrm
		modrm = 3
	case 0xc4: // c4 RXBmmmmm WvvvvLpp opcode modrm
		modrm = 4
	case 0x62: // 62 P0 P1 P2 opcode modrm (in 64-bit mode 62 is always EVEX)
		modrm = 5
	default:
		return 0, false
	}
	return modrm, modrm < len(code)
}
