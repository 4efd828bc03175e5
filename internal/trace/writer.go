package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/prefault"
)

// flushInterval is the longest time a written event stays in memory.
const flushInterval = 100 * time.Millisecond

// ErrWriterClosed is returned by the methods of a closed Writer.
var ErrWriterClosed = errors.New("trace: writer is closed")

// Writer records a trace. Its methods are safe for concurrent use.
//
// Events are buffered in memory and written (compressed) when a block
// fills, when Flush is called, and at the latest about 100 ms after they
// were written: Write flushes when more than 100 ms passed since the
// last flush, and a timer flushes pending events when no Write follows.
// A recorder killed at any time thus leaves a trace readable up to its
// last flush.
type Writer struct {
	mu        sync.Mutex
	dir       string
	hdr       Header
	events    *os.File
	data      *os.File
	enc       encoder        // pending data stream bytes in enc.data
	evBuf     []byte         // pending events stream bytes
	evAhead   prefault.Ahead // how much of evBuf is populated
	frame     []byte         // scratch
	count     uint64
	lastFlush time.Time
	timer     *time.Timer
	armed     bool
	err       error // sticky write error
	closed    bool

	// Flushed bytes are compressed and written by a goroutine of their
	// own (compress), in the order they were flushed, so that the
	// recorder's thread does not wait for zstd.
	jobs     chan flushJob
	free     chan []byte   // buffers the compressor is done with
	finished chan struct{} // closed when the compressor has returned
	werrMu   sync.Mutex
	werr     error // the compressor's sticky write error

	captured map[fileKey]string
	byHash   map[string]string // SHA-256 -> name of a captured file
	// syncs counts the fsyncs of captured files under way (capture.go
	// syncInBackground); syncErr is the first that failed.
	syncs   sync.WaitGroup
	syncMu  sync.Mutex
	syncErr error
	nfiles  int
	cache   *fileCache // nil: none (UseFileCache)
	// hdrDirty: files were captured since header.json was written.
	hdrDirty bool
}

// Create creates a new trace in dir, which must not exist (it is created
// with its parents, mode 0700) or be an empty directory. It writes
// header.json with h, except that Version, RequiredReaderVersion,
// Complete and EventCount are set by the writer, and UUID and Created
// are filled in when empty.
func Create(dir string, h Header) (*Writer, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("trace: create %s: %w", dir, err)
	}
	dir = abs
	fi, err := os.Stat(dir)
	switch {
	case err == nil:
		if !fi.IsDir() {
			return nil, fmt.Errorf("trace: create %s: exists and is not a directory", dir)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("trace: create %s: %w", dir, err)
		}
		if len(ents) > 0 {
			return nil, fmt.Errorf("trace: create %s: directory is not empty", dir)
		}
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("trace: create %s: %w", dir, err)
		}
	default:
		return nil, fmt.Errorf("trace: create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("trace: create %s: %w", dir, err)
	}
	files := filepath.Join(dir, FilesDir)
	if err := os.Mkdir(files, 0o700); err != nil {
		return nil, fmt.Errorf("trace: create %s: %w", dir, err)
	}
	if err := os.Chmod(files, 0o700); err != nil {
		return nil, fmt.Errorf("trace: create %s: %w", dir, err)
	}

	h.Version = FormatVersion
	h.RequiredReaderVersion = requiredReader
	h.Complete = false
	h.EventCount = 0
	h.Files = nil
	if h.UUID == "" {
		if h.UUID, err = newUUID(); err != nil {
			return nil, fmt.Errorf("trace: create %s: uuid: %w", dir, err)
		}
	}
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	// Nothing is fsynced before Close, which fsyncs everything the trace
	// holds (as flushes, this protects against the death of the
	// recorder, not a crash of the machine: a trace is only complete,
	// and worth keeping, once Close has run).
	if err := writeHeaderSync(dir, &h, false); err != nil {
		return nil, err
	}

	w := &Writer{
		dir:       dir,
		hdr:       h,
		lastFlush: time.Now(),
		captured:  make(map[fileKey]string),
		byHash:    make(map[string]string),
	}
	if w.events, err = createFile(filepath.Join(dir, EventsFile)); err != nil {
		return nil, err
	}
	if w.data, err = createFile(filepath.Join(dir, DataFile)); err != nil {
		w.events.Close()
		return nil, err
	}
	zenc, err := newEncoder()
	if err != nil {
		w.events.Close()
		w.data.Close()
		return nil, fmt.Errorf("trace: create %s: %w", dir, err)
	}
	w.jobs = make(chan flushJob, 4)
	w.free = make(chan []byte, 8)
	w.evBuf, w.enc.data = make([]byte, 0, evBufCap), make([]byte, 0, dataBufCap)
	w.finished = make(chan struct{})
	go w.compress(zenc)
	return w, nil
}

