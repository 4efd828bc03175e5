package linux

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// fakeMem is tracee memory backed by a byte slice starting at base.
type fakeMem struct {
	base uint64
	data []byte
}

func newFakeMem(base uint64, size int) *fakeMem {
	return &fakeMem{base: base, data: make([]byte, size)}
}

func (f *fakeMem) ReadMem(addr uint64, buf []byte) error {
	if addr < f.base || addr+uint64(len(buf)) > f.base+uint64(len(f.data)) {
		return fmt.Errorf("EFAULT at 0x%x", addr)
	}
	copy(buf, f.data[addr-f.base:])
	return nil
}

func (f *fakeMem) put64(addr, v uint64) {
	binary.LittleEndian.PutUint64(f.data[addr-f.base:], v)
}

func (f *fakeMem) put32(addr uint64, v uint32) {
	binary.LittleEndian.PutUint32(f.data[addr-f.base:], v)
}

// putIovecs writes iovecs {base, len} at addr.
func (f *fakeMem) putIovecs(addr uint64, iov ...[2]uint64) {
	for i, v := range iov {
		f.put64(addr+uint64(i)*16, v[0])
		f.put64(addr+uint64(i)*16+8, v[1])
	}
}

// ioc builds an ioctl request number (_IOC).
func ioc(dir, typ, nr, size uint32) uint32 {
	return dir<<30 | size<<16 | typ<<8 | nr
}

const (
	errEINTRret = -4
	errEFAULT   = -14
)

func regions(t *testing.T, name string, a Args, ret int64, m MemReader) []Region {
	t.Helper()
	s := ByName(name)
	if s == nil {
		t.Fatalf("no syscall %q", name)
	}
	rs, err := s.OutputRegions(a, ret, m)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rs
}

func expect(t *testing.T, what string, got []Region, want ...Region) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

func TestRead(t *testing.T) {
	a := Args{3, 0x1000, 4096}
	expect(t, "read 10", regions(t, "read", a, 10, nil), Region{0x1000, 10})
	expect(t, "read EOF", regions(t, "read", a, 0, nil))
	expect(t, "read EINTR", regions(t, "read", a, errEINTRret, nil))
	expect(t, "read NULL", regions(t, "read", Args{3, 0, 4096}, 10, nil))
	expect(t, "pread64", regions(t, "pread64", a, 100, nil), Region{0x1000, 100})
	expect(t, "getcwd", regions(t, "getcwd", Args{0x2000, 4096}, 5, nil), Region{0x2000, 5})
}

func TestRegionCap(t *testing.T) {
	_, err := ByName("read").OutputRegions(Args{3, 0x1000, 1 << 40}, MaxRegion+1, nil)
	if err == nil {
		t.Fatal("oversized region accepted")
	}
	_, err = ByName("epoll_wait").OutputRegions(Args{3, 0x1000, 1 << 30}, 1<<60, nil)
	if err == nil {
		t.Fatal("overflowing element count accepted")
	}
	rs := regions(t, "read", Args{3, 0x1000, MaxRegion}, MaxRegion, nil)
	expect(t, "read at the cap", rs, Region{0x1000, MaxRegion})
}

func TestReadv(t *testing.T) {
	m := newFakeMem(0x10000, 4096)
	iov := uint64(0x10000)
	m.putIovecs(iov, [2]uint64{0x20000, 4}, [2]uint64{0, 0}, [2]uint64{0x30000, 8}, [2]uint64{0x40000, 16})
	a := Args{3, iov, 4}
	expect(t, "readv 10", regions(t, "readv", a, 10, m),
		Region{0x20000, 4}, Region{0x30000, 6})
	expect(t, "readv all", regions(t, "readv", a, 28, m),
		Region{0x20000, 4}, Region{0x30000, 8}, Region{0x40000, 16})
	expect(t, "readv error", regions(t, "readv", a, errEFAULT, m))
	expect(t, "preadv", regions(t, "preadv", Args{3, iov, 4, 0, 0}, 3, m), Region{0x20000, 3})
	expect(t, "preadv2", regions(t, "preadv2", Args{3, iov, 4, 0, 0, 0}, 5, m),
		Region{0x20000, 4}, Region{0x30000, 1})
	if _, err := ByName("readv").OutputRegions(Args{3, 0x90000, 2}, 5, m); err == nil {
		t.Error("unreadable iovec array did not fail")
	}
	if _, err := ByName("readv").OutputRegions(Args{3, iov, 2}, 5, nil); err == nil {
		t.Error("missing MemReader did not fail")
	}
}

