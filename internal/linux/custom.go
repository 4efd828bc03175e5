package linux

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// customFunc is the signature of Syscall.Custom.
type customFunc = func(a Args, ret int64, m MemReader) ([]Region, error)

// Kernel-internal restart codes a tracer sees at syscall exit when a call
// was interrupted by a signal (they become EINTR or a restart later).
const (
	errEINTR               = 4
	errERESTARTSYS         = 512
	errERESTARTNOINTR      = 513
	errERESTARTNOHAND      = 514
	errERESTARTRESTARTBLCK = 516
)

// interrupted reports whether ret means "stopped early by a signal".
func interrupted(ret int64) bool {
	switch -ret {
	case errEINTR, errERESTARTSYS, errERESTARTNOINTR, errERESTARTNOHAND, errERESTARTRESTARTBLCK:
		return true
	}
	return false
}

// retBounded: on success the kernel wrote min(ret, arg lenArg) elements of
// elem bytes through argument buf. Used where the return value can exceed
// what was copied (MSG_TRUNC, or a size query with a zero-length buffer).
func retBounded(buf, lenArg int, elem uint64) customFunc {
	return func(a Args, ret int64, _ MemReader) ([]Region, error) {
		if ret <= 0 {
			return nil, nil
		}
		n, err := scale(min(uint64(ret), a[lenArg]), elem)
		if err != nil {
			return nil, err
		}
		return []Region{region(a[buf], n)}, nil
	}
}

// iovFromRet: a scatter read (readv, preadv, preadv2, process_vm_readv,
// vmsplice): the iovec array is argument iov, its length argument cnt, and
// the return value is spread over the buffers.
func iovFromRet(iov, cnt int) customFunc {
	return func(a Args, ret int64, m MemReader) ([]Region, error) {
		if ret <= 0 {
			return nil, nil
		}
		return iovRegions(m, a[iov], a[cnt], uint64(ret))
	}
}

// Offsets in struct user_msghdr (x86-64).
const (
	msgNameOff       = 0
	msgNamelenOff    = 8
	msgIovOff        = 16
	msgIovlenOff     = 24
	msgControlOff    = 32
	msgControllenOff = 40
	mmsgLenOff       = 56 // msg_len in struct mmsghdr
)

// msghdrRegions returns what a receive wrote for the msghdr at addr, which
// received n bytes of payload: the msghdr itself (namelen, controllen and
// flags are updated), the name and control buffers using the lengths the
// kernel left, and the first n bytes of the iovecs.
func msghdrRegions(m MemReader, addr, n uint64) ([]Region, error) {
	raw, err := readMem(m, addr, sizeMsghdr)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	name := le.Uint64(raw[msgNameOff:])
	namelen := min(uint64(le.Uint32(raw[msgNamelenOff:])), sizeSockaddrMax)
	control := le.Uint64(raw[msgControlOff:])
	controllen := le.Uint64(raw[msgControllenOff:])
	out := []Region{
		region(addr, sizeMsghdr),
		region(name, namelen),
		region(control, controllen),
	}
	iov, err := iovRegions(m, le.Uint64(raw[msgIovOff:]), le.Uint64(raw[msgIovlenOff:]), n)
	if err != nil {
		return nil, err
	}
	return append(out, iov...), nil
}

// recvmsg(fd, msg, flags)
func customRecvmsg(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	return msghdrRegions(m, a[1], uint64(ret))
}

// mmsgCount is how many mmsghdr entries of recvmmsg/sendmmsg(fd, vec,
// vlen, ...) were processed: ret, which the kernel bounds by vlen and
// UIO_MAXIOV.
func mmsgCount(a Args, ret int64) uint64 {
	return min(uint64(ret), a[2], maxIovecs)
}

// recvmmsg(fd, msgvec, vlen, flags, timeout): ret messages were received;
// each mmsghdr's msg_len says how much payload it got.
func customRecvmmsg(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret < 0 || a[1] == 0 {
		return nil, nil
	}
	out := []Region{region(a[4], sizeTimespec)}
	for i := range mmsgCount(a, ret) {
		hdr := a[1] + i*sizeMmsghdr
		n, err := readU32(m, hdr+mmsgLenOff)
		if err != nil {
			return nil, err
		}
		rs, err := msghdrRegions(m, hdr, uint64(n))
		if err != nil {
			return nil, err
		}
		out = append(out, region(hdr+mmsgLenOff, 4))
		out = append(out, rs...)
	}
	return out, nil
}

