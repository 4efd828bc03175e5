package gdbrsp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestHex(t *testing.T) {
	in := []byte{0x00, 0x7f, 0x80, 0xff, 0x12}
	enc := EncodeHex(in)
	if string(enc) != "007f80ff12" {
		t.Fatalf("EncodeHex = %q", enc)
	}
	dec, err := DecodeHex([]byte("007F80fF12"))
	if err != nil || !bytes.Equal(dec, in) {
		t.Fatalf("DecodeHex = %x, %v", dec, err)
	}
	if got := AppendHex([]byte("m"), []byte{1}); string(got) != "m01" {
		t.Errorf("AppendHex = %q", got)
	}
	if d, err := DecodeHex(nil); err != nil || d != nil {
		t.Errorf("DecodeHex(empty) = %v, %v", d, err)
	}
	for _, bad := range []string{"0", "0g", "g0", "xx", "12 3"} {
		if _, err := DecodeHex([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeHex(%q) error = %v", bad, err)
		}
	}
}

func TestRegisters(t *testing.T) {
	tests := []struct {
		v    uint64
		size int
		want string
	}{
		{0x0102030405060708, 8, "0807060504030201"},
		{0x401000, 8, "0010400000000000"},
		{0x1234, 4, "34120000"},
		{0x1234, 2, "3412"},
		{0xff, 1, "ff"},
		{0x0102030405060708, 10, "08070605040302010000"},
		{5, 0, ""},
	}
	for _, tc := range tests {
		got := EncodeRegister(tc.v, tc.size)
		if string(got) != tc.want {
			t.Errorf("EncodeRegister(%#x, %d) = %q, want %q", tc.v, tc.size, got, tc.want)
		}
		if tc.size <= 8 && tc.size > 0 {
			mask := ^uint64(0) >> (64 - 8*tc.size)
			back, err := DecodeRegister(got)
			if err != nil || back != tc.v&mask {
				t.Errorf("DecodeRegister(%q) = %#x, %v", got, back, err)
			}
		}
	}
	if _, err := DecodeRegister([]byte("000000000000000000")); err == nil {
		t.Error("DecodeRegister accepted 9 bytes")
	}
	if got := string(UnavailableRegister(4)); got != "xxxxxxxx" {
		t.Errorf("UnavailableRegister(4) = %q", got)
	}
}

func TestSimpleReplies(t *testing.T) {
	tests := []struct{ got, want string }{
		{string(Ok()), "OK"},
		{string(Error(1)), "E01"},
		{string(Error(0x10)), "E10"},
		{string(Error(0xff)), "Eff"},
		{string(ExitedReply(0, 0)), "W00"},
		{string(ExitedReply(1, 0x1a2b)), "W01;process:1a2b"},
		{string(TerminatedReply(9, -1)), "X09"},
		{string(TerminatedReply(0xb, 0x10)), "X0b;process:10"},
		{string(ThreadListReply(nil)), "l"},
		{string(ThreadListReply([]ThreadID{{Pid: 1, Tid: 1, Multiprocess: true}, {Pid: 1, Tid: 0x1f, Multiprocess: true}})), "mp1.1,p1.1f"},
		{string(ThreadListReply([]ThreadID{{Tid: 5}})), "m5"},
		{string(CurrentThreadReply(ThreadID{Pid: 0x10, Tid: 0x11, Multiprocess: true})), "QCp10.11"},
		{string(ConsoleOutput([]byte("hi\n"))), "O68690a"},
		{string(BinaryMemoryReply([]byte("a$"))), "ba$"},
		{string(SupportedReply([]string{"PacketSize=1000", "multiprocess+"})), "PacketSize=1000;multiprocess+"},
		{string(SupportedReply(nil)), ""},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestDefaultFeatures(t *testing.T) {
	got := string(SupportedReply(DefaultFeatures()))
	want := "PacketSize=100000;qXfer:features:read+;ReverseContinue+;ReverseStep+;multiprocess+;swbreak+;hwbreak+;" +
		"QStartNoAckMode+;QThreadSuffixSupported+;qXfer:auxv:read+;qXfer:exec-file:read+;" +
		"qXfer:siginfo:read+;qXfer:siginfo:write+;vContSupported+;no-resumed+"
	if got != want {
		t.Errorf("default qSupported reply\n got %s\nwant %s", got, want)
	}
	f := DefaultFeatures()
	f[0] = "changed"
	if DefaultFeatures()[0] == "changed" {
		t.Error("DefaultFeatures shares its slice")
	}
}

func TestStopReply(t *testing.T) {
	mp := ThreadID{Pid: 0x3039, Tid: 0x303a, Multiprocess: true}
	tests := []struct {
		r    *StopReply
		want string
	}{
		{NewStopReply(5, mp), "T05thread:p3039.303a;"},
		{NewStopReply(5, mp).Core(3), "T05thread:p3039.303a;core:3;"},
		{NewStopReply(5, mp).Core(0xc).SwBreak(), "T05thread:p3039.303a;core:c;swbreak:;"},
		{NewStopReply(5, mp).HwBreak(), "T05thread:p3039.303a;hwbreak:;"},
		{NewStopReply(5, mp).Watch(0x601040), "T05thread:p3039.303a;watch:601040;"},
		{NewStopReply(5, mp).RWatch(0x10), "T05thread:p3039.303a;rwatch:10;"},
		{NewStopReply(5, mp).AWatch(0x20), "T05thread:p3039.303a;awatch:20;"},
		{NewStopReply(5, mp).ReplayLogBegin(), "T05thread:p3039.303a;replaylog:begin;"},
		{NewStopReply(5, mp).ReplayLogEnd(), "T05thread:p3039.303a;replaylog:end;"},
		{NewStopReply(0xb, ThreadID{Tid: 0x2a}).Register(0x10, binary.LittleEndian.AppendUint64(nil, 0x401000)).Register(6, []byte{1, 2}),
			"T0bthread:2a;10:0010400000000000;6:0102;"},
		{NewStopReply(0, mp).Threads([]ThreadID{mp, {Pid: 0x3039, Tid: 0x303b, Multiprocess: true}}).Pair("reason", "signal"),
			"T00thread:p3039.303a;threads:p3039.303a,p3039.303b;reason:signal;"},
	}
	for _, tc := range tests {
		if got := string(tc.r.Bytes()); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	r := NewStopReply(5, mp)
	b := r.Bytes()
	r.SwBreak()
	if string(b) != "T05thread:p3039.303a;" {
		t.Errorf("Bytes not a copy: %q", b)
	}
}

func TestXferReply(t *testing.T) {
	data := []byte("0123456789")
	tests := []struct {
		off, n uint64
		want   string
	}{
		{0, 4, "m0123"},
		{4, 4, "m4567"},
		{8, 4, "l89"},
		{6, 4, "l6789"},
		{0, 10, "l0123456789"},
		{0, 0xffffffffffffffff, "l0123456789"},
		{10, 4, "l"},
		{11, 4, "l"},
		{0xffffffffffffffff, 4, "l"},
	}
	for _, tc := range tests {
		if got := string(XferReply(data, tc.off, tc.n)); got != tc.want {
			t.Errorf("XferReply(off %#x, len %#x) = %q, want %q", tc.off, tc.n, got, tc.want)
		}
	}
}

func TestEscape(t *testing.T) {
	in := []byte("plain$#}*\x00\xff")
	esc := Escape(in)
	if string(esc) != "plain}\x04}\x03}]}\x0a\x00\xff" {
		t.Fatalf("Escape = %q", esc)
	}
	if bytes.ContainsAny(esc, "$#*") {
		t.Errorf("escaped data contains a special byte: %q", esc)
	}
	back, err := Unescape(esc)
	if err != nil || !bytes.Equal(back, in) {
		t.Errorf("Unescape = %q, %v", back, err)
	}
	if _, err := Unescape([]byte("ab}")); !errors.Is(err, ErrMalformed) {
		t.Errorf("Unescape(trailing escape) error = %v", err)
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if back, err := Unescape(Escape(all)); err != nil || !bytes.Equal(back, all) {
		t.Errorf("round trip of all bytes failed: %v", err)
	}
	if strings.Count(string(Escape(all)), "}") != 4 {
		t.Errorf("expected exactly 4 escapes")
	}
}
