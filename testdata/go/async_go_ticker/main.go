// Tests preemption and signals in a Go program with GOMAXPROCS=2: goroutines hash random data beside a 1 ms ticker (no system calls in the hashing loops), printing counts a misplaced point would change.
package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	runtime.GOMAXPROCS(2)
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		panic(err)
	}
	s := binary.LittleEndian.Uint64(seed[:])
	var stop atomic.Bool
	var wg sync.WaitGroup
	sums := make([]uint64, 4)
	iters := make([]uint64, 4)
	for g := range sums {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			h := s + uint64(g)
			n := uint64(0)
			for !stop.Load() {
				for i := 0; i < 1000; i++ {
					h = (h ^ uint64(i)) * 0x100000001b3
					h ^= h >> 29
				}
				n++
			}
			sums[g], iters[g] = h, n
		}(g)
	}
	tick := time.NewTicker(time.Millisecond)
	ticks := 0
	for range tick.C {
		ticks++
		if ticks == 60 {
			break
		}
	}
	tick.Stop()
	stop.Store(true)
	wg.Wait()
	fmt.Printf("seed %016x pid %d ticks %d\n", s, os.Getpid(), ticks)
	for g := range sums {
		fmt.Printf("goroutine %d: %d rounds, hash %016x\n", g, iters[g], sums[g])
	}
	fmt.Println("EXIT-SUCCESS")
}
