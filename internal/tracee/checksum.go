package tracee

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/trace"
)

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

// Checksum constants: the hash folds the pages' addresses and digests
// FNV-style, in address order.
const (
	sumBasis = uint64(14695981039346656037)
	sumPrime = 0x100000001b3
)

// Reading and hashing: runs of at most runPages pages (256 KiB) are read
// with one call, so that the CRC finds the copy in the cache (a tenth
// faster than 1 MiB here); a checksum of at least parallelPages pages is
// split between several goroutines (at most maxSumWorkers, one per CPU):
// the traced thread is stopped while it is taken, so its CPU is free too.
// (The copy is bound by memory bandwidth: two goroutines took 13-25% off
// a 100 MB heap's checksum here, ~1 us a page. A preemption point in a Go
// compiler reads some 60 MB.)
const (
	runPages      = 64
	pmChunk       = 16384 // pages per read of the page map (64 MiB of address space)
	parallelPages = 1024
	maxSumWorkers = 4
)

// ChecksumPages is ChecksumSkip that also calls page, when not nil,
// with the address and CRC-32C of each page the CRC-32C checksum covers
// (non-zero pages, in address order).
func ChecksumPages(pid int, mem *Mem, lo, hi uint64, skip []trace.Span, crc bool, page func(addr uint64, sum uint32)) (uint64, error) {
	runs, total, err := presentRuns(pid)
	if err != nil {
		return 0, err
	}
	return foldRuns(mem, splitRuns(runs, total, min(runtime.NumCPU(), maxSumWorkers), parallelPages), lo, hi, skip, crc, page), nil
}

// foldRuns hashes the runs of each part on a goroutine of its own (the
// first on the caller's) and folds the pages' digests in order.
func foldRuns(mem *Mem, parts [][]pageRun, lo, hi uint64, skip []trace.Span, crc bool, page func(addr uint64, sum uint32)) uint64 {
	sums := make([][]pageSum, len(parts))
	var wg sync.WaitGroup
	for i := 1; i < len(parts); i++ {
		wg.Go(func() { sums[i] = hashRuns(mem, parts[i], lo, hi, skip, crc) })
	}
	sums[0] = hashRuns(mem, parts[0], lo, hi, skip, crc)
	wg.Wait()
	h := sumBasis
	for _, part := range sums {
		for _, p := range part {
			h = (h ^ p.addr) * sumPrime
			h = (h ^ p.sum) * sumPrime
			if crc && page != nil {
				page(p.addr, uint32(p.sum))
			}
		}
	}
	return h | 1
}

// pageRun is a run of consecutive pages to hash, read with one call.
type pageRun struct {
	addr  uint64
	pages int
}

// pageSum is a page that holds a non-zero byte: its address and digest.
type pageSum struct{ addr, sum uint64 }

// presentRuns returns the pages of pid's writable mappings that the
// checksum reads, in address order, and their number: every page of a
// file mapping (its untouched pages hold the file), the present pages of
// an anonymous one (the others are zero).
func presentRuns(pid int) ([]pageRun, int, error) {
	maps, err := Maps(pid)
	if err != nil {
		return nil, 0, err
	}
	pm, err := osfile.Open(fmt.Sprintf("/proc/%d/pagemap", pid), os.O_RDONLY, 0)
	if err != nil {
		return nil, 0, err
	}
	defer pm.Close()
	var runs []pageRun
	total := 0
	var ent []byte
	for _, m := range maps {
		if m.Prot&unix.PROT_WRITE == 0 || strings.HasPrefix(m.Name, "[vvar") || m.Name == "[vsyscall]" {
			continue
		}
		for a := m.Start; a < m.End; a += 4096 * pmChunk {
			n := int(min((m.End-a)/4096, pmChunk))
			present := func(i int) bool { return true }
			if m.Inode == 0 {
				if ent == nil {
					ent = make([]byte, 8*pmChunk)
				}
				if k, err := pm.ReadAt(ent[:8*n], int64(a/4096*8)); err == nil && k == 8*n {
					present = func(i int) bool { return binary.LittleEndian.Uint64(ent[8*i:])&(3<<62) != 0 }
				}
			}
			for i := 0; i < n; {
				if !present(i) {
					i++
					continue
				}
				j := i
				for j < n && j-i < runPages && present(j) {
					j++
				}
				runs = append(runs, pageRun{addr: a + uint64(i)*4096, pages: j - i})
				total += j - i
				i = j
			}
		}
	}
	return runs, total, nil
}

// splitRuns cuts runs into at most workers consecutive parts of about
// the same number of pages (one part below least pages).
func splitRuns(runs []pageRun, total, workers, least int) [][]pageRun {
	if total < least || workers < 2 {
		return [][]pageRun{runs}
	}
	per := (total + workers - 1) / workers
	var parts [][]pageRun
	start, pages := 0, 0
	for i, r := range runs {
		pages += r.pages
		if pages >= per && len(parts) < workers-1 {
			parts = append(parts, runs[start:i+1])
			start, pages = i+1, 0
		}
	}
	return append(parts, runs[start:])
}

// hashRuns reads the pages of runs and returns the digest of each that
// holds a non-zero byte once the bytes of skip are cleared, leaving out
// those in [lo, hi) and those that cannot be read (the rest of a run
// after its first unreadable page).
func hashRuns(mem *Mem, runs []pageRun, lo, hi uint64, skip []trace.Span, crc bool) []pageSum {
	var out []pageSum
	buf := make([]byte, 4096*runPages)
	for _, r := range runs {
		got := mem.ReadPartial(r.addr, buf[:r.pages*4096]) / 4096
		for p := 0; p < got; p++ {
			pa := r.addr + uint64(p)*4096
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
					out = append(out, pageSum{addr: pa, sum: uint64(crc32.Checksum(pg, castagnoli))})
				}
				continue
			}
			var nz, ph uint64 = 0, 0x9e3779b97f4a7c15
			for o := 0; o < 4096; o += 8 {
				w := binary.LittleEndian.Uint64(pg[o:])
				nz |= w
				ph = (ph ^ w) * sumPrime
				ph ^= ph >> 29
			}
			if nz != 0 {
				out = append(out, pageSum{addr: pa, sum: ph})
			}
		}
	}
	return out
}
