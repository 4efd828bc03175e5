package trace

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader feeds arbitrary bytes as the events and data files of a
// trace with a valid header: the reader must neither panic nor hang, and
// every error must be one of the documented kinds.
func FuzzReader(f *testing.F) {
	// Seeds: real streams, cut and whole, and hand-made frames.
	src := filepath.Join(f.TempDir(), "seed")
	w := mustCreate(f, src)
	evs := randEvents(12, 40)
	evs = append(evs, roundTripEvents()[:14]...)
	writeAll(f, w, evs)
	mustClose(f, w)
	events, _ := os.ReadFile(filepath.Join(src, EventsFile))
	data, _ := os.ReadFile(filepath.Join(src, DataFile))
	// Raw streams are used as is (the reader must reject them as
	// garbage); with wrap, the fuzzer's bytes are the uncompressed
	// contents of the streams, wrapped in valid blocks, so that it
	// explores the frame decoder behind the CRC checks.
	f.Add(events, data, true, false)
	f.Add(events, data, false, false)
	f.Add(events[:len(events)/2], data, false, false)
	f.Add(events, data[:len(data)/2], true, false)
	f.Add([]byte{}, []byte{}, true, false)
	f.Add([]byte("GRB1"), []byte{}, false, false)
	rawEv, rawData := frameBytes(evs)
	f.Add(rawEv, rawData, true, false)
	f.Add(rawEv, rawData, true, true)
	f.Add(rawEv, rawData, false, true)
	f.Add(rawEv[:len(rawEv)/3], rawData[:len(rawData)/3], false, true)

	enc, err := newEncoder()
	if err != nil {
		f.Fatal(err)
	}
	var headers [2][]byte // incomplete, complete
	for i := range headers {
		h := testHeader()
		h.Version, h.RequiredReaderVersion = FormatVersion, ReaderVersion
		h.Complete, h.EventCount = i == 1, 40
		headers[i], _ = json.Marshal(h)
		headers[i] = sealHeader(f, headers[i])
	}

	fuzzDir := f.TempDir()

	f.Fuzz(func(t *testing.T, events, data []byte, complete, wrap bool) {
		if wrap {
			events = appendBlocks(nil, enc, events, eventsBlockSize)
			data = appendBlocks(nil, enc, data, dataBlockSize)
		}
		// Inputs of one process run one at a time: reuse one directory.
		dir := fuzzDir
		hdr := headers[0]
		if complete {
			hdr = headers[1]
		}
		if err := os.WriteFile(filepath.Join(dir, HeaderFile), hdr, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, EventsFile), events, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, DataFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for i := 0; ; i++ {
			// Every frame takes at least one byte of the uncompressed
			// stream, which is at most maxBlockLen per block.
			if i > 1<<24 {
				t.Fatal("reader does not end")
			}
			ev, err := r.Next()
			if err != nil {
				var ce *CorruptError
				switch {
				case err == io.EOF:
					if !complete {
						t.Fatal("io.EOF for an incomplete trace")
					}
				case errors.Is(err, ErrIncomplete):
					if complete {
						t.Fatalf("ErrIncomplete for a complete trace: %v", err)
					}
				case errors.As(err, &ce):
				default:
					t.Fatalf("unexpected error %v", err)
				}
				if _, err2 := r.Next(); err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				return
			}
			if ev == nil {
				t.Fatal("nil event without error")
			}
		}
	})
}
