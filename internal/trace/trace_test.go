package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func fullRegs(base uint64) *Regs {
	var r Regs
	for i := range r {
		r[i] = base + uint64(i)*0x0101010101
	}
	r[0] = math.MaxUint64
	r[26] = 0
	return &r
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func roundTripEvents() []*Event {
	return []*Event{
		{}, // all zero, all nil
		{Kind: KindSyscallEntry, Tid: 1234, Sysno: 0, Regs: fullRegs(1)},
		{Kind: KindSyscallExit, Tid: 1234, Sysno: 1, Result: -14, Regs: fullRegs(7),
			Mem: []MemWrite{{Addr: 0x7ffc0000, Data: []byte("hello")}, {Addr: 1, Data: pattern(64, 3)}, {Addr: 2, Data: pattern(63, 9)}}},
		{Kind: KindSignal, Tid: math.MaxInt32, Signo: 11, Regs: fullRegs(2), Regs2: fullRegs(3),
			XState: pattern(2696, 1), SigInfo: pattern(128, 2), Mem: []MemWrite{{Addr: 0x7ffd1000, Data: pattern(1000, 5)}}},
		{Kind: KindExec, Tid: 1, Regs: fullRegs(4), Text: "/bin/ls\x00ls\x00-l",
			Maps: []Mapping{
				{Start: 0x400000, End: 0x401000, Prot: 5, Flags: 2, Offset: 0, Name: "/bin/ls", File: "files/1-ls"},
				{Start: 0x7ffc0000, End: 0x7ffe0000, Prot: 3, Flags: 0x22, Name: "[stack]"},
				{Start: math.MaxUint64 - 0xfff, End: math.MaxUint64, Prot: math.MaxUint32, Flags: math.MaxUint32, Offset: math.MaxUint64},
				{},
			},
			Mem: []MemWrite{{Addr: 0x601000, Data: pattern(4096, 8)}}},
		{Kind: KindNewTask, Tid: 1, NewTid: 2, Flags: 0x3d0f00},
		{Kind: KindExit, Tid: math.MinInt32, Result: math.MinInt64},
		{Kind: KindExit, Tid: -1, Result: math.MaxInt64, Sysno: math.MinInt32, Signo: math.MaxInt32, NewTid: math.MinInt32, Flags: math.MaxUint64},
		{Kind: KindInstruction, Tid: 3, Regs: fullRegs(5), Regs2: fullRegs(6)},
		{Kind: KindMmap, Tid: 3, Maps: []Mapping{{Start: 0x10000, End: 0x20000, Prot: 1, Flags: 1, Offset: 0x3000, Name: "/lib/x.so", File: "files/2-x.so"}}},
		{Kind: KindSched, Tid: 3, Regs: &Regs{}},
		{Kind: Kind(200), Text: "future kind"},
		// nil vs empty.
		{Kind: KindSignal, XState: []byte{}, SigInfo: []byte{}, Mem: []MemWrite{}, Maps: []Mapping{}},
		{Kind: KindSignal, XState: nil, SigInfo: []byte{0}, Mem: []MemWrite{{Addr: 5, Data: nil}, {Addr: 6, Data: []byte{}}, {}}},
		{Kind: KindSyscallExit, Mem: []MemWrite{{Addr: 7, Data: pattern(100000, 4)}}, Maps: []Mapping{}},
		{Kind: KindSched, Tid: 4, Regs: fullRegs(8), Checksum: 0xfeed, XState: pattern(832, 6),
			Skip: []Span{{Addr: 0x5000a0, Len: 63}, {Addr: math.MaxUint64 - 8, Len: 8}}},
	}
}

func TestRoundTrip(t *testing.T) {
	want := roundTripEvents()
	dir := filepath.Join(t.TempDir(), "trace")
	h := testHeader()
	h.Chaos = true
	h.CPUIDFaulting = true
	h.BindCPU = 1
	h.PointStrategy = "state-v2"
	h.Extra = map[string]json.RawMessage{"future": json.RawMessage(`{"a":1}`)}
	w, err := Create(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	// Write reuses nothing of the event: mutate after Write.
	for _, ev := range want {
		cp := *ev
		if err := w.Write(&cp); err != nil {
			t.Fatal(err)
		}
		cp.Tid = 999
	}
	if got := w.EventCount(); got != uint64(len(want)) {
		t.Fatalf("EventCount = %d, want %d", got, len(want))
	}
	final := w.Header()
	final.ExitStatus = 0x100
	final.Version = 99 // ignored
	if err := w.Close(final); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(final); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Write(&Event{}); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("Write after Close: %v", err)
	}

	gh, got, err := ReadAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, want)
	if got[0].Regs != nil || got[0].Mem != nil || got[0].Maps != nil || got[0].XState != nil || got[0].SigInfo != nil {
		t.Fatal("nil fields not nil")
	}
	if got[12].Mem == nil || got[12].Maps == nil || got[12].XState == nil || got[12].SigInfo == nil {
		t.Fatal("empty fields became nil")
	}
	if got[13].Mem[0].Data != nil || got[13].Mem[1].Data == nil {
		t.Fatal("MemWrite.Data nil/empty not preserved")
	}

	wantH := h
	wantH.Version, wantH.RequiredReaderVersion = FormatVersion, ReaderVersion
	wantH.UUID, wantH.Created = gh.UUID, gh.Created
	wantH.Complete, wantH.EventCount, wantH.ExitStatus = true, uint64(len(want)), 0x100
	var extra bytes.Buffer
	json.Compact(&extra, gh.Extra["future"])
	if extra.String() != `{"a":1}` {
		t.Fatalf("Extra = %s", gh.Extra["future"])
	}
	gh.Extra = wantH.Extra
	wantH.HeaderSHA256 = gh.HeaderSHA256 // checked by Open
	if !reflect.DeepEqual(gh, wantH) {
		t.Fatalf("header:\ngot  %+v\nwant %+v", gh, wantH)
	}
	if len(gh.UUID) != 36 || gh.Created.IsZero() {
		t.Fatalf("UUID %q Created %v", gh.UUID, gh.Created)
	}
}

