package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// Block format: both streams (events and data) are a sequence of blocks,
// each a 16-byte header followed by a zstd frame:
//
//	magic   [4]byte  "GRB1"
//	clen    uint32   length of the compressed payload (little endian)
//	ulen    uint32   length of the uncompressed payload (little endian)
//	crc     uint32   CRC-32C (Castagnoli) of the compressed payload
//	payload [clen]byte
const (
	blockMagic      = "GRB1"
	blockHeaderSize = 16
	// maxBlockLen bounds clen and ulen; readers reject larger blocks.
	maxBlockLen = 64 << 20

	eventsBlockSize = 256 << 10 // target uncompressed size of an events block
	dataBlockSize   = 1 << 20   // target uncompressed size of a data block
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CorruptError reports damage in a stream of a trace. Offset is the file
// offset of the block in which the damage was found (for a frame or a
// data reference, the block in which the frame starts).
type CorruptError struct {
	File   string // "events" or "data"
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("trace %s: corrupt block at offset %d: %s", e.File, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// tornError reports a stream that ends in the middle of a block or of a
// frame: the normal end of a recording killed while writing. The Reader
// turns it into ErrIncomplete (incomplete trace) or a CorruptError.
type tornError struct {
	file   string
	offset int64
	reason string
}

func (e *tornError) Error() string {
	return fmt.Sprintf("trace %s: truncated at offset %d: %s", e.file, e.offset, e.reason)
}

// smallBlockLen is the size below which a block is compressed at zstd's
// fastest level instead of its default one: on blocks this small the
// fastest level compresses within 1% as well (26867 against 26828 bytes
// for 40 KB of libc), while full blocks keep the default's 2-17% smaller
// output. Either level writes an ordinary zstd frame.
const smallBlockLen = 128 << 10

// denseAfter is how many bytes a writer compresses at the fastest level
// before it uses the default level for full blocks. The default level's
// first block costs 4-6 ms, most of it the first touch of its 1.3 MB of
// match tables (on a VM whose page faults cost 10-13 µs), and a short
// recording waited for it at its end: python's start-up (30 KB of
// compressed data) spent 3-5 ms in its last flush. Past this volume the
// recording is long enough to pay for the tables once.
const denseAfter = 4 << 20

// windowSize is the encoders' window: no block is larger, and the
// default 8 MB window made the encoders allocate 24 MB of history, which
// alone started a garbage collection in short recordings.
const windowSize = dataBlockSize

// storedBytes is how many bytes a writer stores before it compresses
// any: its first blocks are zstd frames of raw (uncompressed) blocks,
// which any zstd decoder reads. An encoder's first use costs more than
// the compression itself: 9-12 ms of CPU for python's 600 KB of data
// against 2.7 ms for the same bytes again, most of it the first touch of
// its 2.5 MB of tables and history on a VM whose page faults cost 10-13
// µs, on a machine of two CPUs one of which runs the tracees. A short
// recording's trace is then larger (python's 0.29 MB becomes 0.73 MB);
// past this volume the recording is long enough to pay for the tables
// once.
const storedBytes = 1 << 20

// blockEncoder compresses blocks, each at the level its size and the
// volume compressed so far call for.
type blockEncoder struct {
	fast, dense *zstd.Encoder
	done        int // bytes encoded so far
}

func newEncoder() (*blockEncoder, error) {
	fast, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(windowSize))
	if err != nil {
		return nil, err
	}
	dense, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithWindowSize(windowSize))
	if err != nil {
		fast.Close()
		return nil, err
	}
	return &blockEncoder{fast: fast, dense: dense}, nil
}

// encode appends the zstd frame of src to dst.
func (e *blockEncoder) encode(src, dst []byte) []byte {
	stored := e.done < storedBytes
	dense := len(src) >= smallBlockLen && e.done >= denseAfter
	e.done += len(src)
	switch {
	case stored:
		return appendStoredFrame(dst, src)
	case dense:
		return e.dense.EncodeAll(src, dst)
	}
	return e.fast.EncodeAll(src, dst)
}

// storing tells whether the next bytes are stored rather than
// compressed.
func (e *blockEncoder) storing() bool { return e.done < storedBytes }

// Raw zstd frames (RFC 8878): a single-segment frame header with the
// content size in 4 bytes, then raw blocks of at most 128 KB, each after
// a 3-byte header, the last one flagged.
const (
	zstdMagic       = 0xFD2FB528
	frameHeaderLen  = 4 + 1 + 4
	rawBlockHdrLen  = 3
	maxRawBlockLen  = 128 << 10
	frameDescriptor = 2<<6 | 1<<5 // Frame_Content_Size in 4 bytes, Single_Segment
)

// appendStoredFrame appends src to dst as a zstd frame of raw blocks.
func appendStoredFrame(dst, src []byte) []byte {
	dst = appendFrameHeader(dst, len(src))
	for {
		n := min(len(src), maxRawBlockLen)
		dst = appendRawBlockHeader(dst, n, n == len(src))
		dst = append(dst, src[:n]...)
		src = src[n:]
		if len(src) == 0 {
			return dst
		}
	}
}

func appendFrameHeader(dst []byte, n int) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, zstdMagic)
	dst = append(dst, frameDescriptor)
	return binary.LittleEndian.AppendUint32(dst, uint32(n))
}

