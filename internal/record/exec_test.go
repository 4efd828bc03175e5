package record

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/gorr-debugger/gorr/internal/trace"
)

func TestAppendChanges(t *testing.T) {
	page := func() []byte { return make([]byte, pageSize) }
	t.Run("runs", func(t *testing.T) {
		old, cur := page(), page()
		cur[5] = 0xcc                          // one byte
		copy(cur[100:], []byte{1, 2, 3, 4, 5}) // a jmp
		cur[100+5+changeGap-1] = 9             // joined: gap of changeGap-1
		cur[300] = 7                           // separate: far from the rest
		cur[pageSize-1] = 8                    // the last byte
		got := appendChanges(nil, 0x1000, cur, old)
		want := []trace.MemWrite{
			{Addr: 0x1005, Data: []byte{0xcc}},
			{Addr: 0x1000 + 100, Data: cur[100 : 100+5+changeGap]},
			{Addr: 0x1000 + 300, Data: []byte{7}},
			{Addr: 0x1000 + pageSize - 1, Data: []byte{8}},
		}
		if len(got) != len(want) {
			t.Fatalf("got %d writes %v, want %d", len(got), got, len(want))
		}
		for i := range want {
			if got[i].Addr != want[i].Addr || !bytes.Equal(got[i].Data, want[i].Data) {
				t.Errorf("write %d: got %#x %x, want %#x %x", i, got[i].Addr, got[i].Data, want[i].Addr, want[i].Data)
			}
		}
	})
	t.Run("joins the previous page's write", func(t *testing.T) {
		old, cur := page(), page()
		cur[0] = 1
		out := []trace.MemWrite{{Addr: 0x1ffe, Data: []byte{3, 4}}}
		got := appendChanges(out, 0x2000, cur, old)
		if len(got) != 1 || !bytes.Equal(got[0].Data, []byte{3, 4, 1}) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("random pages rebuild", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for round := 0; round < 200; round++ {
			old, cur := page(), page()
			for i := range old {
				old[i] = byte(rng.IntN(4))
			}
			copy(cur, old)
			for k := rng.IntN(40); k > 0; k-- {
				at := rng.IntN(pageSize)
				for j := at; j < min(pageSize, at+rng.IntN(12)+1); j++ {
					cur[j] = byte(rng.IntN(4))
				}
			}
			got := appendChanges(nil, 0x5000, cur, old)
			rebuilt := bytes.Clone(old)
			for _, w := range got {
				if w.Addr < 0x5000 || w.Addr+uint64(len(w.Data)) > 0x5000+pageSize || len(w.Data) == 0 {
					t.Fatalf("round %d: write %#x+%d outside the page", round, w.Addr, len(w.Data))
				}
				copy(rebuilt[w.Addr-0x5000:], w.Data)
			}
			if !bytes.Equal(rebuilt, cur) {
				t.Fatalf("round %d: the writes do not rebuild the page", round)
			}
			if bytes.Equal(old, cur) && len(got) != 0 {
				t.Fatalf("round %d: writes for an unchanged page", round)
			}
		}
	})
}
