// Tests goroutines spinning on atomic.LoadInt32 (pure spin, then a spin that also does atomic.AddInt64) with GOMAXPROCS(2) while main computes ~30 ms and then sets the flag.
package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

const hashIters = 16 << 20 // ~30 ms natively

var (
	flag1, flag2 int32
	spins        int64
	data         [512]uint64
)

type spinResult struct {
	tid int
	dur time.Duration
}

// compute hashes the random data; it neither allocates nor makes syscalls, so
// no GC stop-the-world is needed while a spinner holds the other P.
func compute(h uint64, rounds int, sample *int64) uint64 {
	for i := 0; i < rounds; i++ {
		h = (h ^ data[i&511]) * 0x100000001b3
		h ^= h >> 29
		if i == rounds/2 {
			*sample = atomic.LoadInt64(&spins)
		}
	}
	return h
}

func main() {
	prev := runtime.GOMAXPROCS(2)
	var seed [512 * 8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		fmt.Println("rand:", err)
		os.Exit(1)
	}
	for i := range data {
		data[i] = binary.LittleEndian.Uint64(seed[i*8:])
	}
	start := time.Now()

	// Phase 1: pure spin.
	started := make(chan int)
	done := make(chan spinResult, 1)
	go func() {
		tid := syscall.Gettid()
		t0 := time.Now()
		started <- tid
		for atomic.LoadInt32(&flag1) == 0 {
		}
		done <- spinResult{tid, time.Since(t0)}
	}()
	<-started
	var unused int64
	h1 := compute(data[0], hashIters, &unused)
	atomic.StoreInt32(&flag1, 1)
	r1 := <-done

	// Phase 2: spin that increments a counter on every iteration.
	go func() {
		tid := syscall.Gettid()
		t0 := time.Now()
		started <- tid
		for atomic.LoadInt32(&flag2) == 0 {
			atomic.AddInt64(&spins, 1)
		}
		done <- spinResult{tid, time.Since(t0)}
	}()
	<-started
	var mid int64
	h2 := compute(h1, hashIters, &mid)
	end := atomic.LoadInt64(&spins)
	atomic.StoreInt32(&flag2, 1)
	r2 := <-done
	elapsed := time.Since(start)

	fmt.Printf("pid %d GOMAXPROCS %d (was %d) seed %016x\n", os.Getpid(), runtime.GOMAXPROCS(0), prev, data[0])
	fmt.Printf("phase 1: hash %016x, pure spinner tid %d spun %d ns\n", h1, r1.tid, r1.dur.Nanoseconds())
	fmt.Printf("phase 2: hash %016x, counting spinner tid %d spun %d ns\n", h2, r2.tid, r2.dur.Nanoseconds())
	fmt.Printf("spins seen by main: mid %d end %d; total %d\n", mid, end, atomic.LoadInt64(&spins))
	fmt.Printf("elapsed %d ns\n", elapsed.Nanoseconds())
	fmt.Println("EXIT-SUCCESS")
}