func appendRawBlockHeader(dst []byte, n int, last bool) []byte {
	h := uint32(n) << 3 // Block_Type 0: raw
	if last {
		h |= 1
	}
	return append(dst, byte(h), byte(h>>8), byte(h>>16))
}

// storedBlocks is appendBlocks for bytes that are stored: it counts them
// as encoded and returns the blocks as slices to write one after the
// other (writev), the headers in hdrs and the payload in src itself, so
// that the stored bytes are not copied (a copy into a fresh buffer cost
// a page fault every 4 KB).
func (e *blockEncoder) storedBlocks(src []byte, size int) [][]byte {
	e.done += len(src)
	nblocks := (len(src) + size - 1) / size
	chunks := (size+maxRawBlockLen-1)/maxRawBlockLen*nblocks + nblocks
	hdrs := make([]byte, 0, nblocks*(blockHeaderSize+frameHeaderLen)+chunks*rawBlockHdrLen)
	var iov [][]byte
	for len(src) > 0 {
		n := min(len(src), size)
		block := src[:n]
		src = src[n:]
		start := len(hdrs)
		hdrs = hdrs[:start+blockHeaderSize]
		hdrs = appendFrameHeader(hdrs, n)
		clen := frameHeaderLen + n + (n+maxRawBlockLen-1)/maxRawBlockLen*rawBlockHdrLen
		h := hdrs[start : start+blockHeaderSize]
		copy(h[0:4], blockMagic)
		binary.LittleEndian.PutUint32(h[4:8], uint32(clen))
		binary.LittleEndian.PutUint32(h[8:12], uint32(n))
		crc := crc32.Update(0, castagnoli, hdrs[start+blockHeaderSize:])
		seg := start // the headers written since the last payload slice
		for len(block) > 0 {
			k := min(len(block), maxRawBlockLen)
			hs := len(hdrs)
			hdrs = appendRawBlockHeader(hdrs, k, k == len(block))
			crc = crc32.Update(crc, castagnoli, hdrs[hs:])
			crc = crc32.Update(crc, castagnoli, block[:k])
			iov = append(iov, hdrs[seg:len(hdrs):len(hdrs)], block[:k])
			seg = len(hdrs)
			block = block[k:]
		}
		binary.LittleEndian.PutUint32(h[12:16], crc)
	}
	return iov
}

func (e *blockEncoder) Close() {
	e.fast.Close()
	e.dense.Close()
}

func newDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(maxBlockLen),
		zstd.WithDecoderMaxWindow(maxBlockLen),
		zstd.WithDecodeAllCapLimit(true))
}

// appendBlocks compresses src in blocks of at most size uncompressed
// bytes and appends them (headers included) to dst.
func appendBlocks(dst []byte, enc *blockEncoder, src []byte, size int) []byte {
	for len(src) > 0 {
		n := min(len(src), size)
		start := len(dst)
		dst = append(dst, make([]byte, blockHeaderSize)...)
		dst = enc.encode(src[:n], dst)
		payload := dst[start+blockHeaderSize:]
		h := dst[start : start+blockHeaderSize]
		copy(h[0:4], blockMagic)
		binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
		binary.LittleEndian.PutUint32(h[8:12], uint32(n))
		binary.LittleEndian.PutUint32(h[12:16], crc32.Checksum(payload, castagnoli))
		src = src[n:]
	}
	return dst
}

// blockReader reads one stream block by block and hands out its
// uncompressed bytes sequentially.
type blockReader struct {
	name     string
	f        *os.File      // the stream's file (nil when missing)
	r        *bufio.Reader // nil for a missing (empty) stream
	dec      *zstd.Decoder
	next     int64  // file offset of the next block header
	blockOff int64  // file offset of the current block
	buf      []byte // uncompressed current block
	pos      int    // read position in buf
	base     uint64 // stream offset of buf[0]
	cbuf     []byte // compressed payload scratch
	err      error  // sticky: io.EOF, *tornError or *CorruptError
}

