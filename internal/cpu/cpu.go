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
