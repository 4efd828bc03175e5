package tracee

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
)

// procmapQuery is the kernel's struct procmap_query (linux/fs.h, Linux
// 6.11): one mapping of /proc/pid/maps looked up by address.
type procmapQuery struct {
	size, flags, addr                   uint64 // in
	start, end, vmaFlags, pageSize, off uint64 // out
	inode                               uint64
	devMajor, devMinor                  uint32
	nameSize, buildIDSize               uint32 // in: room; out: length used
	nameAddr, buildIDAddr               uint64 // in
}

// procmapQueryIoctl is PROCMAP_QUERY, _IOWR('f', 17, struct procmap_query).
const procmapQueryIoctl = 3<<30 | uint32(unsafe.Sizeof(procmapQuery{}))<<16 | 'f'<<8 | 17

// The vma_flags bits of procmap_query.
const (
	queryRead   = 1
	queryWrite  = 2
	queryExec   = 4
	queryShared = 8
)

// MapAt returns the mapping of pid that covers addr (ok false: none).
// Where the kernel has PROCMAP_QUERY it asks for that one mapping, which
// costs a small part of reading the whole of /proc/pid/maps (replay
// looked up the stack's mapping at each file mapping it made that way,
// a seventh of a shell loop's replay); elsewhere it reads them all.
func MapAt(pid int, addr uint64) (m Map, ok bool, err error) {
	f, err := osfile.Open(fmt.Sprintf("/proc/%d/maps", pid), os.O_RDONLY, 0)
	if err != nil {
		return Map{}, false, fmt.Errorf("read maps: %w", err)
	}
	defer f.Close()
	var name [4096]byte
	q := procmapQuery{addr: addr, nameSize: uint32(len(name)), nameAddr: uint64(uintptr(unsafe.Pointer(&name[0])))}
	q.size = uint64(unsafe.Sizeof(q))
	_, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), uintptr(procmapQueryIoctl), uintptr(unsafe.Pointer(&q)))
	switch {
	case e == 0:
		m = Map{Start: q.start, End: q.end, Shared: q.vmaFlags&queryShared != 0, Offset: q.off,
			Dev: fmt.Sprintf("%02x:%02x", q.devMajor, q.devMinor), Inode: q.inode}
		if q.vmaFlags&queryRead != 0 {
			m.Prot |= unix.PROT_READ
		}
		if q.vmaFlags&queryWrite != 0 {
			m.Prot |= unix.PROT_WRITE
		}
		if q.vmaFlags&queryExec != 0 {
			m.Prot |= unix.PROT_EXEC
		}
		if q.nameSize > 0 {
			m.Name = string(name[:q.nameSize-1]) // (the length counts the NUL)
		}
		return m, true, nil
	case e == unix.ENOENT:
		return Map{}, false, nil
	case errors.Is(e, unix.ENOTTY) || errors.Is(e, unix.EINVAL):
		// A kernel before 6.11.
		maps, err := parseMaps(f)
		if err != nil {
			return Map{}, false, err
		}
		for _, m := range maps {
			if m.Start <= addr && addr < m.End {
				return m, true, nil
			}
		}
		return Map{}, false, nil
	}
	return Map{}, false, fmt.Errorf("read maps: PROCMAP_QUERY: %w", e)
}
