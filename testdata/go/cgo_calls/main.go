// Tests a cgo binary: C code called from Go reads time and randomness and allocates.
package main

/*
#include <stdlib.h>
#include <time.h>
#include <sys/random.h>
static long c_now(void) { struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts); return ts.tv_nsec; }
static unsigned c_rand(void) { unsigned r; getrandom(&r, sizeof r, 0); return r; }
static void *c_alloc(void) { return malloc(4096); }
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

func main() {
	p := C.c_alloc()
	fmt.Printf("cgo now=%d rand=%d ptr=%p pid=%d\n", C.c_now(), C.c_rand(), p, os.Getpid())
	C.free(unsafe.Pointer(p))
	fmt.Println("EXIT-SUCCESS")
}
