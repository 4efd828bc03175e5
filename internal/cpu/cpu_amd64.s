#include "textflag.h"

// func Rdtsc() (eax, edx uint32)
TEXT ·Rdtsc(SB), NOSPLIT, $0-8
	RDTSC
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET

// func Rdtscp() (eax, edx, ecx uint32)
TEXT ·Rdtscp(SB), NOSPLIT, $0-12
	RDTSCP
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	MOVL CX, ecx+8(FP)
	RET

// func Cpuid(eaxIn, ecxIn uint32) (eax, ebx, ecx, edx uint32)
TEXT ·Cpuid(SB), NOSPLIT, $0-24
	MOVL eaxIn+0(FP), AX
	MOVL ecxIn+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET
