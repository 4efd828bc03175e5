package linux

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

func inGap(nr int) bool { return nr >= firstGap && nr <= lastGap }

func TestEveryNumberNamed(t *testing.T) {
	for nr := 0; nr <= MaxNr; nr++ {
		s := Lookup(nr)
		if inGap(nr) {
			if s != nil {
				t.Errorf("%d is in the unassigned gap but has entry %q", nr, s.Name)
			}
			if got, want := Name(nr), "syscall_"+strconv.Itoa(nr); got != want {
				t.Errorf("Name(%d) = %q, want %q", nr, got, want)
			}
			continue
		}
		if s == nil {
			t.Errorf("syscall %d has no entry", nr)
			continue
		}
		if s.Nr != nr || s.Name == "" {
			t.Errorf("entry for %d is {Nr: %d, Name: %q}", nr, s.Nr, s.Name)
		}
		if Name(nr) != s.Name || ByName(s.Name) != s {
			t.Errorf("Name/ByName disagree for %d %q", nr, s.Name)
		}
	}
	for _, nr := range []int{-1, MaxNr + 1, 512, 1 << 20} {
		if Lookup(nr) != nil {
			t.Errorf("Lookup(%d) != nil", nr)
		}
	}
	if Name(-1) != "syscall_-1" || Name(600) != "syscall_600" {
		t.Errorf("unknown names: %q %q", Name(-1), Name(600))
	}
	if ByName("no_such_call") != nil {
		t.Error("ByName of an unknown name is not nil")
	}
	if s := ByName("openat"); s == nil || s.Nr != 257 {
		t.Errorf("ByName(openat) = %+v", s)
	}
}

func TestTableOrderedAndUnique(t *testing.T) {
	names := map[string]int{}
	prev := -1
	for _, s := range All() {
		if s.Nr <= prev {
			t.Errorf("%s (%d) out of order after %d", s.Name, s.Nr, prev)
		}
		prev = s.Nr
		if other, dup := names[s.Name]; dup {
			t.Errorf("name %q used by %d and %d", s.Name, other, s.Nr)
		}
		names[s.Name] = s.Nr
	}
	if prev != MaxNr {
		t.Errorf("last entry is %d, MaxNr is %d", prev, MaxNr)
	}
}

func TestExecuteSet(t *testing.T) {
	want := map[string]bool{}
	for _, n := range strings.Fields(`mmap munmap mprotect mremap madvise brk arch_prctl
		clone clone3 fork vfork execve execveat exit exit_group rt_sigreturn
		set_tid_address pkey_mprotect modify_ldt setrlimit prlimit64 shmat shmdt mlock mlock2 munlock mlockall munlockall`) {
		want[n] = true
		if ByName(n) == nil {
			t.Errorf("Execute call %q missing from the table", n)
		}
	}
	for _, s := range All() {
		if got := s.Replay == Execute; got != want[s.Name] {
			t.Errorf("%s: Execute = %v, want %v", s.Name, got, want[s.Name])
		}
		if s.Replay == Execute && s.Unsupported != "" {
			t.Errorf("%s is both Execute and Unsupported", s.Name)
		}
	}
}

func TestOutParamsWellFormed(t *testing.T) {
	for _, s := range All() {
		for _, p := range s.Out {
			if p.Arg < 0 || p.Arg > 5 {
				t.Errorf("%s: output parameter uses argument %d", s.Name, p.Arg)
			}
			switch p.Size.Kind {
			case SizeFixed:
				if p.Size.N == 0 {
					t.Errorf("%s: fixed size 0 for argument %d", s.Name, p.Arg)
				}
			case SizeArg, SizeArgPtr:
				if p.Size.Arg < 0 || p.Size.Arg > 5 || p.Size.Arg == p.Arg {
					t.Errorf("%s: size from argument %d for pointer %d", s.Name, p.Size.Arg, p.Arg)
				}
			case SizeRet:
			default:
				t.Errorf("%s: unknown size kind %d", s.Name, p.Size.Kind)
			}
		}
	}
}

