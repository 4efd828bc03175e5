package gdbrsp

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

var parseSeeds = []string{
	"?", "g", "g;thread:p1.2;", "G0011", "p10", "P10=0011;thread:5;", "m1000,10", "M1000,2:0102",
	"x1000,10", "X1000,2:\x00}", "Z0,1000,1", "z2,1000,8", "Z0,1000,1;X2,0102;cmds:1,X1,00",
	"c", "c1000", "C0b;1000", "s", "S05", "bc", "bs", "vCont?", "vCont;s:p1.2;c",
	"vCont;C0b:1f;r10,20:p1.-1;t", "vRun;;6333", "vKill;10", "vMustReplyEmpty",
	"vFile:open:2f,0,0", "Hgp1.2", "Hc-1", "Tp1.2", "qSupported:multiprocess+;xmlRegisters=i386",
	"qXfer:features:read:target.xml:0,fff", "qXfer:siginfo:write::0:\x01", "qRRCmd:when:-1",
	"qRRCmd:checkpoint:12:6161", "qRRCmd:7768656e", "qfThreadInfo", "qsThreadInfo", "qC",
	"qAttached:1", "qSymbol::", "qSymbol:10:6d61696e", "qOffsets", "qTStatus", "qThreadExtraInfo,p1.2",
	"qGetTLSAddr:p1.2,10,20", "qSearch:memory:10;20;ab", "QStartNoAckMode", "QThreadSuffixSupported",
	"QListThreadsInStopReply", "QNonStop:1", "QPassSignals:e;14", "QProgramSignals:", "QDisableRandomization:1",
	"QEnvironmentHexEncoded:41", "D;10", "D", "k", "!", "jThreadsInfo",
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		p, err := Parse(data)
		if !bytes.Equal(orig, data) {
			t.Fatalf("Parse modified its input")
		}
		if err != nil {
			if p != nil {
				t.Fatalf("Parse returned both %#v and %v", p, err)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		switch p := p.(type) {
		case nil:
			t.Fatalf("Parse returned nil packet and nil error")
		case WriteMemory:
			if uint64(len(p.Data)) != p.Len {
				t.Fatalf("M length mismatch: %#v", p)
			}
		case WriteMemoryBinary:
			if uint64(len(p.Data)) != p.Len {
				t.Fatalf("X length mismatch: %#v", p)
			}
		case VCont:
			if len(p.Actions) == 0 {
				t.Fatalf("vCont without actions accepted")
			}
		case Breakpoint:
			if p.Type > AccessWatchpoint {
				t.Fatalf("bad breakpoint type accepted: %#v", p)
			}
		case SetThread:
			if back, err := ParseThreadID([]byte(p.Thread.String())); err != nil || back != p.Thread {
				t.Fatalf("thread id %#v does not round-trip: %#v, %v", p.Thread, back, err)
			}
		}
	})
}

// FuzzConn feeds arbitrary bytes to a Conn: it must neither panic nor
// spin; every ReadPacket call consumes at least one byte or returns an
// error, so the loop below is bounded by the input length.
func FuzzConn(f *testing.F) {
	f.Add([]byte("+$g#67"), false)
	f.Add([]byte("$qSupported:multiprocess+#xx$g#00-\x03$m10,4#fd"), false)
	f.Add([]byte("$0* #6a$ab*\"c#00$}]#00$*#00$a*\x01#00"), true)
	f.Add([]byte("$abc$def#12$#00\x03\x03"), true)
	f.Add([]byte("$aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa#00"), false)
	f.Add([]byte("$a*~*~*~*~*~*~*~*~*~*~*~*~#00"), true)
	f.Fuzz(func(t *testing.T, in []byte, noAck bool) {
		rw := &bufRW{in: bytes.NewReader(in)}
		c := NewConn(rw)
		c.SetNoAck(noAck)
		c.SetMaxPacketSize(64)
		c.WritePacket([]byte("OK")) // something to retransmit on '-'
		for range len(in) + 1 {
			data, err := c.ReadPacket()
			switch {
			case err == nil:
				if len(data) > c.MaxPacketSize() {
					t.Fatalf("packet of %d bytes exceeds the bound", len(data))
				}
				Parse(data)
			case err == io.EOF || err == io.ErrUnexpectedEOF:
				return
			case errors.Is(err, ErrInterrupt), errors.Is(err, ErrPacketTooLarge),
				errors.Is(err, ErrBadChecksum), errors.Is(err, ErrMalformed):
			default:
				t.Fatalf("unexpected error %v", err)
			}
		}
		t.Fatalf("ReadPacket did not reach EOF after %d calls", len(in)+1)
	})
}

// FuzzRoundTrip checks that whatever WritePacket sends, ReadPacket returns
// unchanged.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("T05thread:p1.1;"))
	f.Add([]byte("l\x00$#}*\x03+-"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		w := &bufRW{in: bytes.NewReader(nil)}
		NewConn(w).WritePacket(data)
		r := &bufRW{in: bytes.NewReader(w.out.Bytes())}
		c := NewConn(r)
		got, err := c.ReadPacket()
		if len(data) > c.MaxPacketSize() {
			return
		}
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round trip of %q gave %q, %v", data, got, err)
		}
		if r.out.String() != "+" {
			t.Fatalf("ack %q", r.out.String())
		}
	})
}
