package replay

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Replay reads ahead for a call's outcome only when it decides how the
// call runs; a call that is emulated whatever it returns may never get
// an outcome before its thread is killed millions of events later (the
// go command's threads blocked in futex during a cold build).
func TestNeedsOutcome(t *testing.T) {
	cases := []struct {
		name string
		nr   int
		a    [6]uint64
		want bool
	}{
		{"futex", unix.SYS_FUTEX, [6]uint64{}, false},
		{"read", unix.SYS_READ, [6]uint64{}, false},
		{"wait4", unix.SYS_WAIT4, [6]uint64{}, false},
		{"nanosleep", unix.SYS_NANOSLEEP, [6]uint64{}, false},
		{"madvise free", unix.SYS_MADVISE, [6]uint64{0, 0, unix.MADV_FREE}, false},
		{"mmap", unix.SYS_MMAP, [6]uint64{}, true},
		{"brk", unix.SYS_BRK, [6]uint64{}, true},
		{"clone", unix.SYS_CLONE, [6]uint64{}, true},
		{"vfork", unix.SYS_VFORK, [6]uint64{}, true},
		{"madvise dontneed", unix.SYS_MADVISE, [6]uint64{0, 0, unix.MADV_DONTNEED}, true},
		{"execve", unix.SYS_EXECVE, [6]uint64{}, true},
		{"exit", unix.SYS_EXIT, [6]uint64{}, true},
		{"exit_group", unix.SYS_EXIT_GROUP, [6]uint64{}, true},
		{"rt_sigreturn", unix.SYS_RT_SIGRETURN, [6]uint64{}, true},
	}
	for _, c := range cases {
		if got := needsOutcome(c.nr, c.a); got != c.want {
			t.Errorf("%s: needsOutcome = %v, want %v", c.name, got, c.want)
		}
	}
}