// sendmmsg(fd, msgvec, vlen, flags): the kernel stores msg_len for each
// message sent.
func customSendmmsg(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret <= 0 || a[1] == 0 {
		return nil, nil
	}
	var out []Region
	for i := range mmsgCount(a, ret) {
		out = append(out, region(a[1]+i*sizeMmsghdr+mmsgLenOff, 4))
	}
	return out, nil
}

// recvfrom(fd, buf, len, flags, addr, addrlen): with MSG_TRUNC the return
// value may exceed len; the address is handled declaratively.
var customRecvfrom = retBounded(1, 2, 0)

// fdSetBytes is the size of the fd_set bitmaps select reads and writes
// for nfds descriptors.
func fdSetBytes(nfds uint64) uint64 {
	n := int64(int32(nfds))
	if n <= 0 {
		return 0
	}
	return uint64((n + 63) / 64 * 8)
}

// selectRegions: select(nfds, readfds, writefds, exceptfds, timeout) and
// pselect6 with the same first five arguments. The sets are rewritten on
// success and the remaining time is stored on success or interruption; the
// sets are included on interruption too, which is harmless.
func selectRegions(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 && !interrupted(ret) {
		return nil, nil
	}
	n := fdSetBytes(a[0])
	return []Region{
		region(a[1], n), region(a[2], n), region(a[3], n),
		region(a[4], sizeTimespec), // timeval and timespec are both 16 bytes
	}, nil
}

// poll(fds, nfds, timeout): revents are stored even when interrupted.
func customPoll(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 && !interrupted(ret) {
		return nil, nil
	}
	n, err := scale(a[1], sizePollfd)
	if err != nil {
		return nil, err
	}
	return []Region{region(a[0], n)}, nil
}

// ppoll(fds, nfds, tsp, sigmask, sigsetsize): as poll, and the kernel
// updates *tsp with the remaining time.
func customPpoll(a Args, ret int64, m MemReader) ([]Region, error) {
	out, err := customPoll(a, ret, m)
	if err != nil || out == nil {
		return out, err
	}
	return append(out, region(a[2], sizeTimespec)), nil
}

// msgrcv(msqid, msgp, msgsz, msgtyp, msgflg): a long mtype then ret bytes.
func customMsgrcv(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	return []Region{region(a[1], sizeLong+uint64(ret))}, nil
}

// mincore(addr, length, vec): one byte per page.
func customMincore(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	pages := a[1]/pageSize + min(a[1]%pageSize, 1)
	return []Region{region(a[2], pages)}, nil
}

// getgroups(size, list): with size 0 only the count is returned.
var customGetgroups = retBounded(1, 0, sizeInt)

// syslog(type, buf, len): the read actions copy ret bytes.
func customSyslog(a Args, ret int64, m MemReader) ([]Region, error) {
	switch int32(a[0]) {
	case 2, 3, 4: // SYSLOG_ACTION_READ, _READ_ALL, _READ_CLEAR
		return retBounded(1, 2, 0)(a, ret, m)
	}
	return nil, nil
}

// sysfs(option, arg1, arg2): option 2 copies a NUL-terminated file-system
// name into arg2.
func customSysfs(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret < 0 || int32(a[0]) != 2 || a[2] == 0 {
		return nil, nil
	}
	const maxName = 256
	for i := uint64(0); i < maxName; i++ {
		b, err := readMem(m, a[2]+i, 1)
		if err != nil {
			return nil, err
		}
		if b[0] == 0 {
			return []Region{region(a[2], i+1)}, nil
		}
	}
	return []Region{region(a[2], maxName)}, nil
}

// get_mempolicy(mode, nodemask, maxnode, addr, flags)
func customGetMempolicy(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	out := []Region{region(a[0], sizeInt)}
	if maxnode := a[2]; maxnode > 0 && maxnode <= MaxRegion {
		out = append(out, region(a[1], (maxnode-1+63)/64*8))
	}
	return out, nil
}

// keyctl(operation, arg2, arg3, arg4, arg5)
func customKeyctl(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	switch int32(a[0]) {
	case 6, 11, 17, 23: // KEYCTL_DESCRIBE, _READ, _GET_SECURITY, _DH_COMPUTE
		return retBounded(2, 3, 0)(a, ret, m)
	case 24: // KEYCTL_PKEY_QUERY
		return []Region{region(a[4], 56)}, nil // struct keyctl_pkey_query
	case 25, 26, 27: // KEYCTL_PKEY_ENCRYPT, _DECRYPT, _SIGN
		return []Region{region(a[4], uint64(ret))}, nil
	case 31: // KEYCTL_CAPABILITIES
		return retBounded(1, 2, 0)(a, ret, m)
	}
	return nil, nil
}

