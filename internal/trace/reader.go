package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// Reader reads a trace sequentially. It holds one block of each stream
// in memory at a time. A Reader is not safe for concurrent use.
type Reader struct {
	dir    string
	hdr    Header
	files  []*os.File
	dec    *zstd.Decoder
	events blockReader
	data   blockReader
	n      uint64 // events returned so far
	// pending is the exit event of a paired frame whose entry Next
	// returned last (evPair).
	pending *Event
	// run is the run frame whose calls are being returned (evRun); its
	// records are in frame. runStart is the position before its frame:
	// a Mark inside a run is that position and the events to read again
	// (Mark.skip), so that no Mark keeps a run's records.
	run      *callRun
	runStart Mark
	// base is the last registers read (evRegsDelta).
	base  regsBase
	slab  evSlab // where decoded events are allocated
	frame []byte
	err   error // sticky
	// frameOff is the file offset of the events block in which the frame
	// being decoded starts.
	frameOff int64
	// pf, once Prefetch was called, decodes ahead on its own goroutine;
	// the fields above are then its own.
	pf *prefetcher
}

// Open opens the trace in dir for reading. It fails when dir does not
// exist, is not a trace (ErrNotTrace), has an unreadable or corrupt
// header.json, or needs a newer reader (ErrUnsupportedVersion).
func Open(dir string) (*Reader, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("trace: open %s: %w", dir, err)
	}
	dir = abs
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("trace: open %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("trace: open %s: %w (not a directory)", dir, ErrNotTrace)
	}
	h, err := readHeader(dir)
	if err != nil {
		return nil, err
	}
	r := &Reader{dir: dir, hdr: h}
	if r.dec, err = newDecoder(); err != nil {
		return nil, fmt.Errorf("trace: open %s: %w", dir, err)
	}
	r.events.name, r.data.name = EventsFile, DataFile
	r.events.dec, r.data.dec = r.dec, r.dec
	for _, s := range []*blockReader{&r.events, &r.data} {
		f, err := os.Open(filepath.Join(dir, s.name))
		if err != nil {
			// A recorder killed right after writing header.json may
			// leave no streams: that trace is just empty.
			if errors.Is(err, os.ErrNotExist) && !h.Complete {
				continue
			}
			r.Close()
			return nil, fmt.Errorf("trace: open %s: %w", dir, err)
		}
		r.files = append(r.files, f)
		s.f = f
		s.r = bufio.NewReaderSize(f, 64<<10)
	}
	return r, nil
}

var errReaderClosed = errors.New("trace: reader is closed")

// Header returns the header of the trace.
func (r *Reader) Header() Header { return r.hdr }

// Dir returns the absolute path of the trace directory.
func (r *Reader) Dir() string { return r.dir }

// Path returns the absolute path of rel (a name relative to the trace
// directory, such as Mapping.File). The result is always inside the
// trace directory: ".." components cannot leave it.
func (r *Reader) Path(rel string) string {
	return filepath.Join(r.dir, filepath.Clean("/"+rel))
}

// Close releases the files of the reader.
func (r *Reader) Close() error {
	r.stopPrefetch()
	var err error
	for _, f := range r.files {
		if e := f.Close(); e != nil && err == nil {
			err = e
		}
	}
	r.files = nil
	if r.dec != nil {
		r.dec.Close()
		r.dec = nil
	}
	if r.err == nil {
		r.err = errReaderClosed
	}
	return err
}

// Next returns the next event. After the last event it returns io.EOF for
// a complete trace and, for an incomplete one, an error wrapping
// ErrIncomplete. Damage gives a *CorruptError (errors.Is(err,
// ErrCorrupt)) naming the file and the offset of the block. Once Next
// returned an error, it returns it again.
func (r *Reader) Next() (*Event, error) {
	if r.pf != nil {
		return r.pf.next()
	}
	return r.read()
}

// read returns the next event decoded from the streams.
func (r *Reader) read() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	if ev := r.pending; ev != nil {
		r.pending = nil
		r.n++
		return ev, nil
	}
	if r.run != nil {
		r.n++
		return r.runNext(), nil
	}
	ev, err := r.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	r.n++
	return ev, nil
}

// readItem is read for the prefetching goroutine: a run frame not
// started is returned whole, its events counted, with its records in a
// frame of its own.
func (r *Reader) readItem() (*Event, *callRun, error) {
	if r.err != nil || r.pending != nil || r.run != nil {
		ev, err := r.read()
		return ev, nil, err
	}
	ev, run, _, err := r.nextFrame()
	if err != nil {
		r.err = err
		return nil, nil, err
	}
	if run != nil {
		r.n += 2 * uint64(run.calls)
		r.frame = nil // the run's now
		return nil, run, nil
	}
	r.n++
	return ev, nil, nil
}

// maxKeptFrame is the largest frame buffer a Reader keeps for the next
// frame: more than any run's (a drain holds at most a buffer's records),
// less than the rare frames near maxFrameLen.
const maxKeptFrame = 8 * eventsBlockSize

