package asyncpoint

import (
	"fmt"

	"github.com/gorr-debugger/gorr/internal/machine"
)

// Layout of the XSAVE area in the standard format (as PTRACE_GETREGSET
// NT_X86_XSTATE returns it).
const (
	// LegacyLen is the size of the FXSAVE part (machine.LegacyLen).
	LegacyLen = machine.LegacyLen
	// HeaderEnd is where the extended components begin, after the
	// XSAVE header (machine.HeaderEnd).
	HeaderEnd = machine.HeaderEnd
	// OldXStateLen is what traces before the full identity stored: the
	// FXSAVE area up to the end of xmm15.
	OldXStateLen = 416
	// ymmOffset is the AVX component (upper halves of ymm0-15), the same
	// on every x86-64 CPU that has it.
	ymmOffset = machine.YmmOffset
	ymmLen    = machine.YmmLen
)

// xstateIgnored tells whether byte i of the XSAVE area is left out of a
// point's identity: the x87 last-instruction opcode and pointers (AMD
// CPUs do not save them unless an exception is pending), the padding of
// the x87 registers, the reserved and software bytes of the legacy area
// and the XSAVE header (which components are in their initial state is
// a hint of the CPU, not program state).
func xstateIgnored(i int) bool {
	switch {
	case i >= 6 && i < 24:
		return true
	case i >= 32 && i < 160:
		return (i-32)%16 >= 10
	case i >= OldXStateLen && i < HeaderEnd:
		return true
	}
	return false
}

// XStateDiff compares the XSAVE area cur of a thread with a point's
// recorded one and says what differs ("" when nothing does). A recorded
// area of OldXStateLen bytes (older traces) is compared as those traces
// meant: MXCSR and xmm0-15 only.
func XStateDiff(rec, cur []byte) string {
	if len(rec) <= OldXStateLen {
		if len(rec) < OldXStateLen || len(cur) < OldXStateLen {
			return ""
		}
		for i := 24; i < 28; i++ {
			if rec[i] != cur[i] {
				return "MXCSR differs"
			}
		}
		for i := 160; i < OldXStateLen; i++ {
			if rec[i] != cur[i] {
				return fmt.Sprintf("xmm%d differs", (i-160)/16)
			}
		}
		return ""
	}
	if len(cur) != len(rec) {
		return fmt.Sprintf("XSAVE area of %d bytes, recorded %d", len(cur), len(rec))
	}
	for i := range rec {
		if rec[i] != cur[i] && !xstateIgnored(i) {
			return "extended state differs: " + xstateField(i)
		}
	}
	return ""
}

// xstateField names the register that byte i of the XSAVE area holds.
func xstateField(i int) string {
	switch {
	case i < 6:
		return "x87 control/status/tag word"
	case i < 32:
		return "MXCSR"
	case i < 160:
		return fmt.Sprintf("st%d", (i-32)/16)
	case i < OldXStateLen:
		return fmt.Sprintf("xmm%d", (i-160)/16)
	case i >= ymmOffset && i < ymmOffset+ymmLen:
		return fmt.Sprintf("upper half of ymm%d", (i-ymmOffset)/16)
	}
	return fmt.Sprintf("byte %d (AVX-512, PKRU or another component)", i)
}

// xcr0Word is where ptrace stores XCR0 in the XSAVE area: the first
// software-reserved word of the legacy area (USER_XSTATE_XCR0_WORD).
const xcr0Word = 464

// HasAVX tells whether the XSAVE area xs (standard format, as ptrace
// returns it) comes from a CPU with AVX enabled: bit 2 of XCR0.
func HasAVX(xs []byte) bool {
	if len(xs) < ymmOffset+ymmLen {
		return false
	}
	return xs[xcr0Word]&4 != 0
}

// HasAVX512 tells whether a recorded XSAVE area comes from a thread whose
// XCR0 enables the AVX-512 opmask and zmm state (bits 5-7).
func HasAVX512(xs []byte) bool {
	return len(xs) > xcr0Word && xs[xcr0Word]&0xe0 == 0xe0
}
