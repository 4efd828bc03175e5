package gdbrsp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// rawFrame frames an already-escaped body with its checksum.
func rawFrame(raw string) string {
	return fmt.Sprintf("$%s#%02x", raw, Checksum([]byte(raw)))
}

// bufRW is an in-memory io.ReadWriter: reads come from in, writes go to out.
type bufRW struct {
	in  io.Reader
	out bytes.Buffer
}

func (b *bufRW) Read(p []byte) (int, error)  { return b.in.Read(p) }
func (b *bufRW) Write(p []byte) (int, error) { return b.out.Write(p) }

func newBufConn(input string) (*Conn, *bufRW) {
	rw := &bufRW{in: strings.NewReader(input)}
	return NewConn(rw), rw
}

type result struct {
	data string
	err  error
}

func TestReadPacket(t *testing.T) {
	tests := []struct {
		name  string
		input string
		noAck bool
		want  []result // followed by io.EOF
		acks  string   // bytes written by the Conn
	}{
		{name: "simple", input: "$g#67", want: []result{{data: "g"}}, acks: "+"},
		{name: "uppercase checksum", input: rawFrame("qC")[:4] + strings.ToUpper(rawFrame("qC")[4:]),
			want: []result{{data: "qC"}}, acks: "+"},
		{name: "garbage and acks skipped", input: "+++junk\r\n" + rawFrame("?") + "+" + rawFrame("g"),
			want: []result{{data: "?"}, {data: "g"}}, acks: "++"},
		{name: "escapes", input: rawFrame("X0,4:}\x04}\x03}]}\x0a"),
			want: []result{{data: "X0,4:$#}*"}}, acks: "+"},
		{name: "run-length", input: rawFrame("0* ") + rawFrame("ab*\"c") + rawFrame("x*~"),
			want: []result{{data: "0000"}, {data: "abbbbbbc"}, {data: strings.Repeat("x", 98)}}, acks: "+++"},
		{name: "escaped byte repeated", input: rawFrame("}]* "),
			want: []result{{data: "}}}}"}}, acks: "+"},
		{name: "dollar restarts packet", input: "$abc" + rawFrame("g"),
			want: []result{{data: "g"}}, acks: "+"},
		{name: "dollar in checksum restarts packet", input: "$abc#1" + rawFrame("g"),
			want: []result{{data: "g"}}, acks: "+"},
		{name: "interrupt", input: "\x03" + rawFrame("g") + "\x03",
			want: []result{{err: ErrInterrupt}, {data: "g"}, {err: ErrInterrupt}}, acks: "+"},
		{name: "interrupt byte inside packet is data", input: rawFrame("X0,1:\x03"),
			want: []result{{data: "X0,1:\x03"}}, acks: "+"},
		{name: "empty packet", input: "$#00", want: []result{{data: ""}}, acks: "+"},
		{name: "bad escape", input: rawFrame("ab}") + rawFrame("g"),
			want: []result{{err: ErrMalformed}, {data: "g"}}, acks: "++"},
		{name: "bad run-length at start", input: rawFrame("* ") + rawFrame("g"),
			want: []result{{err: ErrMalformed}, {data: "g"}}, acks: "++"},
		{name: "bad run-length count", input: rawFrame("a*\x01"),
			want: []result{{err: ErrMalformed}}, acks: "+"},
		{name: "run-length at end", input: rawFrame("a*"),
			want: []result{{err: ErrMalformed}}, acks: "+"},
		{name: "no-ack: no acknowledgments", noAck: true, input: rawFrame("g") + rawFrame("?"),
			want: []result{{data: "g"}, {data: "?"}}, acks: ""},
		{name: "no-ack: bad checksum", noAck: true, input: "$g#00" + "$g#zz" + rawFrame("g"),
			want: []result{{err: ErrBadChecksum}, {err: ErrBadChecksum}, {data: "g"}}, acks: ""},
		{name: "no-ack: minus ignored", noAck: true, input: "-" + rawFrame("g"),
			want: []result{{data: "g"}}, acks: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, rw := newBufConn(tc.input)
			c.SetNoAck(tc.noAck)
			for i, w := range tc.want {
				got, err := c.ReadPacket()
				if w.err != nil {
					if !errors.Is(err, w.err) {
						t.Fatalf("packet %d: got %q, %v; want error %v", i, got, err, w.err)
					}
					continue
				}
				if err != nil || string(got) != w.data {
					t.Fatalf("packet %d: got %q, %v; want %q", i, got, err, w.data)
				}
			}
			if got, err := c.ReadPacket(); err != io.EOF {
				t.Fatalf("after last packet: got %q, %v; want EOF", got, err)
			}
			if got := rw.out.String(); got != tc.acks {
				t.Errorf("written %q, want %q", got, tc.acks)
			}
		})
	}
}

