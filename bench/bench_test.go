package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeScript writes an executable shell script standing in for gorr.
func writeScript(t *testing.T, dir, body string) string {
	t.Helper()
	path := filepath.Join(dir, "fake-gorr")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMeasureReportsRecordFailure(t *testing.T) {
	dir := t.TempDir()
	gorr := writeScript(t, dir, `echo "gorr: Saving execution to trace directory '$3'." >&2
echo "gorr: record: unsupported system call frobnicate" >&2
exit 3
`)
	w := &workload{name: "true", dir: dir, argv: []string{"true"}}
	r := measure(w, gorr, dir, 2, []mode{bufferOn})
	if r.failedStage != "record buf" || r.err == nil {
		t.Fatalf("failedStage %q, err %v; want a record failure", r.failedStage, r.err)
	}
	if len(r.native) != 2 {
		t.Errorf("%d native samples, want 2: native runs go on after a gorr failure", len(r.native))
	}
	cells := row(r)
	want := "failed: exit status 3: gorr: record: unsupported system call frobnicate"
	if len(cells) != len(header([]mode{bufferOn})) {
		t.Errorf("%d cells for %d columns", len(cells), len(header([]mode{bufferOn})))
	}
	if cells[2] != want {
		t.Errorf("record cell %q, want %q", cells[2], want)
	}
	if cells[1] == "-" || strings.HasPrefix(cells[1], "failed") {
		t.Errorf("native cell %q, want a time", cells[1])
	}
	for _, c := range cells[3:] {
		if c != "-" {
			t.Errorf("cells %q: want - after the failed record column", cells)
			break
		}
	}
}

func TestMeasureSuccess(t *testing.T) {
	dir := t.TempDir()
	// record --syscall-buffer|-n -o DIR: create the trace with a 10-byte
	// file (11 with -n); replay: succeed (and print the recorded output when not quiet).
	gorr := writeScript(t, dir, `if [ "$1" = record ]; then
	shift; extra=
	if [ "$1" = -n ]; then extra=n; fi
	[ "$1" = -n ] || [ "$1" = --syscall-buffer ] || exit 9
	shift
	mkdir -p "$2/files" && printf 0123456789$extra > "$2/events" && shift 2 && exec "$@"
fi
[ "$3" = -q ] || echo hello
`)
	w := &workload{name: "echo", dir: dir, argv: []string{"echo", "hello"}}
	r := measure(w, gorr, dir, 3, []mode{bufferOn, bufferOff})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.native) != 3 || len(r.modes) != 2 {
		t.Fatalf("%d native samples, %d modes; want 3 and 2", len(r.native), len(r.modes))
	}
	for i, mr := range r.modes {
		if len(mr.record) != 3 || len(mr.replay) != 3 {
			t.Fatalf("mode %q: samples %d %d, want 3 each", mr.mode.name, len(mr.record), len(mr.replay))
		}
		if s := sizeMedians(mr.sizes); s != (traceSize{total: int64(10 + i)}) {
			t.Errorf("mode %q: size %+v, want %d bytes", mr.mode.name, s, 10+i)
		}
	}
	if cells := row(r); len(cells) != len(header(modesOf(r))) {
		t.Errorf("%d cells, %d columns", len(cells), len(header(modesOf(r))))
	}
}

func TestMeasureTraceCountsHardLinksAsZero(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	files := filepath.Join(trace, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path string, n int) {
		if err := os.WriteFile(path, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(trace, "events"), 100)
	write(filepath.Join(files, "1-copy"), 20)
	write(filepath.Join(dir, "lib.so"), 1000)
	if err := os.Link(filepath.Join(dir, "lib.so"), filepath.Join(files, "2-lib.so")); err != nil {
		t.Fatal(err)
	}
	s, err := measureTrace(trace)
	if err != nil {
		t.Fatal(err)
	}
	if want := (traceSize{total: 120, files: 20, linked: 1000}); s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
}

func TestMedian(t *testing.T) {
	if m := median([]time.Duration{5, 1, 3}); m != 3 {
		t.Errorf("median of 5 1 3 = %v", m)
	}
	if m := median([]int64{4, 1, 3, 2}); m != 2 {
		t.Errorf("median of 4 1 3 2 = %v", m)
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	defer func(d time.Duration) { runTimeout = d }(runTimeout)
	runTimeout = 300 * time.Millisecond
	start := time.Now()
	// The grandchild keeps stdout open: only killing the group ends it.
	_, err := run(t.TempDir(), "sh", "-c", "sleep 30 & sleep 30")
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("run returned after %v", d)
	}
}

func modesOf(r *result) []mode {
	var ms []mode
	for _, mr := range r.modes {
		ms = append(ms, mr.mode)
	}
	return ms
}
