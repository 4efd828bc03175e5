package linux

import "testing"

func TestPtraceRegions(t *testing.T) {
	expect(t, "peekdata", regions(t, "ptrace", Args{ptracePeekData, 42, 0x5000, 0x1000}, 0, nil), Region{0x1000, 8})
	expect(t, "getregs", regions(t, "ptrace", Args{ptraceGetRegs, 42, 0, 0x1000}, 0, nil), Region{0x1000, 216})
	expect(t, "getfpregs", regions(t, "ptrace", Args{ptraceGetFPRegs, 42, 0, 0x1000}, 0, nil), Region{0x1000, 512})
	expect(t, "getsiginfo", regions(t, "ptrace", Args{ptraceGetSigInfo, 42, 0, 0x1000}, 0, nil), Region{0x1000, 128})
	expect(t, "failed", regions(t, "ptrace", Args{ptraceGetRegs, 42, 0, 0x1000}, -3, nil))
	expect(t, "cont", regions(t, "ptrace", Args{7, 42, 0, 0}, 0, nil))
	expect(t, "arch_prctl get fs", regions(t, "ptrace", Args{ptraceArchPrctl, 42, 0x3000, 0x1003}, 0, nil), Region{0x3000, 8})
	expect(t, "arch_prctl set fs", regions(t, "ptrace", Args{ptraceArchPrctl, 42, 0x3000, 0x1002}, 0, nil))
	m := newFakeMem(0x1000, 64)
	m.putIovecs(0x1000, [2]uint64{0x2000, 216})
	expect(t, "getregset", regions(t, "ptrace", Args{ptraceGetRegSet, 42, 1, 0x1000}, 0, m), Region{0x1000, 16}, Region{0x2000, 216})
}
