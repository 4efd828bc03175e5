package syscallbuf

import (
	"testing"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// BenchmarkDrain measures what the recorder does per drained call: check
// the record and write it (trace.Writer.WriteRun).
func BenchmarkDrain(b *testing.B) {
	var buf []byte
	for i := 0; i < 4096; i++ {
		if i%3 == 0 {
			buf = append(buf, rec(0, 64, 0x7000, make([]byte, 64))...)
		} else {
			buf = append(buf, rec(39, 1234, 0, nil)...)
		}
	}
	w, err := trace.Create(b.TempDir()+"/t", trace.Header{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close(w.Header())
	var cur trace.Regs
	b.ResetTimer()
	calls := 0
	for i := 0; i < b.N; i++ {
		run := trace.Run{Tid: 7, Cur: &cur, Rip: SyscallRet, Flags: EventFlag, Records: buf}
		for off := 0; off < len(buf); run.Calls++ {
			_, next, err := Next(buf, off)
			if err != nil {
				b.Fatal(err)
			}
			off = next
		}
		if err := w.WriteRun(&run); err != nil {
			b.Fatal(err)
		}
		calls += run.Calls
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/call")
}
