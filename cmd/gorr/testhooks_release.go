//go:build !gorrtest

package main

import (
	"github.com/gorr-debugger/gorr/internal/cpu"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// testTamper is nil in release builds: the event-tampering hooks exist
// only in binaries built with -tags gorrtest (see tamper_test_hooks.go).
func testTamper() func(uint64, *trace.Event) { return nil }

// testHiddenCPUID hides nothing in release builds.
func testHiddenCPUID(*cpu.Features) {}