func TestManyEventsSpanBlocks(t *testing.T) {
	want := randEvents(1, 40000)
	dir := writeTrace(t, want)
	got, err := readEvents(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, want)
	if n := len(blocksOf(t, filepath.Join(dir, EventsFile))); n < 3 {
		t.Fatalf("events has %d blocks, want several", n)
	}
	if n := len(blocksOf(t, filepath.Join(dir, DataFile))); n < 2 {
		t.Fatalf("data has %d blocks, want several", n)
	}
	for _, b := range blocksOf(t, filepath.Join(dir, EventsFile)) {
		if b.ulen > eventsBlockSize {
			t.Fatalf("events block of %d bytes", b.ulen)
		}
	}
}

func TestBigMemWrite(t *testing.T) {
	big := make([]byte, 5<<20)
	x := uint32(1)
	for i := range big { // incompressible
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		big[i] = byte(x)
	}
	want := []*Event{
		{Kind: KindSyscallExit, Tid: 1, Mem: []MemWrite{{Addr: 0x1000, Data: []byte("small")}}},
		{Kind: KindSyscallExit, Tid: 1, Mem: []MemWrite{{Addr: 0x10000, Data: big}, {Addr: 0x20, Data: pattern(100, 1)}}},
		{Kind: KindSyscallExit, Tid: 1, Mem: []MemWrite{{Addr: 0x2000, Data: pattern(70, 2)}}},
	}
	dir := writeTrace(t, want)
	got, err := readEvents(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, want)
	blocks := blocksOf(t, filepath.Join(dir, DataFile))
	if len(blocks) < 5 {
		t.Fatalf("data has %d blocks, want >= 5", len(blocks))
	}
	for _, b := range blocks {
		if b.ulen > dataBlockSize {
			t.Fatalf("data block of %d bytes", b.ulen)
		}
	}
}

func TestWriteTooBig(t *testing.T) {
	// Frame limit: a Text larger than maxFrameLen is refused and leaves
	// the writer usable.
	dir := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, dir)
	if err := w.Write(&Event{Text: strings.Repeat("x", maxFrameLen+1), Mem: []MemWrite{{Data: pattern(100, 1)}}}); err == nil {
		t.Fatal("huge frame accepted")
	}
	want := []*Event{{Kind: KindExit, Mem: []MemWrite{{Data: pattern(100, 2)}}}}
	writeAll(t, w, want)
	mustClose(t, w)
	got, err := readEvents(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, want)
}

