// Tests GC stop-the-world against a goroutine in a call-free tight loop (~200 ms, stoppable only by SIGURG async preemption) while main allocates and calls runtime.GC.
package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
)

const loopIters = 100 << 20 // ~200 ms natively

var progress int64 // loop index, stored every 65536 iterations

type node struct {
	next *node
	buf  [48]byte
}

var sink *node

// tight contains no function calls: the compiler inserts no preemption
// points, so only an asynchronous preemption signal can stop it early.
func tight(h uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		h = (h ^ uint64(i)) * 0x100000001b3
		h ^= h >> 29
		if i&0xffff == 0 {
			atomic.StoreInt64(&progress, int64(i))
		}
	}
	return h
}

func main() {
	runtime.GOMAXPROCS(2)
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		fmt.Println("rand:", err)
		os.Exit(1)
	}
	seed := binary.LittleEndian.Uint64(b[:])
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()

	result := make(chan uint64, 1)
	var loopDur int64
	go func() {
		t0 := time.Now()
		h := tight(seed, loopIters)
		atomic.StoreInt64(&loopDur, int64(time.Since(t0)))
		result <- h
	}()

	type gcInfo struct {
		dur      time.Duration
		progress int64
	}
	var gcs []gcInfo
	for round := 0; round < 5; round++ {
		var head *node
		for i := 0; i < 20000; i++ {
			head = &node{next: head}
			head.buf[0] = byte(i)
		}
		sink = head
		t0 := time.Now()
		runtime.GC()
		gcs = append(gcs, gcInfo{time.Since(t0), atomic.LoadInt64(&progress)})
	}
	sink = nil
	h := <-result
	elapsed := time.Since(start)
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)

	fmt.Printf("pid %d seed %016x loop result %016x after %d iterations in %d ns\n", os.Getpid(), seed, h, loopIters, atomic.LoadInt64(&loopDur))
	fmt.Printf("NumGC %d (+%d), total pause %d ns\n", ms1.NumGC, ms1.NumGC-ms0.NumGC, ms1.PauseTotalNs-ms0.PauseTotalNs)
	for i, g := range gcs {
		fmt.Printf("runtime.GC #%d took %d ns, loop at iteration %d\n", i, g.dur.Nanoseconds(), g.progress)
	}
	fmt.Printf("elapsed %d ns\n", elapsed.Nanoseconds())
	fmt.Println("EXIT-SUCCESS")
}
