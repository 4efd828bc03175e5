//go:build gorrtest

package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/gorr-debugger/gorr/internal/cpu"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// testTamper returns the test-only hook that corrupts one recorded event
// as it is read, so the end-to-end tests can check that replay reports a
// divergence exactly there. Only binaries built with -tags gorrtest (the
// e2e harness builds one) have it.
//
//	GORR_TEST_TAMPER_EVENT=N  flips a bit of rdi in event N's registers
//	GORR_TEST_TAMPER_MEM=N    flips a bit of the first byte event N wrote,
//	                          which only a memory checksum can notice
//	GORR_TEST_TAMPER_PAGE=N   flips a bit of the last word of the first
//	                          whole page event N holds (a preemption
//	                          point's recorded page)
func testTamper() func(uint64, *trace.Event) {
	if n, err := strconv.ParseUint(os.Getenv("GORR_TEST_TAMPER_EVENT"), 10, 64); err == nil {
		return func(i uint64, ev *trace.Event) {
			if i == n && ev.Regs != nil {
				ev.Regs[ptrace.RDI] ^= 0x40
			}
		}
	}
	if n, err := strconv.ParseUint(os.Getenv("GORR_TEST_TAMPER_MEM"), 10, 64); err == nil {
		return func(i uint64, ev *trace.Event) {
			if i == n && len(ev.Mem) > 0 && len(ev.Mem[0].Data) > 0 {
				ev.Mem[0].Data[0] ^= 0x40
			}
		}
	}
	if n, err := strconv.ParseUint(os.Getenv("GORR_TEST_TAMPER_PAGE"), 10, 64); err == nil {
		return func(i uint64, ev *trace.Event) {
			for _, m := range ev.Mem {
				if i == n && len(m.Data) == 4096 {
					m.Data[4088] ^= 0x40
					return
				}
			}
		}
	}
	return nil
}

// testHiddenCPUID clears the bits GORR_TEST_HIDE_CPUID names
// ("WORD:MASK,...", WORD an index of cpu.Features), simulating a replay on
// a CPU without some features.
func testHiddenCPUID(f *cpu.Features) {
	for _, item := range strings.Split(os.Getenv("GORR_TEST_HIDE_CPUID"), ",") {
		w, m, ok := strings.Cut(item, ":")
		i, err1 := strconv.Atoi(w)
		mask, err2 := strconv.ParseUint(m, 0, 32)
		if ok && err1 == nil && err2 == nil && i >= 0 && i < len(f) {
			f[i] &^= uint32(mask)
		}
	}
}
