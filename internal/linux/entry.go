package linux

// Entry policies: calls the recorder answers itself at the syscall-entry
// stop instead of letting the kernel run them (Syscall.Entry). The
// recorded result is then replayed like any emulated call. Most of them
// make a facility look absent, as rr does, so that programs take their
// fallback instead of the recording being refused.

// entryFunc is the signature of Syscall.Entry.
type entryFunc = func(a Args) (ret int64, skip bool)

// Errno values the entry policies answer with.
const (
	errEPERM  = 1
	errEACCES = 13
	errENOSPC = 28
	errENOSYS = 38
)

// fail answers every call with -errno.
func fail(errno int64) entryFunc {
	return func(Args) (int64, bool) { return -errno, true }
}

// Skip reports whether the recorder answers this call itself, and with
// what result. sc may be nil (a number outside the table).
func (s *Syscall) Skip(a Args) (ret int64, skip bool) {
	if s == nil || s.Entry == nil {
		return 0, false
	}
	return s.Entry(a)
}

// sched_setaffinity(pid, len, mask): accepted and ignored, the recorder
// decides where tracees run.
func entrySchedSetaffinity(Args) (int64, bool) { return 0, true }

// madvise(addr, len, advice): MADV_FREE frees pages only under memory
// pressure, which replay cannot reproduce; it is accepted and ignored
// (the pages keep their content, which MADV_FREE allows).
func entryMadvise(a Args) (int64, bool) {
	const madvFree = 8
	return 0, a[2] == madvFree
}

// arch_prctl(code, addr): cpuid must stay trapped, so ARCH_SET_CPUID is
// accepted and ignored and ARCH_GET_CPUID says cpuid is enabled.
func entryArchPrctl(a Args) (int64, bool) {
	switch a[0] {
	case 0x1011: // ARCH_GET_CPUID
		return 1, true
	case 0x1012: // ARCH_SET_CPUID
		return 0, true
	}
	return 0, false
}

// Replay conditions for Execute entries (Syscall.ExecuteIf).

// madviseShapesMemory: advice that changes page contents or what a fork
// inherits runs again in replay; the rest only hints the kernel.
func madviseShapesMemory(a Args) bool {
	switch a[2] {
	case 4, 9, 10, 11, 18, 19, 24: // DONTNEED, REMOVE, DONTFORK, DOFORK, WIPEONFORK, KEEPONFORK, DONTNEED_LOCKED
		return true
	}
	return false
}

// archPrctlSetsBase: ARCH_SET_FS and ARCH_SET_GS set segment bases.
func archPrctlSetsBase(a Args) bool { return a[0] == 0x1001 || a[0] == 0x1002 }

// limitShapesMemory: RLIMIT_STACK, RLIMIT_AS and RLIMIT_DATA change where
// stack growth stops and when mmap fails.
func limitShapesMemory(res uint64) bool { return res == 3 || res == 9 || res == 2 }

// setrlimit(resource, rlim)
func setrlimitShapesMemory(a Args) bool { return limitShapesMemory(a[0]) }

// prlimit64(pid, resource, new, old): only a new limit for the caller
// itself; the old value comes from the trace.
func prlimitShapesMemory(a Args) bool { return a[0] == 0 && a[2] != 0 && limitShapesMemory(a[1]) }
