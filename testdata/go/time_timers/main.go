// Tests time.Now, time.Since, monotonic readings, time.Sleep, time.Timer (Reset/Stop), time.Ticker and time.AfterFunc.
package main

import (
	"fmt"
	"sync"
	"time"
)

func main() {
	start := time.Now()
	fmt.Printf("now unix=%d nanos=%d\n", start.Unix(), start.Nanosecond())
	fmt.Printf("utc=%s\n", start.UTC().Format(time.RFC3339Nano))
	time.Sleep(2 * time.Millisecond)
	fmt.Printf("slept 2ms: since=%v (>=2ms: %v)\n", time.Since(start), time.Since(start) >= 2*time.Millisecond)

	ticker := time.NewTicker(1 * time.Millisecond)
	var ticks []time.Duration
	for len(ticks) < 5 {
		t := <-ticker.C
		ticks = append(ticks, t.Sub(start))
	}
	ticker.Stop()
	fmt.Printf("ticker ticks at: %v\n", ticks)

	timer := time.NewTimer(time.Hour)
	stopped := timer.Stop()
	timer.Reset(3 * time.Millisecond)
	t0 := time.Now()
	fired := <-timer.C
	fmt.Printf("timer stopped=%v reset fired after %v at %d\n", stopped, fired.Sub(t0), fired.UnixNano())

	var wg sync.WaitGroup
	wg.Add(1)
	var afterAt time.Time
	time.AfterFunc(1500*time.Microsecond, func() {
		afterAt = time.Now()
		wg.Done()
	})
	wg.Wait()
	fmt.Printf("AfterFunc ran after %v\n", afterAt.Sub(t0))

	select {
	case <-time.After(2 * time.Millisecond):
		fmt.Println("time.After fired")
	case <-make(chan int):
	}
	d := time.Since(start)
	fmt.Printf("total elapsed %v (%d ns)\n", d, d.Nanoseconds())
	fmt.Println("EXIT-SUCCESS")
}