// quotaRegions: quotactl and quotactl_fd, the command in argument cmdArg
// and the output buffer in argument 3.
func quotaRegions(cmdArg int) customFunc {
	return func(a Args, ret int64, _ MemReader) ([]Region, error) {
		if ret < 0 {
			return nil, nil
		}
		var n uint64
		switch uint32(a[cmdArg]) >> 8 {
		case 0x8004: // Q_GETFMT
			n = 4
		case 0x8005: // Q_GETINFO: struct if_dqinfo
			n = 24
		case 0x8007, 0x8009: // Q_GETQUOTA, Q_GETNEXTQUOTA: if_dqblk, if_nextdqblk
			n = 72
		case 0x5803, 0x5809: // Q_XGETQUOTA, Q_XGETNEXTQUOTA: fs_disk_quota
			n = 112
		case 0x5805: // Q_XGETQSTAT: fs_quota_stat
			n = 80
		case 0x5808: // Q_XGETQSTATV: fs_quota_statv
			n = 160
		}
		return []Region{region(a[3], n)}, nil
	}
}

// IPC control commands.
const (
	ipc64   = 0x100 // IPC_64 flag; meaningless on x86-64 but tolerated
	ipcStat = 2
	ipcInfo = 3
)

// shmctl(shmid, cmd, buf)
func customShmctl(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	switch int32(a[1]) &^ ipc64 {
	case ipcStat, 13, 15: // IPC_STAT, SHM_STAT, SHM_STAT_ANY
		return []Region{region(a[2], sizeShmidDs)}, nil
	case ipcInfo:
		return []Region{region(a[2], sizeShminfo)}, nil
	case 14: // SHM_INFO
		return []Region{region(a[2], sizeShmInfo)}, nil
	}
	return nil, nil
}

// msgctl(msqid, cmd, buf)
func customMsgctl(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	switch int32(a[1]) &^ ipc64 {
	case ipcStat, 11, 13: // IPC_STAT, MSG_STAT, MSG_STAT_ANY
		return []Region{region(a[2], sizeMsqidDs)}, nil
	case ipcInfo, 12: // IPC_INFO, MSG_INFO
		return []Region{region(a[2], sizeMsginfo)}, nil
	}
	return nil, nil
}

// semctl(semid, semnum, cmd, arg): arg is a union passed by value.
func customSemctl(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	switch int32(a[2]) &^ ipc64 {
	case ipcStat, 18, 20: // IPC_STAT, SEM_STAT, SEM_STAT_ANY
		return []Region{region(a[3], sizeSemidDs)}, nil
	case ipcInfo, 19: // IPC_INFO, SEM_INFO
		return []Region{region(a[3], sizeSeminfo)}, nil
	case 13: // GETALL: one unsigned short per semaphore of the set
		n, err := semCount(int(int32(a[0])))
		if err != nil {
			return nil, fmt.Errorf("semctl(GETALL): the size of set %d: %w", int32(a[0]), err)
		}
		return []Region{region(a[3], 2*n)}, nil
	}
	return nil, nil
}

// semCount asks the kernel how many semaphores set semid has (sem_nsems
// of IPC_STAT, offset 80 of struct semid64_ds). The recorder shares the
// tracee's IPC namespace, so the answer is the tracee's.
func semCount(semid int) (uint64, error) {
	var ds [sizeSemidDs]byte
	_, _, e := unix.Syscall6(unix.SYS_SEMCTL, uintptr(semid), 0, uintptr(ipcStat), uintptr(unsafe.Pointer(&ds[0])), 0, 0)
	if e != 0 {
		return 0, e
	}
	return binary.LittleEndian.Uint64(ds[80:]), nil
}

// fcntl(fd, cmd, arg)
func customFcntl(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	switch int32(a[1]) {
	case 5, 12, 36: // F_GETLK, F_GETLK64, F_OFD_GETLK
		return []Region{region(a[2], sizeFlock)}, nil
	case 16: // F_GETOWN_EX
		return []Region{region(a[2], sizeFOwnerEx)}, nil
	case 17: // F_GETOWNER_UIDS: two uids
		return []Region{region(a[2], 8)}, nil
	case 1024 + 11, 1024 + 13: // F_GET_RW_HINT, F_GET_FILE_RW_HINT
		return []Region{region(a[2], 8)}, nil
	}
	return nil, nil
}

