// Tests os/signal: signal.Notify for SIGUSR1/SIGUSR2 sent to itself with syscall.Kill, signal.Ignore and signal.Stop.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGUSR1, syscall.SIGUSR2)
	pid := os.Getpid()
	fmt.Printf("pid=%d\n", pid)
	start := time.Now()
	syscall.Kill(pid, syscall.SIGUSR1)
	select {
	case s := <-ch:
		fmt.Printf("received %v after %v\n", s, time.Since(start))
	case <-time.After(2 * time.Second):
		fmt.Println("timeout waiting for SIGUSR1")
		os.Exit(1)
	}
	p, _ := os.FindProcess(pid)
	p.Signal(syscall.SIGUSR2)
	s := <-ch
	fmt.Printf("received %v via os.Process.Signal\n", s)
	signal.Ignore(syscall.SIGHUP)
	syscall.Kill(pid, syscall.SIGHUP)
	time.Sleep(time.Millisecond)
	fmt.Printf("SIGHUP ignored: still alive, ignored=%v\n", signal.Ignored(syscall.SIGHUP))
	signal.Stop(ch)
	signal.Notify(ch, syscall.SIGUSR1)
	for i := 0; i < 3; i++ {
		syscall.Kill(pid, syscall.SIGUSR1)
		<-ch
	}
	fmt.Printf("3 more SIGUSR1 handled, total elapsed %v\n", time.Since(start))
	fmt.Println("EXIT-SUCCESS")
}