// putMsghdr writes a struct msghdr at addr.
func (f *fakeMem) putMsghdr(addr, name uint64, namelen uint32, iov, iovlen, control, controllen uint64) {
	f.put64(addr+0, name)
	f.put32(addr+8, namelen)
	f.put64(addr+16, iov)
	f.put64(addr+24, iovlen)
	f.put64(addr+32, control)
	f.put64(addr+40, controllen)
}

func TestRecvmsg(t *testing.T) {
	m := newFakeMem(0x10000, 4096)
	const msg, iov = 0x10000, 0x10100
	m.putIovecs(iov, [2]uint64{0x50000, 8}, [2]uint64{0x60000, 100})
	m.putMsghdr(msg, 0x70000, 16, iov, 2, 0x80000, 24)
	expect(t, "recvmsg", regions(t, "recvmsg", Args{3, msg, 0}, 20, m),
		Region{msg, 56}, Region{0x70000, 16}, Region{0x80000, 24},
		Region{0x50000, 8}, Region{0x60000, 12})

	// No name, no control, nothing received.
	m.putMsghdr(msg, 0, 0, iov, 2, 0, 0)
	expect(t, "recvmsg empty", regions(t, "recvmsg", Args{3, msg, 0}, 0, m), Region{msg, 56})
	expect(t, "recvmsg error", regions(t, "recvmsg", Args{3, msg, 0}, -11, m))
}

func TestRecvmmsg(t *testing.T) {
	m := newFakeMem(0x10000, 4096)
	const vec, iov0, iov1 = 0x10000, 0x10400, 0x10500
	m.putIovecs(iov0, [2]uint64{0x50000, 64})
	m.putIovecs(iov1, [2]uint64{0x60000, 64})
	m.putMsghdr(vec, 0, 0, iov0, 1, 0, 0)
	m.put32(vec+56, 10)
	m.putMsghdr(vec+64, 0x70000, 8, iov1, 1, 0, 0)
	m.put32(vec+64+56, 70)
	expect(t, "recvmmsg", regions(t, "recvmmsg", Args{3, vec, 4, 0, 0x90000}, 2, m),
		Region{0x90000, 16},
		Region{vec + 56, 4}, Region{vec, 56}, Region{0x50000, 10},
		Region{vec + 64 + 56, 4}, Region{vec + 64, 56}, Region{0x70000, 8}, Region{0x60000, 64})
	expect(t, "sendmmsg", regions(t, "sendmmsg", Args{3, vec, 4, 0}, 2, nil),
		Region{vec + 56, 4}, Region{vec + 64 + 56, 4})
}

func TestIoctl(t *testing.T) {
	expect(t, "TCGETS", regions(t, "ioctl", Args{0, TCGETS, 0x1000}, 0, nil), Region{0x1000, 36})
	expect(t, "TCGETS ENOTTY", regions(t, "ioctl", Args{0, TCGETS, 0x1000}, -25, nil))
	expect(t, "TIOCGWINSZ", regions(t, "ioctl", Args{0, TIOCGWINSZ, 0x1000}, 0, nil), Region{0x1000, 8})
	expect(t, "FIONREAD", regions(t, "ioctl", Args{0, FIONREAD, 0x1000}, 0, nil), Region{0x1000, 4})
	expect(t, "FIONBIO", regions(t, "ioctl", Args{0, FIONBIO, 0x1000}, 0, nil))
	expect(t, "TCSETS", regions(t, "ioctl", Args{0, TCSETS, 0x1000}, 0, nil))
	// TCGETS2 = _IOR('T', 0x2A, struct termios2)
	tcgets2 := ioc(iocRead, 'T', 0x2A, 44)
	if tcgets2 != 0x802C542A {
		t.Errorf("ioc(TCGETS2) = 0x%x", tcgets2)
	}
	expect(t, "TCGETS2", regions(t, "ioctl", Args{0, uint64(tcgets2), 0x1000}, 0, nil), Region{0x1000, 44})
	// An unknown _IOR request: the encoded size.
	expect(t, "generic _IOR", regions(t, "ioctl", Args{0, uint64(ioc(iocRead, 'x', 7, 24)), 0x1000}, 0, nil),
		Region{0x1000, 24})
	// _IOWR as well.
	expect(t, "generic _IOWR", regions(t, "ioctl", Args{0, uint64(ioc(iocRead|iocWrite, 'x', 8, 12)), 0x1000}, 0, nil),
		Region{0x1000, 12})
	// Pure _IOW: the kernel only reads.
	expect(t, "generic _IOW", regions(t, "ioctl", Args{0, uint64(ioc(iocWrite, 'x', 9, 12)), 0x1000}, 0, nil))
	// High bits of the 64-bit register are ignored.
	expect(t, "TCGETS high bits", regions(t, "ioctl", Args{0, 0xffffffff00000000 | TCGETS, 0x1000}, 0, nil), Region{0x1000, 36})

	_, err := ByName("ioctl").OutputRegions(Args{0, 0x1234, 0x1000}, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "unsupported ioctl 0x1234") {
		t.Errorf("unknown ioctl: err = %v", err)
	}
	// Failing unknown ioctls wrote nothing and are fine.
	expect(t, "unknown ENOTTY", regions(t, "ioctl", Args{0, 0x1234, 0x1000}, -25, nil))

	m := newFakeMem(0x10000, 4096)
	m.put32(0x10000, 80)
	m.put64(0x10008, 0x20000)
	expect(t, "SIOCGIFCONF", regions(t, "ioctl", Args{3, SIOCGIFCONF, 0x10000}, 0, m),
		Region{0x10000, 16}, Region{0x20000, 80})
}