func TestPermissions(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "trace")
	w := mustCreate(t, dir)
	writeAll(t, w, randEvents(2, 10))
	src := filepath.Join(root, "user.so")
	if err := os.WriteFile(src, []byte("lib"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(src, 0o666)
	rel, err := w.CaptureFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	for _, d := range []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), dir, filepath.Join(dir, FilesDir)} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 || !fi.IsDir() {
			t.Errorf("%s: mode %v, want drwx------", d, fi.Mode())
		}
	}
	for _, f := range []string{HeaderFile, EventsFile, DataFile, rel} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == rel && fi.Mode() == 0o400 { // captured copies are read-only
			continue
		}
		if fi.Mode() != 0o600 {
			t.Errorf("%s: mode %v, want -rw-------", f, fi.Mode())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, headerTemp)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary header left behind: %v", err)
	}
}

func TestCreateRules(t *testing.T) {
	root := t.TempDir()
	// An existing empty directory is fine (and made 0700).
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := Create(empty, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(empty); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v", fi.Mode())
	}
	if w.Dir() != empty {
		t.Errorf("Dir() = %q", w.Dir())
	}
	// Before Close, header.json says incomplete.
	h, err := readHeader(empty)
	if err != nil {
		t.Fatal(err)
	}
	if h.Complete || h.Version != FormatVersion || h.RequiredReaderVersion != requiredReader || h.UUID == "" {
		t.Fatalf("initial header %+v", h)
	}
	mustClose(t, w)
	// A non-empty directory or a file is refused.
	if _, err := Create(empty, testHeader()); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Create on a trace: %v", err)
	}
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := Create(file, testHeader()); err == nil {
		t.Fatal("Create on a file succeeded")
	}
}

func TestOpenErrors(t *testing.T) {
	root := t.TempDir()
	if _, err := Open(filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := Open(root); !errors.Is(err, ErrNotTrace) || !strings.Contains(err.Error(), "header.json") {
		t.Errorf("empty dir: %v", err)
	}
	bad := filepath.Join(root, "bad")
	os.Mkdir(bad, 0o700)
	os.WriteFile(filepath.Join(bad, HeaderFile), []byte("{not json"), 0o600)
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), "corrupt header.json") {
		t.Errorf("bad header: %v", err)
	}
	os.WriteFile(filepath.Join(bad, HeaderFile), []byte(`{"Argv":["x"]}`), 0o600)
	if _, err := Open(bad); !errors.Is(err, ErrNotTrace) {
		t.Errorf("header without version: %v", err)
	}
	unreadable := filepath.Join(root, "unreadable")
	os.Mkdir(unreadable, 0o700)
	os.Mkdir(filepath.Join(unreadable, HeaderFile), 0o700) // a directory: read fails
	if _, err := Open(unreadable); err == nil || !strings.Contains(err.Error(), "header.json") {
		t.Errorf("unreadable header: %v", err)
	}

	dir := writeTrace(t, randEvents(3, 5))
	b, _ := os.ReadFile(filepath.Join(dir, HeaderFile))
	var m map[string]any
	json.Unmarshal(b, &m)
	m["RequiredReaderVersion"] = ReaderVersion + 1
	m["Version"] = FormatVersion + 5
	m["SomeFutureField"] = "x"
	b, _ = json.Marshal(m)
	os.WriteFile(filepath.Join(dir, HeaderFile), b, 0o600)
	if _, err := Open(dir); !errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), "newer gorr") {
		t.Errorf("newer trace: %v", err)
	}
	// A newer Version with an old RequiredReaderVersion is fine (once
	// its integrity hash matches the edited content).
	m["RequiredReaderVersion"] = ReaderVersion
	b, _ = json.Marshal(m)
	b = sealHeader(t, b)
	os.WriteFile(filepath.Join(dir, HeaderFile), b, 0o600)
	if _, evs, err := ReadAll(dir); err != nil || len(evs) != 5 {
		t.Errorf("compatible newer trace: %d events, %v", len(evs), err)
	}
}

