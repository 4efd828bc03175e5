package tracee

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Map is one line of /proc/pid/maps.
type Map struct {
	Start, End uint64
	Prot       uint32
	Shared     bool
	Offset     uint64
	Dev        string
	Inode      uint64
	Name       string
}

// Size is the mapping's length.
func (m Map) Size() uint64 { return m.End - m.Start }

// Maps parses /proc/pid/maps.
func Maps(pid int) ([]Map, error) {
	f, err := osfile.Open(fmt.Sprintf("/proc/%d/maps", pid), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("read maps: %w", err)
	}
	defer f.Close()
	return parseMaps(f)
}

// parseMaps parses the content of a /proc/pid/maps file. (Replay reads
// the maps at every file mapping and exec: the scanner's buffer starts
// at a page, and lines are split without allocating their fields.)
func parseMaps(r io.Reader) ([]Map, error) {
	var out []Map
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		m, ok, err := parseMapsLine(sc.Text())
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, sc.Err()
}

// parseMapsLine parses one line of a maps file (ok false for a line of
// fewer than five fields).
func parseMapsLine(line string) (m Map, ok bool, err error) {
	rest := line
	field := func() string {
		rest = strings.TrimLeft(rest, " \t")
		i := strings.IndexAny(rest, " \t")
		if i < 0 {
			f := rest
			rest = ""
			return f
		}
		f := rest[:i]
		rest = rest[i:]
		return f
	}
	rng, perms, off, dev, inode := field(), field(), field(), field(), field()
	if inode == "" {
		return m, false, nil
	}
	start, end, found := strings.Cut(rng, "-")
	if !found {
		return m, false, fmt.Errorf("maps line %q: bad range", line)
	}
	if m.Start, err = strconv.ParseUint(start, 16, 64); err != nil {
		return m, false, fmt.Errorf("maps line %q: %w", line, err)
	}
	if m.End, err = strconv.ParseUint(end, 16, 64); err != nil {
		return m, false, fmt.Errorf("maps line %q: %w", line, err)
	}
	if len(perms) >= 4 {
		if perms[0] == 'r' {
			m.Prot |= unix.PROT_READ
		}
		if perms[1] == 'w' {
			m.Prot |= unix.PROT_WRITE
		}
		if perms[2] == 'x' {
			m.Prot |= unix.PROT_EXEC
		}
		m.Shared = perms[3] == 's'
	}
	m.Offset, _ = strconv.ParseUint(off, 16, 64)
	m.Dev = dev
	m.Inode, _ = strconv.ParseUint(inode, 10, 64)
	// The name may contain spaces: it is what follows the fifth field.
	m.Name = strings.TrimSpace(rest)
	return m, true, nil
}

// FindGap returns a page-aligned address of size bytes that overlaps none
// of the given mappings, searching upwards from 0x100000.
func FindGap(size uint64, maps ...[]Map) uint64 {
	addr := uint64(0x100000)
	for {
		clash := false
		for _, ms := range maps {
			for _, m := range ms {
				if addr < m.End && m.Start < addr+size {
					clash = true
					addr = (m.End + 0xfff) &^ 0xfff
				}
			}
		}
		if !clash {
			return addr
		}
	}
}

// Checksum is a hash of the writable memory of the process, used to
// check that replay reproduces memory, not only registers. Each page
// that holds a non-zero byte contributes its address and contents, in
// address order; pages of zeros (and pages never touched, which the
// kernel's page map shows as not present) contribute nothing, so the
// hash does not depend on which pages happen to be populated. Mappings
// the kernel provides ([vvar], [vsyscall]) are left out.
func Checksum(pid int, mem *Mem) (uint64, error) { return ChecksumExcept(pid, mem, 0, 0) }

