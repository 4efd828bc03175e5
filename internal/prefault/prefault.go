// Package prefault maps memory ahead of its first use, off the thread
// that will use it.
//
// On the VMs gorr is meant for (shadow paging, no EPT), the first touch
// of an anonymous page is a page fault of 10-13 µs. The recorder's
// thread shares its CPU with the tracees and waits at every stop, so a
// fault it takes delays the recorded program; a buffer it is about to
// fill is better mapped by another thread, on the other CPU, while the
// recording starts.
package prefault

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

const pageSize = 4096

// Async has the kernel map the whole pages of each b[:cap(b)] on one
// goroutine of its own (MADV_POPULATE_WRITE: no fault, no byte changed,
// so the buffers may be written meanwhile), in order. Where the kernel
// lacks it (before Linux 5.14) nothing happens: the pages are mapped at
// their first touch, as without it. The buffers are kept alive until
// the kernel is done with them.
func Async(bufs ...[]byte) {
	go func() {
		for _, b := range bufs {
			if start, end := span(b); start < end {
				_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_POPULATE_WRITE)
			}
		}
		runtime.KeepAlive(bufs)
	}()
}

// span returns the page-aligned range inside b[:cap(b)].
func span(b []byte) (start, end uintptr) {
	if cap(b) == 0 {
		return 0, 0
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start = (p + pageSize - 1) &^ (pageSize - 1)
	end = (p + uintptr(cap(b))) &^ (pageSize - 1)
	return start, end
}
