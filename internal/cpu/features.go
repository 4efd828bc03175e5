package cpu

import (
	"fmt"
	"sort"
)

// Features are the CPUID feature words gorr compares between the
// recording and the replaying CPU, in this order: cpuid(1).ecx,
// cpuid(1).edx, cpuid(7,0).ebx, cpuid(7,0).ecx, cpuid(7,0).edx,
// cpuid(0x80000001).ecx, cpuid(0x80000001).edx.
type Features [7]uint32

// Word indexes of Features.
const (
	L1ECX = iota
	L1EDX
	L7EBX
	L7ECX
	L7EDX
	E1ECX
	E1EDX
)

var wordNames = [7]string{"cpuid(1).ecx", "cpuid(1).edx", "cpuid(7).ebx", "cpuid(7).ecx", "cpuid(7).edx", "cpuid(0x80000001).ecx", "cpuid(0x80000001).edx"}

// featureNames names the bits programs choose code paths by.
var featureNames = map[[2]int]string{
	{L1ECX, 0}: "sse3", {L1ECX, 1}: "pclmulqdq", {L1ECX, 9}: "ssse3", {L1ECX, 12}: "fma", {L1ECX, 13}: "cx16",
	{L1ECX, 19}: "sse4.1", {L1ECX, 20}: "sse4.2", {L1ECX, 22}: "movbe", {L1ECX, 23}: "popcnt", {L1ECX, 25}: "aes",
	{L1ECX, 26}: "xsave", {L1ECX, 27}: "osxsave", {L1ECX, 28}: "avx", {L1ECX, 29}: "f16c", {L1ECX, 30}: "rdrand",
	{L1EDX, 0}: "fpu", {L1EDX, 4}: "tsc", {L1EDX, 8}: "cx8", {L1EDX, 15}: "cmov", {L1EDX, 23}: "mmx",
	{L1EDX, 24}: "fxsr", {L1EDX, 25}: "sse", {L1EDX, 26}: "sse2",
	{L7EBX, 3}: "bmi1", {L7EBX, 4}: "hle", {L7EBX, 5}: "avx2", {L7EBX, 8}: "bmi2", {L7EBX, 9}: "erms",
	{L7EBX, 11}: "rtm", {L7EBX, 16}: "avx512f", {L7EBX, 17}: "avx512dq", {L7EBX, 18}: "rdseed", {L7EBX, 19}: "adx",
	{L7EBX, 21}: "avx512ifma", {L7EBX, 28}: "avx512cd", {L7EBX, 29}: "sha", {L7EBX, 30}: "avx512bw", {L7EBX, 31}: "avx512vl",
	{L7ECX, 1}: "avx512vbmi", {L7ECX, 6}: "avx512vbmi2", {L7ECX, 8}: "gfni", {L7ECX, 9}: "vaes",
	{L7ECX, 10}: "vpclmulqdq", {L7ECX, 11}: "avx512vnni", {L7ECX, 12}: "avx512bitalg", {L7ECX, 14}: "avx512vpopcntdq",
	{L7EDX, 4}: "fsrm", {L7EDX, 8}: "avx512vp2intersect", {L7EDX, 23}: "avx512fp16",
	{E1ECX, 0}: "lahf_lm", {E1ECX, 5}: "lzcnt", {E1ECX, 6}: "sse4a", {E1ECX, 8}: "prefetchw",
	{E1EDX, 11}: "syscall", {E1EDX, 20}: "nx", {E1EDX, 27}: "rdtscp", {E1EDX, 29}: "lm",
}

// Host returns the features of this CPU as gorr shows them to tracees
// (Masked).
func Host() Features {
	var f Features
	_, _, f[L1ECX], f[L1EDX] = Masked(1, 0)
	if max, _, _, _ := Cpuid(0, 0); max >= 7 {
		_, f[L7EBX], f[L7ECX], f[L7EDX] = Masked(7, 0)
	}
	if max, _, _, _ := Cpuid(0x80000000, 0); max >= 0x80000001 {
		_, _, f[E1ECX], f[E1EDX] = Masked(0x80000001, 0)
	}
	return f
}

// BaselineName is the documented baseline of 'record --portable'.
const BaselineName = "x86-64-v3"

// baselineBits are the bits of x86-64-v3 (the psABI micro-architecture
// level: x86-64 baseline, v2, and AVX, AVX2, BMI1, BMI2, F16C, FMA,
// LZCNT, MOVBE, OSXSAVE), plus the bits of leaf 1 edx every x86-64 CPU
// has and the hypervisor bit.
var baselineBits = Features{
	L1ECX: 1<<0 | 1<<9 | 1<<12 | 1<<13 | 1<<19 | 1<<20 | 1<<22 | 1<<23 | 1<<26 | 1<<27 | 1<<28 | 1<<29 | 1<<31,
	L1EDX: 0xffffffff,
	L7EBX: 1<<3 | 1<<5 | 1<<8,
	L7ECX: 0,
	L7EDX: 0,
	E1ECX: 1<<0 | 1<<5,
	E1EDX: 1<<11 | 1<<20 | 1<<27 | 1<<29 | 1<<26,
}

// Baseline limits a cpuid answer (leaf, sub: eax, ebx, ecx, edx) to the
// features of the portable baseline (BaselineName). Leaves other than the
// feature leaves are returned unchanged.
func Baseline(leaf, sub, eax, ebx, ecx, edx uint32) (uint32, uint32, uint32, uint32) {
	switch leaf {
	case 1:
		ecx &= baselineBits[L1ECX]
		edx &= baselineBits[L1EDX]
	case 7:
		if sub == 0 {
			ebx &= baselineBits[L7EBX]
			ecx &= baselineBits[L7ECX]
			edx &= baselineBits[L7EDX]
		} else {
			eax, ebx, ecx, edx = 0, 0, 0, 0
		}
	case 0x80000001:
		ecx &= baselineBits[E1ECX]
		edx &= baselineBits[E1EDX]
	}
	return eax, ebx, ecx, edx
}

// Limit returns f restricted to the portable baseline.
func (f Features) Limit() Features {
	for i := range f {
		f[i] &= baselineBits[i]
	}
	return f
}

// Missing lists the features of need that have lacks, by name (or
// "cpuid(7).ebx bit 27" for bits without a name), sorted.
func Missing(need, have Features) []string {
	var out []string
	for w := range need {
		miss := need[w] &^ have[w]
		for b := 0; b < 32; b++ {
			if miss&(1<<b) == 0 {
				continue
			}
			if n, ok := featureNames[[2]int{w, b}]; ok {
				out = append(out, n)
			} else {
				out = append(out, fmt.Sprintf("%s bit %d", wordNames[w], b))
			}
		}
	}
	sort.Strings(out)
	return out
}
