# The code gorr maps into every recorded process at syscallbuf.Base
# (see syscallbuf.go). Assembled by gen.sh into stub_gen.go; not part of
# the Go build. AT&T syntax, position dependent (fixed address).
#
# entry: called from a trampoline with eax = system-call number and the
# arguments in rdi, rsi, rdx, r10, r8, r9, like a syscall instruction.
# Returns the result in rax; clobbers rcx and r11 only (as syscall does).
# A call in the buffered set whose output fits is made from sc_insn,
# which gorr's seccomp filter lets through without a ptrace stop, and is
# appended to the buffer as a record (layout in syscallbuf.go). Anything
# else is made from traced_insn, which stops as usual.

	.set HDR, 0x70010000
	.set HDRLEN, 512
	# The buffer's last VSTACKLEN bytes are not records: the stack the
	# stub calls the vDSO's clock_gettime on (see vclock_call).
	.set VSTACKLEN, 1024
	.set VSTACK, HDR + 0x100000
	.set CAP, 0x100000 - HDRLEN - VSTACKLEN
	# Where the stub's own fstatfs writes (in the header, after its fields).
	.set SCRATCH, HDR + 128
	.set PROC_SUPER_MAGIC, 0x9fa0
	.set MAXOUT, 0x40000
	# A call probed first without blocking (see probed): its number, and
	# the argument the probe replaced, in the header; and a zero
	# timespec (header bytes nothing writes).
	.set PROBE_NR, HDR + 36
	.set PROBE_ARG, HDR + 40
	.set ZERO_TS, HDR + 48
	# A bit per descriptor 0-511 whose read or write blocked in the
	# buffer (see desched_entry): its reads and writes are traced, but
	# every 64th such call (BLOCKED_N counts them, for all descriptors)
	# clears the bit and is buffered again (it is marked again if it
	# blocks), and a close through the stub clears it.
	.set BLOCKED, HDR + 64
	.set NBLOCKED, 512
	.set BLOCKED_N, HDR + 248
	# Set by the recorder when the thread's timeslice is over (and by
	# the replayer before the call that took it): the next call through
	# the stub clears it and is traced, so that the recorder switches
	# threads at that system call instead of at an asynchronous point.
	# Replayed calls (replay_left > 0) come first.
	.set YIELD, HDR + 252
	# A bit per descriptor 0-2 whose writes are traced: set by the
	# recorder while the descriptor may be its own stdout or stderr
	# (whose output replay reproduces), cleared by the recorder when a
	# traced write shows it is not; a close through the stub sets it
	# (what the number is given next is not known).
	.set STDIO, HDR + 256
	# The lowest and the end of the ranges of the files mapped through
	# the buffer since the last traced call (0, 0 when none): see
	# mapped and max_range.
	.set PEND_LO, HDR + 264
	.set PEND_HI, HDR + 272
	# The address of the vDSO's own clock_gettime, made callable by the
	# recorder (its first instructions, displaced by the redirection,
	# then a jump back), or 0: see vclock_entry. In the code page, which
	# no checksum covers; the recorder writes it after the exec's
	# snapshot, so that replay never has it.
	.set VCLOCK, MAP_START + 0xff8
	# The clocks the vDSO reads without a system call (when the kernel's
	# clock source allows it at all, which the recorder checks):
	# REALTIME, MONOTONIC, MONOTONIC_RAW, REALTIME_COARSE,
	# MONOTONIC_COARSE, BOOTTIME, TAI.
	.set VCLOCK_IDS, 0x8f3
	# gorr's own mapping (Base, Base+Size): the memory calls the stub
	# makes must not touch it.
	# gorr's own call number for an rdtsc (see rdtsc_entry): above every
	# Linux number, so the kernel answers it with ENOSYS.
	.set RDTSC_NR, 1000
	.set MAP_START, 0x70000000
	# In a record placed in replay (at 128): make this call for real
	# (see replayed). syscallbuf.ExecMark.
	.set EXEC_MARK, 0x6b72616d63657865
	.set MAP_END, 0x70110000
	.text
	.globl entry
