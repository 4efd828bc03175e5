package linux

import (
	"encoding/binary"
	"fmt"
)

// ioctl request encoding (asm-generic/ioctl.h): dir:2 size:14 type:8 nr:8.
const (
	iocWrite = 1 // userland writes, kernel reads
	iocRead  = 2 // kernel writes, userland reads
)

// IoctlDir returns the _IOC_DIR bits of a request number (1: the kernel
// reads the argument, 2: the kernel writes it).
func IoctlDir(req uint32) uint32 { return req >> 30 }

// IoctlSize returns the _IOC_SIZE bits of a request number.
func IoctlSize(req uint32) uint32 { return req >> 16 & 0x3fff }

// Selected ioctl requests (the rest are in ioctlSizes).
const (
	TCGETS        = 0x5401
	TCSETS        = 0x5402
	TIOCGPGRP     = 0x540F
	TIOCGWINSZ    = 0x5413
	FIONREAD      = 0x541B
	FIONBIO       = 0x5421
	SIOCGIFCONF   = 0x8912
	SIOCGIFBR     = 0x8940
	SIOCSIFBR     = 0x8941
	FS_IOC_FIEMAP = 0xC020660B
)

// Sizes of structures ioctls write.
const (
	sizeKTermios  = 36 // kernel struct termios (glibc's 60-byte one is never passed to the kernel)
	sizeTermios2  = 44 // struct termios2
	sizeTermio    = 18 // struct termio
	sizeWinsize   = 8  // struct winsize
	sizeIfreq     = 40 // struct ifreq
	sizeIfconf    = 16 // struct ifconf
	sizeArpreq    = 68 // struct arpreq
	sizeSerial    = 72 // struct serial_struct
	sizeIcounter  = 80 // struct serial_icounter_struct
	sizeRS485     = 32 // struct serial_rs485
	sizeVtStat    = 6  // struct vt_stat
	sizeOldTstamp = 16 // timeval / timespec for SIOCGSTAMP(NS)_OLD
)

