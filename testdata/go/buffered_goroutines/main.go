// Buffered system calls from goroutines (file reads, pread, fstat, getpid, gettid, clock_gettime, getrandom) while SIGUSR1 and SIGURG preemption arrive.
package main

import (
	"crypto/rand"
	"fmt"
	"hash/fnv"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	runtime.GOMAXPROCS(4)
	dir, err := os.MkdirTemp("", "bufgo")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// Files with random contents the workers read back many times.
	const nfiles = 4
	var want [nfiles]uint64
	paths := make([]string, nfiles)
	for i := range paths {
		b := make([]byte, 3000+i*517)
		if _, err := rand.Read(b); err != nil {
			panic(err)
		}
		paths[i] = filepath.Join(dir, fmt.Sprintf("f%d", i))
		if err := os.WriteFile(paths[i], b, 0o644); err != nil {
			panic(err)
		}
		want[i] = hash(b)
	}

	// SIGUSR1 sent to the process every few milliseconds while the
	// workers run; a spinning goroutine needs async preemption (SIGURG)
	// for the GCs the workers' allocations start.
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGUSR1)
	var got atomic.Int64
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(3)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-sigs:
				got.Add(1)
			case <-stop:
				return
			}
		}
	}()
	go func() {
		defer bg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				syscall.Kill(os.Getpid(), syscall.SIGUSR1)
			case <-stop:
				return
			}
		}
	}()
	var spins atomic.Int64
	go func() {
		defer bg.Done()
		// A bounded spin (about 20 ms natively) without calls.
		x := uint64(1)
		for k := 0; k < 10; k++ {
			for i := 0; i < 1_000_000; i++ {
				x = x*6364136223846793005 + 1442695040888963407
			}
			spins.Add(1)
		}
		if x == 0 {
			fmt.Println("zero")
		}
		<-stop
	}()

	const workers, rounds = 6, 60
	var wg sync.WaitGroup
	var bad, pids, calls atomic.Int64
	var tidSum atomic.Uint64
	var elapsed [workers]time.Duration
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			t0 := time.Now()
			buf := make([]byte, 8192)
			for r := 0; r < rounds; r++ {
				i := (w + r) % nfiles
				b, err := os.ReadFile(paths[i])
				if err != nil || hash(b) != want[i] {
					bad.Add(1)
				}
				f, err := os.Open(paths[i])
				if err != nil {
					panic(err)
				}
				st, err := f.Stat()
				if err != nil || st.Size() != int64(len(b)) {
					bad.Add(1)
				}
				n, _ := f.ReadAt(buf[:100], int64(r%1000))
				if n != 100 || hash(buf[:n]) != hash(b[r%1000:r%1000+100]) {
					bad.Add(1)
				}
				f.Close()
				if syscall.Getpid() == os.Getpid() {
					pids.Add(1)
				}
				tidSum.Add(uint64(syscall.Gettid()))
				var rb [8]byte
				rand.Read(rb[:])
				_ = make([]byte, 4096+int(rb[0])*16) // garbage for the GC
				calls.Add(1)
			}
			elapsed[w] = time.Since(t0)
		}(w)
	}
	wg.Wait()
	total := time.Since(start)
	time.Sleep(5 * time.Millisecond) // a last signal or two
	close(stop)
	bg.Wait()
	signal.Stop(sigs)

	fmt.Printf("pid %d calls %d bad %d getpid ok %d\n", os.Getpid(), calls.Load(), bad.Load(), pids.Load())
	fmt.Printf("tid sum %d signals>0 %v spins>0 %v\n", tidSum.Load(), got.Load() > 0, spins.Load() > 0)
	var sum time.Duration
	for _, e := range elapsed {
		sum += e
	}
	fmt.Printf("elapsed %v (workers %v) at %d\n", total, sum, time.Now().UnixNano())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("gcs>0 %v\n", ms.NumGC > 0)
	if bad.Load() != 0 {
		fmt.Println("MISMATCH")
		os.Exit(1)
	}
	fmt.Println("EXIT-SUCCESS")
}

func hash(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}
