package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// What the machine offers that some corpus programs need (the manifest's
// "needs"), found by running a small C program natively:
//   - "int80": 32-bit system calls through int $0x80 (kernels built or
//     booted without IA32 emulation, and paravirtualised guests, raise
//     SIGSEGV instead);
//   - "rdtsc-trap": PR_SET_TSC's PR_TSC_SIGSEGV makes rdtsc fault (some
//     paravirtualised guests accept the setting and never fault), which
//     the recorder needs for rdtsc in code it cannot scan (JIT code).
var machineProbes = map[string]string{
	"int80": `int main(void) { long r; __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L)); return r > 0 ? 0 : 1; }`,
	"rdtsc-trap": `#include <sys/prctl.h>
int main(void) {
	unsigned lo, hi;
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) != 0) return 0;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return 0; /* not trapped */
}`,
}

var machine struct {
	sync.Mutex
	has map[string]bool
}

// machineHas tells whether this machine offers capability c (a key of
// machineProbes): its probe program dies of a signal for "rdtsc-trap",
// and exits 0 for the others.
func machineHas(t *testing.T, c string) bool {
	t.Helper()
	machine.Lock()
	defer machine.Unlock()
	if v, ok := machine.has[c]; ok {
		return v
	}
	src, ok := machineProbes[c]
	if !ok {
		t.Fatalf("manifest: unknown need %q", c)
	}
	dir := filepath.Join(buildDir, "probes")
	os.MkdirAll(dir, 0o755)
	bin := filepath.Join(dir, c)
	if err := os.WriteFile(bin+".c", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-o", bin, bin+".c").CombinedOutput(); err != nil {
		t.Fatalf("build the %s probe: %v\n%s", c, err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := run(ctx, dir, "", bin)
	if err != nil {
		t.Fatalf("run the %s probe: %v", c, err)
	}
	v := r.Code == 0 && r.Signal == 0
	if c == "rdtsc-trap" {
		v = r.Signal != 0
	}
	if machine.has == nil {
		machine.has = map[string]bool{}
	}
	machine.has[c] = v
	t.Logf("machine has %s: %v", c, v)
	return v
}

// missing returns the first of p's needs this machine lacks, "" if none.
func missing(t *testing.T, p Program) string {
	for _, c := range p.Needs {
		if !machineHas(t, c) {
			return c
		}
	}
	return ""
}
