package linux

import (
	"fmt"
	"strconv"
)

// MaxNr is the highest x86-64 system call number in the table.
const MaxNr = 471

// Numbers 337..423 are unassigned on x86-64: the range was skipped so that
// syscalls added from 424 on share one number on every architecture.
// Numbers 512..547 are x32-only entries of the kernel's table and numbers
// with X32Bit set are x32 calls. Numbers outside the table (the gap,
// negative numbers, anything above MaxNr, x32 numbers) are recorded as
// calls the kernel must reject with ENOSYS and no side effect; see
// Unknown.
const (
	firstGap = 337
	lastGap  = 423
)

// Reasons for Unsupported.
const (
	reasonModule      = "loading or unloading kernel modules is not supported"
	reasonKexec       = "loading a new kernel is not supported"
	reasonThreadArea  = "32-bit TLS segments (GDT entries) are not supported"
	reasonShadowStack = "shadow-stack mappings are not supported"
	reasonMemfdSecret = "secret memory cannot be read by the tracer"
	reasonUprobe      = "uprobe trampolines are kernel-internal"
	reasonRemap       = "non-linear file mappings are not supported"
	reasonUselib      = "uselib maps a library into the address space"
)

// syscallList is the x86-64 system call table: every number 0..MaxNr except
// the unassigned gap. Entries without Out, Custom or flags are calls that
// write no user memory and return promptly; they are emulated from their
// recorded result.
var syscallList = []Syscall{
	{Nr: 0, Name: "read", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet}}}, MayBlock: true, Buffered: true},
	{Nr: 1, Name: "write", MayBlock: true, Buffered: true},
	{Nr: 2, Name: "open", MayBlock: true}, // opening a FIFO waits for the other end
	{Nr: 3, Name: "close", Buffered: true},
	{Nr: 4, Name: "stat", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeStat}}}},
	{Nr: 5, Name: "fstat", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeStat}}}, Buffered: true},
	{Nr: 6, Name: "lstat", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeStat}}}},
	{Nr: 7, Name: "poll", Custom: customPoll, MayBlock: true, Buffered: true},
	{Nr: 8, Name: "lseek", Buffered: true},
	// The stub buffers the anonymous, private, non-executable mmaps, the
	// mprotects that add no PROT_EXEC, and munmap, brk and madvise (not
	// MADV_FREE) outside its own mapping; replay makes them for real at
	// their event (internal/replay prepare), as it does when they stop.
	{Nr: 9, Name: "mmap", Replay: Execute, Buffered: true},
	{Nr: 10, Name: "mprotect", Replay: Execute, Buffered: true},
	{Nr: 11, Name: "munmap", Replay: Execute, Buffered: true},
	{Nr: 12, Name: "brk", Replay: Execute, Buffered: true},
	{Nr: 13, Name: "rt_sigaction", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeFixed, N: sizeSigaction}}}, Buffered: true}, // with an 8-byte sigset (stub_amd64.S)
	{Nr: 14, Name: "rt_sigprocmask", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeArg, Arg: 3}}}},
	{Nr: 15, Name: "rt_sigreturn", Replay: Execute},
	{Nr: 16, Name: "ioctl", Custom: customIoctl, MayBlock: true, Buffered: true}, // e.g. TCSETSW drains output
	{Nr: 17, Name: "pread64", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet}}}, MayBlock: true, Buffered: true},
	{Nr: 18, Name: "pwrite64", MayBlock: true, Buffered: true},
	{Nr: 19, Name: "readv", Custom: iovFromRet(1, 2), MayBlock: true},
	{Nr: 20, Name: "writev", MayBlock: true},
	{Nr: 21, Name: "access", Buffered: true},
	{Nr: 22, Name: "pipe", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: 2 * sizeInt}}}},
	{Nr: 23, Name: "select", Custom: selectRegions, MayBlock: true},
	{Nr: 24, Name: "sched_yield"},
	{Nr: 25, Name: "mremap", Replay: Execute},
	{Nr: 26, Name: "msync"},
	{Nr: 27, Name: "mincore", Custom: customMincore},
	{Nr: 28, Name: "madvise", Entry: entryMadvise, Replay: Execute, ExecuteIf: madviseShapesMemory, Buffered: true},
	{Nr: 29, Name: "shmget"},
	// System V shared memory: the recorder refuses shmat, so shmdt never
	// detaches anything replay would have to undo.
	{Nr: 30, Name: "shmat", Replay: Execute},
	{Nr: 31, Name: "shmctl", Custom: customShmctl},
	{Nr: 32, Name: "dup"},
	{Nr: 33, Name: "dup2"},
	{Nr: 34, Name: "pause", MayBlock: true},
	{Nr: 35, Name: "nanosleep", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeTimespec}, OnError: true}}, MayBlock: true},
	{Nr: 36, Name: "getitimer", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeItimerval}}}},
	{Nr: 37, Name: "alarm"},
	{Nr: 38, Name: "setitimer", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeFixed, N: sizeItimerval}}}},
	{Nr: 39, Name: "getpid", Buffered: true},
	{Nr: 40, Name: "sendfile", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeFixed, N: sizeLong}}}, MayBlock: true},
	{Nr: 41, Name: "socket"},
	{Nr: 42, Name: "connect", MayBlock: true},
	{Nr: 43, Name: "accept", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeArgPtr, Arg: 2}}, {Arg: 2, Size: Size{Kind: SizeFixed, N: sizeInt}}}, MayBlock: true},
	{Nr: 44, Name: "sendto", MayBlock: true},
	{Nr: 45, Name: "recvfrom", Out: []OutParam{{Arg: 4, Size: Size{Kind: SizeArgPtr, Arg: 5}}, {Arg: 5, Size: Size{Kind: SizeFixed, N: sizeInt}}}, Custom: customRecvfrom, MayBlock: true},
	{Nr: 46, Name: "sendmsg", MayBlock: true},
	{Nr: 47, Name: "recvmsg", Custom: customRecvmsg, MayBlock: true},
	{Nr: 48, Name: "shutdown"},
	{Nr: 49, Name: "bind"},
	{Nr: 50, Name: "listen"},
	{Nr: 51, Name: "getsockname", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeArgPtr, Arg: 2}}, {Arg: 2, Size: Size{Kind: SizeFixed, N: sizeInt}}}},
	{Nr: 52, Name: "getpeername", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeArgPtr, Arg: 2}}, {Arg: 2, Size: Size{Kind: SizeFixed, N: sizeInt}}}},
	{Nr: 53, Name: "socketpair", Out: []OutParam{{Arg: 3, Size: Size{Kind: SizeFixed, N: 2 * sizeInt}}}},
	{Nr: 54, Name: "setsockopt", Custom: customSetsockopt},
	{Nr: 55, Name: "getsockopt", Out: []OutParam{{Arg: 3, Size: Size{Kind: SizeArgPtr, Arg: 4}}, {Arg: 4, Size: Size{Kind: SizeFixed, N: sizeInt}}}},
	{Nr: 56, Name: "clone", Custom: customClone, Replay: Execute},
	{Nr: 57, Name: "fork", Replay: Execute},
	{Nr: 58, Name: "vfork", Replay: Execute},
	{Nr: 59, Name: "execve", Replay: Execute},
	{Nr: 60, Name: "exit", Replay: Execute},
	{Nr: 61, Name: "wait4", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeInt}}, {Arg: 3, Size: Size{Kind: SizeFixed, N: sizeRusage}}}, MayBlock: true},
	{Nr: 62, Name: "kill"},
	{Nr: 63, Name: "uname", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeUtsname}}}},
	{Nr: 64, Name: "semget"},
	{Nr: 65, Name: "semop", MayBlock: true},
	{Nr: 66, Name: "semctl", Custom: customSemctl},
	{Nr: 67, Name: "shmdt", Replay: Execute},
	{Nr: 68, Name: "msgget"},
	{Nr: 69, Name: "msgsnd", MayBlock: true},
	{Nr: 70, Name: "msgrcv", Custom: customMsgrcv, MayBlock: true},
	{Nr: 71, Name: "msgctl", Custom: customMsgctl},
	{Nr: 72, Name: "fcntl", Custom: customFcntl, MayBlock: true, Buffered: true}, // F_SETLKW, F_OFD_SETLKW (the stub buffers F_GETFD/F_SETFD/F_GETFL/F_SETFL only)
	{Nr: 73, Name: "flock", MayBlock: true},
	{Nr: 74, Name: "fsync"},
	{Nr: 75, Name: "fdatasync"},
	{Nr: 76, Name: "truncate"},
	{Nr: 77, Name: "ftruncate"},
	{Nr: 78, Name: "getdents", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet}}}},
	{Nr: 79, Name: "getcwd", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeRet}}}}, // ret includes the NUL
	{Nr: 80, Name: "chdir"},
	{Nr: 81, Name: "fchdir"},
	{Nr: 82, Name: "rename", Buffered: true},
	{Nr: 83, Name: "mkdir", Buffered: true},
	{Nr: 84, Name: "rmdir", Buffered: true},
	{Nr: 85, Name: "creat", MayBlock: true}, // an existing FIFO
	{Nr: 86, Name: "link", Buffered: true},
	{Nr: 87, Name: "unlink", Buffered: true},
	{Nr: 88, Name: "symlink", Buffered: true},
	{Nr: 89, Name: "readlink", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet}}}, Buffered: true},
	{Nr: 90, Name: "chmod", Buffered: true},
	{Nr: 91, Name: "fchmod", Buffered: true},
	{Nr: 92, Name: "chown", Buffered: true},
	{Nr: 93, Name: "fchown", Buffered: true},
	{Nr: 94, Name: "lchown", Buffered: true},
	{Nr: 95, Name: "umask"},
	{Nr: 96, Name: "gettimeofday", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeTimeval}}, {Arg: 1, Size: Size{Kind: SizeFixed, N: sizeTimezone}}}, Buffered: true},
	{Nr: 97, Name: "getrlimit", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeRlimit}}}},
	{Nr: 98, Name: "getrusage", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeRusage}}}},
	{Nr: 99, Name: "sysinfo", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeSysinfo}}}},
	{Nr: 100, Name: "times", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeTms}}}},
	{Nr: 101, Name: "ptrace", Custom: ptraceRegions},
	{Nr: 102, Name: "getuid", Buffered: true},
	{Nr: 103, Name: "syslog", Custom: customSyslog, MayBlock: true}, // SYSLOG_ACTION_READ waits
	{Nr: 104, Name: "getgid", Buffered: true},
	{Nr: 105, Name: "setuid"},
	{Nr: 106, Name: "setgid"},
	{Nr: 107, Name: "geteuid", Buffered: true},
	{Nr: 108, Name: "getegid", Buffered: true},
	{Nr: 109, Name: "setpgid"},
	{Nr: 110, Name: "getppid", Buffered: true},
	{Nr: 111, Name: "getpgrp"},
	{Nr: 112, Name: "setsid"},
	{Nr: 113, Name: "setreuid"},
	{Nr: 114, Name: "setregid"},
	{Nr: 115, Name: "getgroups", Custom: customGetgroups},
	{Nr: 116, Name: "setgroups"},
	{Nr: 117, Name: "setresuid"},
	{Nr: 118, Name: "getresuid", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeInt}}, {Arg: 1, Size: Size{Kind: SizeFixed, N: sizeInt}}, {Arg: 2, Size: Size{Kind: SizeFixed, N: sizeInt}}}},
	{Nr: 119, Name: "setresgid"},
	{Nr: 120, Name: "getresgid", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeInt}}, {Arg: 1, Size: Size{Kind: SizeFixed, N: sizeInt}}, {Arg: 2, Size: Size{Kind: SizeFixed, N: sizeInt}}}},
	{Nr: 121, Name: "getpgid"},
	{Nr: 122, Name: "setfsuid"},
	{Nr: 123, Name: "setfsgid"},
	{Nr: 124, Name: "getsid"},
	// capget stores the preferred version in the header when the caller's
	// is unknown (and fails with EINVAL), so the header is OnError.
	{Nr: 125, Name: "capget", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeInt}, OnError: true}, {Arg: 1, Size: Size{Kind: SizeFixed, N: sizeCapData}}}},
	{Nr: 126, Name: "capset"},
	{Nr: 127, Name: "rt_sigpending", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeArg, Arg: 1}}}},
	{Nr: 128, Name: "rt_sigtimedwait", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeSiginfo}}}, MayBlock: true},
	{Nr: 129, Name: "rt_sigqueueinfo"},
	{Nr: 130, Name: "rt_sigsuspend", MayBlock: true},
	{Nr: 131, Name: "sigaltstack", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeStackT}}}},
	{Nr: 132, Name: "utime"},
	{Nr: 133, Name: "mknod"},
	{Nr: 134, Name: "uselib", Unsupported: reasonUselib},
	{Nr: 135, Name: "personality"},
	{Nr: 136, Name: "ustat", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeUstat}}}},
	{Nr: 137, Name: "statfs", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeStatfs}}}},
	{Nr: 138, Name: "fstatfs", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeStatfs}}}, Buffered: true},
	{Nr: 139, Name: "sysfs", Custom: customSysfs},
	{Nr: 140, Name: "getpriority"},
	{Nr: 141, Name: "setpriority"},
	{Nr: 142, Name: "sched_setparam"},
	{Nr: 143, Name: "sched_getparam", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeInt}}}},
	{Nr: 144, Name: "sched_setscheduler"},
	{Nr: 145, Name: "sched_getscheduler"},
	{Nr: 146, Name: "sched_get_priority_max"},
	{Nr: 147, Name: "sched_get_priority_min"},
	{Nr: 148, Name: "sched_rr_get_interval", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeTimespec}}}},
	{Nr: 149, Name: "mlock", Replay: Execute},
	{Nr: 150, Name: "munlock", Replay: Execute},
	{Nr: 151, Name: "mlockall", Replay: Execute},
	{Nr: 152, Name: "munlockall", Replay: Execute},
	{Nr: 153, Name: "vhangup"},
	// modify_ldt: reading the LDT (func 0, 2) is emulated; writing it
	// (func 1, 0x11) runs again in replay, where segment loads and lsl
	// depend on it.
	{Nr: 154, Name: "modify_ldt", Custom: customModifyLdt, Replay: Execute, ExecuteIf: ldtWrite},
	{Nr: 155, Name: "pivot_root"},
	{Nr: 156, Name: "_sysctl"}, // removed from the kernel: always ENOSYS
	{Nr: 157, Name: "prctl", Custom: customPrctl},
	{Nr: 158, Name: "arch_prctl", Custom: customArchPrctl, Entry: entryArchPrctl, Replay: Execute, ExecuteIf: archPrctlSetsBase},
	{Nr: 159, Name: "adjtimex", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeTimex}}}},
	// Resource limits that shape the address space (stack growth, mmap
	// failures) are applied again in replay.
	{Nr: 160, Name: "setrlimit", Replay: Execute, ExecuteIf: setrlimitShapesMemory},
	{Nr: 161, Name: "chroot"},
	{Nr: 162, Name: "sync"},
	{Nr: 163, Name: "acct"},
	{Nr: 164, Name: "settimeofday"},
	{Nr: 165, Name: "mount"},
	{Nr: 166, Name: "umount2"},
	{Nr: 167, Name: "swapon"},
	{Nr: 168, Name: "swapoff"},
	{Nr: 169, Name: "reboot"},
	{Nr: 170, Name: "sethostname"},
	{Nr: 171, Name: "setdomainname"},
	// I/O port access cannot be reproduced (replay would run in/out
	// without the permission): iopl and ioperm fail as for an
	// unprivileged process.
	{Nr: 172, Name: "iopl", Entry: fail(errEPERM)},
	{Nr: 173, Name: "ioperm", Entry: fail(errEPERM)},
	{Nr: 174, Name: "create_module"}, // removed: ENOSYS
	{Nr: 175, Name: "init_module", Unsupported: reasonModule},
	{Nr: 176, Name: "delete_module", Unsupported: reasonModule},
	{Nr: 177, Name: "get_kernel_syms"}, // removed: ENOSYS
	{Nr: 178, Name: "query_module"},    // removed: ENOSYS
	{Nr: 179, Name: "quotactl", Custom: quotaRegions(0)},
	{Nr: 180, Name: "nfsservctl"},  // removed: ENOSYS
	{Nr: 181, Name: "getpmsg"},     // never implemented
	{Nr: 182, Name: "putpmsg"},     // never implemented
	{Nr: 183, Name: "afs_syscall"}, // never implemented
	{Nr: 184, Name: "tuxcall"},     // never implemented
	{Nr: 185, Name: "security"},    // never implemented
	{Nr: 186, Name: "gettid", Buffered: true},
	{Nr: 187, Name: "readahead"},
	{Nr: 188, Name: "setxattr", Buffered: true},
	{Nr: 189, Name: "lsetxattr", Buffered: true},
	{Nr: 190, Name: "fsetxattr", Buffered: true},
	// The xattr getters return the value size even for a zero-size query,
	// which writes nothing, hence bounded by the size argument.
	{Nr: 191, Name: "getxattr", Custom: retBounded(2, 3, 0), Buffered: true},
	{Nr: 192, Name: "lgetxattr", Custom: retBounded(2, 3, 0), Buffered: true},
	{Nr: 193, Name: "fgetxattr", Custom: retBounded(2, 3, 0), Buffered: true},
	{Nr: 194, Name: "listxattr", Custom: retBounded(1, 2, 0), Buffered: true},
	{Nr: 195, Name: "llistxattr", Custom: retBounded(1, 2, 0), Buffered: true},
	{Nr: 196, Name: "flistxattr", Custom: retBounded(1, 2, 0), Buffered: true},
	{Nr: 197, Name: "removexattr", Buffered: true},
	{Nr: 198, Name: "lremovexattr", Buffered: true},
	{Nr: 199, Name: "fremovexattr", Buffered: true},
	{Nr: 200, Name: "tkill"},
	{Nr: 201, Name: "time", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeLong}}}},
	{Nr: 202, Name: "futex", MayBlock: true, Custom: customFutex, Buffered: true},
	{Nr: 203, Name: "sched_setaffinity", Entry: entrySchedSetaffinity},
	{Nr: 204, Name: "sched_getaffinity", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeRet}}}},
	{Nr: 205, Name: "set_thread_area", Unsupported: reasonThreadArea},
	// Linux AIO completes asynchronously into user memory; as rr does,
	// the calls fail with ENOSYS (a kernel without CONFIG_AIO) and
	// programs fall back to synchronous I/O.
	{Nr: 206, Name: "io_setup", Entry: fail(errENOSYS)},
	{Nr: 207, Name: "io_destroy", Entry: fail(errENOSYS)},
	{Nr: 208, Name: "io_getevents", Entry: fail(errENOSYS), MayBlock: true},
	{Nr: 209, Name: "io_submit", Entry: fail(errENOSYS)},
	{Nr: 210, Name: "io_cancel", Entry: fail(errENOSYS)},
	{Nr: 211, Name: "get_thread_area", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeUserDesc}}}},
	{Nr: 212, Name: "lookup_dcookie", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet}}}},
	{Nr: 213, Name: "epoll_create"},
	{Nr: 214, Name: "epoll_ctl_old"},  // never implemented on x86-64
	{Nr: 215, Name: "epoll_wait_old"}, // never implemented on x86-64
	{Nr: 216, Name: "remap_file_pages", Unsupported: reasonRemap},
	{Nr: 217, Name: "getdents64", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet}}}, Buffered: true},
	{Nr: 218, Name: "set_tid_address", Replay: Execute},
	{Nr: 219, Name: "restart_syscall", MayBlock: true}, // resumes an interrupted sleep
	{Nr: 220, Name: "semtimedop", MayBlock: true},
	{Nr: 221, Name: "fadvise64", Buffered: true},
	{Nr: 222, Name: "timer_create", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeFixed, N: sizeInt}}}},
	{Nr: 223, Name: "timer_settime", Out: []OutParam{{Arg: 3, Size: Size{Kind: SizeFixed, N: sizeItimerspec}}}},
	{Nr: 224, Name: "timer_gettime", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeItimerspec}}}},
	{Nr: 225, Name: "timer_getoverrun"},
	{Nr: 226, Name: "timer_delete"},
	{Nr: 227, Name: "clock_settime"},
	{Nr: 228, Name: "clock_gettime", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeTimespec}}}, Buffered: true},
	{Nr: 229, Name: "clock_getres", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeTimespec}}}},
	{Nr: 230, Name: "clock_nanosleep", Out: []OutParam{{Arg: 3, Size: Size{Kind: SizeFixed, N: sizeTimespec}, OnError: true}}, MayBlock: true},
	{Nr: 231, Name: "exit_group", Replay: Execute},
	{Nr: 232, Name: "epoll_wait", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet, N: sizeEpollEvent}}}, MayBlock: true, Buffered: true},
	{Nr: 233, Name: "epoll_ctl", Buffered: true},
	{Nr: 234, Name: "tgkill"},
	{Nr: 235, Name: "utimes"},
	{Nr: 236, Name: "vserver"}, // never implemented
	{Nr: 237, Name: "mbind"},
	{Nr: 238, Name: "set_mempolicy"},
	{Nr: 239, Name: "get_mempolicy", Custom: customGetMempolicy},
	{Nr: 240, Name: "mq_open"},
	{Nr: 241, Name: "mq_unlink"},
	{Nr: 242, Name: "mq_timedsend", MayBlock: true},
	{Nr: 243, Name: "mq_timedreceive", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet}}, {Arg: 3, Size: Size{Kind: SizeFixed, N: sizeInt}}}, MayBlock: true},
	{Nr: 244, Name: "mq_notify"},
	{Nr: 245, Name: "mq_getsetattr", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeFixed, N: sizeMqAttr}}}},
	{Nr: 246, Name: "kexec_load", Unsupported: reasonKexec},
	// waitid fills in the siginfo's first fields (zeros) even when it
	// fails (EBADF for a bad pidfd, ECHILD, EINVAL...).
	{Nr: 247, Name: "waitid", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeFixed, N: sizeSiginfo}, OnError: true}, {Arg: 4, Size: Size{Kind: SizeFixed, N: sizeRusage}}}, MayBlock: true},
	{Nr: 248, Name: "add_key"},
	{Nr: 249, Name: "request_key"},
	{Nr: 250, Name: "keyctl", Custom: customKeyctl},
	{Nr: 251, Name: "ioprio_set"},
	{Nr: 252, Name: "ioprio_get"},
	{Nr: 253, Name: "inotify_init"},
	{Nr: 254, Name: "inotify_add_watch"},
	{Nr: 255, Name: "inotify_rm_watch"},
	{Nr: 256, Name: "migrate_pages"},
	{Nr: 257, Name: "openat", MayBlock: true, Buffered: true},
	{Nr: 258, Name: "mkdirat", Buffered: true},
	{Nr: 259, Name: "mknodat"},
	{Nr: 260, Name: "fchownat", Buffered: true},
	{Nr: 261, Name: "futimesat"},
	{Nr: 262, Name: "newfstatat", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeFixed, N: sizeStat}}}, Buffered: true},
	{Nr: 263, Name: "unlinkat", Buffered: true},
	{Nr: 264, Name: "renameat", Buffered: true},
	{Nr: 265, Name: "linkat", Buffered: true},
	{Nr: 266, Name: "symlinkat", Buffered: true},
	{Nr: 267, Name: "readlinkat", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeRet}}}, Buffered: true},
	{Nr: 268, Name: "fchmodat", Buffered: true},
	{Nr: 269, Name: "faccessat", Buffered: true},
	{Nr: 270, Name: "pselect6", Custom: selectRegions, MayBlock: true},
	{Nr: 271, Name: "ppoll", Custom: customPpoll, MayBlock: true},
	{Nr: 272, Name: "unshare"},
	{Nr: 273, Name: "set_robust_list"},
	{Nr: 274, Name: "get_robust_list", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeLong}}, {Arg: 2, Size: Size{Kind: SizeFixed, N: sizeLong}}}},
	{Nr: 275, Name: "splice", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeLong}}, {Arg: 3, Size: Size{Kind: SizeFixed, N: sizeLong}}}, MayBlock: true},
	{Nr: 276, Name: "tee", MayBlock: true},
	{Nr: 277, Name: "sync_file_range"},
	// vmsplice from a pipe copies into the iovecs; towards a pipe it only
	// reads them, and recording them then is harmless.
	{Nr: 278, Name: "vmsplice", Custom: iovFromRet(1, 2), MayBlock: true},
	{Nr: 279, Name: "move_pages", Out: []OutParam{{Arg: 4, Size: Size{Kind: SizeArg, Arg: 1, N: sizeInt}}}},
	{Nr: 280, Name: "utimensat", Buffered: true},
	{Nr: 281, Name: "epoll_pwait", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet, N: sizeEpollEvent}}}, MayBlock: true, Buffered: true},
	{Nr: 282, Name: "signalfd"},
	{Nr: 283, Name: "timerfd_create"},
	{Nr: 284, Name: "eventfd"},
	{Nr: 285, Name: "fallocate"},
	{Nr: 286, Name: "timerfd_settime", Out: []OutParam{{Arg: 3, Size: Size{Kind: SizeFixed, N: sizeItimerspec}}}},
	{Nr: 287, Name: "timerfd_gettime", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeItimerspec}}}},
	{Nr: 288, Name: "accept4", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeArgPtr, Arg: 2}}, {Arg: 2, Size: Size{Kind: SizeFixed, N: sizeInt}}}, MayBlock: true},
	{Nr: 289, Name: "signalfd4"},
	{Nr: 290, Name: "eventfd2"},
	{Nr: 291, Name: "epoll_create1"},
	{Nr: 292, Name: "dup3"},
	{Nr: 293, Name: "pipe2", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: 2 * sizeInt}}}},
	{Nr: 294, Name: "inotify_init1"},
	{Nr: 295, Name: "preadv", Custom: iovFromRet(1, 2), MayBlock: true},
	{Nr: 296, Name: "pwritev", MayBlock: true},
	{Nr: 297, Name: "rt_tgsigqueueinfo"},
	// perf events count what replay cannot reproduce and share a ring
	// buffer with the kernel: opening one fails with EACCES, as under a
	// restrictive perf_event_paranoid.
	// Runs at record (as with rr); replay emulates the descriptor's
	// reads and ioctls (ioctl.go), and the recorder refuses to map it.
	{Nr: 298, Name: "perf_event_open"},
	{Nr: 299, Name: "recvmmsg", Custom: customRecvmmsg, MayBlock: true},
	{Nr: 300, Name: "fanotify_init"},
	{Nr: 301, Name: "fanotify_mark"},
	{Nr: 302, Name: "prlimit64", Out: []OutParam{{Arg: 3, Size: Size{Kind: SizeFixed, N: sizeRlimit}}}, Replay: Execute, ExecuteIf: prlimitShapesMemory, Buffered: true}, // queries only (stub_amd64.S)
	{Nr: 303, Name: "name_to_handle_at", Custom: customNameToHandleAt},
	{Nr: 304, Name: "open_by_handle_at", MayBlock: true},
	{Nr: 305, Name: "clock_adjtime", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeTimex}}}},
	{Nr: 306, Name: "syncfs"},
	{Nr: 307, Name: "sendmmsg", Custom: customSendmmsg, MayBlock: true},
	{Nr: 308, Name: "setns"},
	{Nr: 309, Name: "getcpu", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeFixed, N: sizeInt}}, {Arg: 1, Size: Size{Kind: SizeFixed, N: sizeInt}}}},
	{Nr: 310, Name: "process_vm_readv", Custom: iovFromRet(1, 2)},
	// process_vm_writev into the caller's own address space is recorded
	// like a read (the recorder refuses other targets).
	{Nr: 311, Name: "process_vm_writev", Custom: iovFromRet(3, 4)},
	{Nr: 312, Name: "kcmp"},
	{Nr: 313, Name: "finit_module", Unsupported: reasonModule},
	{Nr: 314, Name: "sched_setattr"},
	{Nr: 315, Name: "sched_getattr", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeArg, Arg: 2}}}},
	{Nr: 316, Name: "renameat2", Buffered: true},
	{Nr: 317, Name: "seccomp", Custom: customSeccomp},
	{Nr: 318, Name: "getrandom", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeRet}}}, Buffered: true},
	{Nr: 319, Name: "memfd_create"},
	{Nr: 320, Name: "kexec_file_load", Unsupported: reasonKexec},
	// eBPF programs and maps run in and share memory with the kernel: bpf
	// fails with ENOSYS (a kernel without CONFIG_BPF_SYSCALL).
	{Nr: 321, Name: "bpf", Entry: fail(errENOSYS)},
	{Nr: 322, Name: "execveat", Replay: Execute},
	// userfaultfd resolves page faults asynchronously: it fails with
	// ENOSYS, as rr makes it.
	{Nr: 323, Name: "userfaultfd", Entry: fail(errENOSYS)},
	{Nr: 324, Name: "membarrier"},
	{Nr: 325, Name: "mlock2", Replay: Execute},
	{Nr: 326, Name: "copy_file_range", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeFixed, N: sizeLong}}, {Arg: 3, Size: Size{Kind: SizeFixed, N: sizeLong}}}, Buffered: true},
	{Nr: 327, Name: "preadv2", Custom: iovFromRet(1, 2), MayBlock: true},
	{Nr: 328, Name: "pwritev2", MayBlock: true},
	// Protection-key faults cannot be reproduced, so no key is ever
	// handed out: pkey_alloc fails with ENOSPC, as on a CPU without
	// protection keys, and pkey_mprotect can only be given the default
	// key (or -1), which makes it an mprotect.
	{Nr: 329, Name: "pkey_mprotect", Replay: Execute},
	{Nr: 330, Name: "pkey_alloc", Entry: fail(errENOSPC)},
	{Nr: 331, Name: "pkey_free"},
	{Nr: 332, Name: "statx", Out: []OutParam{{Arg: 4, Size: Size{Kind: SizeFixed, N: sizeStatx}}}, Buffered: true},
	{Nr: 333, Name: "io_pgetevents", Entry: fail(errENOSYS), MayBlock: true},
	// rseq registers an area the kernel rewrites on every preemption and
	// migration, outside any system call. Emulating it means the replayed
	// kernel never touches the area; the recorder must keep rseq from
	// taking effect: it fails with ENOSYS, which glibc tolerates.
	{Nr: 334, Name: "rseq", Entry: fail(errENOSYS)},
	{Nr: 335, Name: "uretprobe", Unsupported: reasonUprobe},
	{Nr: 336, Name: "uprobe", Unsupported: reasonUprobe},
	{Nr: 424, Name: "pidfd_send_signal"},
	// io_uring shares memory with the kernel asynchronously: as rr does,
	// the calls fail with ENOSYS and programs fall back.
	{Nr: 425, Name: "io_uring_setup", Entry: fail(errENOSYS)},
	{Nr: 426, Name: "io_uring_enter", Entry: fail(errENOSYS)},
	{Nr: 427, Name: "io_uring_register", Entry: fail(errENOSYS)},
	{Nr: 428, Name: "open_tree"},
	{Nr: 429, Name: "move_mount"},
	{Nr: 430, Name: "fsopen"},
	{Nr: 431, Name: "fsconfig"},
	{Nr: 432, Name: "fsmount"},
	{Nr: 433, Name: "fspick"},
	{Nr: 434, Name: "pidfd_open"},
	{Nr: 435, Name: "clone3", Custom: customClone3, Replay: Execute},
	{Nr: 436, Name: "close_range"},
	{Nr: 437, Name: "openat2", MayBlock: true},
	{Nr: 438, Name: "pidfd_getfd"},
	{Nr: 439, Name: "faccessat2", Buffered: true},
	{Nr: 440, Name: "process_madvise"},
	{Nr: 441, Name: "epoll_pwait2", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet, N: sizeEpollEvent}}}, MayBlock: true},
	{Nr: 442, Name: "mount_setattr"},
	{Nr: 443, Name: "quotactl_fd", Custom: quotaRegions(1)},
	{Nr: 444, Name: "landlock_create_ruleset"},
	{Nr: 445, Name: "landlock_add_rule"},
	{Nr: 446, Name: "landlock_restrict_self"},
	{Nr: 447, Name: "memfd_secret", Unsupported: reasonMemfdSecret},
	{Nr: 448, Name: "process_mrelease"},
	{Nr: 449, Name: "futex_waitv", MayBlock: true},
	{Nr: 450, Name: "set_mempolicy_home_node"},
	{Nr: 451, Name: "cachestat", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeFixed, N: sizeCachestat}}}},
	{Nr: 452, Name: "fchmodat2"},
	{Nr: 453, Name: "map_shadow_stack", Unsupported: reasonShadowStack},
	{Nr: 454, Name: "futex_wake"},
	{Nr: 455, Name: "futex_wait", MayBlock: true},
	{Nr: 456, Name: "futex_requeue"},
	{Nr: 457, Name: "statmount", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeArg, Arg: 2}}}},
	{Nr: 458, Name: "listmount", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet, N: sizeLong}}}},
	// lsm_get_self_attr and lsm_list_modules store the needed size on
	// E2BIG as well.
	{Nr: 459, Name: "lsm_get_self_attr", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeArgPtr, Arg: 2}}, {Arg: 2, Size: Size{Kind: SizeFixed, N: sizeInt}, OnError: true}}},
	{Nr: 460, Name: "lsm_set_self_attr"},
	{Nr: 461, Name: "lsm_list_modules", Out: []OutParam{{Arg: 0, Size: Size{Kind: SizeArgPtr, Arg: 1}}, {Arg: 1, Size: Size{Kind: SizeFixed, N: sizeInt}, OnError: true}}},
	// mseal is emulated: replay does not seal, which only matters for a
	// program that relies on a later munmap/mprotect failing.
	{Nr: 462, Name: "mseal"},
	{Nr: 463, Name: "setxattrat"},
	{Nr: 464, Name: "getxattrat", Custom: customGetxattrat},
	{Nr: 465, Name: "listxattrat", Custom: retBounded(3, 4, 0)},
	{Nr: 466, Name: "removexattrat"},
	{Nr: 467, Name: "open_tree_attr"},
	{Nr: 468, Name: "file_getattr", Out: []OutParam{{Arg: 2, Size: Size{Kind: SizeArg, Arg: 3}}}},
	{Nr: 469, Name: "file_setattr"},
	{Nr: 470, Name: "listns", Out: []OutParam{{Arg: 1, Size: Size{Kind: SizeRet, N: sizeLong}}}},
	{Nr: 471, Name: "rseq_slice_yield"},
}

