// Package cpu executes the instructions gorr traps in its tracees
// (rdtsc, rdtscp, cpuid) on the tracer's own CPU.
package cpu

// Rdtsc returns the time-stamp counter.
func Rdtsc() (eax, edx uint32)

// Rdtscp returns the time-stamp counter and IA32_TSC_AUX.
func Rdtscp() (eax, edx, ecx uint32)

// Cpuid executes cpuid for leaf eax, subleaf ecx.
func Cpuid(eaxIn, ecxIn uint32) (eax, ebx, ecx, edx uint32)

// Masked returns cpuid's answer with the features gorr hides from
// tracees: RDRAND, RDSEED (their values cannot be observed), RTM and HLE
// (transactions abort nondeterministically).
func Masked(leaf, sub uint32) (eax, ebx, ecx, edx uint32) {
	eax, ebx, ecx, edx = Cpuid(leaf, sub)
	switch leaf {
	case 1:
		ecx &^= 1 << 30 // RDRAND
	case 7:
		if sub == 0 {
			ebx &^= 1<<18 | 1<<11 | 1<<4 // RDSEED, RTM, HLE
		}
	}
	return
}

// XSaveComponent returns the offset and size of XSAVE state component i
// (2 and up: AVX, the AVX-512 opmask and zmm parts, PKRU, ...) in the
// standard format this CPU uses (CPUID leaf 0xD), or 0, 0 when the CPU
// has no such component. The offsets of components past AVX differ
// between vendors (Intel leaves room for MPX, AMD does not).
func XSaveComponent(i uint32) (off, size int) {
	if max, _, _, _ := Cpuid(0, 0); max < 0xd {
		return 0, 0
	}
	eax, ebx, _, _ := Cpuid(0xd, i)
	return int(ebx), int(eax)
}