// prctl options that write through a pointer or that gorr refuses.
const (
	prGetPdeathsig       = 2
	prGetUnalign         = 5
	prGetFpemu           = 9
	prGetFpexc           = 11
	prGetName            = 16
	prGetEndian          = 19
	prSetSeccomp         = 22
	prGetTSC             = 25
	prSetMM              = 35
	prSetMMMapSize       = 15
	prGetChildSubreaper  = 37
	prGetTidAddress      = 40
	prSetSyscallDispatch = 59
	prSchedCore          = 62
	prSchedCoreGet       = 0
	prGetShadowStack     = 74
	prGetAuxv            = 0x41555856
)

// prctl(option, arg2, arg3, arg4, arg5)
func customPrctl(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	switch a[0] {
	case prGetPdeathsig, prGetUnalign, prGetFpemu, prGetFpexc, prGetEndian, prGetTSC, prGetChildSubreaper:
		return []Region{region(a[1], sizeInt)}, nil
	case prGetName:
		return []Region{region(a[1], 16)}, nil // TASK_COMM_LEN
	case prGetTidAddress, prGetShadowStack:
		return []Region{region(a[1], sizeLong)}, nil
	case prGetAuxv:
		return retBounded(1, 2, 0)(a, ret, m)
	case prSchedCore:
		if a[1] == prSchedCoreGet {
			return []Region{region(a[4], sizeLong)}, nil
		}
	case prSetMM:
		if a[1] == prSetMMMapSize {
			return []Region{region(a[2], sizeInt)}, nil
		}
		return nil, fmt.Errorf("prctl(PR_SET_MM) is not supported: it rewrites the address-space layout")
	case prSetSyscallDispatch:
		if a[1] != 0 { // PR_SYS_DISPATCH_OFF
			return nil, fmt.Errorf("prctl(PR_SET_SYSCALL_USER_DISPATCH) is not supported")
		}
	}
	return nil, nil
}

// arch_prctl(code, addr)
func customArchPrctl(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret < 0 {
		return nil, nil
	}
	switch a[0] {
	case 0x1003, 0x1004: // ARCH_GET_FS, ARCH_GET_GS
		return []Region{region(a[1], sizeLong)}, nil
	case 0x1021, 0x1022, 0x1024: // ARCH_GET_XCOMP_SUPP, _PERM, _GUEST_PERM
		return []Region{region(a[1], sizeLong)}, nil
	case 0x5005: // ARCH_SHSTK_STATUS
		return []Region{region(a[1], sizeLong)}, nil
	}
	return nil, nil
}

// Clone flags that make the kernel store a tid or pidfd in the parent.
const (
	cloneVM           = 0x00000100
	clonePidfd        = 0x00001000
	cloneParentSettid = 0x00100000
	cloneChildSettid  = 0x01000000
)

// cloneTargets lists the int-sized locations clone/clone3 fill in the
// caller's address space (the child-tid slot only when memory is shared).
func cloneTargets(flags, pidfd, parentTid, childTid uint64) []Region {
	var out []Region
	if flags&clonePidfd != 0 {
		out = append(out, region(pidfd, sizeInt))
	}
	if flags&cloneParentSettid != 0 {
		out = append(out, region(parentTid, sizeInt))
	}
	if flags&cloneChildSettid != 0 && flags&cloneVM != 0 {
		out = append(out, region(childTid, sizeInt))
	}
	return out
}

// clone(flags, stack, parent_tid, child_tid, tls): CLONE_PIDFD stores
// the pidfd through parent_tid.
func customClone(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret <= 0 {
		return nil, nil
	}
	return cloneTargets(a[0], a[2], a[2], a[3]), nil
}

// clone3(args, size): struct clone_args holds flags, pidfd, child_tid and
// parent_tid at offsets 0, 8, 16 and 24.
func customClone3(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret <= 0 || a[0] == 0 {
		return nil, nil
	}
	raw, err := readMem(m, a[0], 32)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	return cloneTargets(le.Uint64(raw[0:]), le.Uint64(raw[8:]), le.Uint64(raw[24:]), le.Uint64(raw[16:])), nil
}

