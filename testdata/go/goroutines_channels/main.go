// Tests goroutines, buffered/unbuffered channels, select and sync.WaitGroup, with a mutex-protected interleaving log that varies per run.
package main

import (
	"fmt"
	"os"
	"sync"
	"time"
)

func main() {
	var (
		mu  sync.Mutex
		log []string
		wg  sync.WaitGroup
	)
	record := func(s string) {
		mu.Lock()
		log = append(log, s)
		mu.Unlock()
	}
	start := time.Now()
	jobs := make(chan int)
	results := make(chan int, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for j := range jobs {
				sum := 0
				for k := 0; k < 20000*(j%5+1); k++ {
					sum = sum*31 + (k ^ j)
				}
				record(fmt.Sprintf("w%d:j%d", id, j))
				results <- int(uint(sum) % 1000)
			}
		}(w)
	}
	go func() {
		for j := 0; j < 24; j++ {
			jobs <- j
		}
		close(jobs)
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	total := 0
	count := 0
	timeout := time.After(5 * time.Second)
loop:
	for {
		select {
		case r, ok := <-results:
			if !ok {
				break loop
			}
			total += r
			count++
		case <-timeout:
			fmt.Println("timeout")
			os.Exit(1)
		}
	}
	fmt.Printf("results=%d total=%d\n", count, total)
	perWorker := map[byte]int{}
	for _, s := range log {
		perWorker[s[1]]++
	}
	fmt.Printf("per worker: w0=%d w1=%d w2=%d w3=%d\n", perWorker['0'], perWorker['1'], perWorker['2'], perWorker['3'])
	fmt.Printf("interleaving: %v\n", log)
	done := make(chan struct{})
	var once sync.Once
	for i := 0; i < 3; i++ {
		go once.Do(func() { close(done) })
	}
	<-done
	fmt.Printf("pid=%d elapsed=%v\n", os.Getpid(), time.Since(start))
	fmt.Println("EXIT-SUCCESS")
}
