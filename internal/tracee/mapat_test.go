package tracee

import (
	"os"
	"testing"
)

// MapAt finds the same mapping as a look through the whole of
// /proc/pid/maps, for every mapping's first and last byte and for an
// address in no mapping.
func TestMapAtAgreesWithMaps(t *testing.T) {
	pid := os.Getpid()
	maps, err := Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range maps {
		if want.Name == "[vsyscall]" {
			continue // not a VMA of the process (PROCMAP_QUERY does not find it)
		}
		for _, addr := range []uint64{want.Start, want.End - 1} {
			got, ok, err := MapAt(pid, addr)
			if err != nil || !ok {
				t.Fatalf("MapAt(0x%x): %v, %v; want %+v", addr, ok, err, want)
			}
			// A mapping can grow or split between the two reads (the
			// heap, the stacks of the test's threads): compare the ones
			// that stay.
			if want.Inode == 0 && want.Name != "" && want.Name[0] != '/' {
				continue
			}
			if got != want {
				t.Errorf("MapAt(0x%x) = %+v, want %+v", addr, got, want)
			}
		}
	}
	if _, ok, err := MapAt(pid, 4096); err != nil || ok {
		t.Errorf("MapAt(4096) = %v, %v; want nothing mapped", ok, err)
	}
}