func (r *Reader) next() (*Event, error) {
	ev, run, start, err := r.nextFrame()
	if err != nil || run == nil {
		return ev, err
	}
	r.run, r.runStart = run, start
	return r.runNext(), nil
}

// nextFrame decodes the next frame: its event (the entry of a paired
// frame, the exit then pending), or a run (not started: its records are
// in r.frame) with the position before its frame.
func (r *Reader) nextFrame() (*Event, *callRun, Mark, error) {
	start, dataStart := r.events.mark(), r.data.mark() // (runStart)
	// Length prefix: a varint that may span blocks.
	var l uint64
	var shift uint
	for i := 0; ; i++ {
		c, err := r.events.readByte()
		if i == 0 {
			// The frame starts in the block just loaded, if any.
			r.frameOff = r.events.blockOff
		}
		if err != nil {
			if i == 0 && err == io.EOF {
				return nil, nil, Mark{}, r.end()
			}
			return nil, nil, Mark{}, r.streamErr(err, "frame length")
		}
		if i == 9 && c > 1 {
			return nil, nil, Mark{}, r.frameCorrupt("bad frame length")
		}
		l |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
		shift += 7
	}
	if l > maxFrameLen {
		return nil, nil, Mark{}, r.frameCorrupt(fmt.Sprintf("frame length %d exceeds the limit of %d", l, maxFrameLen))
	}
	if r.beyondCount(1) {
		return nil, nil, Mark{}, r.tooManyEvents()
	}
	var err error
	if uint64(cap(r.frame)) < l {
		// Sized at once: grown by append, a run's frame of up to a
		// buffer's size (1 MB) was copied about twice over, in ever
		// larger slices the heap then handed back to the kernel.
		r.frame = make([]byte, 0, l)
	}
	r.frame, err = r.events.appendN(r.frame[:0], l)
	if err != nil {
		return nil, nil, Mark{}, r.streamErr(err, "frame")
	}
	base := r.base
	entry, ev, run, err := decodeEvent(r.frame, r.readData, &r.base, &r.slab)
	if cap(r.frame) > maxKeptFrame && run == nil {
		r.frame = nil
	}
	if err != nil {
		var fe *frameError
		if errors.As(err, &fe) {
			return nil, nil, Mark{}, r.frameCorrupt(fe.reason)
		}
		return nil, nil, Mark{}, err
	}
	if run != nil {
		if r.beyondCount(2 * uint64(run.calls)) {
			return nil, nil, Mark{}, r.tooManyEvents()
		}
		return nil, run, Mark{n: r.n, events: start, data: dataStart, base: base}, nil
	}
	if entry != nil {
		if r.beyondCount(2) {
			return nil, nil, Mark{}, r.tooManyEvents()
		}
		r.pending = ev
		return entry, nil, Mark{}, nil
	}
	return ev, nil, Mark{}, nil
}

// runNext returns the next event of the run being read.
func (r *Reader) runNext() *Event {
	ev := r.run.next(&r.slab)
	if r.run.done() {
		r.run = nil
	}
	return ev
}

// beyondCount tells whether k more events would exceed the EventCount
// of a complete trace.
func (r *Reader) beyondCount(k uint64) bool {
	return r.hdr.Complete && r.n+k > r.hdr.EventCount
}

func (r *Reader) tooManyEvents() error {
	return r.frameCorrupt(fmt.Sprintf("more events than the %d of %s", r.hdr.EventCount, HeaderFile))
}

// end handles the clean end of the events stream.
func (r *Reader) end() error {
	if !r.hdr.Complete {
		return r.incomplete("")
	}
	if r.n != r.hdr.EventCount {
		return &CorruptError{File: EventsFile, Offset: r.events.next,
			Reason: fmt.Sprintf("stream ends after event %d but %s says %d events", r.n, HeaderFile, r.hdr.EventCount)}
	}
	return io.EOF
}

func (r *Reader) incomplete(detail string) error {
	if detail != "" {
		detail = " (" + detail + ")"
	}
	return fmt.Errorf("%w: recording ended abnormally after event %d%s", ErrIncomplete, r.n, detail)
}

// streamErr converts an error from the events stream met inside a frame.
func (r *Reader) streamErr(err error, what string) error {
	var t *tornError
	switch {
	case err == io.EOF:
		if !r.hdr.Complete {
			return r.incomplete(fmt.Sprintf("%s: stream ends inside the last %s", EventsFile, what))
		}
		return r.frameCorrupt(fmt.Sprintf("stream ends inside the %s of event %d", what, r.n+1))
	case errors.As(err, &t):
		if !r.hdr.Complete {
			return r.incomplete(t.Error())
		}
		return &CorruptError{File: t.file, Offset: t.offset, Reason: t.reason}
	}
	return err
}

func (r *Reader) frameCorrupt(reason string) error {
	return &CorruptError{File: EventsFile, Offset: r.frameOff,
		Reason: fmt.Sprintf("event %d: %s", r.n+1, reason)}
}

