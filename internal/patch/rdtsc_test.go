package patch

import (
	"os"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestScanRdtscLdso finds the rdtsc sites of the machine's ld.so (glibc
// times its start-up with eight) and checks that each trampoline
// reproduces the displaced instructions, RIP-relative operands adjusted.
func TestScanRdtscLdso(t *testing.T) {
	f, err := os.Open("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sites, err := ScanRdtsc(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) == 0 {
		t.Skip("no rdtsc sites in this ld.so")
	}
	for _, s := range sites {
		if s.Len() < 5 {
			t.Errorf("site 0x%x: %d bytes, a jump needs 5", s.Off, s.Len())
		}
		const site, tramp = 0x7f0000010000, 0x7f0000020000
		code, ok := RdtscTrampoline(tramp, site+s.Off, &s, tramp-16)
		if !ok || uint64(len(code)) != s.TrampolineLen() {
			t.Fatalf("site 0x%x: trampoline ok=%v len %d, want %d", s.Off, ok, len(code), s.TrampolineLen())
		}
		// The displaced instructions decode the same, and their
		// RIP-relative operands reach the same addresses.
		for pc, tpc := 0, 19; pc < len(s.Disp); {
			a, err1 := x86asm.Decode(s.Disp[pc:], 64)
			b, err2 := x86asm.Decode(code[tpc:], 64)
			if err1 != nil || err2 != nil || a.Op != b.Op || a.Len != b.Len {
				t.Fatalf("site 0x%x: displaced %v, trampoline has %v", s.Off, a, b)
			}
			if a.PCRel == 4 {
				from := int64(site+s.Off+2) + int64(pc+a.Len) + int64(int32(le32(s.Disp[pc+a.PCRelOff:])))
				to := int64(tramp) + int64(tpc+b.Len) + int64(int32(le32(code[tpc+b.PCRelOff:])))
				if from != to {
					t.Errorf("site 0x%x: operand reaches 0x%x from the trampoline, 0x%x from the site", s.Off, to, from)
				}
			}
			pc += a.Len
			tpc += b.Len
		}
		j := RdtscJump(site+s.Off, tramp, &s)
		if uint64(len(j)) != s.Len() || j[0] != 0xe9 {
			t.Errorf("site 0x%x: jump % x", s.Off, j)
		}
	}
	t.Logf("%d rdtsc sites", len(sites))
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