// flushJob is a flush handed to the compressor: data stream bytes, then
// events stream bytes; or, with done set, a barrier it closes once every
// job before it is written.
type flushJob struct {
	// hdr, when set, is written to header.json before the job's bytes:
	// the manifest of files captured since the last one, before the
	// events that map them.
	hdr          *Header
	data, events []byte
	done         chan struct{}
}

// compress compresses and writes the flushed bytes, data before events,
// job after job; it returns when jobs is closed. After a write error it
// writes nothing more (the error is sticky: writeErr).
func (w *Writer) compress(zenc *blockEncoder) {
	defer close(w.finished)
	defer zenc.Close()
	var out []byte
	for j := range w.jobs {
		if j.hdr != nil && w.writeErr() == nil {
			if err := writeHeaderSync(w.dir, j.hdr, false); err != nil {
				w.setWriteErr(HeaderFile, err)
			}
		}
		if j.done != nil {
			close(j.done)
			continue
		}
		if w.writeErr() == nil {
			// A job is stored whole when the encoder still stores.
			stored := zenc.storing()
			if len(j.data) > 0 {
				if stored {
					w.writeOutv(w.data, DataFile, zenc.storedBlocks(j.data, dataBlockSize))
				} else {
					out = appendBlocks(out[:0], zenc, j.data, dataBlockSize)
					w.writeOut(w.data, DataFile, out)
				}
			}
			if len(j.events) > 0 && w.writeErr() == nil {
				if stored {
					w.writeOutv(w.events, EventsFile, zenc.storedBlocks(j.events, eventsBlockSize))
				} else {
					out = appendBlocks(out[:0], zenc, j.events, eventsBlockSize)
					w.writeOut(w.events, EventsFile, out)
				}
			}
		}
		if cap(out) > 4*dataBlockSize {
			out = nil
		}
		w.recycle(j.data)
		w.recycle(j.events)
	}
}

// recycle gives a buffer the compressor is done with back for reuse.
func (w *Writer) recycle(b []byte) {
	if b == nil || cap(b) > 4*dataBlockSize {
		return
	}
	select {
	case w.free <- b[:0]:
	default:
	}
}

// Capacities of the pending-bytes buffers: a block's worth and room for
// the frame or data that crosses the flush threshold, so that filling
// one does not grow it from nothing (a drain of the syscall buffer
// appends thousands of events at once).
const (
	evBufCap   = eventsBlockSize + eventsBlockSize/4
	dataBufCap = dataBlockSize + dataBlockSize/4
)

// buffer returns an empty buffer of at least size bytes of capacity, a
// recycled one if there is one.
func (w *Writer) buffer(size int) []byte {
	select {
	case b := <-w.free:
		if cap(b) >= size {
			return b
		}
	default:
	}
	return make([]byte, 0, size)
}

func (w *Writer) writeErr() error {
	w.werrMu.Lock()
	defer w.werrMu.Unlock()
	return w.werr
}

