// A pipeline of goroutines hashing buffers (GOMAXPROCS 1 under the
// recorder's one CPU) with a ticker running, recorded with the syscall
// buffer and short timeslices: the thread is preempted again and again
// inside the same inner loop, with stretches of buffered clock_gettime
// calls between the points. Replay resumes such a thread at its last
// point, which can lie inside the site chosen for the next one.
package main

import (
	"fmt"
	"hash/fnv"
	"os"
	"sync"
	"time"
)

func main() {
	start := time.Now()
	const items = 40000
	jobs := make(chan int, 64)
	results := make(chan uint64, 64)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				buf := make([]byte, 64+(j*37)%2048)
				for k := range buf {
					buf[k] = byte(j + k)
				}
				h := fnv.New64a()
				h.Write(buf)
				results <- h.Sum64()
			}
		}()
	}
	go func() {
		for i := 0; i < items; i++ {
			jobs <- i
		}
		close(jobs)
	}()
	go func() {
		wg.Wait()
		close(results)
	}()

	ticker := time.NewTicker(time.Millisecond)
	defer ticker.Stop()
	var sum uint64
	n, ticks := 0, 0
	for results != nil {
		select {
		case r, ok := <-results:
			if !ok {
				results = nil
				break
			}
			sum += r
			n++
		case <-ticker.C:
			ticks++
		}
	}
	// ticks, the pid and the time taken differ from run to run.
	fmt.Printf("items %d sum %016x ticks %d pid %d took %v\n", n, sum, ticks, os.Getpid(), time.Since(start))
}