// name_to_handle_at(dirfd, path, handle, mount_id, flags): the kernel
// stores handle_bytes (also on EOVERFLOW) and, on success, the handle and
// the mount id (64-bit with AT_HANDLE_MNT_ID_UNIQUE).
func customNameToHandleAt(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret < 0 {
		return []Region{region(a[2], 4)}, nil
	}
	if a[2] == 0 {
		return nil, nil
	}
	hb, err := readU32(m, a[2])
	if err != nil {
		return nil, err
	}
	mnt := uint64(sizeInt)
	if a[4]&0x001 != 0 { // AT_HANDLE_MNT_ID_UNIQUE
		mnt = sizeLong
	}
	return []Region{
		region(a[2], sizeFileHandleHd+min(uint64(hb), maxHandleSize)),
		region(a[3], mnt),
	}, nil
}

// getxattrat(dirfd, path, at_flags, name, args, size): struct xattr_args
// { u64 value; u32 size; u32 flags } says where the value goes.
func customGetxattrat(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret <= 0 || a[4] == 0 {
		return nil, nil
	}
	raw, err := readMem(m, a[4], 16)
	if err != nil {
		return nil, err
	}
	value := binary.LittleEndian.Uint64(raw[0:])
	size := uint64(binary.LittleEndian.Uint32(raw[8:]))
	return []Region{region(value, min(uint64(ret), size))}, nil
}

// modify_ldt(func, ptr, bytecount): funcs 0 and 2 copy the LDT (ret
// bytes) to ptr.
func customModifyLdt(a Args, ret int64, _ MemReader) ([]Region, error) {
	if ret <= 0 || ldtWrite(a) {
		return nil, nil
	}
	return []Region{region(a[1], uint64(ret))}, nil
}

// ldtWrite: modify_ldt funcs 1 and 0x11 install an LDT entry.
func ldtWrite(a Args) bool { return a[0] == 1 || a[0] == 0x11 }

// seccomp(op, flags, args): SECCOMP_GET_NOTIF_SIZES fills struct
// seccomp_notif_sizes (three u16). Installing a filter writes nothing:
// the filter takes effect at record, and replay, which does not install
// it, reproduces what it did from the recorded results and signals.
func customSeccomp(a Args, ret int64, _ MemReader) ([]Region, error) {
	const getNotifSizes = 3
	if ret < 0 || a[0] != getNotifSizes {
		return nil, nil
	}
	return []Region{region(a[2], 6)}, nil
}

// futex(uaddr, op, val, timeout/val2, uaddr2, val3): the kernel writes
// user memory in FUTEX_WAKE_OP (the operation on *uaddr2) and in the
// priority-inheritance operations (the owner word *uaddr, or *uaddr2 for
// the requeue ones). Their words are recorded at the exit, even when the
// call fails (WAKE_OP changes *uaddr2 before it may fail to wake).
func customFutex(a Args, _ int64, _ MemReader) ([]Region, error) {
	switch a[1] & 127 { // FUTEX_CMD_MASK: without PRIVATE and CLOCK_REALTIME
	case 5: // FUTEX_WAKE_OP
		return []Region{region(a[4], 4)}, nil
	case 6, 7, 8, 13: // FUTEX_LOCK_PI, UNLOCK_PI, TRYLOCK_PI, LOCK_PI2
		return []Region{region(a[0], 4)}, nil
	case 11, 12: // FUTEX_WAIT_REQUEUE_PI, CMP_REQUEUE_PI
		return []Region{region(a[0], 4), region(a[4], 4)}, nil
	}
	return nil, nil
}

// setsockopt(fd, level, optname, optval, optlen) writes nothing, except
// netfilter's table replacement (IPT_SO_SET_REPLACE at SOL_IP,
// IP6T_SO_SET_REPLACE at SOL_IPV6): struct ipt_replace/ip6t_replace
// points (offset 88) to num_counters (offset 84) struct xt_counters of
// 16 bytes, which the kernel fills with the old table's counters.
func customSetsockopt(a Args, ret int64, m MemReader) ([]Region, error) {
	const solIP, solIPv6, setReplace = 0, 41, 64
	if ret < 0 || (a[1] != solIP && a[1] != solIPv6) || a[2] != setReplace || a[4] < 96 {
		return nil, nil
	}
	raw, err := readMem(m, a[3], 96)
	if err != nil {
		return nil, err
	}
	n := uint64(binary.LittleEndian.Uint32(raw[84:]))
	return []Region{region(binary.LittleEndian.Uint64(raw[88:]), n*16)}, nil
}