func TestUnsupportedAndBlocking(t *testing.T) {
	unsupported := strings.Fields(`kexec_load kexec_file_load
		init_module finit_module delete_module`)
	for _, n := range unsupported {
		if s := ByName(n); s == nil || s.Unsupported == "" {
			t.Errorf("%s should be Unsupported", n)
		}
	}
	// Facilities the recorder makes look absent so programs fall back.
	answered := map[string]int64{
		"io_uring_setup": -errENOSYS, "io_uring_enter": -errENOSYS, "io_uring_register": -errENOSYS,
		"io_setup": -errENOSYS, "io_submit": -errENOSYS, "io_getevents": -errENOSYS,
		"io_cancel": -errENOSYS, "io_destroy": -errENOSYS, "io_pgetevents": -errENOSYS,
		"userfaultfd": -errENOSYS, "bpf": -errENOSYS, "rseq": -errENOSYS,
		"pkey_alloc": -errENOSPC, "iopl": -errEPERM, "ioperm": -errEPERM, "sched_setaffinity": 0,
	}
	for n, want := range answered {
		s := ByName(n)
		if ret, skip := s.Skip(Args{}); !skip || ret != want {
			t.Errorf("%s: Skip = %d, %v; want %d, true", n, ret, skip, want)
		}
		if s.Unsupported != "" {
			t.Errorf("%s is answered at entry but also Unsupported", n)
		}
	}
	if _, skip := ByName("madvise").Skip(Args{0, 4096, 8}); !skip {
		t.Error("madvise(MADV_FREE) is not skipped")
	}
	if _, skip := ByName("madvise").Skip(Args{0, 4096, 4}); skip {
		t.Error("madvise(MADV_DONTNEED) is skipped")
	}
	if ret, skip := ByName("arch_prctl").Skip(Args{0x1011}); !skip || ret != 1 {
		t.Error("ARCH_GET_CPUID must report cpuid enabled")
	}
	if _, skip := ByName("arch_prctl").Skip(Args{0x1002}); skip {
		t.Error("ARCH_SET_FS is skipped")
	}
	if _, skip := Lookup(-1).Skip(Args{}); skip {
		t.Error("an unknown number is skipped; it must reach the kernel")
	}
	for _, s := range All() {
		if strings.Contains(s.Unsupported, "\n") {
			t.Errorf("%s: reason is not one line", s.Name)
		}
	}
	blocking := strings.Fields(`read write readv writev pread64 pwrite64 preadv pwritev
		preadv2 pwritev2 recvfrom recvmsg recvmmsg sendto sendmsg sendmmsg accept accept4
		connect poll ppoll select pselect6 epoll_wait epoll_pwait epoll_pwait2 futex
		nanosleep clock_nanosleep wait4 waitid pause rt_sigsuspend rt_sigtimedwait msgrcv
		msgsnd semop semtimedop flock open openat sendfile splice tee io_getevents`)
	for _, n := range blocking {
		if s := ByName(n); s == nil || !s.MayBlock {
			t.Errorf("%s should be MayBlock", n)
		}
	}
	for _, n := range []string{"sched_yield", "getpid", "close", "mmap", "clock_gettime"} {
		if ByName(n).MayBlock {
			t.Errorf("%s should not be MayBlock", n)
		}
	}
}

// TestAgainstHeader compares the table with the installed kernel header.
func TestAgainstHeader(t *testing.T) {
	const path = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("%s: %v", path, err)
	}
	defer f.Close()
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[0] != "#define" || !strings.HasPrefix(fields[1], "__NR_") {
			continue
		}
		nr, err := strconv.Atoi(fields[2])
		if err != nil {
			continue
		}
		name := strings.TrimPrefix(fields[1], "__NR_")
		seen++
		if got := Name(nr); got != name {
			t.Errorf("header: %d is %q, table says %q", nr, name, got)
		}
		if s := ByName(name); s == nil || s.Nr != nr {
			t.Errorf("header: ByName(%q) = %v, want number %d", name, s, nr)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if seen < 300 {
		t.Fatalf("only %d syscalls parsed from %s", seen, path)
	}
}
