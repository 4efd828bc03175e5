package patch

import (
	"os"
	"testing"
	"time"
)

func TestScanLibc(t *testing.T) {
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"} {
		f, err := os.Open(p)
		if err != nil {
			t.Skip(err)
		}
		start := time.Now()
		sites, err := Scan(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d sites in %v", p, len(sites), time.Since(start))
		if len(sites) == 0 {
			t.Errorf("%s: expected cpuid/rdtsc sites", p)
		}
	}
}

func TestIdentify(t *testing.T) {
	cases := map[string]Kind{"\xcc\x31": Rdtsc, "\xcc\xa2": Cpuid, "\xcc\x01\xf9": Rdtscp, "\xcc\x90": 0}
	for in, want := range cases {
		if got := Identify([]byte(in)); got != want {
			t.Errorf("Identify(%x) = %v, want %v", in, got, want)
		}
	}
}
