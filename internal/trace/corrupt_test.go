package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlipEveryByte flips each byte of both streams of a complete trace:
// every flip must give an error naming the damaged file and an offset,
// after events that are all correct.
func TestFlipEveryByte(t *testing.T) {
	evs := randEvents(10, 24)
	src := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, src)
	for i, ev := range evs {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
		if i%8 == 7 {
			w.Flush()
		}
	}
	mustClose(t, w)
	for _, complete := range []bool{true, false} {
		for _, name := range []string{EventsFile, DataFile} {
			full, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "copy")
			copyDir(t, src, dir)
			if !complete {
				h, _ := readHeader(dir)
				h.Complete = false
				writeHeader(dir, &h)
			}
			blocks := blocksOf(t, filepath.Join(src, name))
			for p := range full {
				b := append([]byte(nil), full...)
				b[p] ^= 0x5a
				os.WriteFile(filepath.Join(dir, name), b, 0o600)
				got, err := readEvents(t, dir)
				sameEvents(t, got, evs[:len(got)])
				if err == nil {
					t.Fatalf("%s: flip at %d not detected", name, p)
				}
				if !complete && errors.Is(err, ErrIncomplete) {
					// A flipped length can make a block look cut short,
					// like the torn last block of a killed recorder.
					inLen := false
					for _, bl := range blocks {
						inLen = inLen || (int64(p) >= bl.off+4 && int64(p) < bl.off+8)
					}
					if p < int(blocks[len(blocks)-1].off) && !inLen {
						t.Fatalf("%s: flip at %d reported as %v", name, p, err)
					}
					continue
				}
				wantCorrupt(t, err, name)
				var ce *CorruptError
				errors.As(err, &ce)
				msg := err.Error()
				if !strings.HasPrefix(msg, "trace "+name+": corrupt block at offset ") {
					t.Fatalf("%s: flip at %d: message %q", name, p, msg)
				}
				// The offset is the one of the damaged block.
				var blk blockInfo
				for _, bl := range blocks {
					if int64(p) >= bl.off && int64(p) < bl.end {
						blk = bl
					}
				}
				if ce.Offset != blk.off {
					t.Fatalf("%s: flip at %d: offset %d, want %d (%v)", name, p, ce.Offset, blk.off, err)
				}
			}
		}
	}
}

// rawTrace writes a complete one-event trace from a hand-made frame.
func rawTrace(t *testing.T, frame, data []byte) error {
	t.Helper()
	events := binary.AppendUvarint(nil, uint64(len(frame)))
	events = append(events, frame...)
	dir := filepath.Join(t.TempDir(), "t")
	h := testHeader()
	h.Complete, h.EventCount = true, 1
	writeRaw(t, dir, h, events, data)
	_, err := readEvents(t, dir)
	return err
}

func TestBadFrames(t *testing.T) {
	regs := func(n int) []byte { return appendBytes(nil, evRegs, make([]byte, n)) }
	ref := func(field int, off, n uint64) []byte {
		v := binary.AppendUvarint([]byte{blobRef}, off)
		v = binary.AppendUvarint(v, n)
		return appendBytes(nil, field, v)
	}
	twoRefs := append(ref(evXState, 100, 100), ref(evSigInfo, 0, 100)...)
	for _, tc := range []struct {
		name  string
		frame []byte
		data  []byte
		want  string
	}{
		{"bad tag", []byte{0x80}, nil, "bad field tag"},
		{"field 0", []byte{0x00, 0x01}, nil, "field number 0"},
		{"wire type", []byte{evKind<<3 | 3}, nil, "unknown wire type"},
		{"wrong wire", []byte{evRegs<<3 | wireVarint, 1}, nil, "wire type"},
		{"short len", []byte{evText<<3 | wireLen, 10, 'a'}, nil, "exceeds the frame"},
		{"short i64", append(appendTag(nil, 99, wireI64), 1), nil, "truncated"},
		{"regs size", regs(215), nil, "registers of 215 bytes"},
		{"kind range", appendUint(nil, evKind, 256), nil, "out of range"},
		{"tid range", appendUint(nil, evTid, zigzag(1<<40)), nil, "out of range"},
		{"prot range", appendSub(evMaps, appendUint(nil, mapProt, 1<<32)), nil, "out of range"},
		{"blob mode", appendBytes(nil, evXState, []byte{7}), nil, "unknown blob mode"},
		{"empty blob", appendBytes(nil, evXState, nil), nil, "bad blob"},
		{"beyond data", ref(evXState, 0, 100), make([]byte, 99), "beyond the end of data"},
		{"beyond data off", ref(evXState, 1000, 1), make([]byte, 99), "beyond the end of data"},
		{"backwards", twoRefs, make([]byte, 300), "goes back"},
		{"huge ref", ref(evXState, 0, 1<<40), nil, "exceeds the limit"},
		{"overflow ref", ref(evXState, 1<<64-1, 2), nil, "overflows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := rawTrace(t, tc.frame, tc.data)
			wantCorrupt(t, err, EventsFile)
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "trace events: corrupt block at offset 0: event 1") {
				t.Fatalf("got %q, want %q", err, tc.want)
			}
		})
	}
}

func appendSub(field int, sub []byte) []byte {
	var e encoder
	return e.appendSub(nil, field, sub)
}

func TestBadFrameLength(t *testing.T) {
	for _, tc := range []struct {
		events []byte
		want   string
	}{
		{binary.AppendUvarint(nil, maxFrameLen+1), "exceeds the limit"},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "bad frame length"},
		{[]byte{5, 1, 2}, "stream ends inside the frame"},
		{[]byte{0x80}, "stream ends inside the frame length"},
	} {
		dir := filepath.Join(t.TempDir(), "t")
		h := testHeader()
		h.Complete, h.EventCount = true, 1
		writeRaw(t, dir, h, tc.events, nil)
		_, err := readEvents(t, dir)
		wantCorrupt(t, err, EventsFile)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%x: got %v, want %q", tc.events, err, tc.want)
		}
		// The same in an incomplete trace is a torn end.
		h, _ = readHeader(dir)
		h.Complete = false
		writeHeader(dir, &h)
		if _, err := readEvents(t, dir); tc.want != "exceeds the limit" && tc.want != "bad frame length" && !errors.Is(err, ErrIncomplete) {
			t.Errorf("%x incomplete: got %v", tc.events, err)
		}
	}
}

func TestTruncatedCompleteTrace(t *testing.T) {
	// Cutting a complete trace is corruption, not an incomplete trace.
	dir := writeTrace(t, randEvents(11, 100))
	for _, name := range []string{EventsFile, DataFile} {
		d := filepath.Join(t.TempDir(), "c")
		copyDir(t, dir, d)
		fi, _ := os.Stat(filepath.Join(d, name))
		os.Truncate(filepath.Join(d, name), fi.Size()-3)
		_, err := readEvents(t, d)
		wantCorrupt(t, err, name)
		if !strings.Contains(err.Error(), "offset") || !strings.Contains(err.Error(), "cut after") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Errors are sticky.
	r, _ := Open(dir)
	r.Close()
	if _, err := r.Next(); err == nil {
		t.Error("Next after Close succeeded")
	}
}

func ExampleCorruptError() {
	err := &CorruptError{File: "events", Offset: 12345, Reason: "crc mismatch"}
	fmt.Println(err, errors.Is(err, ErrCorrupt))
	// Output: trace events: corrupt block at offset 12345: crc mismatch true
}
