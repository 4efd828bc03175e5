package prefault

import (
	"bytes"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of b the kernel has mapped (mincore).
func resident(t *testing.T, b []byte) int {
	t.Helper()
	vec := make([]byte, (len(b)+pageSize-1)/pageSize)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

func TestAheadPopulatesAChunkAhead(t *testing.T) {
	b, err := unix.Mmap(-1, 0, 4*Chunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	if got := resident(t, b); got != 0 {
		t.Fatalf("fresh mapping has %d resident pages", got)
	}
	var a Ahead
	a.Cover(b[:0], 10)
	if got, want := resident(t, b), Chunk/pageSize; got != want {
		if got == 0 {
			t.Skip("MADV_POPULATE_WRITE not supported by this kernel")
		}
		t.Fatalf("after covering 10 bytes: %d resident pages, want %d", got, want)
	}
	a.Cover(b[:0], Chunk+1)
	if got, want := resident(t, b), 2*Chunk/pageSize; got != want {
		t.Fatalf("after covering a chunk and a byte: %d resident pages, want %d", got, want)
	}
	a.Cover(b[:0], 100*Chunk) // clamped to the capacity
	if got, want := resident(t, b), 4*Chunk/pageSize; got != want {
		t.Fatalf("after covering past the end: %d resident pages, want %d", got, want)
	}
	if !bytes.Equal(b, make([]byte, len(b))) {
		t.Fatal("populating changed bytes")
	}
}

func TestRangeKeepsBytes(t *testing.T) {
	b := make([]byte, 3*pageSize+100)
	for i := range b {
		b[i] = byte(i)
	}
	Range(b[50 : 2*pageSize+7])
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d changed", i)
		}
	}
}
