package linux

import (
	"encoding/binary"
	"fmt"
)

// MaxRegion is the largest single output region OutputRegions accepts.
// Anything bigger is almost certainly a misdecoded argument; the recording
// fails rather than trying to save hundreds of megabytes.
const MaxRegion = 256 << 20

// pageSize is the x86-64 base page size (used by mincore).
const pageSize = 4096

// OutputRegions returns the spans of tracee memory the kernel may have
// written during the call described by s, given the raw arguments a and
// the raw return value ret (negative errno on failure), as seen at syscall
// exit. m reads tracee memory for calls that must follow pointers; it may be
// nil for calls that never need it.
//
// The declarative Out parameters are applied first (when ret is negative
// only those marked OnError), then Custom, which is always called and
// decides itself what a failure means. NULL pointers and empty spans never
// produce a region; a span longer than MaxRegion is an error.
//
// Regions are an upper bound: they may cover bytes the kernel did not
// actually change (for instance a truncated socket address), and on error
// paths they may point at memory that is not readable. The recorder should
// save whatever part of each region it can read.
func (s *Syscall) OutputRegions(a Args, ret int64, m MemReader) ([]Region, error) {
	var rb regionBuilder
	failed := ret < 0
	for _, p := range s.Out {
		if failed && !p.OnError {
			continue
		}
		if p.Arg < 0 || p.Arg >= len(a) {
			return nil, fmt.Errorf("%s: output parameter refers to argument %d", s.Name, p.Arg)
		}
		addr := a[p.Arg]
		if addr == 0 {
			continue
		}
		n, err := p.Size.eval(a, ret, m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		rb.add(addr, n)
	}
	if s.Custom != nil {
		extra, err := s.Custom(a, ret, m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, r := range extra {
			rb.add(r.Addr, r.Len)
		}
	}
	if rb.err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, rb.err)
	}
	return rb.out, nil
}

// eval computes the byte count of a size rule.
func (sz Size) eval(a Args, ret int64, m MemReader) (uint64, error) {
	switch sz.Kind {
	case SizeFixed:
		return sz.N, nil
	case SizeArg:
		if sz.Arg < 0 || sz.Arg >= len(a) {
			return 0, fmt.Errorf("size refers to argument %d", sz.Arg)
		}
		return scale(a[sz.Arg], sz.N)
	case SizeArgPtr:
		if sz.Arg < 0 || sz.Arg >= len(a) {
			return 0, fmt.Errorf("size refers to argument %d", sz.Arg)
		}
		if a[sz.Arg] == 0 {
			return 0, nil
		}
		v, err := readU32(m, a[sz.Arg])
		if err != nil {
			return 0, err
		}
		return uint64(v), nil
	case SizeRet:
		if ret < 0 {
			return 0, nil
		}
		return scale(uint64(ret), sz.N)
	}
	return 0, fmt.Errorf("unknown size kind %d", sz.Kind)
}

// scale multiplies v by n (when n > 0), refusing results past MaxRegion.
func scale(v, n uint64) (uint64, error) {
	if n == 0 || v == 0 {
		return v, nil
	}
	if v > MaxRegion/n+1 {
		return 0, fmt.Errorf("output size %d*%d exceeds %d bytes", v, n, uint64(MaxRegion))
	}
	return v * n, nil
}

// regionBuilder collects regions, dropping NULL and empty ones and
// remembering the first oversized one as an error.
type regionBuilder struct {
	out []Region
	err error
}

func (rb *regionBuilder) add(addr, n uint64) {
	if addr == 0 || n == 0 || rb.err != nil {
		return
	}
	if n > MaxRegion {
		rb.err = fmt.Errorf("output region of %d bytes at 0x%x exceeds %d bytes", n, addr, uint64(MaxRegion))
		return
	}
	if addr+n < addr {
		rb.err = fmt.Errorf("output region of %d bytes at 0x%x wraps the address space", n, addr)
		return
	}
	rb.out = append(rb.out, Region{Addr: addr, Len: n})
}

// region is a shorthand used by the custom handlers; NULL and empty
// regions are filtered later by OutputRegions.
func region(addr, n uint64) Region { return Region{Addr: addr, Len: n} }

// readMem reads n bytes of tracee memory at addr.
func readMem(m MemReader, addr uint64, n int) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("need to read tracee memory at 0x%x but no MemReader given", addr)
	}
	buf := make([]byte, n)
	if err := m.ReadMem(addr, buf); err != nil {
		return nil, fmt.Errorf("reading %d bytes at 0x%x: %w", n, addr, err)
	}
	return buf, nil
}

// readU32 reads a little-endian 32-bit value at addr.
func readU32(m MemReader, addr uint64) (uint32, error) {
	b, err := readMem(m, addr, 4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// readU64 reads a little-endian 64-bit value at addr.
func readU64(m MemReader, addr uint64) (uint64, error) {
	b, err := readMem(m, addr, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// maxIovecs is UIO_MAXIOV: the kernel rejects longer iovec arrays.
const maxIovecs = 1024

// iovecSize is sizeof(struct iovec) on x86-64: void *base; size_t len.
const iovecSize = 16

// iovRegions reads cnt iovecs at iov and spreads total bytes over their
// buffers in order, as the kernel does for scatter reads.
func iovRegions(m MemReader, iov, cnt, total uint64) ([]Region, error) {
	if iov == 0 || cnt == 0 || total == 0 {
		return nil, nil
	}
	if cnt > maxIovecs {
		return nil, fmt.Errorf("iovec count %d exceeds %d", cnt, maxIovecs)
	}
	raw, err := readMem(m, iov, int(cnt)*iovecSize)
	if err != nil {
		return nil, err
	}
	var out []Region
	for i := uint64(0); i < cnt && total > 0; i++ {
		base := binary.LittleEndian.Uint64(raw[i*iovecSize:])
		n := min(binary.LittleEndian.Uint64(raw[i*iovecSize+8:]), total)
		out = append(out, region(base, n))
		total -= n
	}
	return out, nil
}