// ChecksumExcept is Checksum leaving out the pages in [lo, hi) (replay's
// own temporary mappings).
func ChecksumExcept(pid int, mem *Mem, lo, hi uint64) (uint64, error) {
	return ChecksumSkip(pid, mem, lo, hi, nil, false)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var zeroPage [4096]byte

// ChecksumSkip is ChecksumExcept with the bytes of skip counted as zero
// (the output buffers of system calls in flight, which the kernel may
// write at any moment).
// With crc, pages are hashed with CRC-32C (the CPU's crc32
// instruction, several times faster: preemption points of traces that
// say so in their header) instead of the multiply-xorshift word hash.
func ChecksumSkip(pid int, mem *Mem, lo, hi uint64, skip []trace.Span, crc bool) (uint64, error) {
	return ChecksumPages(pid, mem, lo, hi, skip, crc, nil)
}

// ChecksumPages is ChecksumSkip that also calls page, when not nil,
// with the address and CRC-32C of each page the CRC-32C checksum covers
// (non-zero pages, in address order).
func ChecksumPages(pid int, mem *Mem, lo, hi uint64, skip []trace.Span, crc bool, page func(addr uint64, sum uint32)) (uint64, error) {
	maps, err := Maps(pid)
	if err != nil {
		return 0, err
	}
	pm, err := osfile.Open(fmt.Sprintf("/proc/%d/pagemap", pid), os.O_RDONLY, 0)
	if err != nil {
		return 0, err
	}
	defer pm.Close()
	const chunk = 256     // pages per read of memory
	const pmChunk = 16384 // pages per read of pagemap (64 MiB of address space)
	const prime = 0x100000001b3
	h := uint64(14695981039346656037)
	ent := make([]byte, 8*pmChunk)
	buf := make([]byte, 4096*chunk)
	for _, m := range maps {
		if m.Prot&unix.PROT_WRITE == 0 || strings.HasPrefix(m.Name, "[vvar") || m.Name == "[vsyscall]" {
			continue
		}
		for a := m.Start; a < m.End; a += 4096 * pmChunk {
			n := int(min((m.End-a)/4096, pmChunk))
			present := func(i int) bool { return true }
			// Untouched pages of anonymous mappings are zero; a file
			// mapping's untouched pages hold the file (and are read).
			if k, err := pm.ReadAt(ent[:8*n], int64(a/4096*8)); m.Inode == 0 && err == nil && k == 8*n {
				present = func(i int) bool { return binary.LittleEndian.Uint64(ent[8*i:])&(3<<62) != 0 }
			}
			for i := 0; i < n; {
				if !present(i) {
					i++
					continue
				}
				j := i
				for j < n && j-i < chunk && present(j) {
					j++
				}
				got := mem.ReadPartial(a+uint64(i)*4096, buf[:(j-i)*4096]) / 4096
				for p := 0; p < got; p++ {
					pa := a + uint64(i+p)*4096
					if pa >= lo && pa < hi {
						continue
					}
					pg := buf[p*4096 : (p+1)*4096]
					for _, s := range skip {
						if s.Addr < pa+4096 && s.Addr+s.Len > pa {
							from, to := max(s.Addr, pa)-pa, min(s.Addr+s.Len, pa+4096)-pa
							clear(pg[from:to])
						}
					}
					if crc {
						if !bytes.Equal(pg, zeroPage[:]) {
							c := crc32.Checksum(pg, castagnoli)
							h = (h ^ pa) * prime
							h = (h ^ uint64(c)) * prime
							if page != nil {
								page(pa, c)
							}
						}
						continue
					}
					var nz, ph uint64 = 0, 0x9e3779b97f4a7c15
					for o := 0; o < 4096; o += 8 {
						w := binary.LittleEndian.Uint64(pg[o:])
						nz |= w
						ph = (ph ^ w) * prime
						ph ^= ph >> 29
					}
					if nz != 0 {
						h = (h ^ pa) * prime
						h = (h ^ ph) * prime
					}
				}
				i = j
			}
		}
	}
	return h | 1, nil
}

// FindGapNear returns a page-aligned address of size free bytes within
// reach bytes of near (closest first), or 0.
func FindGapNear(near, size, reach uint64, maps []Map) uint64 {
	free := func(a uint64) bool {
		if a < 0x10000 || a+size < a || a+size > 0x7fffffffe000 {
			return false
		}
		for _, m := range maps {
			if a < m.End && m.Start < a+size {
				return false
			}
		}
		return true
	}
	dist := func(a uint64) uint64 {
		if a > near {
			return a - near
		}
		return near - a
	}
	best := uint64(0)
	for _, m := range maps {
		for _, a := range []uint64{(m.End + 0xfff) &^ 0xfff, (m.Start - size) &^ 0xfff} {
			if free(a) && dist(a) <= reach && (best == 0 || dist(a) < dist(best)) {
				best = a
			}
		}
	}
	return best
}

// StackSum is an FNV-1a hash of the 256 bytes at a thread's stack
// pointer (within the mapping that holds it): the current frame, where
// unoptimised loops keep their variables. It helps identify a thread's
// state when a checksum of all memory cannot be taken. The span is kept
// short so that it stays within the thread's own stack (a Go stack is a
// small block of the heap, next to memory that blocked system calls of
// other threads may be writing).
func StackSum(pid int, mem *Mem, sp uint64) uint64 {
	maps, err := Maps(pid)
	if err != nil {
		return 1
	}
	lo, hi := sp, sp+256
	for _, m := range maps {
		if sp >= m.Start && sp < m.End {
			lo, hi = max(lo, m.Start), min(hi, m.End)
			break
		}
	}
	if hi <= lo {
		return 1
	}
	buf := make([]byte, hi-lo)
	n := mem.ReadPartial(lo, buf)
	h := uint64(14695981039346656037)
	for _, c := range buf[:n] {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h | 1
}
