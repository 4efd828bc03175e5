// Tests an unrecovered Go panic: the runtime prints the panic and goroutine trace to stderr and exits with status 2.
package main

import (
	"fmt"
	"os"
	"time"
)

type boom struct{ at int64 }

func (b boom) Error() string { return fmt.Sprintf("boom at %d", b.at) }

func deep(n int) {
	if n == 0 {
		panic(boom{at: time.Now().UnixNano()})
	}
	deep(n - 1)
}

func main() {
	func() {
		defer func() {
			r := recover()
			fmt.Printf("recovered first panic: %v\n", r)
		}()
		panic(fmt.Sprintf("first panic pid=%d", os.Getpid()))
	}()
	fmt.Println("EXIT-SUCCESS")
	os.Stdout.Sync()
	deep(3)
}