// checkErr takes the compressor's write error as the sticky error.
func (w *Writer) checkErr() error {
	if w.err == nil {
		w.err = w.writeErr()
	}
	return w.err
}

// drain waits until the compressor has written every job handed to it,
// and returns the sticky error.
func (w *Writer) drain() error {
	done := make(chan struct{})
	w.jobs <- flushJob{done: done}
	<-done
	return w.checkErr()
}

func createFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("trace: create %s: %w", path, err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("trace: create %s: %w", path, err)
	}
	return f, nil
}

// Dir returns the absolute path of the trace directory.
func (w *Writer) Dir() string { return w.dir }

// Header returns the header written by Create (with its UUID and
// Created filled in); a good base for the header passed to Close.
func (w *Writer) Header() Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hdr
}

// EventCount returns the number of events written so far.
func (w *Writer) EventCount() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.count
}

// Write appends ev to the trace. It encodes ev at once: the caller may
// reuse ev and its slices when Write returns. Write is cheap: it writes
// to the files only when a block fills or the last flush is more than
// 100 ms old. After a write error, every later call returns that error.
func (w *Writer) Write(ev *Event) error {
	return w.write(ev, nil)
}

// WriteCall appends a system call's SYSCALL_ENTRY and SYSCALL_EXIT
// events, as two Writes would. When the entry has nothing of its own but
// rax and flags (a call drained from the syscall buffer), both go into
// one frame, about half the bytes of two; the Reader returns the two
// events all the same.
func (w *Writer) WriteCall(entry, exit *Event) error {
	if !pairable(entry, exit) {
		if err := w.write(entry, nil); err != nil {
			return err
		}
		return w.write(exit, nil)
	}
	return w.write(exit, entry)
}

// write appends ev, preceded by entry in the same frame when entry is
// not nil (pairable).
func (w *Writer) write(ev, entry *Event) error {
	if err := checkEvent(ev); err != nil {
		return err
	}
	n := uint64(1)
	if entry != nil {
		n = 2
	}
	return w.put(n, nil, func(b []byte) []byte { return w.enc.appendFrame(b, ev, entry) })
}

// WriteRun appends the SYSCALL_ENTRY and SYSCALL_EXIT events of each
// call of run (CallRecord.EventsInto), in one frame that holds the
// records as they are (evRun). The Reader returns the events as if
// WriteCall had written them.
func (w *Writer) WriteRun(run *Run) error {
	if run.Calls == 0 {
		return nil
	}
	if len(run.Records) > maxBlobLen {
		return fmt.Errorf("trace: run of %d bytes exceeds the limit of %d bytes", len(run.Records), maxBlobLen)
	}
	// The frame ends with the records (appendRunFrame), which are
	// copied once, from run.Records to the pending events.
	return w.put(2*uint64(run.Calls), run.Records, func(b []byte) []byte { return w.enc.appendRunFrame(b, run) })
}

