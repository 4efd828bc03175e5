// Package tracee reads and writes a stopped tracee's address space,
// parses its mappings, injects system calls into it and patches its vDSO.
// Calls that resume the tracee (Inject) must run on the tracer thread.
package tracee

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Mem accesses one address space.
type Mem struct {
	pid     int
	f       *os.File
	pagemap *os.File // opened by PopulatedPages
}

// OpenMem opens the address space of process (or thread) pid.
func OpenMem(pid int) (*Mem, error) {
	f, err := osfile.Open(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open tracee memory: %w", err)
	}
	return &Mem{pid: pid, f: f}, nil
}

// Close releases the memory file.
func (m *Mem) Close() error {
	if m == nil || m.f == nil {
		return nil
	}
	if m.pagemap != nil {
		m.pagemap.Close()
		m.pagemap = nil
	}
	return m.f.Close()
}

// ReadMem reads len(buf) bytes at addr.
func (m *Mem) ReadMem(addr uint64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(m.pid, local, remote, 0)
	if err == nil && n == len(buf) {
		return nil
	}
	// Fall back to /proc/pid/mem, which also reads unreadable pages.
	k, err2 := m.f.ReadAt(buf, int64(addr))
	if err2 == nil && k == len(buf) {
		return nil
	}
	if err == nil {
		err = err2
	}
	return fmt.Errorf("read %d bytes at 0x%x in pid %d: %w", len(buf), addr, m.pid, err)
}

// ReadPartial reads as much of [addr, addr+len(buf)) as is mapped and
// readable, page by page, and returns the number of leading bytes read.
func (m *Mem) ReadPartial(addr uint64, buf []byte) int {
	if m.ReadMem(addr, buf) == nil {
		return len(buf)
	}
	done := 0
	for done < len(buf) {
		next := (addr + uint64(done) + 4096) &^ 4095
		n := int(next - addr - uint64(done))
		if n > len(buf)-done {
			n = len(buf) - done
		}
		if m.ReadMem(addr+uint64(done), buf[done:done+n]) != nil {
			break
		}
		done += n
	}
	return done
}

// WriteMem writes data at addr (works on read-only and code pages).
func (m *Mem) WriteMem(addr uint64, data []byte) error {
	for len(data) > 0 {
		n, err := m.f.WriteAt(data, int64(addr))
		if err != nil {
			addr += uint64(n)
			data = data[n:]
			if k := m.writeShared(addr, data); k > 0 {
				data = data[k:]
				addr += uint64(k)
				continue
			}
			return fmt.Errorf("write %d bytes at 0x%x in pid %d: %w", len(data), addr, m.pid, err)
		}
		data = data[n:]
		addr += uint64(n)
	}
	return nil
}