entry:
.Lentry:
	movabs $HDR, %r11
	cmpl $0, 252(%r11)
	# A thread stopped here with ZF clear, or from yield up to
	# traced_insn, has taken the yield although YIELD may still read 1
	# (internal/record takeYield).
	.globl yield_jcc
yield_jcc:
	jne yield
.Lno_yield:
	# A number with bits above 31 (from syscall(2)'s site, which passes
	# rax on) is traced: the entry's orig_rax would differ.
	mov %rax, %rcx
	shr $32, %rcx
	jnz traced
	cmpl $0, 4(%r11)
	jne traced
	cmpl $0, 16(%r11)
	jne traced
	movl $0, 36(%r11)
	cmp $0, %eax
	je max_read
	cmp $17, %eax
	je max_count
	cmp $217, %eax
	je max_count
	cmp $196, %eax
	je max_count
	cmp $193, %eax
	je max_r10
	cmp $191, %eax
	je max_r10
	cmp $192, %eax
	je max_r10
	cmp $267, %eax
	je max_r10
	cmp $194, %eax
	je max_count
	cmp $195, %eax
	je max_count
	cmp $89, %eax
	je max_count
	cmp $318, %eax
	je max_rsi
	cmp $5, %eax
	je max_stat
	cmp $138, %eax
	je max_statfs
	cmp $262, %eax
	je max_stat
	cmp $332, %eax
	je max_statx
	cmp $228, %eax
	je max_16
	cmp $96, %eax
	je max_tod
	cmp $1, %eax
	je max_write
	cmp $18, %eax
	je max_write
	cmp $3, %eax
	je max_close
	cmp $257, %eax
	je max_openat
	cmp $326, %eax
	je max_cfr
	cmp $16, %eax
	je max_ioctl
	cmp $13, %eax
	je max_sigaction
	cmp $202, %eax
	je max_futex
	cmp $72, %eax
	je max_fcntl
	cmp $233, %eax
	je max_0
	cmp $8, %eax
	je max_0
	cmp $190, %eax
	je max_0
	cmp $188, %eax
	je max_0
	cmp $189, %eax
	je max_0
	cmp $197, %eax
	je max_0
	cmp $198, %eax
	je max_0
	cmp $199, %eax
	je max_0
	cmp $83, %eax
	je max_0
	cmp $258, %eax
	je max_0
	cmp $84, %eax
	je max_0
	cmp $87, %eax
	je max_0
	cmp $263, %eax
	je max_0
	cmp $82, %eax
	je max_0
	cmp $264, %eax
	je max_0
	cmp $316, %eax
	je max_0
	cmp $86, %eax
	je max_0
	cmp $265, %eax
	je max_0
	cmp $88, %eax
	je max_0
	cmp $266, %eax
	je max_0
	cmp $90, %eax
	je max_0
	cmp $91, %eax
	je max_0
	cmp $268, %eax
	je max_0
	cmp $92, %eax
	je max_0
	cmp $93, %eax
	je max_0
	cmp $94, %eax
	je max_0
	cmp $260, %eax
	je max_0
	cmp $221, %eax
	je max_0
	cmp $280, %eax
	je max_0
	cmp $21, %eax
	je max_0
	cmp $269, %eax
	je max_0
	cmp $439, %eax
	je max_0
	cmp $39, %eax
	je max_0
	cmp $186, %eax
	je max_0
	cmp $110, %eax
	je max_0
	cmp $102, %eax
	je max_0
	cmp $104, %eax
	je max_0
	cmp $107, %eax
	je max_0
	cmp $108, %eax
	je max_0
	cmp $7, %eax
	je max_poll
	cmp $232, %eax
	je max_epoll
	cmp $281, %eax
	je max_epoll
	cmp $9, %eax
	je max_mmap
	cmp $10, %eax
	je max_mprotect
	cmp $11, %eax
	je max_unmap
	cmp $28, %eax
	je max_madvise
	cmp $12, %eax
	je max_0
	cmp $302, %eax
	je max_prlimit
	cmp $1000, %eax
	je max_0
	jmp traced