// put appends the frame made of the bytes encode appends and then tail,
// which holds n events.
func (w *Writer) put(n uint64, tail []byte, encode func([]byte) []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrWriterClosed
	}
	if err := w.checkErr(); err != nil {
		return err
	}
	dataLen, dataOff, base := len(w.enc.data), w.enc.dataOff, w.enc.base
	w.frame = encode(w.frame[:0])
	size := len(w.frame) + len(tail)
	if size > maxFrameLen {
		w.enc.data, w.enc.dataOff, w.enc.base = w.enc.data[:dataLen], dataOff, base
		return fmt.Errorf("trace: event frame of %d bytes exceeds the limit of %d bytes", size, maxFrameLen)
	}
	if need := binary.MaxVarintLen64 + size; cap(w.evBuf)-len(w.evBuf) < need && len(tail) > 0 {
		// A frame of a run is big: rather than grow the pending bytes
		// (a copy of them, on memory touched for the first time), hand
		// them on and take a buffer the frame fits in.
		if len(w.evBuf) > 0 {
			if err := w.flushLocked(); err != nil {
				return err
			}
		}
		if cap(w.evBuf) < need {
			w.evBuf = w.buffer(need)
		}
	}
	// (Pages of a fresh buffer are populated ahead rather than faulted
	// in one by one: prefault.)
	w.evAhead.Cover(w.evBuf, len(w.evBuf)+binary.MaxVarintLen64+size)
	w.evBuf = binary.AppendUvarint(w.evBuf, uint64(size))
	w.evBuf = append(w.evBuf, w.frame...)
	w.evBuf = append(w.evBuf, tail...)
	w.count += n
	if cap(w.frame) > 4*eventsBlockSize {
		w.frame = nil
	}

	if len(w.enc.data) >= dataBlockSize {
		w.flushData()
	}
	// (The clock is read once every 64 events only; the timer flushes
	// anyway.)
	if len(w.evBuf) >= eventsBlockSize || w.count/64 != (w.count-n)/64 && time.Since(w.lastFlush) >= flushInterval {
		return w.flushLocked()
	}
	w.armTimer()
	return nil
}

// armTimer makes sure pending events get flushed within flushInterval
// even if no Write follows.
func (w *Writer) armTimer() {
	if w.armed {
		return
	}
	w.armed = true
	if w.timer == nil {
		w.timer = time.AfterFunc(flushInterval, w.timerFlush)
	} else {
		w.timer.Reset(flushInterval)
	}
}

func (w *Writer) timerFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if w.closed || w.err != nil {
		return
	}
	if len(w.evBuf) > 0 || len(w.enc.data) > 0 || w.hdrDirty {
		w.flushLocked() // error is sticky in w.err
	}
}

// flushData hands the pending data stream bytes to the compressor (a
// block's worth or more accumulated between flushes).
func (w *Writer) flushData() {
	w.jobs <- flushJob{data: w.enc.data}
	w.enc.data = w.buffer(dataBufCap)
}

// writeOut writes compressed blocks to f (the compressor's goroutine); an
// error becomes the sticky error.
func (w *Writer) writeOut(f *os.File, name string, out []byte) {
	if _, err := f.Write(out); err != nil {
		w.setWriteErr(name, err)
	}
}

// writeOutv writes the slices of iov one after the other, with writev.
func (w *Writer) writeOutv(f *os.File, name string, iov [][]byte) {
	rc, err := f.SyscallConn()
	if err != nil {
		w.setWriteErr(name, err)
		return
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for len(iov) > 0 {
			n, err := unix.Writev(int(fd), iov[:min(len(iov), 1024)])
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				werr = err
				return true
			}
			if n == 0 {
				werr = io.ErrShortWrite
				return true
			}
			for n > 0 && len(iov) > 0 {
				k := min(n, len(iov[0]))
				iov[0] = iov[0][k:]
				n -= k
				if len(iov[0]) == 0 {
					iov = iov[1:]
				}
			}
		}
		return true
	})
	if werr == nil {
		werr = err
	}
	if werr != nil {
		w.setWriteErr(name, werr)
	}
}

func (w *Writer) setWriteErr(name string, err error) {
	w.werrMu.Lock()
	if w.werr == nil {
		w.werr = fmt.Errorf("trace: write %s: %w", filepath.Join(w.dir, name), err)
	}
	w.werrMu.Unlock()
}

// Flush compresses and writes the pending blocks: those of the data
// stream first, then those of the events stream, so that a reader never
// sees an event whose data is missing. It returns when they are written
// (the flushes Write and the timer make do not wait). It does not fsync.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrWriterClosed
	}
	if err := w.checkErr(); err != nil {
		return err
	}
	if err := w.flushLocked(); err != nil {
		return err
	}
	return w.drain()
}

