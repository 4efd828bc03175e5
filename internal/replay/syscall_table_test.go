package replay

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// TestExecuteHandlers: the syscall table and the replayer agree on which
// calls run for real (as rr's syscalls.py and gVisor's table do).
func TestExecuteHandlers(t *testing.T) {
	for _, sc := range linux.All() {
		if got := replayExecutes[sc.Nr]; got != (sc.Replay == linux.Execute) {
			t.Errorf("%s: table Execute = %v, replay handler = %v", sc.Name, sc.Replay == linux.Execute, got)
		}
		if sc.ExecuteIf != nil && sc.Replay != linux.Execute {
			t.Errorf("%s: ExecuteIf on an emulated call", sc.Name)
		}
	}
	for nr := range replayExecutes {
		if linux.Lookup(nr) == nil {
			t.Errorf("replay handles %d, which is not in the table", nr)
		}
	}
}

func TestExecutesFollowsTable(t *testing.T) {
	ok := &trace.Event{Kind: trace.KindSyscallExit, Result: 0}
	failed := &trace.Event{Kind: trace.KindSyscallExit, Result: -int64(unix.EINVAL)}
	cases := []struct {
		name string
		nr   int
		a    [6]uint64
		out  *trace.Event
		want bool
	}{
		{"mmap", unix.SYS_MMAP, [6]uint64{}, ok, true},
		{"failed mmap", unix.SYS_MMAP, [6]uint64{}, failed, false},
		{"read", unix.SYS_READ, [6]uint64{}, ok, false},
		{"MADV_DONTNEED", unix.SYS_MADVISE, [6]uint64{0, 4096, unix.MADV_DONTNEED}, ok, true},
		{"MADV_FREE answered by the recorder", unix.SYS_MADVISE, [6]uint64{0, 4096, unix.MADV_FREE}, ok, false},
		{"MADV_WILLNEED", unix.SYS_MADVISE, [6]uint64{0, 4096, unix.MADV_WILLNEED}, ok, false},
		{"ARCH_SET_FS", unix.SYS_ARCH_PRCTL, [6]uint64{0x1002, 0x1000}, ok, true},
		{"ARCH_SET_CPUID", unix.SYS_ARCH_PRCTL, [6]uint64{0x1012, 0}, ok, false},
		{"setrlimit STACK", unix.SYS_SETRLIMIT, [6]uint64{unix.RLIMIT_STACK, 0x1000}, ok, true},
		{"setrlimit NOFILE", unix.SYS_SETRLIMIT, [6]uint64{unix.RLIMIT_NOFILE, 0x1000}, ok, false},
		{"prlimit64 self AS", unix.SYS_PRLIMIT64, [6]uint64{0, unix.RLIMIT_AS, 0x1000, 0}, ok, true},
		{"prlimit64 get", unix.SYS_PRLIMIT64, [6]uint64{0, unix.RLIMIT_AS, 0, 0x1000}, ok, false},
		{"modify_ldt write", unix.SYS_MODIFY_LDT, [6]uint64{0x11, 0x1000, 16}, ok, true},
		{"modify_ldt read", unix.SYS_MODIFY_LDT, [6]uint64{0, 0x1000, 16}, &trace.Event{Kind: trace.KindSyscallExit, Result: 16}, false},
		{"shmdt (munmap of the attached copy)", unix.SYS_SHMDT, [6]uint64{0x1000}, ok, true},
		{"mlock", unix.SYS_MLOCK, [6]uint64{0x1000, 4096}, failed, true},
		{"unknown number", -1, [6]uint64{}, failed, false},
		{"exit with no outcome", unix.SYS_EXIT, [6]uint64{}, nil, true},
		{"execve trapped by seccomp", unix.SYS_EXECVE, [6]uint64{}, &trace.Event{Kind: trace.KindSyscallExit, Result: unix.SYS_EXECVE}, false},
		{"execve that exec'd", unix.SYS_EXECVE, [6]uint64{}, &trace.Event{Kind: trace.KindExec}, true},
	}
	for _, c := range cases {
		if got := executes(c.nr, c.a, c.out); got != c.want {
			t.Errorf("%s: executes = %v, want %v", c.name, got, c.want)
		}
	}
}
