// Tests the Go garbage collector: allocation churn that forces several GCs (runtime.NumGC, MemStats), finalizers and runtime.GC.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"
)

type node struct {
	next *node
	data [64]byte
}

var sink *node

func main() {
	debug.SetGCPercent(10)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	var keep []*node
	for round := 0; round < 12; round++ {
		var head *node
		for i := 0; i < 10000; i++ {
			head = &node{next: head}
			head.data[0] = byte(i)
		}
		if round%3 == 0 {
			keep = append(keep, head)
		}
		sink = head
	}
	finalized := make(chan struct{}, 1)
	obj := &node{}
	runtime.SetFinalizer(obj, func(*node) { finalized <- struct{}{} })
	obj = nil
	runtime.GC()
	runtime.GC()
	select {
	case <-finalized:
		fmt.Println("finalizer ran")
	case <-time.After(time.Second):
		fmt.Println("finalizer did not run")
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	fmt.Printf("NumGC>=3: %v (NumGC=%d, forced=%d)\n", after.NumGC-before.NumGC >= 3, after.NumGC-before.NumGC, after.NumForcedGC)
	fmt.Printf("TotalAlloc=%d Mallocs=%d HeapAlloc=%d HeapSys=%d\n", after.TotalAlloc-before.TotalAlloc, after.Mallocs-before.Mallocs,
		after.HeapAlloc, after.HeapSys)
	fmt.Printf("PauseTotalNs=%d LastGC=%d\n", after.PauseTotalNs, after.LastGC)
	fmt.Printf("kept lists=%d elapsed=%v pid=%d\n", len(keep), time.Since(start), os.Getpid())
	fmt.Println("EXIT-SUCCESS")
}