var (
	byNr   [MaxNr + 1]*Syscall
	byName = make(map[string]*Syscall, len(syscallList))
)

func init() {
	for i := range syscallList {
		s := &syscallList[i]
		byNr[s.Nr] = s
		byName[s.Name] = s
	}
}

// Nr returns the system call number the kernel dispatches on for an
// orig_rax value: entry_SYSCALL_64 passes the low 32 bits, sign-extended,
// so syscall(0x100000027) is getpid and syscall(-1) is -1.
func Nr(origRax uint64) int { return int(int32(origRax)) }

// X32Bit marks x32-ABI system call numbers (__X32_SYSCALL_BIT).
const X32Bit = 0x40000000

// Unknown is the reason a call whose number is not in the table failed
// the recording: the kernel did not answer ENOSYS, so it did something
// gorr cannot describe (a newer kernel's call, or x32 when the kernel
// enables that ABI).
func Unknown(nr int, ret int64) string {
	what := "unknown system call number"
	if nr&X32Bit != 0 && nr > 0 {
		what = "x32 system call"
	}
	return fmt.Sprintf("%s %d returned %d instead of ENOSYS; gorr cannot tell what it changed", what, nr, ret)
}

// Lookup returns the description of system call nr, or nil if nr is not
// an x86-64 system call gorr knows. The result is shared: do not modify it.
func Lookup(nr int) *Syscall {
	if nr < 0 || nr > MaxNr {
		return nil
	}
	return byNr[nr]
}

// Name returns the name of system call nr ("read"), or "syscall_N" when
// the number is unknown.
func Name(nr int) string {
	if s := Lookup(nr); s != nil {
		return s.Name
	}
	return "syscall_" + strconv.Itoa(nr)
}

// ByName returns the system call with this name ("openat"), or nil.
func ByName(name string) *Syscall {
	return byName[name]
}

// All returns every known system call in increasing number order. The
// entries are shared: do not modify them.
func All() []*Syscall {
	out := make([]*Syscall, len(syscallList))
	for i := range syscallList {
		out[i] = &syscallList[i]
	}
	return out
}
