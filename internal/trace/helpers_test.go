package trace

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func testHeader() Header {
	return Header{
		GorrVersion: "test",
		Argv:        []string{"/bin/true", "a b"},
		Env:         []string{"HOME=/root", "X="},
		Cwd:         "/tmp",
		Exe:         "/bin/true",
		Uname:       Uname{Sysname: "Linux", Release: "6.1", Version: "#1", Machine: "x86_64", Nodename: "box"},
		CPUModel:    "Test CPU",
		BindCPU:     -1,
		XSaveSize:   2696,
	}
}

// randEvent builds a varied event from rng.
func randEvent(rng *rand.Rand, i int) *Event {
	ev := &Event{
		Kind:   Kind(1 + rng.IntN(9)),
		Tid:    int32(1000 + rng.IntN(10)),
		Sysno:  int32(rng.IntN(450)),
		Result: int64(rng.IntN(1<<20)) - 4096,
		Flags:  rng.Uint64() & 0xffff,
		Text:   "",
	}
	if rng.IntN(2) == 0 {
		var r Regs
		for j := range r {
			r[j] = rng.Uint64() >> rng.IntN(64)
		}
		ev.Regs = &r
	}
	if rng.IntN(4) == 0 {
		ev.SigInfo = make([]byte, 128)
		for j := range ev.SigInfo {
			ev.SigInfo[j] = byte(i + j)
		}
	}
	for n := rng.IntN(3); n > 0; n-- {
		size := rng.IntN(300)
		d := make([]byte, size)
		for j := range d {
			d[j] = byte(rng.IntN(4))
		}
		ev.Mem = append(ev.Mem, MemWrite{Addr: rng.Uint64(), Data: d})
	}
	if rng.IntN(10) == 0 {
		ev.Maps = []Mapping{{Start: 0x400000, End: 0x401000, Prot: 5, Flags: 2, Offset: 0, Name: "/bin/x", File: "files/1-x"}}
	}
	return ev
}

func randEvents(seed uint64, n int) []*Event {
	rng := rand.New(rand.NewPCG(seed, 1))
	evs := make([]*Event, n)
	for i := range evs {
		evs[i] = randEvent(rng, i)
	}
	return evs
}

func mustCreate(t testing.TB, dir string) *Writer {
	t.Helper()
	w, err := Create(dir, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func writeAll(t testing.TB, w *Writer, evs []*Event) {
	t.Helper()
	for _, ev := range evs {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
}

func mustClose(t testing.TB, w *Writer) {
	t.Helper()
	h := w.Header()
	h.ExitStatus = 0
	if err := w.Close(h); err != nil {
		t.Fatal(err)
	}
}

// writeTrace writes a complete trace of evs into a new directory.
func writeTrace(t testing.TB, evs []*Event) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, dir)
	writeAll(t, w, evs)
	mustClose(t, w)
	return dir
}

func sameEvents(t testing.TB, got, want []*Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("event %d differs:\ngot  %+v\nwant %+v", i+1, got[i], want[i])
		}
	}
}

// readEvents reads all the events of dir; it returns the error that
// ended the reading (nil for io.EOF).
func readEvents(t testing.TB, dir string) ([]*Event, error) {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var evs []*Event
	for range 10_000_000 {
		ev, err := r.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	t.Fatal("reader does not end")
	return nil, nil
}

type blockInfo struct {
	off, end   int64 // file offsets
	clen, ulen uint32
}

// blocksOf lists the blocks of a stream file (assumed well formed).
func blocksOf(t testing.TB, path string) []blockInfo {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bs []blockInfo
	for off := 0; off < len(b); {
		if len(b)-off < blockHeaderSize || string(b[off:off+4]) != blockMagic {
			t.Fatalf("%s: bad block at %d", path, off)
		}
		clen := binary.LittleEndian.Uint32(b[off+4:])
		ulen := binary.LittleEndian.Uint32(b[off+8:])
		end := off + blockHeaderSize + int(clen)
		bs = append(bs, blockInfo{int64(off), int64(end), clen, ulen})
		off = end
	}
	return bs
}

func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writeRaw builds a trace directory from uncompressed stream contents.
func writeRaw(t testing.TB, dir string, h Header, events, data []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h.Version, h.RequiredReaderVersion = FormatVersion, ReaderVersion
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	if err := writeHeader(dir, &h); err != nil {
		t.Fatal(err)
	}
	enc, err := newEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	if err := os.WriteFile(filepath.Join(dir, EventsFile), appendBlocks(nil, enc, events, eventsBlockSize), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, DataFile), appendBlocks(nil, enc, data, dataBlockSize), 0o600); err != nil {
		t.Fatal(err)
	}
}

// frameBytes returns the events stream bytes (length-prefixed frames)
// and data stream bytes of evs.
func frameBytes(evs []*Event) (events, data []byte) {
	var e encoder
	for _, ev := range evs {
		f := e.appendEvent(nil, ev)
		events = binary.AppendUvarint(events, uint64(len(f)))
		events = append(events, f...)
	}
	return events, e.data
}

func wantCorrupt(t testing.TB, err error, file string) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want a CorruptError, got %v", err)
	}
	if file != "" && ce.File != file {
		t.Fatalf("error names file %q, want %q: %v", ce.File, file, err)
	}
}