func TestReadPacketEOFInsidePacket(t *testing.T) {
	for _, in := range []string{"$abc", "$abc#", "$abc#0"} {
		c, _ := newBufConn(in)
		if _, err := c.ReadPacket(); err != io.ErrUnexpectedEOF {
			t.Errorf("%q: got %v, want io.ErrUnexpectedEOF", in, err)
		}
	}
}

func TestBadChecksumAckModeRequestsRetransmission(t *testing.T) {
	// With an in-memory stream: a bad packet is answered '-' and the
	// retransmitted good one '+'; ReadPacket returns only the good one.
	c, rw := newBufConn("$g#00" + "$g#6G" + rawFrame("g"))
	got, err := c.ReadPacket()
	if err != nil || string(got) != "g" {
		t.Fatalf("got %q, %v", got, err)
	}
	if rw.out.String() != "--+" {
		t.Errorf("written %q, want %q", rw.out.String(), "--+")
	}

	// And interactively through a pipe.
	server, client := net.Pipe()
	defer client.Close()
	sc := NewConn(server)
	done := make(chan result, 1)
	go func() {
		p, err := sc.ReadPacket()
		done <- result{string(p), err}
		server.Close()
	}()
	expectByte := func(want byte) {
		t.Helper()
		var b [1]byte
		if _, err := io.ReadFull(client, b[:]); err != nil || b[0] != want {
			t.Fatalf("client read %q, %v; want %q", b[0], err, want)
		}
	}
	client.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(client, "$m10,4#00")
	expectByte('-')
	io.WriteString(client, rawFrame("m10,4"))
	expectByte('+')
	r := <-done
	if r.err != nil || r.data != "m10,4" {
		t.Fatalf("server got %q, %v", r.data, r.err)
	}
}

func TestRetransmitOnNak(t *testing.T) {
	c, rw := newBufConn("-" + rawFrame("g"))
	if err := c.WritePacket([]byte("OK")); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadPacket()
	if err != nil || string(got) != "g" {
		t.Fatalf("got %q, %v", got, err)
	}
	want := "$OK#9a$OK#9a+"
	if rw.out.String() != want {
		t.Errorf("written %q, want %q", rw.out.String(), want)
	}

	// No retransmission after switching to no-ack mode, nor with nothing sent.
	c, rw = newBufConn("--" + rawFrame("g"))
	c.WritePacket([]byte("OK"))
	c.SetNoAck(true)
	if _, err := c.ReadPacket(); err != nil {
		t.Fatal(err)
	}
	if rw.out.String() != "$OK#9a" {
		t.Errorf("written %q", rw.out.String())
	}
	c, rw = newBufConn("-" + rawFrame("g"))
	if _, err := c.ReadPacket(); err != nil {
		t.Fatal(err)
	}
	if rw.out.String() != "+" {
		t.Errorf("written %q", rw.out.String())
	}
}

func TestOversizedPacket(t *testing.T) {
	big := rawFrame(strings.Repeat("a", 1000))
	rle := rawFrame("a" + strings.Repeat("*~", 20)) // 41 raw bytes, 1941 decoded
	c, rw := newBufConn(big + rawFrame("g") + rle + rawFrame(strings.Repeat("b", 100)))
	c.SetMaxPacketSize(100)
	if c.MaxPacketSize() != 100 {
		t.Fatalf("MaxPacketSize = %d", c.MaxPacketSize())
	}
	want := []result{{err: ErrPacketTooLarge}, {data: "g"}, {err: ErrPacketTooLarge}, {data: strings.Repeat("b", 100)}}
	for i, w := range want {
		got, err := c.ReadPacket()
		if w.err != nil {
			if !errors.Is(err, w.err) {
				t.Fatalf("packet %d: got %d bytes, %v; want %v", i, len(got), err, w.err)
			}
			continue
		}
		if err != nil || string(got) != w.data {
			t.Fatalf("packet %d: got %q, %v", i, got, err)
		}
	}
	if rw.out.String() != "++++" {
		t.Errorf("written %q", rw.out.String())
	}

	// The default bound is 1 MiB.
	c, _ = newBufConn(rawFrame(strings.Repeat("a", DefaultMaxPacketSize+1)) + rawFrame(strings.Repeat("a", DefaultMaxPacketSize)))
	if _, err := c.ReadPacket(); !errors.Is(err, ErrPacketTooLarge) {
		t.Fatalf("got %v, want ErrPacketTooLarge", err)
	}
	if p, err := c.ReadPacket(); err != nil || len(p) != DefaultMaxPacketSize {
		t.Fatalf("got %d bytes, %v", len(p), err)
	}
}

