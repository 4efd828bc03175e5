package asyncpoint

import (
	"fmt"
	"testing"

	"github.com/gorr-debugger/gorr/internal/machine"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Instructions that repeat at the same rip are finished at native speed
// by the recorder, never single-stepped: rep string instructions and a
// loop to itself.
func TestDecodeRepeats(t *testing.T) {
	cases := []struct {
		name string
		code []byte
		want bool
	}{
		{"loop to itself", []byte{0xe2, 0xfe}, true},
		{"loope to itself", []byte{0xe1, 0xfe}, true},
		{"loopne to itself", []byte{0xe0, 0xfe}, true},
		{"addr32 loop to itself", []byte{0x67, 0xe2, 0xfd}, true},
		{"loop back", []byte{0xe2, 0xf0}, false},
		{"rep stosq", []byte{0xf3, 0x48, 0xab}, true},
		{"stosq", []byte{0x48, 0xab}, false},
		{"jmp to itself", []byte{0xeb, 0xfe}, false},
	}
	var regs trace.Regs
	for _, c := range cases {
		in, ok := Decode(c.code, 0x401000, &regs)
		if !ok {
			t.Errorf("%s: does not decode", c.name)
			continue
		}
		if in.RepString != c.want {
			t.Errorf("%s: RepString %v, want %v", c.name, in.RepString, c.want)
		}
	}
}

// A rep movsb step touches one byte at rsi and one at rdi: a copy
// ending just before a word does not touch it.
func TestStringAccesses(t *testing.T) {
	var r trace.Regs
	r[machine.RSI], r[machine.RDI], r[machine.RCX] = 0x1079, 0x2007, 7
	in, ok := Decode([]byte{0xf3, 0xa4}, 0x400000, &r)
	if !ok || fmt.Sprintf("%#x", in.Accesses) != "[0x2000 0x1078]" && fmt.Sprintf("%#x", in.Accesses) != "[0x1078 0x2000]" {
		t.Fatalf("rep movsb accesses %#x (ok %v)", in.Accesses, ok)
	}
	r[machine.RDI] = 0x3004
	in, _ = Decode([]byte{0xf3, 0x48, 0xab}, 0x400000, &r) // rep stosq
	if fmt.Sprintf("%#x", in.Accesses) != "[0x3000 0x3008]" {
		t.Fatalf("rep stosq accesses %#x", in.Accesses)
	}
}