func TestSelect(t *testing.T) {
	a := Args{65, 0x1000, 0, 0x3000, 0x4000}
	want := []Region{{0x1000, 16}, {0x3000, 16}, {0x4000, 16}}
	expect(t, "select", regions(t, "select", a, 2, nil), want...)
	expect(t, "select EINTR", regions(t, "select", a, errEINTRret, nil), want...)
	expect(t, "select ERESTARTNOHAND", regions(t, "select", a, -514, nil), want...)
	expect(t, "select EBADF", regions(t, "select", a, -9, nil))
	expect(t, "select nfds 1", regions(t, "select", Args{1, 0x1000}, 1, nil), Region{0x1000, 8})
	expect(t, "select nfds 0", regions(t, "select", Args{0, 0x1000, 0, 0, 0x4000}, 0, nil), Region{0x4000, 16})
	expect(t, "pselect6", regions(t, "pselect6", Args{128, 0x1000, 0x2000, 0, 0, 0x6000}, 1, nil),
		Region{0x1000, 16}, Region{0x2000, 16})
}

func TestPoll(t *testing.T) {
	expect(t, "poll", regions(t, "poll", Args{0x1000, 3, 100}, 1, nil), Region{0x1000, 24})
	expect(t, "poll EINTR", regions(t, "poll", Args{0x1000, 3, 100}, -516, nil), Region{0x1000, 24})
	expect(t, "poll EINVAL", regions(t, "poll", Args{0x1000, 1 << 40, 100}, -22, nil))
	expect(t, "ppoll", regions(t, "ppoll", Args{0x1000, 2, 0x2000, 0, 8}, 0, nil),
		Region{0x1000, 16}, Region{0x2000, 16})
	expect(t, "epoll_wait", regions(t, "epoll_wait", Args{3, 0x1000, 64, ^uint64(0)}, 3, nil), Region{0x1000, 36})
	expect(t, "epoll_pwait2", regions(t, "epoll_pwait2", Args{3, 0x1000, 64}, 1, nil), Region{0x1000, 12})
}

func TestWait4(t *testing.T) {
	expect(t, "wait4", regions(t, "wait4", Args{^uint64(0), 0x1000, 0, 0x2000}, 1234, nil),
		Region{0x1000, 4}, Region{0x2000, 144})
	expect(t, "wait4 NULLs", regions(t, "wait4", Args{^uint64(0), 0, 0, 0}, 1234, nil))
	expect(t, "wait4 ECHILD", regions(t, "wait4", Args{^uint64(0), 0x1000, 0, 0x2000}, -10, nil))
	expect(t, "waitid", regions(t, "waitid", Args{0, 0, 0x1000, 4, 0x2000}, 0, nil),
		Region{0x1000, 128}, Region{0x2000, 144})
	expect(t, "waitid EBADF", regions(t, "waitid", Args{3, 0, 0x1000, 4, 0x2000}, -9, nil),
		Region{0x1000, 128})
}