func TestWritePacketEscaping(t *testing.T) {
	c, rw := newBufConn("")
	c.SetNoAck(true)
	data := []byte("a$b#c}d*e\x03")
	if err := c.WritePacket(data); err != nil {
		t.Fatal(err)
	}
	want := rawFrame("a}\x04b}\x03c}]d}\x0ae\x03")
	if rw.out.String() != want {
		t.Fatalf("wrote %q, want %q", rw.out.String(), want)
	}
	if got := string(Frame(data)); got != want {
		t.Errorf("Frame = %q, want %q", got, want)
	}
	// Reading it back gives the original bytes.
	back, _ := newBufConn(rw.out.String())
	back.SetNoAck(true)
	got, err := back.ReadPacket()
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("read back %q, %v", got, err)
	}
}

func TestWriteNotification(t *testing.T) {
	c, rw := newBufConn("-")
	if err := c.WriteNotification([]byte("Stop:T05thread:p1.1;")); err != nil {
		t.Fatal(err)
	}
	want := "%Stop:T05thread:p1.1;#" + fmt.Sprintf("%02x", Checksum([]byte("Stop:T05thread:p1.1;")))
	if rw.out.String() != want {
		t.Fatalf("wrote %q, want %q", rw.out.String(), want)
	}
	// A '-' does not retransmit notifications.
	c.ReadPacket()
	if rw.out.String() != want {
		t.Errorf("notification retransmitted: %q", rw.out.String())
	}
}

// rspClient is a minimal gdb-like client used to drive a Conn over net.Pipe.
type rspClient struct {
	t     *testing.T
	conn  net.Conn
	r     *bufio.Reader
	noAck bool
}

func (c *rspClient) send(data string) {
	c.t.Helper()
	if _, err := c.conn.Write(Frame([]byte(data))); err != nil {
		c.t.Fatalf("client write: %v", err)
	}
	if !c.noAck {
		c.expectAck()
	}
}

func (c *rspClient) expectAck() {
	c.t.Helper()
	b, err := c.r.ReadByte()
	if err != nil || b != '+' {
		c.t.Fatalf("client expected '+', got %q, %v", b, err)
	}
}

// recv reads one reply packet, checks it and acknowledges it.
func (c *rspClient) recv() string {
	c.t.Helper()
	b, err := c.r.ReadByte()
	if err != nil || b != '$' {
		c.t.Fatalf("client expected '$', got %q, %v", b, err)
	}
	raw, err := c.r.ReadBytes('#')
	if err != nil {
		c.t.Fatalf("client read: %v", err)
	}
	raw = raw[:len(raw)-1]
	var cs [2]byte
	if _, err := io.ReadFull(c.r, cs[:]); err != nil {
		c.t.Fatalf("client read: %v", err)
	}
	if fmt.Sprintf("%02x", Checksum(raw)) != string(cs[:]) {
		c.t.Fatalf("client: bad checksum in %q#%s", raw, cs)
	}
	data, err := decodeBody(raw, DefaultMaxPacketSize)
	if err != nil {
		c.t.Fatalf("client decode: %v", err)
	}
	if !c.noAck {
		c.conn.Write([]byte{'+'})
	}
	return string(data)
}