max_prlimit:
	# prlimit64 without a new limit (getrlimit): the old one (16 bytes
	# at r10) is the output. Setting a limit stays traced.
	test %rdx, %rdx
	jne traced
	xor %ecx, %ecx
	test %r10, %r10
	je check
	mov $16, %ecx
	jmp check
max_mmap:
	# Private memory, not executable, anonymous or of a file: replay
	# makes the call too, at the recorded address (internal/replay
	# prepare). The recorder captures a mapped file when it drains the
	# call (see mapped). Shared and executable mappings stay traced (the
	# recorder must see a shared file's writers, and scans executable
	# code).
	test $4, %dl
	jnz traced
	mov %r10d, %ecx
	and $0x2f, %ecx
	cmp $0x22, %ecx
	je 1f
	cmp $0x02, %ecx
	jne traced
	test %r8d, %r8d
	js traced
1:
	# Placed by the kernel, it cannot land on gorr's mapping.
	test $0x100010, %r10d
	jz max_0
	jmp max_unmap
max_mprotect:
	# Adding PROT_EXEC stays traced (the recorder must scan the code).
	test $4, %dl
	jnz traced
	jmp max_range
max_madvise:
	# MADV_FREE stays traced: the recorder answers it without the kernel.
	cmp $8, %edx
	je traced
max_unmap:
	# A range that munmap or a MAP_FIXED mmap replaces must not reach a
	# file mapped through the buffer since the last traced call
	# (PEND_LO..PEND_HI): the recorder finds that file in the process's
	# mappings when it drains the call, at the thread's next stop, so a
	# call that unmaps it is traced (that stop comes first). mprotect
	# and madvise leave the file mapped. With no such file PEND_HI is 0
	# and no range is below it.
	mov PEND_HI, %rcx
	cmp %rcx, %rdi
	jae 1f
	mov %rdi, %rcx
	add %rsi, %rcx
	jc traced
	cmp PEND_LO, %rcx
	ja traced
1:
max_range:
	# The range rdi..rdi+rsi must not reach gorr's own mapping.
	cmp $MAP_END, %rdi
	jae max_0
	mov %rdi, %rcx
	add %rsi, %rcx
	jc traced
	cmp $MAP_START, %rcx
	jbe max_0
	jmp traced
max_read:
	cmp $NBLOCKED, %edi
	jae max_count
	bt %edi, BLOCKED
	jnc max_count
	incl BLOCKED_N
	testl $63, BLOCKED_N
	jnz traced
	btr %edi, BLOCKED
max_count:
	mov %rdx, %rcx
	jmp check
max_r10:
	mov %r10, %rcx
	jmp check
max_rsi:
	mov %rsi, %rcx
	jmp check
max_stat:
	mov $144, %ecx
	jmp check
max_statfs:
	mov $120, %ecx
	jmp check
max_statx:
	mov $256, %ecx
	jmp check
max_16:
	mov $16, %ecx
	jmp check
max_tod:
	test %rsi, %rsi
	jne traced
	mov $16, %ecx
	jmp check
max_write:
	# write and pwrite64 of fds 0-2 stay traced while their STDIO bit
	# is set: the recorder must see at the call whether they are its
	# own stdout/stderr.
	cmp $2, %edi
	ja 1f
	bt %edi, STDIO
	jc traced
1:
	cmp $NBLOCKED, %edi
	jae max_nowrites
	bt %edi, BLOCKED
	jnc max_nowrites
	incl BLOCKED_N
	testl $63, BLOCKED_N
	jnz traced
	btr %edi, BLOCKED
max_nowrites:
	# Calls that change a file's data stay traced while the process maps
	# a file MAP_SHARED or has /proc/PID/mem open (the header's nowrites):
	# the recorder captures what such a write changes in memory.
	cmpl $0, 20(%r11)
	jne traced
	jmp max_0
max_close:
	# A close of fds 0-2 sets their STDIO bit.
	cmp $2, %edi
	ja 1f
	bts %edi, STDIO
1:
	cmp $NBLOCKED, %edi
	jae max_0
	btr %edi, BLOCKED
	jmp max_0
