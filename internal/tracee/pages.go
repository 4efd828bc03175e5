package tracee

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
)

// Range is a page-aligned span of addresses [Start, End).
type Range struct{ Start, End uint64 }

// pagemapScan is PAGEMAP_SCAN, _IOWR('f', 16, struct pm_scan_arg).
const pagemapScan = 0xc0606610

// Page categories of PAGEMAP_SCAN.
const (
	pageIsFile    = 1 << 2
	pageIsPresent = 1 << 3
	pageIsSwapped = 1 << 4
)

type pmScanArg struct {
	Size, Flags, Start, End, WalkEnd, Vec, VecLen, MaxPages    uint64
	CategoryInverted, CategoryMask, CategoryAnyofMask, RetMask uint64
}

type pageRegion struct{ Start, End, Categories uint64 }

// PopulatedPages lists the pages of [start, end) that hold memory of
// their own in process pid (present or swapped out). The others were
// never touched, or were dropped: they read as the backing file, or as
// zeros in an anonymous mapping, so a snapshot need not read them. It
// uses the PAGEMAP_SCAN ioctl (Linux 6.7), which skips empty page tables,
// so a sparse mapping of a terabyte costs as much as its few pages; on
// older kernels it reads /proc/pid/pagemap.
func PopulatedPages(pid int, start, end uint64) ([]Range, error) {
	f, err := osfile.Open(fmt.Sprintf("/proc/%d/pagemap", pid), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("populated pages: %w", err)
	}
	defer f.Close()
	return populated(f, pid, start, end, false)
}

// PopulatedPages is the package's PopulatedPages for m's process,
// through a pagemap file kept open with m (the recorder asks at every
// mapping it records).
//
// With anonOnly set it lists only the pages that are not the file's
// (page cache) pages: in a private mapping of a file, the pages copied
// on write, which alone can differ from the file.
func (m *Mem) PopulatedPages(start, end uint64, anonOnly bool) ([]Range, error) {
	if m.pagemap == nil {
		f, err := osfile.Open(fmt.Sprintf("/proc/%d/pagemap", m.pid), os.O_RDONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("populated pages: %w", err)
		}
		m.pagemap = f
	}
	return populated(m.pagemap, m.pid, start, end, anonOnly)
}

// populated is PopulatedPages through f, pid's pagemap.
func populated(f *os.File, pid int, start, end uint64, anonOnly bool) ([]Range, error) {
	var out []Range
	add := func(s, e uint64) {
		if n := len(out); n > 0 && out[n-1].End == s {
			out[n-1].End = e
			return
		}
		out = append(out, Range{s, e})
	}
	vec := make([]pageRegion, 512)
	for a := start; a < end; {
		arg := pmScanArg{
			Size: uint64(unsafe.Sizeof(pmScanArg{})), Start: a, End: end,
			Vec: uint64(uintptr(unsafe.Pointer(&vec[0]))), VecLen: uint64(len(vec)),
			CategoryAnyofMask: pageIsPresent | pageIsSwapped, RetMask: pageIsPresent | pageIsSwapped,
		}
		if anonOnly {
			// Inverted and required: the file bit must be clear.
			arg.CategoryInverted, arg.CategoryMask = pageIsFile, pageIsFile
		}
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), pagemapScan, uintptr(unsafe.Pointer(&arg)))
		if errno != 0 {
			if len(out) == 0 && a == start {
				return pagemapRead(f, start, end, anonOnly)
			}
			return nil, fmt.Errorf("PAGEMAP_SCAN of pid %d: %w", pid, errno)
		}
		for _, r := range vec[:n] {
			add(r.Start, r.End)
		}
		if arg.WalkEnd <= a {
			break
		}
		a = arg.WalkEnd
	}
	return out, nil
}

// pagemapRead is PopulatedPages from /proc/pid/pagemap entries.
func pagemapRead(f *os.File, start, end uint64, anonOnly bool) ([]Range, error) {
	var out []Range
	const chunk = 4096
	ent := make([]byte, 8*chunk)
	for a := start; a < end; a += chunk * 4096 {
		n := int(min((end-a)/4096, chunk))
		if k, err := f.ReadAt(ent[:8*n], int64(a/4096*8)); err != nil || k != 8*n {
			return nil, fmt.Errorf("read pagemap: %v", err)
		}
		for i := 0; i < n; i++ {
			e := binary.LittleEndian.Uint64(ent[8*i:])
			if e&(3<<62) == 0 || anonOnly && e&(1<<61) != 0 { // present|swapped; file-page or shared-anon
				continue
			}
			p := a + uint64(i)*4096
			if k := len(out); k > 0 && out[k-1].End == p {
				out[k-1].End = p + 4096
			} else {
				out = append(out, Range{p, p + 4096})
			}
		}
	}
	return out, nil
}
