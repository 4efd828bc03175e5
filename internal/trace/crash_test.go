package trace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// frameEnds returns, for each event of a complete trace, the offset in the
// uncompressed events stream where its frame ends.
func frameEnds(t *testing.T, dir string) []uint64 {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ends []uint64
	for {
		_, err := r.Next()
		if err != nil {
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("reading the untruncated trace: %v", err)
			}
			return ends
		}
		ends = append(ends, r.events.offset())
	}
}

// TestCrashTruncation simulates a recorder killed while writing: the
// events file of an unclosed trace is cut at many points; the reader must
// return exactly the events of the complete blocks and then ErrIncomplete.
func TestCrashTruncation(t *testing.T) {
	src := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, src)
	evs := randEvents(7, 6000)
	const n = 2500
	writeAll(t, w, evs[:n])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	firstFlush := blocksOf(t, filepath.Join(src, EventsFile))
	writeAll(t, w, evs[n:])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// No Close: header.json still says incomplete.
	ends := frameEnds(t, src)
	if len(ends) != len(evs) {
		t.Fatalf("untruncated unclosed trace: %d events, want %d", len(ends), len(evs))
	}
	blocks := blocksOf(t, filepath.Join(src, EventsFile))
	size := blocks[len(blocks)-1].end

	points := map[int64]bool{0: true, 1: true, 15: true, 16: true, 17: true, size - 1: true, size: true}
	for _, b := range blocks {
		for _, d := range []int64{-1, 0, 1, 8, 15, 16, 17, 100} {
			if p := b.off + d; p >= 0 && p <= size {
				points[p] = true
			}
		}
		points[(b.off+b.end)/2] = true
	}
	points[firstFlush[len(firstFlush)-1].end] = true

	for p := range points {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "copy")
			copyDir(t, src, dir)
			if err := os.Truncate(filepath.Join(dir, EventsFile), p); err != nil {
				t.Fatal(err)
			}
			// Expected: the events whose frame ends within the complete blocks.
			var complete uint64
			for _, b := range blocks {
				if b.end <= p {
					complete += uint64(b.ulen)
				}
			}
			want := 0
			for want < len(ends) && ends[want] <= complete {
				want++
			}
			got, err := readEvents(t, dir)
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("want ErrIncomplete, got %v", err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("ended abnormally after event %d", want)) {
				t.Fatalf("error %q does not name event %d", err, want)
			}
			sameEvents(t, got, evs[:want])
			if p == firstFlush[len(firstFlush)-1].end && want != n {
				t.Fatalf("cut at the first flush: %d events, want %d", want, n)
			}
		})
	}
	mustClose(t, w)
}

// TestCrashEveryByte cuts a small unclosed trace at every byte of both
// files.
func TestCrashEveryByte(t *testing.T) {
	src := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, src)
	evs := randEvents(8, 30)
	for i, ev := range evs {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range []string{EventsFile, DataFile} {
		full, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "copy")
		copyDir(t, src, dir)
		last := -1
		for p := len(full); p >= 0; p-- {
			if err := os.WriteFile(filepath.Join(dir, name), full[:p], 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readEvents(t, dir)
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("%s cut at %d: want ErrIncomplete, got %v", name, p, err)
			}
			sameEvents(t, got, evs[:len(got)])
			if last >= 0 && len(got) > last {
				t.Fatalf("%s cut at %d: more events (%d) than with a longer file (%d)", name, p, len(got), last)
			}
			last = len(got)
		}
		if name == EventsFile && last != 0 {
			t.Fatalf("%s empty: %d events", name, last)
		}
	}
	mustClose(t, w)
}

// TestNeverClosed: a Writer that is simply abandoned (as after SIGKILL)
// leaves a trace readable up to its last flush.
func TestNeverClosed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, dir)
	evs := randEvents(9, 500)
	writeAll(t, w, evs[:300])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, evs[300:])
	// The last 200 events may or may not have been flushed by the 100 ms
	// timer: either way the reader sees the events of the last flush.
	h, got, err := ReadAll(dir)
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("want ErrIncomplete, got %v", err)
	}
	if h.Complete {
		t.Fatal("header says complete")
	}
	if len(got) != 300 && len(got) != 500 {
		t.Fatalf("%d events, want 300 or 500", len(got))
	}
	sameEvents(t, got, evs[:len(got)])
	w.mu.Lock() // stop the writer like a SIGKILL would
	w.closed = true
	w.mu.Unlock()
}

// TestNoStreams: a recorder killed between header.json and the streams.
func TestNoStreams(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	w := mustCreate(t, dir)
	mustClose(t, w)
	h, _ := readHeader(dir)
	h.Complete = false
	writeHeader(dir, &h)
	os.Remove(filepath.Join(dir, EventsFile))
	os.Remove(filepath.Join(dir, DataFile))
	_, evs, err := ReadAll(dir)
	if !errors.Is(err, ErrIncomplete) || len(evs) != 0 || !strings.Contains(err.Error(), "after event 0") {
		t.Fatalf("%d events, %v", len(evs), err)
	}
}
