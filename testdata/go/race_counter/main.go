// Tests a binary built with -race: goroutines share a mutex-protected counter and a channel.
package main

import (
	"fmt"
	"sync"
	"time"
)

func main() {
	var mu sync.Mutex
	counter := 0
	order := make(chan int, 8)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				mu.Lock()
				counter++
				mu.Unlock()
			}
			order <- i
		}(i)
	}
	wg.Wait()
	close(order)
	var got []int
	for i := range order {
		got = append(got, i)
	}
	fmt.Println("counter", counter, "finish order", got, "at", time.Now().UnixNano())
	fmt.Println("EXIT-SUCCESS")
}