max_openat:
	# A writable open is checked after the call (see opened).
	jmp max_0
max_cfr:
	# copy_file_range without offset pointers (nothing written to memory).
	test %rsi, %rsi
	jne traced
	test %r10, %r10
	jne traced
	jmp max_nowrites
max_futex:
	# FUTEX_WAKE (with or without FUTEX_PRIVATE_FLAG and
	# FUTEX_CLOCK_REALTIME): it writes nothing and never blocks.
	mov %esi, %ecx
	and $~384, %ecx
	cmp $1, %ecx
	je max_0
	# FUTEX_WAIT and FUTEX_WAIT_BITSET are probed with a zero timeout
	# (relative or absolute: expired either way): EAGAIN (the word
	# changed) is the answer; ETIMEDOUT means the call would block.
	cmp $0, %ecx
	je 1f
	cmp $9, %ecx
	jne traced
1:
	mov %r10, PROBE_ARG
	movl %eax, PROBE_NR
	mov $ZERO_TS, %r10d
	jmp max_0
max_poll:
	# poll writes every entry's revents (nfds * 8 bytes) when it
	# succeeds. With a timeout it is probed with timeout 0.
	mov %esi, %ecx
	shl $3, %rcx
	cmp $MAXOUT, %rcx
	ja traced
	test %edx, %edx
	je check
	mov %rdx, PROBE_ARG
	movl %eax, PROBE_NR
	mov $0, %edx
	jmp check
max_epoll:
	# epoll_wait and epoll_pwait write up to maxevents 12-byte events;
	# with a timeout they are probed with timeout 0.
	movslq %edx, %rcx
	imul $12, %rcx, %rcx
	cmp $MAXOUT, %rcx
	ja traced
	test %r10d, %r10d
	je check
	mov %r10, PROBE_ARG
	movl %eax, PROBE_NR
	mov $0, %r10d
	jmp check
max_fcntl:
	# F_GETFD, F_SETFD, F_GETFL and F_SETFL only (the kernel takes the
	# command's low 32 bits): they write no memory and never block. Go
	# makes F_GETFL and F_SETFL at every os.Open.
	lea -1(%rsi), %ecx
	cmp $3, %ecx
	ja traced
	jmp max_0
max_ioctl:
	# TCGETS (isatty and tcgetattr: a 36-byte termios when it succeeds)
	# and FICLONE (no output; it changes the destination file's data).
	cmp $0x5401, %rsi
	je 1f
	cmp $0x40049409, %rsi
	jne traced
	jmp max_nowrites
1:
	mov $36, %ecx
	jmp check
max_sigaction:
	# With the kernel's 8-byte sigset: the old action (32 bytes) is the
	# only output. A new action needs no stop either: the recorder reads
	# dispositions from /proc when a signal comes, and replay does not
	# make the call (it applies the result). Python asks for every
	# signal's action at start-up, Go's runtime asks for and sets each.
	cmp $8, %r10
	jne traced
	mov $32, %ecx
	jmp check
max_0:
	xor %ecx, %ecx
check:
	cmp $MAXOUT, %rcx
	ja traced
	add $151, %rcx
	movl (%r11), %r11d
	add %r11, %rcx
	cmp $CAP, %rcx
	ja traced_reset
	movabs $HDR, %r11
	movl $1, 4(%r11)
	movl $0, 8(%r11)
	movl (%r11), %ecx
	lea HDRLEN(%r11,%rcx), %r11
	movl %eax, 4(%r11)
	mov %rdi, 16(%r11)
	mov %rsi, 24(%r11)
	mov %rdx, 32(%r11)
	mov %r10, 40(%r11)
	mov %r8, 48(%r11)
	mov %r9, 56(%r11)
	mov %rbx, 64(%r11)
	mov %rbp, 72(%r11)
	mov %r12, 80(%r11)
	mov %r13, 88(%r11)
	mov %r14, 96(%r11)
	mov %r15, 104(%r11)
	mov %rsp, 112(%r11)
	pushfq
	popq 120(%r11)
	# In replay the replayer may have put the records of the calls to
	# come in the buffer (replay_left > 0, see replayed). Neither movabs,
	# mov nor jrcxz changes the flags the record (and a traced call's
	# entry) has.
	movabs $HDR, %rcx
	movl 24(%rcx), %ecx
	jrcxz .Lrecorded
	jmp replayed
