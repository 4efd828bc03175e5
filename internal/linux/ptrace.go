package linux

import "encoding/binary"

// ptrace requests whose results the kernel writes through the data
// argument (x86-64). gorr emulates ptrace between tracees (the recorder
// stays every tracee's real tracer); these regions are what the emulation
// wrote into the tracer's memory.
const (
	ptracePeekText    = 1
	ptracePeekData    = 2
	ptracePeekUser    = 3
	ptraceGetRegs     = 12
	ptraceGetFPRegs   = 14
	ptraceGetEventMsg = 0x4201
	ptraceGetSigInfo  = 0x4202
	ptraceGetRegSet   = 0x4204
	ptraceGetSigMask  = 0x420a
	ptraceArchPrctl   = 30
	ptraceSyscallInfo = 0x420e // PTRACE_GET_SYSCALL_INFO: addr is the buffer's size
)

// ptraceRegions: the output of a successful ptrace request.
func ptraceRegions(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret >= 0 && a[0] == ptraceArchPrctl && (a[3] == 0x1003 || a[3] == 0x1004) && a[2] != 0 {
		return []Region{region(a[2], 8)}, nil // ARCH_GET_FS/GS write through addr
	}
	if ret < 0 || a[3] == 0 {
		return nil, nil
	}
	n := uint64(0)
	switch a[0] {
	case ptracePeekText, ptracePeekData, ptracePeekUser, ptraceGetEventMsg, ptraceGetSigMask:
		n = 8
	case ptraceGetRegs:
		n = 27 * 8
	case ptraceSyscallInfo:
		n = min(a[2], uint64(ret))
	case ptraceGetFPRegs:
		n = 512
	case ptraceGetSigInfo:
		n = sizeSiginfo
	case ptraceGetRegSet:
		var iov [16]byte
		if err := m.ReadMem(a[3], iov[:]); err != nil {
			return []Region{region(a[3], 16)}, nil
		}
		base, l := binary.LittleEndian.Uint64(iov[:8]), binary.LittleEndian.Uint64(iov[8:])
		out := []Region{region(a[3], 16)}
		if base != 0 && l > 0 && l <= 1<<16 {
			out = append(out, region(base, l))
		}
		return out, nil
	default:
		return nil, nil
	}
	return []Region{region(a[3], n)}, nil
}