// readData returns the n bytes at offset off of the data stream. The data
// stream is read sequentially: references must not go backwards; a
// reference past the current position skips the bytes in between.
func (r *Reader) readData(off, n uint64) ([]byte, error) {
	pos := r.data.offset()
	if off < pos {
		return nil, r.frameCorrupt(fmt.Sprintf("data reference [%d,+%d) goes back before data position %d", off, n, pos))
	}
	err := r.data.skip(off - pos)
	var out []byte
	if err == nil {
		out, err = r.data.appendN(make([]byte, 0, min(n, 1<<20)), n)
	}
	if err != nil {
		var t *tornError
		if errors.As(err, &t) && r.hdr.Complete {
			return nil, &CorruptError{File: t.file, Offset: t.offset, Reason: t.reason}
		}
		if isEnd(err) {
			if !r.hdr.Complete {
				return nil, r.incomplete(fmt.Sprintf("%s: stream ends at %d, event %d needs [%d,+%d)", DataFile, r.data.offset(), r.n+1, off, n))
			}
			return nil, r.frameCorrupt(fmt.Sprintf("data reference [%d,+%d) beyond the end of %s (%d bytes)", off, n, DataFile, r.data.offset()))
		}
		return nil, err
	}
	return out, nil
}

// Mark is a reading position of a trace between two events, taken with
// Reader.Mark and restored with Reader.Seek on another Reader of the same
// trace.
type Mark struct {
	n            uint64
	events, data streamMark
	pending      *Event // a copy of Reader.pending
	base         regsBase
	// skip is how many events to read and drop after restoring the
	// streams: a prefetching Reader marks a position inside a batch as
	// the batch's start and the events of it consumed.
	skip uint64
}

// Events is the number of events read before the mark.
func (m Mark) Events() uint64 { return m.n }

// Mark returns the current position (after the events returned so far).
func (r *Reader) Mark() Mark {
	if r.pf != nil {
		m := r.pf.cur.start
		m.n += uint64(r.pf.evs)
		m.skip += uint64(r.pf.evs)
		return m
	}
	return r.streamMark()
}

// streamMark is the position of the streams.
func (r *Reader) streamMark() Mark {
	if r.run != nil {
		m := r.runStart
		m.skip = r.n - m.n
		m.n = r.n
		return m
	}
	return Mark{n: r.n, events: r.events.mark(), data: r.data.mark(), pending: cloneEvent(r.pending), base: r.base}
}

// Seek moves a Reader that has not failed to a position marked on a
// Reader of the same trace; the next event returned is the one that
// followed the mark. It costs one block of each stream, whatever the
// distance.
func (r *Reader) Seek(m Mark) error {
	if r.pf != nil {
		if r.pf.failed() {
			return r.pf.err
		}
		r.stopPrefetch()
		// What the goroutine met reading ahead (the end of the trace)
		// the caller has not: the Reader has not failed.
		r.err = nil
		defer r.Prefetch()
	}
	if r.err != nil {
		return r.err
	}
	if err := r.events.seek(m.events); err != nil {
		return err
	}
	if err := r.data.seek(m.data); err != nil {
		return err
	}
	r.n = m.n - m.skip
	r.pending = cloneEvent(m.pending)
	r.run = nil
	r.base = m.base
	for range m.skip {
		if _, err := r.read(); err != nil {
			return fmt.Errorf("trace: seek to event %d: %w", m.n, err)
		}
	}
	return nil
}

// ReadAll reads the whole trace in dir. For an incomplete trace it
// returns the readable events together with an error wrapping
// ErrIncomplete; for damage, the events before it and the error.
func ReadAll(dir string) (Header, []*Event, error) {
	r, err := Open(dir)
	if err != nil {
		return Header{}, nil, err
	}
	defer r.Close()
	var evs []*Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return r.hdr, evs, nil
		}
		if err != nil {
			return r.hdr, evs, err
		}
		evs = append(evs, ev)
	}
}

// cloneEvent returns a copy of ev that shares no memory with it (nil for
// nil).
func cloneEvent(ev *Event) *Event {
	if ev == nil {
		return nil
	}
	c := *ev
	if ev.Regs != nil {
		r := *ev.Regs
		c.Regs = &r
	}
	if ev.Regs2 != nil {
		r := *ev.Regs2
		c.Regs2 = &r
	}
	c.XState = bytes.Clone(ev.XState)
	c.SigInfo = bytes.Clone(ev.SigInfo)
	c.PageSums = bytes.Clone(ev.PageSums)
	c.Skip = slices.Clone(ev.Skip)
	c.Maps = slices.Clone(ev.Maps)
	if ev.Mem != nil {
		c.Mem = make([]MemWrite, len(ev.Mem))
		for i, m := range ev.Mem {
			c.Mem[i] = MemWrite{Addr: m.Addr, Data: bytes.Clone(m.Data)}
		}
	}
	return &c
}