func (b *blockReader) corrupt(off int64, format string, args ...any) error {
	return &CorruptError{File: b.name, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// offset returns the uncompressed stream offset of the next byte.
func (b *blockReader) offset() uint64 { return b.base + uint64(b.pos) }

// load reads the next block. It returns io.EOF at a clean end of the
// file, *tornError for a block cut short, *CorruptError for damage.
func (b *blockReader) load() error {
	if b.err != nil {
		return b.err
	}
	b.err = b.loadBlock()
	return b.err
}

func (b *blockReader) loadBlock() error {
	if b.r == nil {
		return io.EOF
	}
	off := b.next
	var h [blockHeaderSize]byte
	n, err := io.ReadFull(b.r, h[:])
	if err == io.EOF {
		return io.EOF
	}
	if err == io.ErrUnexpectedEOF {
		return &tornError{b.name, off, fmt.Sprintf("block header cut after %d of %d bytes", n, blockHeaderSize)}
	}
	if err != nil {
		return fmt.Errorf("trace %s: read block at offset %d: %w", b.name, off, err)
	}
	if string(h[0:4]) != blockMagic {
		return b.corrupt(off, "bad magic %q", h[0:4])
	}
	clen := binary.LittleEndian.Uint32(h[4:8])
	ulen := binary.LittleEndian.Uint32(h[8:12])
	sum := binary.LittleEndian.Uint32(h[12:16])
	if clen == 0 || clen > maxBlockLen {
		return b.corrupt(off, "compressed length %d out of range", clen)
	}
	if ulen == 0 || ulen > maxBlockLen {
		return b.corrupt(off, "uncompressed length %d out of range", ulen)
	}
	// Read the payload in steps so that a hostile length in a short file
	// does not allocate more than what is really there (plus one step).
	b.cbuf = b.cbuf[:0]
	for uint32(len(b.cbuf)) < clen {
		step := min(int(clen)-len(b.cbuf), 1<<20)
		have := len(b.cbuf)
		if cap(b.cbuf)-have < step {
			nb := make([]byte, have, have+max(step, have))
			copy(nb, b.cbuf)
			b.cbuf = nb
		}
		b.cbuf = b.cbuf[:have+step]
		n, err := io.ReadFull(b.r, b.cbuf[have:])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return &tornError{b.name, off, fmt.Sprintf("block payload cut after %d of %d bytes", have+n, clen)}
		}
		if err != nil {
			return fmt.Errorf("trace %s: read block at offset %d: %w", b.name, off, err)
		}
	}
	if crc32.Checksum(b.cbuf, castagnoli) != sum {
		return b.corrupt(off, "crc mismatch")
	}
	oldLen := uint64(len(b.buf))
	dst := b.buf[:0]
	if cap(dst) < int(ulen) {
		dst = make([]byte, 0, ulen)
	}
	out, err := b.dec.DecodeAll(b.cbuf, dst[:0:ulen])
	if err != nil {
		return b.corrupt(off, "decompression failed: %v", err)
	}
	if len(out) != int(ulen) {
		return b.corrupt(off, "decompressed to %d bytes, header says %d", len(out), ulen)
	}
	b.base += oldLen
	b.buf = out
	b.pos = 0
	b.blockOff = off
	b.next = off + blockHeaderSize + int64(clen)
	return nil
}

// readByte returns the next byte of the stream, loading blocks as needed.
func (b *blockReader) readByte() (byte, error) {
	for b.pos == len(b.buf) {
		if err := b.load(); err != nil {
			return 0, err
		}
	}
	c := b.buf[b.pos]
	b.pos++
	return c, nil
}

// appendN appends the next n bytes of the stream to dst. The memory used
// grows with the bytes really read, not with n.
func (b *blockReader) appendN(dst []byte, n uint64) ([]byte, error) {
	for n > 0 {
		for b.pos == len(b.buf) {
			if err := b.load(); err != nil {
				return dst, err
			}
		}
		k := min(uint64(len(b.buf)-b.pos), n)
		dst = append(dst, b.buf[b.pos:b.pos+int(k)]...)
		b.pos += int(k)
		n -= k
	}
	return dst, nil
}

// skip discards the next n bytes of the stream.
func (b *blockReader) skip(n uint64) error {
	for n > 0 {
		for b.pos == len(b.buf) {
			if err := b.load(); err != nil {
				return err
			}
		}
		k := min(uint64(len(b.buf)-b.pos), n)
		b.pos += int(k)
		n -= k
	}
	return nil
}

// isEnd reports whether err is a (clean or torn) end of the stream.
func isEnd(err error) bool {
	var t *tornError
	return err == io.EOF || errors.As(err, &t)
}

// streamMark is a read position of a stream: the block holding it (file
// offset and stream offset of its first byte) and the position in it.
type streamMark struct {
	blockOff int64
	base     uint64
	pos      int
	loaded   bool
}

func (b *blockReader) mark() streamMark {
	return streamMark{blockOff: b.blockOff, base: b.base, pos: b.pos, loaded: b.buf != nil}
}

// seek moves to m: the file is repositioned at m's block, which is read
// again (one block is decompressed, whatever the distance).
func (b *blockReader) seek(m streamMark) error {
	if b.f == nil {
		return nil
	}
	if !m.loaded {
		// Marked before the first block was read: back to the start.
		if _, err := b.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("trace %s: seek to 0: %w", b.name, err)
		}
		b.r.Reset(b.f)
		b.next, b.blockOff, b.buf, b.pos, b.base, b.err = 0, 0, nil, 0, 0, nil
		return nil
	}
	if _, err := b.f.Seek(m.blockOff, io.SeekStart); err != nil {
		return fmt.Errorf("trace %s: seek to %d: %w", b.name, m.blockOff, err)
	}
	b.r.Reset(b.f)
	b.next, b.buf, b.pos, b.base, b.err = m.blockOff, nil, 0, m.base, nil
	if err := b.load(); err != nil {
		return err
	}
	if m.pos > len(b.buf) {
		return b.corrupt(m.blockOff, "mark position %d beyond the block (%d bytes)", m.pos, len(b.buf))
	}
	b.pos = m.pos
	return nil
}