// ioctlSizes maps well-known requests to the number of bytes the kernel
// writes at the third argument on success (0: nothing is written). Requests
// not listed fall back to the size encoded in the request number.
var ioctlSizes = map[uint32]uint64{
	// Terminals (asm-generic/ioctls.h).
	// perf_event_open descriptors (linux/perf_event.h); the _IOW and _IOR
	// ones (PERIOD, SET_FILTER, ID, SET_BPF, PAUSE_OUTPUT,
	// MODIFY_ATTRIBUTES) go by their encoded size.
	0x2400:     0,            // PERF_EVENT_IOC_ENABLE
	0x2401:     0,            // PERF_EVENT_IOC_DISABLE
	0x2402:     0,            // PERF_EVENT_IOC_REFRESH
	0x2403:     0,            // PERF_EVENT_IOC_RESET
	0x2405:     0,            // PERF_EVENT_IOC_SET_OUTPUT
	0x5401:     sizeKTermios, // TCGETS
	0x5402:     0,            // TCSETS
	0x5403:     0,            // TCSETSW
	0x5404:     0,            // TCSETSF
	0x5405:     sizeTermio,   // TCGETA
	0x5406:     0,            // TCSETA
	0x5407:     0,            // TCSETAW
	0x5408:     0,            // TCSETAF
	0x5409:     0,            // TCSBRK
	0x540A:     0,            // TCXONC
	0x540B:     0,            // TCFLSH
	0x540C:     0,            // TIOCEXCL
	0x540D:     0,            // TIOCNXCL
	0x540E:     0,            // TIOCSCTTY
	0x540F:     sizeInt,      // TIOCGPGRP
	0x5410:     0,            // TIOCSPGRP
	0x5411:     sizeInt,      // TIOCOUTQ
	0x5412:     0,            // TIOCSTI
	0x5413:     sizeWinsize,  // TIOCGWINSZ
	0x5414:     0,            // TIOCSWINSZ
	0x5415:     sizeInt,      // TIOCMGET
	0x5416:     0,            // TIOCMBIS
	0x5417:     0,            // TIOCMBIC
	0x5418:     0,            // TIOCMSET
	0x5419:     sizeInt,      // TIOCGSOFTCAR
	0x541A:     0,            // TIOCSSOFTCAR
	0x541B:     sizeInt,      // FIONREAD, also TIOCINQ, SIOCINQ
	0x541D:     0,            // TIOCCONS
	0x541E:     sizeSerial,   // TIOCGSERIAL
	0x541F:     0,            // TIOCSSERIAL
	0x5420:     0,            // TIOCPKT
	0x5421:     0,            // FIONBIO
	0x5422:     0,            // TIOCNOTTY
	0x5423:     0,            // TIOCSETD
	0x5424:     sizeInt,      // TIOCGETD
	0x5425:     0,            // TCSBRKP
	0x5427:     0,            // TIOCSBRK
	0x5428:     0,            // TIOCCBRK
	0x5429:     sizeInt,      // TIOCGSID
	0x802C542A: sizeTermios2, // TCGETS2
	0x542E:     sizeRS485,    // TIOCGRS485
	0x542F:     sizeRS485,    // TIOCSRS485 (copies the result back)
	0x80045430: sizeInt,      // TIOCGPTN
	0x5437:     0,            // TIOCVHANGUP
	0x5441:     0,            // TIOCGPTPEER
	0x5450:     0,            // FIONCLEX
	0x5451:     0,            // FIOCLEX
	0x5452:     0,            // FIOASYNC
	0x5453:     0,            // TIOCSERCONFIG
	0x5456:     sizeKTermios, // TIOCGLCKTRMIOS
	0x5457:     0,            // TIOCSLCKTRMIOS
	0x5459:     sizeInt,      // TIOCSERGETLSR
	0x545C:     0,            // TIOCMIWAIT
	0x545D:     sizeIcounter, // TIOCGICOUNT
	0x5460:     sizeLong,     // FIOQSIZE
	0x4B33:     1,            // KDGKBTYPE
	0x4B3B:     sizeInt,      // KDGETMODE
	0x4B44:     sizeInt,      // KDGKBMODE
	0x5600:     sizeInt,      // VT_OPENQRY
	0x5603:     sizeVtStat,   // VT_GETSTATE
	0x400454CA: sizeIfreq,    // TUNSETIFF: encoded _IOW but copies the ifreq back
	0x800454D2: sizeIfreq,    // TUNGETIFF: encoded as an int, writes an ifreq

	// Sockets (linux/sockios.h).
	0x8901: 0,             // FIOSETOWN
	0x8902: 0,             // SIOCSPGRP
	0x8903: sizeInt,       // FIOGETOWN
	0x8904: sizeInt,       // SIOCGPGRP
	0x8905: sizeInt,       // SIOCATMARK
	0x8906: sizeOldTstamp, // SIOCGSTAMP_OLD
	0x8907: sizeOldTstamp, // SIOCGSTAMPNS_OLD
	0x890B: 0,             // SIOCADDRT
	0x890C: 0,             // SIOCDELRT
	0x8910: sizeIfreq,     // SIOCGIFNAME
	0x8913: sizeIfreq,     // SIOCGIFFLAGS
	0x8914: 0,             // SIOCSIFFLAGS
	0x8915: sizeIfreq,     // SIOCGIFADDR
	0x8916: 0,             // SIOCSIFADDR
	0x8917: sizeIfreq,     // SIOCGIFDSTADDR
	0x8918: 0,             // SIOCSIFDSTADDR
	0x8919: sizeIfreq,     // SIOCGIFBRDADDR
	0x891a: 0,             // SIOCSIFBRDADDR
	0x891b: sizeIfreq,     // SIOCGIFNETMASK
	0x891c: 0,             // SIOCSIFNETMASK
	0x891d: sizeIfreq,     // SIOCGIFMETRIC
	0x891e: 0,             // SIOCSIFMETRIC
	0x891f: sizeIfreq,     // SIOCGIFMEM
	0x8921: sizeIfreq,     // SIOCGIFMTU
	0x8922: 0,             // SIOCSIFMTU
	0x8923: 0,             // SIOCSIFNAME
	0x8924: 0,             // SIOCSIFHWADDR
	0x8927: sizeIfreq,     // SIOCGIFHWADDR
	0x8929: sizeIfreq,     // SIOCGIFSLAVE
	0x8931: 0,             // SIOCADDMULTI
	0x8932: 0,             // SIOCDELMULTI
	0x8933: sizeIfreq,     // SIOCGIFINDEX
	0x8934: 0,             // SIOCSIFPFLAGS
	0x8935: sizeIfreq,     // SIOCGIFPFLAGS
	0x8942: sizeIfreq,     // SIOCGIFTXQLEN
	0x8943: 0,             // SIOCSIFTXQLEN
	0x8947: sizeIfreq,     // SIOCGMIIPHY
	0x8948: sizeIfreq,     // SIOCGMIIREG
	0x8949: 0,             // SIOCSMIIREG
	0x894B: sizeInt,       // SIOCOUTQNSD
	0x894C: 0,             // SIOCGSKNS
	0x8953: 0,             // SIOCDARP
	0x8954: sizeArpreq,    // SIOCGARP
	0x8955: 0,             // SIOCSARP
	0x8970: sizeIfreq,     // SIOCGIFMAP
	0x8971: 0,             // SIOCSIFMAP
	0x89a0: 0,             // SIOCBRADDBR (reads the bridge name)
	0x89a1: 0,             // SIOCBRDELBR
	0x89a2: 0,             // SIOCBRADDIF (reads an ifreq)
	0x89a3: 0,             // SIOCBRDELIF
}

