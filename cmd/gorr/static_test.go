package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCgo keeps gorr a statically linked Go program: package net (with
// cgo, which gcc makes the default) links the C resolver and runtime/cgo,
// and a dynamically linked gorr starts 3-6 ms slower, in every record and
// replay (see internal/loopback).
func TestNoCgo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "net" || p == "runtime/cgo" {
			t.Errorf("gorr imports %s (through some package; 'go list -deps' names it)", p)
		}
	}
}
