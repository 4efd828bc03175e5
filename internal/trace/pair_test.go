package trace

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gorr-debugger/gorr/internal/machine"
)

// drainedCall returns the entry and exit events of a call as a drain of
// the syscall buffer makes them: the same registers but rax.
func drainedCall(rng *rand.Rand, tid int32) (entry, exit *Event) {
	var regs Regs
	for i := range regs {
		regs[i] = rng.Uint64() >> rng.IntN(64)
	}
	regs[machine.RAX] = uint64(0xffffffffffffffda) // -ENOSYS
	out := regs
	ret := rng.Int64N(1 << 20)
	out[machine.RAX] = uint64(ret)
	time := rng.Uint64N(1 << 40)
	entry = &Event{Kind: KindSyscallEntry, Tid: tid, Sysno: 39, Flags: 0x100, Regs: &regs, Time: time}
	exit = &Event{Kind: KindSyscallExit, Tid: tid, Sysno: 39, Result: ret, Flags: 0x100 | rng.Uint64N(4), Regs: &out, Time: time}
	if rng.IntN(3) == 0 {
		data := make([]byte, rng.IntN(200))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		exit.Mem = []MemWrite{{Addr: rng.Uint64(), Data: data}}
	}
	return entry, exit
}

// Calls written with WriteCall read back as the two events each, among
// ordinary events, in fewer bytes when they pair; marks taken
// between the two events of a pair restore the second; calls that do
// not pair are written as two frames.
func TestWriteCallPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	root := t.TempDir()
	paired, single := filepath.Join(root, "paired"), filepath.Join(root, "single")
	wp, ws := mustCreate(t, paired), mustCreate(t, single)
	var want []*Event
	for i := 0; i < 3000; i++ {
		if i%10 == 0 {
			ev := randEvent(rng, i)
			want = append(want, ev)
			if err := wp.Write(ev); err != nil {
				t.Fatal(err)
			}
			if err := ws.Write(ev); err != nil {
				t.Fatal(err)
			}
			continue
		}
		entry, exit := drainedCall(rng, int32(100+i%3))
		if i%10 == 5 {
			entry.Regs[machine.RDI]++ // not derivable: two frames
		}
		want = append(want, entry, exit)
		if err := wp.WriteCall(entry, exit); err != nil {
			t.Fatal(err)
		}
		for _, ev := range []*Event{entry, exit} {
			if err := ws.Write(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustClose(t, wp)
	mustClose(t, ws)
	got, err := readEvents(t, paired)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, want)
	if p, s := streamLen(t, paired), streamLen(t, single); p >= s {
		t.Errorf("paired events stream %d bytes, unpaired %d: pairs do not save", p, s)
	}

	// A mark between an entry and its exit.
	r, err := Open(paired)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var marks []Mark
	for i := 0; ; i++ {
		if i%7 == 0 {
			marks = append(marks, r.Mark())
		}
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Regs != nil {
			ev.Regs[0]++ // what the caller does with an event is its business
		}
	}
	for _, m := range marks {
		r2, err := Open(paired)
		if err != nil {
			t.Fatal(err)
		}
		if err := r2.Seek(m); err != nil {
			t.Fatal(err)
		}
		ev, err := r2.Next()
		if m.Events() == uint64(len(want)) {
			if err != io.EOF {
				t.Fatalf("at the end: %v, %v", ev, err)
			}
		} else if err != nil {
			t.Fatal(err)
		} else {
			sameEvents(t, []*Event{ev}, want[m.Events():m.Events()+1])
		}
		r2.Close()
	}
}

// streamLen is the uncompressed length of the events stream of dir.
func streamLen(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, b := range blocksOf(t, filepath.Join(dir, EventsFile)) {
		n += int(b.ulen)
	}
	return n
}

// Registers are stored as their changes from the previous frame's: a
// loop of drained calls whose registers barely change costs a few bytes
// per call, reads back exactly, also after a Seek into the middle, and
// a change with no registers before it is corruption.
func TestRegsDelta(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	w := mustCreate(t, dir)
	var regs Regs
	for i := range regs {
		regs[i] = 0x7ffd_0000_0000 + uint64(i)*0x1000
	}
	var want []*Event
	for i := 0; i < 2000; i++ {
		in := regs
		in[machine.RAX] = uint64(0xffffffffffffffda)
		in[machine.RBX] = uint64(i)        // a loop counter
		in[machine.RSP] -= uint64(i%3) * 8 // a stack that moves
		out := in
		out[machine.RAX] = uint64(1000 + i)
		entry := &Event{Kind: KindSyscallEntry, Tid: 7, Sysno: 39, Flags: 0x100, Regs: &in, Time: 5}
		exit := &Event{Kind: KindSyscallExit, Tid: 7, Sysno: 39, Result: int64(1000 + i), Flags: 0x100, Regs: &out, Time: 5}
		if err := w.WriteCall(entry, exit); err != nil {
			t.Fatal(err)
		}
		want = append(want, entry, exit)
	}
	mustClose(t, w)
	got, err := readEvents(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, want)
	if n := streamLen(t, dir); n > 2000*48 { // (raw words: 216 bytes a frame)
		t.Errorf("events stream of %d bytes for 2000 calls: registers not stored as changes", n)
	}
	// Seek to a mark in the middle on a fresh reader.
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1001; i++ {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	m := r.Mark()
	r.Close()
	r2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if err := r2.Seek(m); err != nil {
		t.Fatal(err)
	}
	for i := 1001; i < len(want); i++ {
		ev, err := r2.Next()
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, []*Event{ev}, want[i:i+1])
	}

	// A frame of register changes first in the stream.
	f := appendBytes(appendUint(nil, evKind, uint64(KindSyscallExit)), evRegsDelta, []byte{1, 2})
	events := append(binary.AppendUvarint(nil, uint64(len(f))), f...)
	bad := filepath.Join(t.TempDir(), "bad")
	h := testHeader()
	h.Complete, h.EventCount = true, 1
	writeRaw(t, bad, h, events, nil)
	_, err = readEvents(t, bad)
	wantCorrupt(t, err, EventsFile)
}
