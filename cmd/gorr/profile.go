package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// startProfiles starts the profiles asked for in the environment, for
// measuring gorr itself: GORR_CPUPROFILE=FILE (a pprof CPU profile),
// GORR_BLOCKPROFILE=FILE (where goroutines waited), GORR_MEMPROFILE=FILE
// (where the bytes were allocated: pprof's alloc_space, every allocation
// sampled) and
// GORR_EXECTRACE=FILE (a runtime/trace execution trace: the wall-time
// timeline, system calls included). It returns the function that writes
// and closes them, to call before exiting.
func startProfiles() func() {
	var stops []func()
	if p := os.Getenv("GORR_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		} else {
			fmt.Fprintf(os.Stderr, "gorr: warning: GORR_CPUPROFILE: cannot profile to %s\n", p)
		}
	}
	if p := os.Getenv("GORR_BLOCKPROFILE"); p != "" {
		runtime.SetBlockProfileRate(1)
		stops = append(stops, func() {
			if f, err := os.Create(p); err == nil {
				_ = pprof.Lookup("block").WriteTo(f, 0)
				f.Close()
			}
		})
	}
	if p := os.Getenv("GORR_MEMPROFILE"); p != "" {
		runtime.MemProfileRate = 1
		stops = append(stops, func() {
			if f, err := os.Create(p); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		})
	}
	if p := os.Getenv("GORR_EXECTRACE"); p != "" {
		if f, err := os.Create(p); err == nil && trace.Start(f) == nil {
			stops = append(stops, func() { trace.Stop(); f.Close() })
		} else {
			fmt.Fprintf(os.Stderr, "gorr: warning: GORR_EXECTRACE: cannot trace to %s\n", p)
		}
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}