.Lvclock:
	jmp vclock_call
.Lrecorded:
	# A clock_gettime that came through vclock_entry (its return address
	# on top of the stack) reads the vDSO instead of making the call;
	# lea and jrcxz keep the flags too.
	mov (%rsp), %rcx
	lea -(MAP_START + vclock_ret - entry)(%rcx), %rcx
	jrcxz .Lvclock
	.globl sc_insn
sc_insn:
.Lsc_insn:
	syscall
	.globl sc_ret
sc_ret:
.Lsc_ret:
	movabs $HDR, %r11
	cmpl $0, 8(%r11)
	jne unlock
	push %rdi
	push %rsi
	push %rdx
	movl (%r11), %ecx
	lea HDRLEN(%r11,%rcx), %r11
	mov %rax, 8(%r11)
	xor %ecx, %ecx
	xor %esi, %esi
	movl 4(%r11), %edi
	mov %edi, %edx
	cmp $RDTSC_NR, %edi
	je out_rdtsc
	test %rax, %rax
	js copy
	cmp $7, %edi
	je out_poll
	cmp $232, %edi
	je out_epoll
	cmp $281, %edi
	je out_epoll
	cmp $0, %edi
	je out_count
	cmp $17, %edi
	je out_count
	cmp $217, %edi
	je out_count
	cmp $196, %edi
	je out_listxattr
	cmp $193, %edi
	je out_getxattr
	cmp $191, %edi
	je out_getxattr
	cmp $192, %edi
	je out_getxattr
	cmp $267, %edi
	je out_getxattr
	cmp $194, %edi
	je out_listxattr
	cmp $195, %edi
	je out_listxattr
	cmp $89, %edi
	je out_count
	cmp $318, %edi
	je out_getrandom
	test %rax, %rax
	jne copy
	cmp $5, %edi
	je out_fstat
	cmp $138, %edi
	je out_fstatfs
	cmp $262, %edi
	je out_fstatat
	cmp $332, %edi
	je out_statx
	cmp $228, %edi
	je out_clock
	cmp $96, %edi
	je out_tod
	cmp $16, %edi
	je out_ioctl
	cmp $13, %edi
	je out_sigaction
	cmp $302, %edi
	je out_prlimit
	jmp copy
out_rdtsc:
	# gorr's rdtsc call: the kernel knew no such number and answered
	# ENOSYS; the counter is read here and is the call's result. In
	# replay the result is the recorded count, never -ENOSYS.
	cmp $-38, %rax
	jne copy
	.globl rdtsc_insn
rdtsc_insn:
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, 8(%r11)
	mov %edi, %edx
	jmp copy
out_count:
	mov 24(%r11), %rsi
	mov %rax, %rcx
	jmp copy
out_poll:
	mov 16(%r11), %rsi
	movl 24(%r11), %ecx
	shl $3, %rcx
	jmp copy
out_epoll:
	mov 24(%r11), %rsi
	imul $12, %rax, %rcx
	jmp copy
out_listxattr:
	# With size 0 the call only returns the size it needs (list and size
	# are readlink's buffer and size too, which out_count copies).
	cmpq $0, 32(%r11)
	je copy
	jmp out_count
out_getxattr:
	# (And readlinkat: its buffer and size are in the same registers; a
	# zero size fails with EINVAL.)
	cmpq $0, 40(%r11)
	je copy
	mov 32(%r11), %rsi
	mov %rax, %rcx
	jmp copy
out_fstat:
	mov 24(%r11), %rsi
	mov $144, %ecx
	jmp copy
out_getrandom:
	mov 16(%r11), %rsi
	mov %rax, %rcx
	jmp copy
out_fstatfs:
	mov 24(%r11), %rsi
	mov $120, %ecx
	jmp copy
out_fstatat:
	mov 32(%r11), %rsi
	mov $144, %ecx
	jmp copy
