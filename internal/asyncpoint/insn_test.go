package asyncpoint

import (
	"testing"

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