// byAddress returns a copy of ws sorted by address, nil when two of them
// overlap (only making them in their order then leaves the later one's
// bytes).
func byAddress(ws []trace.MemWrite) []trace.MemWrite {
	sorted := slices.Clone(ws)
	slices.SortFunc(sorted, func(a, b trace.MemWrite) int { return cmp.Compare(a.Addr, b.Addr) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Addr < sorted[i-1].Addr+uint64(len(sorted[i-1].Data)) {
			return nil
		}
	}
	return sorted
}

// writeInOrder makes the writes ws one at a time, in their order.
func (m *Mem) writeInOrder(ws []trace.MemWrite) error {
	for _, w := range ws {
		if err := m.WriteMem(w.Addr, w.Data); err != nil {
			return err
		}
	}
	return nil
}

// WriteAll makes the writes ws, merging those that are adjacent in
// memory into one write each: the trampolines a patch writes side by
// side cost one system call instead of one each. Overlapping writes are
// made one at a time, in order.
func (m *Mem) WriteAll(ws []trace.MemWrite) error {
	sorted := byAddress(ws)
	if sorted == nil {
		return m.writeInOrder(ws)
	}
	var run []byte
	for i := 0; i < len(sorted); {
		at := sorted[i].Addr
		run = append(run[:0], sorted[i].Data...)
		j := i + 1
		for ; j < len(sorted) && sorted[j].Addr == at+uint64(len(run)); j++ {
			run = append(run, sorted[j].Data...)
		}
		if err := m.WriteMem(at, run); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// WriteCode makes the writes ws into memory that no thread of the tracee
// writes meanwhile (the patches of executable mappings, a fresh exec's
// snapshot): writes less than a page apart are made together, by reading
// the bytes between them and writing the whole span at once, so that the
// int3s and jumps planted over a library cost a few system calls, not
// one each. Overlapping writes are made one at a time, in order.
func (m *Mem) WriteCode(ws []trace.MemWrite) error {
	sorted := byAddress(ws)
	if sorted == nil {
		return m.writeInOrder(ws)
	}
	const maxGap, maxSpan = 4096, 256 << 10
	var span []byte
	for i := 0; i < len(sorted); {
		at, end := sorted[i].Addr, sorted[i].Addr+uint64(len(sorted[i].Data))
		j := i + 1
		for ; j < len(sorted) && sorted[j].Addr >= end && sorted[j].Addr-end <= maxGap && sorted[j].Addr+uint64(len(sorted[j].Data))-at <= maxSpan; j++ {
			end = sorted[j].Addr + uint64(len(sorted[j].Data))
		}
		if j-i < 3 {
			for _, w := range sorted[i:j] {
				if err := m.WriteMem(w.Addr, w.Data); err != nil {
					return err
				}
			}
			i = j
			continue
		}
		span = slices.Grow(span[:0], int(end-at))[:end-at]
		if err := m.ReadMem(at, span); err != nil {
			return err
		}
		for _, w := range sorted[i:j] {
			copy(span[w.Addr-at:], w.Data)
		}
		if err := m.WriteMem(at, span); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// writeShared writes the start of data at addr through the file behind a
// MAP_SHARED mapping without write permission, which /proc/pid/mem
// refuses to write (the kernel forces writes only into private,
// copy-on-write mappings). It writes no further than the mapping and the
// file's end, and returns how many bytes it wrote.
func (m *Mem) writeShared(addr uint64, data []byte) int {
	maps, err := Maps(m.pid)
	if err != nil {
		return 0
	}
	for _, mp := range maps {
		if !mp.Shared || addr < mp.Start || addr >= mp.End {
			continue
		}
		f, err := osfile.Open(fmt.Sprintf("/proc/%d/map_files/%x-%x", m.pid, mp.Start, mp.End), os.O_RDWR, 0)
		if err != nil {
			return 0
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return 0
		}
		off := int64(mp.Offset + addr - mp.Start)
		n := min(int64(len(data)), int64(mp.End-addr), fi.Size()-off)
		if n <= 0 {
			// Past the end of the file in its last page: the bytes are
			// not part of the file (a later extension zeroes them).
			return int(max(0, min(int64(len(data)), int64(mp.End-addr), (fi.Size()+4095)&^4095-off)))
		}
		k, _ := f.WriteAt(data[:n], off)
		return k
	}
	return 0
}

// WriteFast writes data with process_vm_writev (writable pages only),
// falling back to WriteMem.
func (m *Mem) WriteFast(addr uint64, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &data[0], Len: uint64(len(data))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(data)}}
	n, err := unix.ProcessVMWritev(m.pid, local, remote, 0)
	if err == nil && n == len(data) {
		return nil
	}
	return m.WriteMem(addr, data)
}

// Region is a span of tracee memory and the local bytes it is read
// into or written from.
type Region struct {
	Addr uint64
	Data []byte
}

// ReadRegions reads every region, with one process_vm_readv when they
// are all readable (else one read each, as ReadMem).
func (m *Mem) ReadRegions(rs ...Region) error {
	return m.vectored(rs, unix.ProcessVMReadv, m.ReadMem)
}

// WriteRegions writes every region, with one process_vm_writev when
// they are all writable (else one write each, as WriteMem).
func (m *Mem) WriteRegions(rs ...Region) error {
	return m.vectored(rs, unix.ProcessVMWritev, m.WriteMem)
}

func (m *Mem) vectored(rs []Region, rw func(int, []unix.Iovec, []unix.RemoteIovec, uint) (int, error), one func(uint64, []byte) error) error {
	var local [4]unix.Iovec
	var remote [4]unix.RemoteIovec
	want, n := 0, 0
	for _, r := range rs {
		if len(r.Data) == 0 {
			continue
		}
		if n == len(local) {
			n = -1
			break
		}
		local[n] = unix.Iovec{Base: &r.Data[0], Len: uint64(len(r.Data))}
		remote[n] = unix.RemoteIovec{Base: uintptr(r.Addr), Len: len(r.Data)}
		want += len(r.Data)
		n++
	}
	if n > 0 {
		if k, err := rw(m.pid, local[:n], remote[:n], 0); err == nil && k == want {
			return nil
		}
	}
	if n == 0 {
		return nil
	}
	for _, r := range rs {
		if err := one(r.Addr, r.Data); err != nil {
			return err
		}
	}
	return nil
}

// ReadU64 reads a little-endian word.
func (m *Mem) ReadU64(addr uint64) (uint64, error) {
	var v uint64
	b := unsafe.Slice((*byte)(unsafe.Pointer(&v)), 8)
	err := m.ReadMem(addr, b)
	return v, err
}

// ErrGone means the tracee no longer exists.
var ErrGone = errors.New("tracee is gone")