func TestRoundTripNetPipe(t *testing.T) {
	serverSide, clientSide := net.Pipe()
	deadline := time.Now().Add(10 * time.Second)
	serverSide.SetDeadline(deadline)
	clientSide.SetDeadline(deadline)

	binary := []byte("\x00$#}*\x03\xff:;")
	serverErr := make(chan error, 1)
	var got []Packet
	go func() {
		defer serverSide.Close()
		sc := NewConn(serverSide)
		for {
			data, err := sc.ReadPacket()
			if err == io.EOF {
				serverErr <- nil
				return
			}
			if err != nil {
				serverErr <- err
				return
			}
			p, err := Parse(data)
			if err != nil {
				sc.WritePacket(Error(1))
				continue
			}
			got = append(got, p)
			switch p := p.(type) {
			case QSupported:
				sc.WritePacket(SupportedReply(DefaultFeatures()))
			case StartNoAckMode:
				sc.WritePacket(Ok())
				sc.SetNoAck(true)
			case WriteMemoryBinary:
				sc.WritePacket(Ok())
			case ReadMemoryBinary:
				sc.WritePacket(BinaryMemoryReply(binary[:p.Len]))
			case XferRead:
				sc.WritePacket(XferReply([]byte("<target>*}#$</target>"), p.Offset, p.Length))
			case Continue:
				sc.WritePacket(NewStopReply(5, ThreadID{Pid: 0x10, Tid: 0x11, Multiprocess: true}).SwBreak().Bytes())
			default:
				sc.WritePacket(nil)
			}
		}
	}()

	c := &rspClient{t: t, conn: clientSide, r: bufio.NewReader(clientSide)}
	c.conn.Write([]byte{'+'}) // Delve starts with an ack.
	c.send("qSupported:multiprocess+;swbreak+;hwbreak+;no-resumed+;xmlRegisters=i386")
	if r := c.recv(); !strings.Contains(r, "QStartNoAckMode+") || !strings.HasPrefix(r, "PacketSize=100000;") {
		t.Fatalf("qSupported reply %q", r)
	}
	c.send("vMustReplyEmpty")
	if r := c.recv(); r != "" {
		t.Fatalf("vMustReplyEmpty reply %q", r)
	}
	c.send("QStartNoAckMode")
	if r := c.recv(); r != "OK" { // acknowledged with '+', as gdb does
		t.Fatalf("QStartNoAckMode reply %q", r)
	}
	c.noAck = true
	c.send("X1000," + fmt.Sprintf("%x", len(binary)) + ":" + string(binary))
	if r := c.recv(); r != "OK" {
		t.Fatalf("X reply %q", r)
	}
	c.send("x1000,9")
	if r := c.recv(); r != "b"+string(binary) {
		t.Fatalf("x reply %q", r)
	}
	c.send("qXfer:features:read:target.xml:0,8")
	if r := c.recv(); r != "m<target>" {
		t.Fatalf("qXfer reply %q", r)
	}
	c.send("qXfer:features:read:target.xml:8,100")
	if r := c.recv(); r != "l*}#$</target>" {
		t.Fatalf("qXfer reply %q", r)
	}
	c.send("c")
	if r := c.recv(); r != "T05thread:p10.11;swbreak:;" {
		t.Fatalf("stop reply %q", r)
	}
	c.send("k")
	if r := c.recv(); r != "" {
		t.Fatalf("k reply %q", r)
	}
	clientSide.Close()
	if err := <-serverErr; err != nil {
		t.Fatalf("server: %v", err)
	}
	wantTypes := []string{"QSupported", "VMustReplyEmpty", "StartNoAckMode", "WriteMemoryBinary",
		"ReadMemoryBinary", "XferRead", "XferRead", "Continue", "Kill"}
	if len(got) != len(wantTypes) {
		t.Fatalf("server parsed %d packets: %#v", len(got), got)
	}
	for i, p := range got {
		if name := fmt.Sprintf("%T", p); name != "gdbrsp."+wantTypes[i] {
			t.Errorf("packet %d is %s, want %s", i, name, wantTypes[i])
		}
	}
	if wm := got[3].(WriteMemoryBinary); !bytes.Equal(wm.Data, binary) || wm.Addr != 0x1000 {
		t.Errorf("X packet parsed as %#v", wm)
	}
}

// TestConcurrentWrite checks that a stop reply written from another
// goroutine while ReadPacket waits is framed intact and an interrupt is seen.
func TestConcurrentWrite(t *testing.T) {
	serverSide, clientSide := net.Pipe()
	defer clientSide.Close()
	deadline := time.Now().Add(10 * time.Second)
	serverSide.SetDeadline(deadline)
	clientSide.SetDeadline(deadline)
	sc := NewConn(serverSide)
	sc.SetNoAck(true)
	readErr := make(chan error, 1)
	go func() {
		_, err := sc.ReadPacket()
		readErr <- err
	}()
	go sc.WritePacket(NewStopReply(2, ThreadID{Tid: 7}).Bytes())
	r := bufio.NewReader(clientSide)
	line, err := r.ReadString('#')
	if err != nil || line != "$T02thread:7;#" {
		t.Fatalf("client read %q, %v", line, err)
	}
	clientSide.Write([]byte{InterruptByte})
	if err := <-readErr; err != ErrInterrupt {
		t.Fatalf("ReadPacket: %v, want ErrInterrupt", err)
	}
}
