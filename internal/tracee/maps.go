package tracee

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read maps: %w", err)
	}
	defer f.Close()
	var out []Map
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		var m Map
		se := strings.SplitN(fields[0], "-", 2)
		if len(se) != 2 {
			return nil, fmt.Errorf("maps line %q: bad range", line)
		}
		if m.Start, err = strconv.ParseUint(se[0], 16, 64); err != nil {
			return nil, fmt.Errorf("maps line %q: %w", line, err)
		}
		if m.End, err = strconv.ParseUint(se[1], 16, 64); err != nil {
			return nil, fmt.Errorf("maps line %q: %w", line, err)
		}
		perms := fields[1]
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
		m.Offset, _ = strconv.ParseUint(fields[2], 16, 64)
		m.Dev = fields[3]
		m.Inode, _ = strconv.ParseUint(fields[4], 10, 64)
		if len(fields) >= 6 {
			// The name may contain spaces: it is what follows the fifth field.
			rest := line
			for k := 0; k < 5; k++ {
				rest = strings.TrimLeft(rest, " \t")
				if i := strings.IndexAny(rest, " \t"); i >= 0 {
					rest = rest[i:]
				}
			}
			m.Name = strings.TrimSpace(rest)
		}
		out = append(out, m)
	}
	return out, sc.Err()
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

// Checksum is an FNV-1a hash of the writable memory of the process (in
// address order, with each readable page's address), used to check that
// replay reproduces memory, not only registers. Mappings the kernel
// provides ([vvar], [vsyscall]) are left out.
func Checksum(pid int, mem *Mem) (uint64, error) {
	maps, err := Maps(pid)
	if err != nil {
		return 0, err
	}
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	buf := make([]byte, 4096)
	for _, m := range maps {
		if m.Prot&unix.PROT_WRITE == 0 || strings.HasPrefix(m.Name, "[vvar") || m.Name == "[vsyscall]" {
			continue
		}
		for a := m.Start; a < m.End; a += 4096 {
			if mem.ReadPartial(a, buf) != len(buf) {
				continue
			}
			for i := 0; i < 8; i++ {
				h = (h ^ uint64(byte(a>>(8*i)))) * prime
			}
			for _, c := range buf {
				h = (h ^ uint64(c)) * prime
			}
		}
	}
	return h | 1, nil
}