func TestNanosleep(t *testing.T) {
	expect(t, "nanosleep EINTR", regions(t, "nanosleep", Args{0x1000, 0x2000}, errEINTRret, nil), Region{0x2000, 16})
	expect(t, "nanosleep restart", regions(t, "nanosleep", Args{0x1000, 0x2000}, -516, nil), Region{0x2000, 16})
	expect(t, "nanosleep NULL rem", regions(t, "nanosleep", Args{0x1000, 0}, errEINTRret, nil))
	expect(t, "clock_nanosleep EINTR", regions(t, "clock_nanosleep", Args{1, 0, 0x1000, 0x2000}, errEINTRret, nil),
		Region{0x2000, 16})
	// Ordinary outputs are not reported on failure.
	expect(t, "clock_gettime EINVAL", regions(t, "clock_gettime", Args{99, 0x1000}, -22, nil))
	expect(t, "clock_gettime", regions(t, "clock_gettime", Args{1, 0x1000}, 0, nil), Region{0x1000, 16})
}

func TestNullPointers(t *testing.T) {
	for _, s := range All() {
		if s.Unsupported != "" {
			continue
		}
		for _, ret := range []int64{0, 1, 64, -4, -14} {
			rs, err := s.OutputRegions(Args{}, ret, newFakeMem(0x1000, 16))
			if err != nil {
				continue // some handlers refuse (semctl GETALL with cmd 0 is not one)
			}
			for _, r := range rs {
				if r.Addr == 0 || r.Len == 0 {
					t.Errorf("%s(ret %d): region %v from NULL arguments", s.Name, ret, r)
				}
			}
			if len(rs) != 0 {
				t.Errorf("%s(ret %d): regions %v from all-zero arguments", s.Name, ret, rs)
			}
		}
	}
	expect(t, "gettimeofday tz only", regions(t, "gettimeofday", Args{0, 0x2000}, 0, nil), Region{0x2000, 8})
	expect(t, "time NULL", regions(t, "time", Args{0}, 1700000000, nil))
}

func TestSockets(t *testing.T) {
	m := newFakeMem(0x10000, 4096)
	m.put32(0x10000, 16) // *addrlen after accept
	expect(t, "accept", regions(t, "accept", Args{3, 0x20000, 0x10000}, 4, m),
		Region{0x20000, 16}, Region{0x10000, 4})
	expect(t, "accept NULL addr", regions(t, "accept4", Args{3, 0, 0, 0}, 4, m))
	expect(t, "getsockopt", regions(t, "getsockopt", Args{3, 1, 7, 0x20000, 0x10000}, 0, m),
		Region{0x20000, 16}, Region{0x10000, 4})
	// MSG_TRUNC: ret larger than the buffer.
	expect(t, "recvfrom", regions(t, "recvfrom", Args{3, 0x30000, 100, 0x20, 0x20000, 0x10000}, 1500, m),
		Region{0x20000, 16}, Region{0x10000, 4}, Region{0x30000, 100})
	expect(t, "socketpair", regions(t, "socketpair", Args{1, 1, 0, 0x1000}, 0, nil), Region{0x1000, 8})
	expect(t, "pipe2", regions(t, "pipe2", Args{0x1000, 0}, 0, nil), Region{0x1000, 8})
}

