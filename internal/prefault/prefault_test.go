package prefault

import (
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of [start, end) the process has mapped.
func resident(t *testing.T, start, end uintptr) int {
	t.Helper()
	vec := make([]byte, (end-start)/pageSize)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

func TestAsyncMapsTheBuffer(t *testing.T) {
	b := make([]byte, 0, 4<<20) // a fresh large object: not touched by the runtime
	start, end := span(b)
	if start >= end {
		t.Fatal("no whole page in a 4 MB buffer")
	}
	pages := int((end - start) / pageSize)
	if n := resident(t, start, end); n > pages/2 {
		t.Skipf("%d of %d pages mapped before: the runtime touched the buffer", n, pages)
	}
	Async(b)
	deadline := time.Now().Add(5 * time.Second)
	for resident(t, start, end) < pages {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pages mapped 5 s after Async", resident(t, start, end), pages)
		}
		time.Sleep(time.Millisecond)
	}
	for i := range b[:cap(b)] {
		if b[:cap(b)][i] != 0 {
			t.Fatalf("byte %d is %d after Async, want 0", i, b[:cap(b)][i])
		}
	}
}

func TestSpanIsInside(t *testing.T) {
	b := make([]byte, 10, 3*pageSize+100)
	start, end := span(b[1:])
	p := uintptr(unsafe.Pointer(&b[1]))
	if start < p || end > p+uintptr(cap(b[1:])) || start%pageSize != 0 || end%pageSize != 0 {
		t.Fatalf("span %#x-%#x outside %#x+%d or unaligned", start, end, p, cap(b[1:]))
	}
	if s, e := span(nil); s != 0 || e != 0 {
		t.Fatalf("span(nil) = %#x-%#x", s, e)
	}
}