func TestPath(t *testing.T) {
	dir := writeTrace(t, nil)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, want := r.Path("files/1-ls"), filepath.Join(dir, "files", "1-ls"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if got := r.Path("../../etc/passwd"); !strings.HasPrefix(got, dir+"/") {
		t.Errorf("Path escapes the trace: %q", got)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("empty trace: %v", err)
	}
}

// TestUnknownFields checks forward compatibility: unknown fields of every
// wire type are skipped, including one carrying a data reference.
func TestUnknownFields(t *testing.T) {
	want := &Event{Kind: KindSyscallExit, Tid: 5, Mem: []MemWrite{{Addr: 9, Data: pattern(200, 1)}}}
	var e encoder
	skipped := pattern(300, 7)
	// Unknown field 100 referencing data before the known blob.
	var f []byte
	f = appendUint(f, 101, 42)
	f = append(appendTag(f, 102, wireI64), 1, 2, 3, 4, 5, 6, 7, 8)
	f = append(appendTag(f, 103, wireI32), 1, 2, 3, 4)
	f = e.appendBlob(f, 100, skipped)
	f = e.appendEvent(f, want)
	// Unknown field inside a MemWrite and a Mapping.
	sub := appendUint(nil, memAddr, 3)
	sub = appendUint(sub, 50, 1)
	f = e.appendSub(f, evMem, sub)
	sub = appendString(appendUint(nil, mapStart, 4), 60, "later")
	f = e.appendSub(f, evMaps, sub)
	events := binary.AppendUvarint(nil, uint64(len(f)))
	events = append(events, f...)
	dir := filepath.Join(t.TempDir(), "t")
	h := testHeader()
	h.Complete, h.EventCount = true, 1
	writeRaw(t, dir, h, events, e.data)
	got, err := readEvents(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	w := *want
	w.Mem = append(w.Mem, MemWrite{Addr: 3})
	w.Maps = []Mapping{{Start: 4}}
	sameEvents(t, got, []*Event{&w})
}

func TestEventCountMismatch(t *testing.T) {
	dir := writeTrace(t, randEvents(4, 20))
	for _, n := range []uint64{19, 21} {
		b, _ := os.ReadFile(filepath.Join(dir, HeaderFile))
		var h Header
		json.Unmarshal(b, &h)
		h.EventCount = n
		writeHeader(dir, &h)
		got, err := readEvents(t, dir)
		wantCorrupt(t, err, EventsFile)
		if len(got) != 19 && len(got) != 20 {
			t.Fatalf("EventCount %d: got %d events", n, len(got))
		}
	}
}

func TestFlushOrderAndTimer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, dir)
	evs := randEvents(5, 3)
	writeAll(t, w, evs[:1])
	// No Flush: the timer must write the event within ~100 ms.
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := readEvents(t, dir)
		if len(got) == 1 {
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("want ErrIncomplete, got %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("event not flushed by the timer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Write flushes by itself when the last flush is old.
	w.mu.Lock()
	w.lastFlush = time.Now().Add(-time.Second)
	w.mu.Unlock()
	// (The flush it starts is written by the compressor a moment later.)
	writeAll(t, w, evs[1:2])
	for {
		got, _ := readEvents(t, dir)
		if len(got) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a late Write: %d events readable, want 2", len(got))
		}
		time.Sleep(5 * time.Millisecond)
	}
	mustClose(t, w)
	got, err := readEvents(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, evs[:2])
}

func TestFlushWritesDataFirst(t *testing.T) {
	// After any Flush, every data reference of the events file resolves.
	dir := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, dir)
	evs := randEvents(6, 3000)
	for i, ev := range evs {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			got, err := readEvents(t, dir)
			if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "ended abnormally after event") {
				t.Fatalf("want ErrIncomplete, got %v", err)
			}
			if len(got) < i+1 {
				t.Fatalf("after Flush: %d events, want %d", len(got), i+1)
			}
			sameEvents(t, got, evs[:len(got)])
		}
	}
	mustClose(t, w)
}

func TestCorruptHeaderLengths(t *testing.T) {
	// Hostile block lengths are refused before any allocation.
	for _, tc := range []struct {
		clen, ulen uint32
		want       string
	}{
		{0, 10, "compressed length"},
		{maxBlockLen + 1, 10, "compressed length"},
		{10, 0, "uncompressed length"},
		{10, math.MaxUint32, "uncompressed length"},
	} {
		dir := filepath.Join(t.TempDir(), "t")
		h := testHeader()
		h.Complete, h.EventCount = true, 0
		writeRaw(t, dir, h, nil, nil)
		blk := []byte(blockMagic)
		blk = binary.LittleEndian.AppendUint32(blk, tc.clen)
		blk = binary.LittleEndian.AppendUint32(blk, tc.ulen)
		blk = binary.LittleEndian.AppendUint32(blk, 0)
		blk = append(blk, bytes.Repeat([]byte{1}, 10)...)
		os.WriteFile(filepath.Join(dir, EventsFile), blk, 0o600)
		_, err := readEvents(t, dir)
		wantCorrupt(t, err, EventsFile)
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "offset 0") {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}
