package linux

// The table (syscalls.go) spells its output parameters as literals, not
// through constructor functions, so that the compiler lays it out as
// static data: built by calls, its initialization was 16 KB of code run
// at every gorr start (0.3-0.4 ms here). The forms:
//
//	{Arg: a, Size: Size{Kind: SizeFixed, N: n}}     n bytes through argument a
//	{Arg: a, Size: Size{Kind: SizeArg, Arg: s}}     up to argument s's value bytes
//	{Arg: a, Size: Size{Kind: SizeArg, Arg: s, N: n}} argument s counts n-byte elements
//	{Arg: a, Size: Size{Kind: SizeArgPtr, Arg: l}}  the 32-bit length argument l points to
//	{Arg: a, Size: Size{Kind: SizeRet}}             the return value in bytes
//	{Arg: a, Size: Size{Kind: SizeRet, N: n}}       the return value in n-byte elements
//
// with OnError: true for what the kernel writes even when the call fails
// (nanosleep's remaining time on EINTR).

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
