package cpu

import (
	"reflect"
	"testing"
)

func TestBaselineAndMissing(t *testing.T) {
	// An AVX-512 Intel-like CPU limited to the baseline keeps AVX2, loses
	// AVX-512 and RDSEED.
	var f Features
	f[L1ECX] = 1<<28 | 1<<30 | 1<<1
	f[L7EBX] = 1<<5 | 1<<16 | 1<<18
	f[L7ECX] = 1 << 1
	l := f.Limit()
	if l[L1ECX] != 1<<28 || l[L7EBX] != 1<<5 || l[L7ECX] != 0 {
		t.Errorf("Limit = %x", l)
	}
	_, b, c, _ := Baseline(7, 0, 0, f[L7EBX], f[L7ECX], 0)
	if b != 1<<5 || c != 0 {
		t.Errorf("Baseline(7) = %x %x", b, c)
	}
	if a, _, _, _ := Baseline(7, 1, 0x30, 0, 0, 0); a != 0 {
		t.Errorf("Baseline(7, 1) eax = %x", a)
	}
	var have Features
	have[L1ECX] = 1 << 28
	got := Missing(f, have)
	want := []string{"avx2", "avx512f", "avx512vbmi", "pclmulqdq", "rdrand", "rdseed"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Missing = %v, want %v", got, want)
	}
	f[L7EDX] = 1 << 30
	if got := Missing(f, have); got[0] != "avx2" || got[len(got)-1] != "rdseed" || !contains(got, "cpuid(7).edx bit 30") {
		t.Errorf("unnamed bit: %v", got)
	}
	if len(Missing(Host(), Host())) != 0 {
		t.Error("this CPU lacks its own features")
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
