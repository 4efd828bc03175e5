package tracee

import (
	"bytes"
	"os"
	"testing"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// WriteAll and WriteCode make overlapping writes in their order (the
// later one's bytes win), and others merged, with the same result.
func TestWriteOverlapping(t *testing.T) {
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for name, write := range map[string]func([]trace.MemWrite) error{"WriteAll": m.WriteAll, "WriteCode": m.WriteCode} {
		buf := make([]byte, 64)
		at := addrOf(buf)
		ws := []trace.MemWrite{
			{Addr: at + 8, Data: []byte("aaaaaaaa")},
			{Addr: at + 4, Data: []byte("bbbbbbbb")}, // over the first's start
			{Addr: at + 40, Data: []byte("cc")},
			{Addr: at + 20, Data: []byte("dd")},
			{Addr: at + 30, Data: []byte("ee")},
		}
		if err := write(ws); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := make([]byte, 64)
		for _, w := range ws {
			copy(want[w.Addr-at:], w.Data)
		}
		if !bytes.Equal(buf, want) {
			t.Errorf("%s: memory %q, want %q", name, buf, want)
		}
		// Without the overlap, merged.
		buf2 := make([]byte, 64)
		at2 := addrOf(buf2)
		if err := write([]trace.MemWrite{{Addr: at2 + 30, Data: []byte("x")}, {Addr: at2 + 10, Data: []byte("y")}, {Addr: at2 + 11, Data: []byte("z")}}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if buf2[10] != 'y' || buf2[11] != 'z' || buf2[30] != 'x' {
			t.Errorf("%s: memory %q", name, buf2)
		}
	}
}
