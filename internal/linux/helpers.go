package linux

// Constructors that keep the syscall table compact and readable.

// outs gathers output parameters.
func outs(p ...OutParam) []OutParam { return p }

// fixed: the kernel writes n bytes through argument arg.
func fixed(arg int, n uint64) OutParam {
	return OutParam{Arg: arg, Size: Size{Kind: SizeFixed, N: n}}
}

// argSized: the kernel writes up to the value of argument sizeArg bytes
// through argument arg.
func argSized(arg, sizeArg int) OutParam {
	return OutParam{Arg: arg, Size: Size{Kind: SizeArg, Arg: sizeArg}}
}

// argSizedN: argument sizeArg counts elements of n bytes each.
func argSizedN(arg, sizeArg int, n uint64) OutParam {
	return OutParam{Arg: arg, Size: Size{Kind: SizeArg, Arg: sizeArg, N: n}}
}

// argPtrSized: the size is the 32-bit value-result length that argument
// lenArg points to, as left by the kernel (socklen_t *addrlen).
func argPtrSized(arg, lenArg int) OutParam {
	return OutParam{Arg: arg, Size: Size{Kind: SizeArgPtr, Arg: lenArg}}
}

// fromRet: the return value is the number of bytes written through arg.
func fromRet(arg int) OutParam {
	return OutParam{Arg: arg, Size: Size{Kind: SizeRet}}
}

// fromRetN: the return value counts elements of n bytes each.
func fromRetN(arg int, n uint64) OutParam {
	return OutParam{Arg: arg, Size: Size{Kind: SizeRet, N: n}}
}

// onError marks p as written even when the call fails.
func onError(p OutParam) OutParam {
	p.OnError = true
	return p
}

// Sizes of x86-64 kernel structures written by system calls.
const (
	sizeInt          = 4
	sizeLong         = 8
	sizeStat         = 144 // struct stat
	sizeStatx        = 256 // struct statx
	sizeStatfs       = 120 // struct statfs
	sizeTimespec     = 16  // struct __kernel_timespec
	sizeTimeval      = 16  // struct __kernel_old_timeval
	sizeTimezone     = 8   // struct timezone
	sizeItimerspec   = 32  // struct __kernel_itimerspec
	sizeItimerval    = 32  // struct __kernel_old_itimerval
	sizeRusage       = 144 // struct rusage
	sizeRlimit       = 16  // struct rlimit64
	sizeUtsname      = 390 // struct new_utsname
	sizeSysinfo      = 112 // struct sysinfo
	sizeSiginfo      = 128 // siginfo_t
	sizeSigaction    = 32  // kernel struct sigaction: handler, flags, restorer, mask
	sizeStackT       = 24  // stack_t
	sizeTms          = 32  // struct tms
	sizeTimex        = 208 // struct timex
	sizeUstat        = 32  // struct ustat
	sizeCapData      = 24  // two struct __user_cap_data_struct (v2/v3)
	sizeEpollEvent   = 12  // struct epoll_event (packed)
	sizePollfd       = 8   // struct pollfd
	sizeMqAttr       = 64  // struct mq_attr
	sizeUserDesc     = 16  // struct user_desc
	sizeCachestat    = 40  // struct cachestat
	sizeFlock        = 32  // struct flock
	sizeFOwnerEx     = 8   // struct f_owner_ex
	sizeShmidDs      = 112 // struct shmid64_ds
	sizeShminfo      = 72  // struct shminfo64
	sizeShmInfo      = 48  // struct shm_info
	sizeMsqidDs      = 120 // struct msqid64_ds
	sizeMsginfo      = 32  // struct msginfo
	sizeSemidDs      = 104 // struct semid64_ds
	sizeSeminfo      = 40  // struct seminfo
	sizeMsghdr       = 56  // struct user_msghdr
	sizeMmsghdr      = 64  // struct mmsghdr
	sizeSockaddrMax  = 128 // struct sockaddr_storage
	sizeFileHandleHd = 8   // struct file_handle header: handle_bytes, handle_type
	maxHandleSize    = 128 // MAX_HANDLE_SZ
)
