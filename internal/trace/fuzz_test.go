package trace

import (
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
	f.Add(events, data, true)
	f.Add(events, data, false)
	f.Add(events[:len(events)/2], data, false)
	f.Add(events, data[:len(data)/2], true)
	f.Add([]byte{}, []byte{}, true)
	f.Add([]byte("GRB1"), []byte{}, false)
	rawEv, rawData := frameBytes(evs)
	f.Add(rawEv, rawData, true) // not blocks: bad magic

	f.Fuzz(func(t *testing.T, events, data []byte, complete bool) {
		dir := t.TempDir()
		h := testHeader()
		h.Version, h.RequiredReaderVersion = FormatVersion, ReaderVersion
		h.Complete, h.EventCount = complete, 40
		if err := writeHeader(dir, &h); err != nil {
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
			if i > len(events)+1 {
				// Every frame takes at least one byte of the stream
				// (uncompressed); compressed, far fewer bytes can hold
				// many frames, so just bound the loop generously.
				if i > 1<<20 {
					t.Fatal("reader does not end")
				}
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
