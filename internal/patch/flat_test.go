package patch

import (
	"reflect"
	"testing"
)

type flatSite struct {
	Off  uint64
	Nr   int
	Pre  []byte
	Ret  bool
	Kind Kind
	Sub  uint32
}

func TestFlatRoundTrip(t *testing.T) {
	in := []flatSite{{Off: 1 << 40, Nr: -2, Pre: []byte{0x48, 0x89}, Ret: true, Kind: Cpuid, Sub: 7}, {}, {Nr: 231}}
	b, err := encodeFlat(in)
	if err != nil {
		t.Fatal(err)
	}
	out, ok := decodeFlat[flatSite](b)
	if !ok || !reflect.DeepEqual(out, in) {
		t.Fatalf("decoded %+v (ok %v), want %+v", out, ok, in)
	}
	for cut := 0; cut < len(b); cut++ {
		if _, ok := decodeFlat[flatSite](b[:cut]); ok {
			t.Fatalf("a truncated entry (%d of %d bytes) decoded", cut, len(b))
		}
	}
	if _, ok := decodeFlat[flatSite](append(b, 0)); ok {
		t.Fatal("an entry with a trailing byte decoded")
	}
	nums, _ := encodeFlat([]uint64{0, 1, 1 << 63})
	if got, ok := decodeFlat[uint64](nums); !ok || !reflect.DeepEqual(got, []uint64{0, 1, 1 << 63}) {
		t.Fatalf("integers: %v %v", got, ok)
	}
	if got, ok := decodeFlat[flatSite](mustFlat(t, []flatSite(nil))); !ok || got != nil {
		t.Fatalf("empty list: %v %v", got, ok)
	}
	if _, err := encodeFlat([]struct{ M map[int]int }{{}}); err == nil {
		t.Fatal("a map field encoded")
	}
	if _, ok := decodeFlat[flatSite]([]byte("null")); ok {
		t.Fatal("a JSON entry decoded")
	}
}

func mustFlat[T any](t *testing.T, s []T) []byte {
	b, err := encodeFlat(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