// IoctlOutputSize reports how many bytes the kernel writes at the third
// argument of a successful ioctl with this request, and whether gorr knows.
// Listed requests come from a table; otherwise a request encoding
// _IOC_READ with a size yields that size, and a pure _IOC_WRITE request
// yields 0 (the kernel only reads). Anything else is unknown.
// SIOCGIFCONF is irregular and reported unknown here.
func IoctlOutputSize(req uint32) (uint64, bool) {
	if n, ok := ioctlSizes[req]; ok {
		return n, true
	}
	size := IoctlSize(req)
	switch dir := IoctlDir(req); {
	case dir&iocRead != 0 && size > 0:
		return uint64(size), true
	case dir == iocWrite && size > 0:
		return 0, true
	}
	return 0, false
}

// ioctl(fd, request, arg)
func customIoctl(a Args, ret int64, m MemReader) ([]Region, error) {
	if ret < 0 {
		// A failing ioctl is assumed to have written nothing, so unknown
		// requests that fail (typically ENOTTY) do not stop a recording.
		return nil, nil
	}
	req := uint32(a[1]) // the kernel takes the request as unsigned int
	switch req {
	case SIOCGIFCONF:
		return ifconfRegions(a[2], m)
	case SIOCGIFBR, SIOCSIFBR:
		return oldBridgeRegions(a[2], ret, m)
	case FS_IOC_FIEMAP:
		return fiemapRegions(a[2], m)
	}
	n, ok := IoctlOutputSize(req)
	if !ok {
		return nil, fmt.Errorf("unsupported ioctl 0x%x", req)
	}
	return []Region{region(a[2], n)}, nil
}

// fiemapRegions: FS_IOC_FIEMAP takes struct fiemap (32 bytes) followed
// by fm_extent_count struct fiemap_extent (56 bytes each); the kernel
// fills the header and fm_mapped_extents (offset 20) extents, which the
// request's encoded size (the header only) does not cover.
func fiemapRegions(addr uint64, m MemReader) ([]Region, error) {
	const header, extent = 32, 56
	raw, err := readMem(m, addr, header)
	if err != nil {
		return nil, err
	}
	mapped := uint64(binary.LittleEndian.Uint32(raw[20:]))
	count := uint64(binary.LittleEndian.Uint32(raw[24:]))
	return []Region{region(addr, header+min(mapped, count)*extent)}, nil
}

// ifconfRegions: SIOCGIFCONF takes struct ifconf { int ifc_len; void
// *ifc_buf; }; the kernel stores ifc_len and fills that many bytes of the
// buffer (with a NULL buffer it only stores the needed length).
func ifconfRegions(addr uint64, m MemReader) ([]Region, error) {
	if addr == 0 {
		return nil, nil
	}
	raw, err := readMem(m, addr, sizeIfconf)
	if err != nil {
		return nil, err
	}
	n := uint64(max(int32(binary.LittleEndian.Uint32(raw[0:])), 0))
	buf := binary.LittleEndian.Uint64(raw[8:])
	return []Region{region(addr, sizeIfconf), region(buf, n)}, nil
}

// oldBridgeRegions: SIOCGIFBR/SIOCSIFBR take unsigned long args[3] =
// {op, arg1, arg2} (net/bridge/br_ioctl.c, old_deviceless). Only
// BRCTL_GET_BRIDGES writes: up to arg2 ints of interface indexes at arg1
// (ret of them). BRCTL_GET_VERSION and adding or deleting a bridge only
// read.
func oldBridgeRegions(addr uint64, ret int64, m MemReader) ([]Region, error) {
	const brctlGetBridges = 1
	raw, err := readMem(m, addr, 3*sizeLong)
	if err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint64(raw) != brctlGetBridges {
		return nil, nil
	}
	n := min(uint64(ret), binary.LittleEndian.Uint64(raw[16:]))
	return []Region{region(binary.LittleEndian.Uint64(raw[8:]), n*sizeInt)}, nil
}
