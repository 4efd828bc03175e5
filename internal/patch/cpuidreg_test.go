package patch

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// ld.so's register-input cpuids (its loops over subleaves) are found with
// the instructions before them, which decode to whole instructions of at
// least 5 bytes ending at an int3 site's cpuid, none of them one of
// ScanCpuid's constant sites.
func TestScanCpuidRegsLdso(t *testing.T) {
	f, cpuids := ldsoCpuids(t)
	regs, err := ScanCpuidRegs(f)
	if err != nil {
		t.Fatal(err)
	}
	consts, err := ScanCpuid(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range consts {
		delete(cpuids, c.Off+c.Len()-2)
	}
	if len(regs) < 3 {
		t.Fatalf("%d register-input cpuid sites in %s", len(regs), ldso)
	}
	for _, s := range regs {
		b := make([]byte, len(s.Disp)+2)
		if _, err := f.ReadAt(b, int64(s.Off)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b[:len(s.Disp)], s.Disp) || !bytes.Equal(b[len(s.Disp):], []byte{0x0f, 0xa2}) || !cpuids[s.Cpuid()] || len(s.Disp) < 5 {
			t.Errorf("site %+v: % x", s, b)
		}
		n := 0
		for pc := 0; pc < len(s.Disp); n++ {
			inst, err := x86asm.Decode(s.Disp[pc:], 64)
			if err != nil {
				t.Fatalf("site %+v: %v", s, err)
			}
			pc += inst.Len
		}
		if n > 3 {
			t.Errorf("site %+v: %d instructions displaced", s, n)
		}
	}
	t.Logf("%d register-input sites of %d cpuids not constant", len(regs), len(cpuids))
}

// A looked-up cpuid runs: a function whose cpuid takes its leaf and
// subleaf from its arguments, redirected to a CpuidRegTrampoline, answers
// from the table for the pairs it holds (any subleaf of a leaf entered as
// CpuidAnySub) and runs the cpuid itself for the others, the displaced
// instructions run either way, and rbx (callee-saved) is kept by the
// function as compiled.
func TestCpuidRegTrampolineRuns(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	// f(leaf, sub, out): out[0..3] = cpuid(leaf, sub), out[4] = 7 (set
	// by a displaced instruction).
	fn := []byte{
		0x53,             // push %rbx
		0x49, 0x89, 0xd0, // mov %rdx, %r8
		0x89, 0xf8, // mov %edi, %eax  <- displaced
		0x89, 0xf1, // mov %esi, %ecx
		0x41, 0xb9, 0x07, 0x00, 0x00, 0x00, // mov $7, %r9d
		0x0f, 0xa2, // cpuid
		0x41, 0x89, 0x00, // mov %eax, (%r8)
		0x41, 0x89, 0x58, 0x04, // mov %ebx, 4(%r8)
		0x41, 0x89, 0x48, 0x08, // mov %ecx, 8(%r8)
		0x41, 0x89, 0x50, 0x0c, // mov %edx, 12(%r8)
		0x45, 0x89, 0x48, 0x10, // mov %r9d, 16(%r8)
		0x5b, // pop %rbx
		0xc3, // ret
	}
	site := &CpuidRegSite{Off: 4, Disp: fn[4:14]}
	const fnAt, trAt = 0x800, 0xc00
	lookup := CpuidLookup([]CpuidEntry{
		{Leaf: 0x1234, Sub: 5, Kind: CpuidExact, A: 1, B: 2, C: 3, D: 4},
		{Leaf: 0x2345, Kind: CpuidAnySub, A: 5, B: 6, C: 7, D: 8},
	})
	blob := make([]byte, 0x1000)
	copy(blob, lookup)
	copy(blob[fnAt:], fn)
	tr, ok := CpuidRegTrampoline(trAt, fnAt+site.Off, site, 0)
	if !ok || uint64(len(tr)) != site.TrampolineLen() || len(tr) > CpuidRegTrampolineMax {
		t.Fatalf("trampoline: ok %v, %d bytes", ok, len(tr))
	}
	copy(blob[trAt:], tr)
	copy(blob[fnAt+site.Off:], CpuidRegJump(fnAt+site.Off, trAt, site))

	dir := t.TempDir()
	var hex strings.Builder
	for _, c := range blob {
		fmt.Fprintf(&hex, "0x%02x,", c)
	}
	src := `#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <cpuid.h>
static const unsigned char blob[] = {` + hex.String() + `};
int main(void) {
	unsigned char *m = mmap(0, 4096, PROT_READ|PROT_WRITE|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) return 2;
	memcpy(m, blob, sizeof blob);
	void (*f)(unsigned, unsigned, unsigned *) = (void *)(m + ` + fmt.Sprint(fnAt) + `);
	unsigned q[][2] = {{0x1234, 5}, {0x2345, 0}, {0x2345, 99}, {0x1234, 6}, {0, 0}, {1, 0}};
	for (int i = 0; i < 6; i++) {
		unsigned out[5] = {0}, a, b, c, d;
		f(q[i][0], q[i][1], out);
		__cpuid_count(q[i][0], q[i][1], a, b, c, d);
		printf("%x %x %x %x %x | %x %x %x %x\n", out[0], out[1], out[2], out[3], out[4], a, b, c, d);
	}
	return 0;
}
`
	if err := os.WriteFile(filepath.Join(dir, "t.c"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "t")
	if out, err := exec.Command("gcc", "-O1", "-o", bin, filepath.Join(dir, "t.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 6 {
		t.Fatalf("output:\n%s", out)
	}
	for i, want := range []string{"1 2 3 4 7", "5 6 7 8 7", "5 6 7 8 7"} {
		if got, _, _ := strings.Cut(lines[i], " |"); got != want {
			t.Errorf("looked-up pair %d: %q, want %q", i, got, want)
		}
	}
	for _, l := range lines[3:] {
		// A miss: the real cpuid's answer (leaf 0x1234 is past the
		// CPU's leaves: whatever it answers, the same both ways).
		got, real, _ := strings.Cut(l, " | ")
		if fields := strings.Fields(got); len(fields) != 5 || strings.Join(fields[:4], " ") != real || fields[4] != "7" {
			t.Errorf("missed pair: %q", l)
		}
	}
}
