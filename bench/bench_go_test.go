package main

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWorkloads is the benchmark command in `go test -bench` form:
//
//	go test -run '^$' -bench 'Workloads/process-heavy' -benchtime 3x ./bench
//
// For each workload (a sub-benchmark), every iteration runs it natively,
// under gorr record and under gorr replay (the buffer on only; the command
// measures both modes); ns/op is the recording, and the metrics are the
// medians of each in ms and the ratios. The long go-build runs only with
// GORR_BENCH_LONG=1 in the environment.
func BenchmarkWorkloads(b *testing.B) {
	root, err := moduleRoot()
	if err != nil {
		b.Fatal(err)
	}
	tmp := b.TempDir()
	gorr := filepath.Join(tmp, "gorr")
	if out, err := combinedOutput(root, "go", "build", "-o", gorr, "./cmd/gorr"); err != nil {
		b.Fatalf("go build ./cmd/gorr: %v\n%s", err, out)
	}
	for _, wl := range workloads {
		b.Run(wl.name, func(b *testing.B) {
			if wl.long && os.Getenv("GORR_BENCH_LONG") == "" {
				b.Skip("long workload: set GORR_BENCH_LONG=1")
			}
			dir := filepath.Join(tmp, wl.name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			w, err := wl.setup(dir)
			if err != nil {
				b.Fatal(err)
			}
			traces := filepath.Join(tmp, "traces")
			if err := os.MkdirAll(traces, 0o755); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			r := measure(w, gorr, traces, b.N, []mode{bufferOn})
			b.StopTimer()
			if r.err != nil {
				b.Fatalf("%s: %v", r.failedStage, r.err)
			}
			mr := r.modes[0]
			nat, rec, rep := median(r.native), median(mr.record), median(mr.replay)
			b.ReportMetric(ms(nat), "native-ms")
			b.ReportMetric(ms(rec), "record-ms")
			b.ReportMetric(ms(rep), "replay-ms")
			b.ReportMetric(float64(rec)/float64(nat), "record/native")
			b.ReportMetric(float64(rep)/float64(nat), "replay/native")
		})
	}
}
