package session_test

import (
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/session"
)

// BenchmarkReverseStepAtEnd measures one reverse-step (and one
// reverse-continue) near the end of a recording of ~40,000 events, with
// and without snapshots:
//
//	go test -run XXX -bench ReverseStepAtEnd -benchtime 3x ./internal/replay
func BenchmarkReverseStepAtEnd(b *testing.B) {
	traceDir, syms := recordC(b, longSrc, []string{"20000"}, "mark")
	benchReverse(b, traceDir, syms["mark"])
}

// threadsLongSrc: four threads besides main, each calling mark and
// getppid 5,000 times (~40,000 events), with a mutex between them.
const threadsLongSrc = `#include <stdio.h>
#include <unistd.h>
#include <pthread.h>
long total;
pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
__attribute__((noinline)) void mark(long i) {
	pthread_mutex_lock(&mu);
	total += i;
	pthread_mutex_unlock(&mu);
}
static void *work(void *a) { for (long i = 0; i < 5000; i++) { mark(i); getppid(); } return 0; }
int main(void) {
	pthread_t th[4];
	for (int i = 0; i < 4; i++) pthread_create(&th[i], 0, work, 0);
	for (int i = 0; i < 4; i++) pthread_join(th[i], 0);
	printf("%ld\n", total);
	return 0;
}
`

// goLongSrc: goroutines on four threads making ~40,000 events.
const goLongSrc = `package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

//go:noinline
func compute(i int) int {
	os.Getppid()
	return i
}

func main() {
	runtime.GOMAXPROCS(4)
	var wg sync.WaitGroup
	total := make([]int, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				total[g] += compute(i)
			}
		}(g)
	}
	wg.Wait()
	fmt.Println(total)
}
`

// BenchmarkReverseStepAtEndThreads is BenchmarkReverseStepAtEnd for a
// pthread program and a Go program (snapshots of multi-threaded
// processes).
func BenchmarkReverseStepAtEndThreads(b *testing.B) {
	b.Run("pthread", func(b *testing.B) {
		traceDir, syms := recordC(b, threadsLongSrc, nil, "mark")
		benchReverse(b, traceDir, syms["mark"])
	})
	b.Run("go", func(b *testing.B) {
		traceDir := recordGo(b, goLongSrc)
		benchReverse(b, traceDir, goSymB(b, traceDir, "main.compute"))
	})
}

func benchReverse(b *testing.B, traceDir string, bp uint64) {
	for _, c := range []struct {
		name string
		so   session.SnapshotOptions
	}{{"from-start", session.SnapshotOptions{Off: true}}, {"snapshots", session.SnapshotOptions{}}} {
		for _, op := range []string{"reverse-step", "reverse-continue"} {
			b.Run(c.name+"/"+op, func(b *testing.B) {
				s, _ := openSession(b, traceDir, c.so)
				if st, err := s.Continue(); err != nil || st.Kind != session.StopExiting {
					b.Fatalf("continue: %+v %v", st, err)
				}
				// Start at the last call of mark (a reverse-step from the
				// exiting stop itself goes to the start of the recording).
				s.SetBreakpoint(bp)
				if st, err := s.ReverseContinue(); err != nil || st.Kind != session.StopBreakpoint {
					b.Fatalf("reverse-continue: %+v %v", st, err)
				}
				if op == "reverse-step" {
					s.ClearBreakpoint(bp)
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
					b.Logf("%d snapshots taken (%d multi-threaded), %v each; %d restores (%d threads recreated), %v each",
						st.Taken, st.Threaded, st.TakeTime/time.Duration(st.Taken),
						st.Restored, st.ThreadsRebuilt, st.RestoreTime/time.Duration(max(st.Restored, 1)))
				}
			})
		}
	}
}
