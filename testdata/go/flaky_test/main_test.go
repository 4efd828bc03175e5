// Tests a go test binary whose test fails under some interleavings (a flaky test).
package main

import (
	"sync"
	"testing"
	"time"
)

func TestFlaky(t *testing.T) {
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			time.Sleep(time.Duration(time.Now().UnixNano()%3) * time.Millisecond)
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	t.Logf("order %v at %d", order, time.Now().UnixNano())
	if order[0] != 0 {
		t.Fatalf("goroutine 1 finished first: %v", order)
	}
}