out_statx:
	mov 48(%r11), %rsi
	mov $256, %ecx
	jmp copy
out_clock:
	mov 24(%r11), %rsi
	mov $16, %ecx
	jmp copy
out_tod:
	mov 16(%r11), %rsi
	test %rsi, %rsi
	je copy
	mov $16, %ecx
out_ioctl:
	# TCGETS (FICLONE writes nothing).
	cmpq $0x5401, 24(%r11)
	jne copy
	mov 32(%r11), %rsi
	mov $36, %ecx
	jmp copy
out_sigaction:
	mov 32(%r11), %rsi
	test %rsi, %rsi
	je copy
	mov $32, %ecx
	jmp copy
out_prlimit:
	mov 40(%r11), %rsi
	test %rsi, %rsi
	je copy
	mov $16, %ecx
copy:
	mov %rsi, 128(%r11)
	mov %rcx, 136(%r11)
	lea 144(%r11), %rdi
	cld
	# A replayed call (replaying set) copies the other way: from the
	# record the replayer wrote to where the kernel wrote in the
	# recording.
	cmpl $0, HDR+28
	je 1f
	movl $0, HDR+28
	xchg %rsi, %rdi
1:
	rep movsb
	mov 136(%r11), %rcx
	add $151, %rcx
	and $-8, %rcx
	movl %ecx, (%r11)
	movabs $HDR, %r11
	addl %ecx, (%r11)
	cmp $9, %edx
	je mapped
	cmp $257, %edx
	pop %rdx
	pop %rsi
	pop %rdi
	jne unlock
	test $3, %edx
	jz unlock
	test %rax, %rax
	jns opened
unlock:
	movl $0, 4(%r11)
	cmpl $0, 36(%r11)
	jne probed
	ret
probed:
	# After a probe (r11 = HDR, rax its result, the buffer released):
	# the argument it replaced is put back, and a call that would have
	# blocked (a futex wait that timed out, a poll or epoll wait that
	# found nothing or was interrupted) is made again, traced, as the
	# program made it: it blocks in the kernel under ptrace while other
	# threads run (as rr's syscallbuf does for poll and epoll_wait).
	movl 36(%r11), %ecx
	movl $0, 36(%r11)
	cmp $7, %ecx
	je 1f
	mov 40(%r11), %r10
	jmp 2f
1:
	mov 40(%r11), %rdx
2:
	cmp $202, %ecx
	jne 3f
	cmp $-110, %rax
	je 4f
	ret
3:
	test %rax, %rax
	je 4f
	cmp $-4, %rax
	je 4f
	ret
4:
	mov %ecx, %eax
	jmp traced
mapped:
	# An mmap (r11 = HDR, rax its result, the buffer still held): a file
	# mapped adds its range to PEND_LO..PEND_HI.
	pop %rdx
	pop %rsi
	pop %rdi
	test $0x20, %r10b
	jnz unlock
	cmp $-4096, %rax
	ja unlock
	lea 4095(%rax,%rsi), %rcx
	and $-4096, %rcx
	cmpq $0, 272(%r11)
	jne 1f
	mov %rax, 264(%r11)
	mov %rcx, 272(%r11)
	jmp unlock
1:
	cmp 264(%r11), %rax
	jae 2f
	mov %rax, 264(%r11)
2:
	cmp 272(%r11), %rcx
	jbe unlock
	mov %rcx, 272(%r11)
	jmp unlock
opened:
	# A writable descriptor just opened (rax) might be /proc/PID/mem: a
	# write through it changes memory, which the recorder must capture at
	# the call. A buffered fstatfs tells whether it is on procfs; if so
	# (or if that fails), the calls that write file data are traced from
	# now on (nowrites). Replay runs the same check on the same results.
	movl $0, 4(%r11)
	push %rdi
	push %rsi
	push %rax
	mov %rax, %rdi
	movabs $SCRATCH, %rsi
	mov $138, %eax
	call .Lentry	# (a local label: a global one would need a relocation)
	test %rax, %rax
	jnz 1f
	movabs $SCRATCH, %r11
	cmpq $PROC_SUPER_MAGIC, (%r11)
	jne 2f
