package tracee

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
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
