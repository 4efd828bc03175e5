package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// GC settings of gorr's own process. The garbage is mostly events: the
// recorder encodes them, replay decodes tens of thousands a second (about
// 480 bytes each) over a live heap of a few MB. Fewer collections cost
// more fresh memory, and what that costs depends on the machine: where a
// page fault is cheap, four times the live heap between collections
// (GOGC=400) took the mutex workload's replay from 52 to 45 ms (median of
// 40 pairs); on a VM whose page faults take 10-13 µs (anonymous, first
// touch), the 30 MB heap GOGC=400 lets replay grow to cost 8700 page
// faults more than GOGC=100 in the replay of cp -a, 213 against 158 ms
// (perf stat, 8 runs each), while recording, whose heap stays small,
// gained nothing from a lower setting (the mutex recording: 95 ms at
// 400, 111 at 100). So recording keeps 400 and the commands that read a
// trace use 200: there cp's replay took 156 ms, the shell loop's 1495
// against 1565 at 400, the mutex's 111 against 103 and python's the
// same. The soft limit keeps a big session's heap from growing unchecked.
// GOGC and GOMEMLIMIT in the environment win.
const (
	recordGCPercent = 400
	readGCPercent   = 200
	memoryLimit     = 4 << 30
)

// tuneGC applies the GC percent for command cmd and memoryLimit unless
// the environment sets its own.
func tuneGC(cmd string) {
	if os.Getenv("GOGC") == "" {
		p := readGCPercent
		if cmd == "record" {
			p = recordGCPercent
		}
		debug.SetGCPercent(p)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// Replay decodes events into fresh heap objects (about 500 bytes each,
// two per buffered call), so the heap of a long replay grows to its goal
// (three times the live heap at GOGC 200: 23 MB for the mutex workload)
// on pages touched for the first time. On a VM whose first touch of an
// anonymous page costs 10-13 µs that was 5500 page faults and a fifth of
// the mutex workload's replay. prefaultHeap gives the heap
// prefaultBytes of memory it maps ahead: it allocates them (Go maps but
// does not touch a fresh large object), frees them with a collection of
// the still tiny heap, and has the kernel populate the range on a
// goroutine of its own (MADV_POPULATE_WRITE: a fraction of a
// microsecond a page, no fault) while replay starts; the heap then
// carves its spans out of that range. Measured (median of 16-20
// alternated runs): the mutex workload's replay 101.5 -> 85.4 ms, 5188 ->
// about 1100 page faults; cp -a 142.5 -> 127.7 ms; the shell loop 1404
// -> 1361 ms; python's (2232 events, which gets none) unchanged.
// Recording gained nothing (its heap stays small; the mutex workload's
// recording took 10 ms more), so only replay does it, for traces of at
// least prefaultEvents events, and only where a first touch is slow
// (slowFault): on a KVM guest whose first touch costs 1.2-2.4 µs, the
// 5-7 ms of CPU the populate takes on the other CPU, beside the
// goroutine decoding the events, cost more than the faults it saved
// (median of 21 alternated runs: the mutex workload's replay 30.0 ms
// with it, 26.5 without; the shell loop's 480 and 469, go-program's 318
// and 311 (9 runs); 500000 buffered getpids 268 and 275 (7 runs)).
const (
	prefaultBytes  = 24 << 20
	prefaultEvents = 8192
	slowFault      = 4 * time.Microsecond
	probePages     = 64
)

// prefaultHeap prepares the heap for replaying a trace of events events.
func prefaultHeap(events uint64) {
	if events < prefaultEvents || faultCost() < slowFault {
		return
	}
	old := debug.SetGCPercent(-1)
	b := make([]byte, prefaultBytes)
	start, n := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b))
	b = nil
	runtime.GC()
	debug.SetGCPercent(old)
	// Populating pages the heap already uses is harmless: the kernel
	// maps those it has not mapped yet and changes no byte.
	go func() { _, _, _ = unix.Syscall(unix.SYS_MADVISE, start, n, unix.MADV_POPULATE_WRITE) }()
}

// faultCost measures what the first touch of an anonymous page costs on
// this machine: the time to touch probePages fresh pages, by page (0.1 ms
// on a machine of cheap faults, 0.8 ms on one of 12 µs faults).
func faultCost() time.Duration {
	b, err := unix.Mmap(-1, 0, probePages*os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return 0
	}
	defer unix.Munmap(b)
	start := time.Now()
	for p := 0; p < len(b); p += os.Getpagesize() {
		b[p] = 1
	}
	return time.Since(start) / probePages
}