1:
	movabs $HDR, %r11
	movl $1, 20(%r11)
2:
	pop %rax
	pop %rsi
	pop %rdi
	ret
replayed:
	# Replay only: the replayer wrote this call's result (at 8) and the
	# bytes the kernel wrote (at 144) into the record the call is about
	# to fill, and the call is not made. The stub fills in the rest of
	# the record as after a real call (the replayer compares it with the
	# recording at the thread's next stop) and copies the bytes out.
	# When the replayer asks for it (replay_stop), the last call of the
	# stretch traps first, so that the thread stops after the stretch
	# (another thread's event comes next); it goes on from here.
	#
	# A call that changes the address space (an anonymous mmap, munmap,
	# mprotect, madvise) must be made in replay too: the replayer marks
	# its record (EXEC_MARK at 128, where the stub writes only later)
	# and runs the thread with PTRACE_CONT, and the call is made here,
	# from rexec_insn, before the trap. An mmap lands where it was
	# recorded: at the recorded result, with the flags the replayer
	# wrote at 136 (MAP_FIXED, anonymous). A brk that moved the break
	# past a page boundary changes the heap as replay makes every brk:
	# the pages between the page-rounded old break (which the replayer
	# wrote at 136) and the new one (the recorded result) are mapped
	# anonymous or unmapped. The kernel's result replaces the recorded
	# one (the replayer compares them), except a brk's that succeeded:
	# the program gets the recorded break. The registers the rewrite
	# changed are put back from the record.
	movabs $EXEC_MARK, %rcx
	cmp %rcx, 128(%r11)
	jne 2f
	cmp $12, %eax
	je 4f
	cmp $9, %eax
	jne 3f
	mov 8(%r11), %rdi
	mov 136(%r11), %r10
	mov $-1, %r8
	xor %r9d, %r9d
	jmp 3f
4:
	mov 8(%r11), %rdi
	add $4095, %rdi
	and $-4096, %rdi
	mov 136(%r11), %rsi
	mov $11, %eax
	cmp %rsi, %rdi
	jb 5f
	xchg %rdi, %rsi
	sub %rdi, %rsi
	mov $3, %edx
	mov $0x32, %r10d
	mov $-1, %r8
	xor %r9d, %r9d
	mov $9, %eax
	jmp 3f
5:
	sub %rdi, %rsi
3:
	.globl rexec_insn
rexec_insn:
	syscall
	movabs $HDR, %r11
	movl (%r11), %ecx
	lea HDRLEN(%r11,%rcx), %r11
	cmpl $12, 4(%r11)
	jne 6f
	test %rax, %rax
	jz 7f
	cmp 136(%r11), %rax
	je 7f
6:
	mov %rax, 8(%r11)
7:
	mov 16(%r11), %rdi
	mov 24(%r11), %rsi
	mov 32(%r11), %rdx
	mov 40(%r11), %r10
	mov 48(%r11), %r8
	mov 56(%r11), %r9
2:
	movabs $HDR, %rcx
	decl 24(%rcx)
	jnz 1f
	cmpl $0, 32(%rcx)
	je 1f
	movl $0, 32(%rcx)
	.globl replay_end
replay_end:
	int3
1:
	movl $1, 28(%rcx)
	mov 8(%r11), %rax
	jmp .Lsc_ret
	.globl yield
yield:
	# The recorder asks for a switch (YIELD): this call is traced. In
	# replay the calls of a placed stretch come first.
	cmpl $0, 24(%r11)
	jne .Lno_yield
	movl $0, YIELD
	.globl traced
traced:
	# The thread stops at this call and the recorder drains the buffer:
	# the files mapped through it are in the trace from here on.
	movq $0, PEND_HI
	.globl traced_insn
