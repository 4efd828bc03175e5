// Tests preemption of goroutines (GOMAXPROCS 4) that make a system call per iteration and allocate 1 MiB every 100 iterations (memclr runs rep stosq): points can land inside runtime memory clearing.
package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

//go:noinline
func compute(i int) int {
	os.Getppid()
	return i
}

func main() {
	runtime.GOMAXPROCS(4)
	var seed [8]byte
	rand.Read(seed[:])
	start := time.Now()
	var wg sync.WaitGroup
	total := make([]int, 4)
	keep := make([][]byte, 4)
	order := make(chan int, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 3000; i++ {
				total[g] += compute(i)
				if i%100 == 0 {
					keep[g] = make([]byte, 1<<20)
					keep[g][i] = seed[g]
				}
			}
			order <- g
		}(g)
	}
	wg.Wait()
	close(order)
	var fin []int
	for g := range order {
		fin = append(fin, g)
	}
	fmt.Printf("seed %x totals %v finish order %v pid %d elapsed %v\n", binary.LittleEndian.Uint64(seed[:]), total, fin, os.Getpid(), time.Since(start).Round(time.Microsecond))
	fmt.Println("EXIT-SUCCESS")
}
