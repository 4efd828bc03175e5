// Tests runtime.GOMAXPROCS(2) with two producers and two consumers over a bounded channel; prints the per-consumer split and ordering.
package main

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

func main() {
	prev := runtime.GOMAXPROCS(2)
	fmt.Printf("GOMAXPROCS was %d now %d, NumCPU=%d\n", prev, runtime.GOMAXPROCS(0), runtime.NumCPU())
	ch := make(chan int, 8)
	var prodWG, consWG sync.WaitGroup
	var mu sync.Mutex
	got := map[int][]int{}
	for p := 0; p < 2; p++ {
		prodWG.Add(1)
		go func(p int) {
			defer prodWG.Done()
			for i := 0; i < 200; i++ {
				ch <- p*1000 + i
				if i%50 == 0 {
					runtime.Gosched()
				}
			}
		}(p)
	}
	start := time.Now()
	for c := 0; c < 2; c++ {
		consWG.Add(1)
		go func(c int) {
			defer consWG.Done()
			for v := range ch {
				x := v
				for k := 0; k < 2000; k++ {
					x = x*1103515245 + 12345
				}
				mu.Lock()
				got[c] = append(got[c], v)
				mu.Unlock()
			}
		}(c)
	}
	prodWG.Wait()
	close(ch)
	consWG.Wait()
	total := len(got[0]) + len(got[1])
	fmt.Printf("consumed %d: consumer0=%d consumer1=%d\n", total, len(got[0]), len(got[1]))
	if len(got[0]) > 5 {
		fmt.Printf("consumer0 first items: %v\n", got[0][:5])
	}
	fmt.Printf("elapsed %v goroutines now %d\n", time.Since(start), runtime.NumGoroutine())
	fmt.Println("EXIT-SUCCESS")
}