traced_insn:
	syscall
	ret
	# A buffered call that blocked in the kernel while other threads
	# were ready (rr's desched): the recorder moves the thread here from
	# sc_ret, with eax = the call to make again (or restart_syscall),
	# when its watchdog signal interrupted the call. The buffer is
	# released, so that other threads use it while this one waits, and
	# the call is made again from an instruction the filter traces: an
	# ordinary traced call, recorded as such; its record is abandoned.
	# The descriptor of a read or write is remembered (BLOCKED): its
	# next reads and writes are traced at once instead of waiting for
	# the recorder to see them blocked (a pipe between two threads).
	# Replay runs this code too.
	.globl desched_entry
desched_entry:
	movabs $HDR, %r11
	movl $0, 4(%r11)
	cmp $1, %eax
	ja 1f
	cmp $NBLOCKED, %edi
	jae 1f
	bts %edi, BLOCKED
1:
	.globl desched_insn
desched_insn:
	syscall
	ret
traced_reset:
	.globl reset_insn
reset_insn:
	syscall
	movabs $HDR, %r11
	movl $0, (%r11)
	incl 12(%r11)
	cmpl $0, 36(%r11)
	jne probed
	ret
	# The vDSO's clock_gettime is redirected here (RetTrampoline for a
	# site marked Vclock): the call goes through the stub as any buffered
	# clock_gettime, and when it is recorded (not replayed) the stub
	# calls the vDSO's own code (VCLOCK) instead of the system call, for
	# the clocks it reads without one. The record is the same either
	# way: replay takes the result and the timespec from it.
	.globl vclock_entry
vclock_entry:
	mov $228, %eax
	call .Lentry
vclock_ret:
	ret
vclock_call:
	# Buffer held, record written up to its result: with VCLOCK set (a
	# recording) and a clock the vDSO reads itself, call VCLOCK(rdi,
	# rsi), keeping what a syscall keeps.
	# Otherwise (always in replay) the system call, with the flags the
	# record has.
	pushfq
	cmp $11, %edi
	ja 1f
	mov $VCLOCK_IDS, %ecx
	bt %edi, %ecx
	jnc 1f
	movabs $VCLOCK, %rcx
	mov (%rcx), %rcx
	test %rcx, %rcx
	jnz 2f
1:
	popfq
	jmp .Lsc_insn
2:
	popfq
	# On the stack at VSTACK, zeroed after: replay, which does not make
	# this call, must find the same memory (checksums cover the
	# program's stack below its rsp too, and the buffer).
	movabs $VSTACK - 8, %r11
	mov %rsp, (%r11)
	mov %r11, %rsp
	push %rdi
	push %rsi
	push %rdx
	push %r8
	push %r9
	push %r10
	sub $8, %rsp
	call *%rcx
	add $8, %rsp
	pop %r10
	pop %r9
	pop %r8
	pop %rdx
	pop %rsi
	pop %rdi
	pop %rsp
	# (sc_ret pushes the same rdi at the same place.)
	push %rdi
	mov %rax, %r11
	xor %eax, %eax
	movabs $VSTACK - VSTACKLEN, %rdi
	mov $VSTACKLEN / 8, %ecx
	rep stosq
	mov %r11, %rax
	pop %rdi
	jmp .Lsc_ret
	# Called by the trampolines that stand for rdtsc instructions
	# (patch.RdtscTrampoline): returns the time-stamp counter in edx:eax
	# as rdtsc does, every other register and the flags as they were. The
	# count is a call of gorr's number RDTSC_NR through the stub: buffered
	# (out_rdtsc reads the counter), or traced (the recorder answers it).
	# In a process whose calls are all traced (HdrDisabled: it may run a
	# seccomp filter of its own, which must never judge that number) it
	# is an rdtsc whose first byte is an int3, which the recorder
	# emulates as at any patched site.
	.globl rdtsc_entry
rdtsc_entry:
	pushfq
	push %rcx
	push %r11
	movabs $HDR, %r11
	cmpl $0, 16(%r11)
	jne 1f
	mov $RDTSC_NR, %eax
	call .Lentry
	mov %rax, %rdx
	shr $32, %rdx
	mov %eax, %eax
	jmp 2f
1:
	.globl rdtsc_trap
rdtsc_trap:
	int3
	.byte 0x31
2:
	pop %r11
	pop %rcx
	popfq
	ret
