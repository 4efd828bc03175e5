package replay_test

import (
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/replay"
)

// BenchmarkReverseStepAtEnd measures one reverse-step (and one
// reverse-continue) near the end of a recording of ~40,000 events, with
// and without snapshots:
//
//	go test -run XXX -bench ReverseStepAtEnd -benchtime 3x ./internal/replay
func BenchmarkReverseStepAtEnd(b *testing.B) {
	traceDir, syms := recordC(b, longSrc, []string{"20000"}, "mark")
	for _, c := range []struct {
		name string
		so   replay.SnapshotOptions
	}{{"from-start", replay.SnapshotOptions{Off: true}}, {"snapshots", replay.SnapshotOptions{}}} {
		for _, op := range []string{"reverse-step", "reverse-continue"} {
			b.Run(c.name+"/"+op, func(b *testing.B) {
				s, _ := openSession(b, traceDir, c.so)
				if st, err := s.Continue(); err != nil || st.Kind != replay.StopExiting {
					b.Fatalf("continue: %+v %v", st, err)
				}
				// Start at the last call of mark (a reverse-step from the
				// exiting stop itself goes to the start of the recording).
				s.SetBreakpoint(syms["mark"])
				if st, err := s.ReverseContinue(); err != nil || st.Kind != replay.StopBreakpoint {
					b.Fatalf("reverse-continue: %+v %v", st, err)
				}
				if op == "reverse-step" {
					s.ClearBreakpoint(syms["mark"])
				}
				pos := s.Position().Event
				before := s.SnapshotStats().EventsReplayed
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var err error
					if op == "reverse-step" {
						_, err = s.ReverseStep()
					} else {
						_, err = s.ReverseContinue()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				st := s.SnapshotStats()
				b.ReportMetric(float64(st.EventsReplayed-before)/float64(b.N), "events/op")
				b.ReportMetric(float64(pos), "position")
				b.ReportMetric(float64(st.Live), "snapshots")
				if st.Taken > 0 {
					b.Logf("%d snapshots taken, %v each; %d restores, %v each", st.Taken, st.TakeTime/time.Duration(st.Taken),
						st.Restored, st.RestoreTime/time.Duration(max(st.Restored, 1)))
				}
			})
		}
	}
}