func TestMiscCustom(t *testing.T) {
	expect(t, "F_GETLK", regions(t, "fcntl", Args{3, 5, 0x1000}, 0, nil), Region{0x1000, 32})
	expect(t, "F_SETFL", regions(t, "fcntl", Args{3, 4, 0x800}, 0, nil))
	expect(t, "PR_GET_NAME", regions(t, "prctl", Args{16, 0x1000}, 0, nil), Region{0x1000, 16})
	expect(t, "PR_SET_NAME", regions(t, "prctl", Args{15, 0x1000}, 0, nil))
	expect(t, "PR_SET_SECCOMP", regions(t, "prctl", Args{22, 2, 0x1000}, 0, nil))
	expect(t, "SECCOMP_GET_NOTIF_SIZES", regions(t, "seccomp", Args{3, 0, 0x1000}, 0, nil), Region{0x1000, 6})
	expect(t, "SECCOMP_SET_MODE_FILTER", regions(t, "seccomp", Args{1, 0, 0x1000}, 0, nil))
	expect(t, "ARCH_GET_FS", regions(t, "arch_prctl", Args{0x1003, 0x1000}, 0, nil), Region{0x1000, 8})
	expect(t, "ARCH_SET_FS", regions(t, "arch_prctl", Args{0x1002, 0x1000}, 0, nil))
	expect(t, "rt_sigaction", regions(t, "rt_sigaction", Args{2, 0x1000, 0x2000, 8}, 0, nil), Region{0x2000, 32})
	expect(t, "rt_sigprocmask", regions(t, "rt_sigprocmask", Args{0, 0x1000, 0x2000, 8}, 0, nil), Region{0x2000, 8})
	expect(t, "getgroups query", regions(t, "getgroups", Args{0, 0x1000}, 5, nil))
	expect(t, "getgroups", regions(t, "getgroups", Args{32, 0x1000}, 5, nil), Region{0x1000, 20})
	expect(t, "getxattr query", regions(t, "getxattr", Args{0x1, 0x2, 0x1000, 0}, 30, nil))
	expect(t, "msgrcv", regions(t, "msgrcv", Args{1, 0x1000, 100, 0, 0}, 10, nil), Region{0x1000, 18})
	expect(t, "shmctl IPC_STAT", regions(t, "shmctl", Args{1, 2, 0x1000}, 0, nil), Region{0x1000, 112})
	expect(t, "msgctl IPC_STAT", regions(t, "msgctl", Args{1, 2, 0x1000}, 0, nil), Region{0x1000, 120})
	expect(t, "semctl IPC_STAT", regions(t, "semctl", Args{1, 0, 2, 0x1000}, 0, nil), Region{0x1000, 104})
	expect(t, "mincore", regions(t, "mincore", Args{0x7000, 4097, 0x1000}, 0, nil), Region{0x1000, 2})
	expect(t, "statx", regions(t, "statx", Args{0, 0x1, 0, 0xfff, 0x1000}, 0, nil), Region{0x1000, 256})
	expect(t, "sendfile", regions(t, "sendfile", Args{1, 2, 0x1000, 10}, 10, nil), Region{0x1000, 8})

	// clone3 with CLONE_PIDFD | CLONE_PARENT_SETTID.
	m := newFakeMem(0x10000, 4096)
	m.put64(0x10000, 0x00001000|0x00100000)
	m.put64(0x10008, 0x20000)
	m.put64(0x10010, 0x30000)
	m.put64(0x10018, 0x40000)
	expect(t, "clone3", regions(t, "clone3", Args{0x10000, 88}, 1234, m),
		Region{0x20000, 4}, Region{0x40000, 4})
	expect(t, "clone3 child", regions(t, "clone3", Args{0x10000, 88}, 0, m))
}

func TestEveryCustomToleratesFailure(t *testing.T) {
	// With a negative return value and no memory reader, nothing may need
	// to read memory except OnError value-result lengths.
	a := Args{0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000}
	for _, s := range All() {
		if _, err := s.OutputRegions(a, -22, nil); err != nil {
			t.Errorf("%s with EINVAL: %v", s.Name, err)
		}
	}
}

// FS_IOC_FIEMAP writes the extents after its 32-byte header, which the
// request number's size does not cover.
func TestFiemapRegions(t *testing.T) {
	m := newFakeMem(0x1000, 64)
	m.put32(0x1000+20, 3)  // fm_mapped_extents
	m.put32(0x1000+24, 16) // fm_extent_count
	expect(t, "fiemap", regions(t, "ioctl", Args{3, FS_IOC_FIEMAP, 0x1000}, 0, m), Region{0x1000, 32 + 3*56})
	m.put32(0x1000+20, 40) // more mapped than room: bounded by the count
	expect(t, "fiemap bounded", regions(t, "ioctl", Args{3, FS_IOC_FIEMAP, 0x1000}, 0, m), Region{0x1000, 32 + 16*56})
}

// Netfilter's table replacement returns the old counters through a
// pointer inside the option value.
func TestSetsockoptReplaceCounters(t *testing.T) {
	m := newFakeMem(0x1000, 128)
	m.put32(0x1000+84, 5)      // num_counters
	m.put64(0x1000+88, 0x8000) // counters
	expect(t, "ipt replace", regions(t, "setsockopt", Args{3, 0, 64, 0x1000, 128}, 0, m), Region{0x8000, 5 * 16})
	expect(t, "other option", regions(t, "setsockopt", Args{3, 1, 2, 0x1000, 4}, 0, m))
}
