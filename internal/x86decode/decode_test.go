package x86decode

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

func TestRIPRelative(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		rip  bool  // the memory operand is RIP-relative
		off  int   // PCRelOff when rip
		disp int64 // the operand's displacement
	}{
		// libm's __ieee754_log_fma+91: vmovsd 0x3c59d(%rip), %xmm2
		{"vex2", []byte{0xc5, 0xfb, 0x10, 0x15, 0x9d, 0xc5, 0x03, 0x00}, true, 4, 0x3c59d},
		// vbroadcastss 0x4030201(%rip), %xmm0
		{"vex3", []byte{0xc4, 0xe2, 0x79, 0x18, 0x05, 1, 2, 3, 4}, true, 5, 0x4030201},
		// vmovdqa64 -0x10(%rip), %zmm0
		{"evex", []byte{0x62, 0xf1, 0xfd, 0x48, 0x6f, 0x05, 0xf0, 0xff, 0xff, 0xff}, true, 6, -0x10},
		// movsd 0x3c59d(%rip), %xmm2: legacy, x86asm gets it right
		{"legacy", []byte{0xf2, 0x0f, 0x10, 0x15, 0x9d, 0xc5, 0x03, 0x00}, true, 4, 0x3c59d},
		// vmovsd 0x3c59d, %xmm2 through a SIB byte: absolute, not RIP
		{"vex sib absolute", []byte{0xc5, 0xfb, 0x10, 0x14, 0x25, 0x9d, 0xc5, 0x03, 0x00}, false, 0, 0x3c59d},
		// vmovsd 0x8(%rax), %xmm2
		{"vex base", []byte{0xc5, 0xfb, 0x10, 0x50, 0x08}, false, 0, 8},
	} {
		inst, err := Decode(c.code)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if inst.Len != len(c.code) {
			t.Fatalf("%s: length %d, want %d", c.name, inst.Len, len(c.code))
		}
		var m x86asm.Mem
		for _, a := range inst.Args {
			if x, ok := a.(x86asm.Mem); ok {
				m = x
			}
		}
		if m.Disp != c.disp {
			t.Errorf("%s: displacement 0x%x, want 0x%x", c.name, m.Disp, c.disp)
		}
		if got := m.Base == x86asm.RIP; got != c.rip {
			t.Errorf("%s (%v): RIP-relative %v, want %v", c.name, inst, got, c.rip)
		}
		if c.rip && (inst.PCRel != 4 || inst.PCRelOff != c.off) {
			t.Errorf("%s: PCRel %d at %d, want 4 at %d", c.name, inst.PCRel, inst.PCRelOff, c.off)
		}
		if !c.rip && inst.PCRel != 0 {
			t.Errorf("%s: PCRel %d, want none", c.name, inst.PCRel)
		}
	}
}