// flushLocked hands the pending bytes of both streams to the compressor.
func (w *Writer) flushLocked() error {
	w.lastFlush = time.Now()
	j := flushJob{}
	if w.hdrDirty {
		// The manifest of the captured files, before the events that
		// map them: the compressor writes it first (a copy: the
		// recorder goes on capturing).
		h := w.hdr
		h.Files = maps.Clone(w.hdr.Files)
		j.hdr = &h
		w.hdrDirty = false
	}
	if len(w.enc.data) == 0 && len(w.evBuf) == 0 && j.hdr == nil {
		return w.checkErr()
	}
	if len(w.enc.data) > 0 {
		j.data = w.enc.data
		w.enc.data = w.buffer(dataBufCap)
	}
	if len(w.evBuf) > 0 {
		j.events = w.evBuf
		w.evBuf = w.buffer(evBufCap)
	}
	w.jobs <- j
	return w.checkErr()
}

// SetPointStrategy names, in header.json, how the recorder takes
// asynchronous points (Header.PointStrategy). The recorder calls it before
// writing any point, so that replay always reads the strategy that wrote
// the trace, whoever built the header; Close keeps it. The header is
// rewritten with the next flush, which writes it before the events it
// hands on (as for the manifest of captured files), so no event is on
// disk before the name of the strategy that took it.
func (w *Writer) SetPointStrategy(s string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrWriterClosed
	}
	if w.hdr.PointStrategy != s {
		w.hdr.PointStrategy = s
		w.hdrDirty = true
	}
	return nil
}

// Close flushes, fsyncs the streams and the directory, and rewrites
// header.json atomically with final, marked Complete with the number of
// events written. final replaces the header of Create (start from
// w.Header()), except that Version, RequiredReaderVersion, UUID and
// Created keep the values written by Create, and PointStrategy the one
// the recorder set. After a write error, Close
// releases the files, leaves the trace incomplete and returns the error.
func (w *Writer) Close(final Header) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrWriterClosed
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	err := w.checkErr()
	if err == nil {
		err = w.flushLocked()
	}
	close(w.jobs)
	<-w.finished
	if err == nil {
		err = w.writeErr()
	}
	final.Version = w.hdr.Version
	final.RequiredReaderVersion = w.hdr.RequiredReaderVersion
	final.UUID = w.hdr.UUID
	final.Created = w.hdr.Created
	if w.hdr.PointStrategy != "" {
		final.PointStrategy = w.hdr.PointStrategy // the recorder's word
	}
	final.Complete = true
	final.EventCount = w.count
	final.Files = w.hdr.Files
	// The streams, the files/ directory, the captured files (whose
	// fsyncs started at their capture) and the final header's temporary
	// file are fsynced at the same time, so that the filesystem can
	// commit them together; the header is renamed into place only then.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	if err == nil {
		for i, f := range []*os.File{w.data, w.events} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if e := f.Sync(); e != nil {
					errs[i] = fmt.Errorf("trace: sync %s: %w", f.Name(), e)
				}
			}()
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			errs[2] = syncDir(filepath.Join(w.dir, FilesDir))
		}()
		go func() {
			defer wg.Done()
			errs[3] = writeHeaderTemp(w.dir, &final, true)
		}()
	}
	wg.Wait()
	if e := w.syncCaptured(); err == nil {
		err = e
	}
	for _, e := range errs {
		if err == nil {
			err = e
		}
	}
	for _, f := range []*os.File{w.data, w.events} {
		if e := f.Close(); e != nil && err == nil {
			err = fmt.Errorf("trace: close %s: %w", f.Name(), e)
		}
	}
	if err != nil {
		return err
	}
	// The rename is not fsynced (the trace directory): it reaches the
	// disk with the filesystem's next commit. A crash of the machine
	// before that leaves the header of Create or of the last flush
	// (Complete false), with every event on disk behind it: the trace
	// replays as an incomplete one, to its last event. One journal
	// commit less in the recording's last milliseconds.
	if err := commitHeader(w.dir, false); err != nil {
		return err
	}
	w.hdr = final
	return nil
}
