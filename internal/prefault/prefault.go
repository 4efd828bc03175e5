// Package prefault has the kernel map the pages of gorr's own buffers
// before gorr writes them.
//
// Go takes fresh memory from the kernel untouched: the first write to
// each page faults. On the PVM guests gorr records on, that first touch
// of an anonymous page costs 12-13 µs, while MADV_POPULATE_WRITE maps
// fresh pages for about 0.9 µs each (and walks pages already mapped for
// 0.2-0.3 µs each); on a KVM guest a fault costs 1.2-2.4 µs. The
// recorder fills a few MB of buffers in a short recording (the bytes it
// drains from the syscall buffers, the trace writer's pending events):
// in a recording of python's start-up, 690 faults on the recorder's
// thread, between the tracee's stops.
package prefault

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Chunk is how far ahead of the bytes written an Ahead populates.
const Chunk = 64 << 10

const pageSize = 4096

// Range has the kernel map the pages that hold b, writable, without a
// fault each (MADV_POPULATE_WRITE). It changes no byte. Best effort:
// where the kernel does not know the advice (before Linux 5.14) the
// pages fault as before.
func Range(b []byte) {
	if len(b) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := start + uintptr(len(b))
	start &^= pageSize - 1
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_POPULATE_WRITE)
}

// Ahead populates a buffer that is written from its start, a Chunk at a
// time ahead of what is written. The zero value is ready; a buffer other
// than the last one it saw starts over.
type Ahead struct {
	base *byte
	done int // bytes of base populated from its start
}

// Cover makes sure the first n bytes of buf (a slice of the buffer from
// its start; n is clamped to its capacity) are populated.
func (a *Ahead) Cover(buf []byte, n int) {
	full := buf[:cap(buf)]
	if len(full) == 0 {
		return
	}
	if base := unsafe.SliceData(full); base != a.base {
		a.base, a.done = base, 0
	}
	if n <= a.done {
		return
	}
	end := min(len(full), (n+Chunk-1)/Chunk*Chunk)
	Range(full[a.done:end])
	a.done = end
}
