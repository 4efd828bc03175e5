package debugserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/debugapi"
	"github.com/gorr-debugger/gorr/internal/gdbrsp"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// fakeSession is a replay of two threads (100, the leader, and 101) that
// never moves: it records what the server asked it to do.
type fakeSession struct {
	mu      sync.Mutex
	steps   []int32
	resumes int
	ckpts   map[int]debugapi.Pos
}

func (f *fakeSession) Threads() []int32 { return []int32{101, 100} }
func (f *fakeSession) Regs(tid int32) (trace.Regs, []byte, error) {
	if tid != 100 && tid != 101 {
		return trace.Regs{}, nil, errors.New("no such thread")
	}
	var r trace.Regs
	r[16] = uint64(tid) // rip
	return r, make([]byte, 512), nil
}
func (f *fakeSession) ReadMem(addr uint64, n int) ([]byte, error) {
	if addr < 0x1000 {
		return nil, errors.New("unmapped")
	}
	return make([]byte, n), nil
}
func (f *fakeSession) Auxv() []byte               { return make([]byte, 16) }
func (f *fakeSession) ExecFile() (string, string) { return "/bin/true", "/bin/true" }
func (f *fakeSession) EventCount() uint64         { return 10 }
func (f *fakeSession) ElapsedTime() time.Duration { return time.Second }
func (f *fakeSession) stop(tid int32) debugapi.Stop {
	return debugapi.Stop{Kind: debugapi.StopStep, Tid: tid, Pid: 100, Event: 5}
}
func (f *fakeSession) Continue() (debugapi.Stop, error) {
	f.mu.Lock()
	f.resumes++
	f.mu.Unlock()
	return f.stop(100), nil
}
func (f *fakeSession) Step(tid int32) (debugapi.Stop, error) {
	f.mu.Lock()
	f.steps = append(f.steps, tid)
	f.mu.Unlock()
	return f.stop(tid), nil
}
func (f *fakeSession) Interrupt()                              {}
func (f *fakeSession) ReverseContinue() (debugapi.Stop, error) { return f.stop(100), nil }
func (f *fakeSession) ReverseStep() (debugapi.Stop, error)     { return f.stop(100), nil }
func (f *fakeSession) Restart() (debugapi.Stop, error)         { return f.stop(100), nil }
func (f *fakeSession) Goto(uint64) (debugapi.Stop, error)      { return f.stop(100), nil }
func (f *fakeSession) SetBreakpoint(uint64) error              { return nil }
func (f *fakeSession) ClearBreakpoint(uint64) error            { return nil }
func (f *fakeSession) SetWatchpoint(debugapi.Watch) error      { return nil }
func (f *fakeSession) ClearWatchpoint(debugapi.Watch) error    { return nil }
func (f *fakeSession) Checkpoint() (int, debugapi.Pos)         { return 1, debugapi.Pos{Event: 5} }
func (f *fakeSession) Checkpoints() map[int]debugapi.Pos       { return f.ckpts }
func (f *fakeSession) DeleteCheckpoint(int) bool               { return false }
func (f *fakeSession) RestartCheckpoint(int) (debugapi.Stop, error) {
	return debugapi.Stop{}, errors.New("no checkpoint")
}
func (f *fakeSession) Diverted() (int32, bool)                    { return 0, false }
func (f *fakeSession) StartDiversion(int32) error                 { return errors.New("no diversions here") }
func (f *fakeSession) EndDiversion()                              {}
func (f *fakeSession) DiversionRestored() bool                    { return true }
func (f *fakeSession) WriteRegs(int32, trace.Regs, []byte) error  { return errors.New("read-only") }
func (f *fakeSession) WriteMem(uint64, []byte) error              { return errors.New("read-only") }
func (f *fakeSession) DivResume(bool, int) (debugapi.Stop, error) { return f.stop(100), nil }
func (f *fakeSession) CapturedFile(path string) (string, bool)    { return "", false }
func (f *fakeSession) ProcMaps() ([]byte, error) {
	return []byte("00400000-00401000 r-xp 00000000 00:00 1    /bin/true\n"), nil
}
func (f *fakeSession) Close() {}

// rawClient speaks to a server over a pipe, byte by byte.
type rawClient struct {
	t  *testing.T
	c  net.Conn
	r  *bufio.Reader
	ok bool // no-ack mode
}

func startFake(t *testing.T) (*rawClient, *fakeSession, chan error) {
	f := &fakeSession{}
	client, server := net.Pipe()
	t.Cleanup(func() { client.Close() })
	srv := New(f, f.stop(100))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(server) }()
	return &rawClient{t: t, c: client, r: bufio.NewReader(client)}, f, done
}

func (c *rawClient) send(raw string) {
	c.t.Helper()
	c.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c.c, raw); err != nil {
		c.t.Fatalf("send %q: %v", raw, err)
	}
}

// reply reads what the server answers: a '+' or '-' (ack mode), or a
// packet body.
func (c *rawClient) reply() string {
	c.t.Helper()
	c.c.SetDeadline(time.Now().Add(10 * time.Second))
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			c.t.Fatalf("reading the reply: %v", err)
		}
		switch b {
		case '+', '-':
			return string(b)
		case '$':
			body, err := c.r.ReadString('#')
			if err != nil {
				c.t.Fatalf("reading the reply: %v", err)
			}
			var cs [2]byte
			if _, err := io.ReadFull(c.r, cs[:]); err != nil {
				c.t.Fatal(err)
			}
			return body[:len(body)-1]
		}
	}
}

// ask sends a well-formed packet and returns the reply body (acking it
// in ack mode).
func (c *rawClient) ask(pkt string) string {
	c.t.Helper()
	c.send(string(gdbrsp.Frame([]byte(pkt))))
	if !c.ok {
		if a := c.reply(); a != "+" {
			c.t.Fatalf("%s: ack %q", pkt, a)
		}
	}
	r := c.reply()
	if !c.ok {
		c.send("+")
	}
	return r
}

// Malformed, oversized and corrupted packets get a NAK (ack mode) or an
// error reply, and the session goes on; bad thread ids get E replies and
// resume nothing.
func TestMalformedPackets(t *testing.T) {
	c, f, done := startFake(t)
	// Ack mode: a bad checksum is NAKed, then the resent packet answered.
	c.send("$?#00")
	if r := c.reply(); r != "-" {
		t.Fatalf("bad checksum in ack mode: %q, want a NAK", r)
	}
	if r := c.ask("?"); !strings.HasPrefix(r, "T") {
		t.Fatalf("? after a NAK: %q", r)
	}
	// A packet that does not decode: acked, refused.
	c.send(string(frameRaw("m}")))
	if a, r := c.reply(), c.reply(); a != "+" || !strings.HasPrefix(r, "E") {
		t.Fatalf("$m}#..: %q %q", a, r)
	}
	c.send("+")
	if r := c.ask("qC"); r != "QCp64.64" {
		t.Fatalf("qC: %q", r)
	}
	if r := c.ask("QStartNoAckMode"); r != "OK" {
		t.Fatalf("QStartNoAckMode: %q", r)
	}
	c.ok = true
	for _, raw := range []string{
		"$?#00", // bad checksum
		"$?#zz", // not a checksum
		string(frameRaw("m}")),
		string(frameRaw("X1000,4:ab}")),
		string(frameRaw("a*")), // run-length at the start
		string(frameRaw("m10*\x01")),
		"$" + strings.Repeat("m", gdbrsp.DefaultMaxPacketSize+10) + "#00", // over 1 MiB
		string(frameRaw("m1000*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~*~")),
	} {
		c.send(raw)
		if r := c.reply(); !strings.HasPrefix(r, "E") && r != "" {
			t.Fatalf("%.40q: reply %q, want an error", raw, r)
		}
		if r := c.ask("qC"); r != "QCp64.64" {
			t.Fatalf("after %.40q: qC answered %q", raw, r)
		}
	}
	// A truncated packet: a new '$' starts over.
	c.send("$m10")
	if r := c.ask("qC"); r != "QCp64.64" {
		t.Fatalf("after a truncated packet: qC answered %q", r)
	}
	for _, pkt := range []string{"Hg99999", "Hgp1.65", "Hc99999", "vCont;s:99999", "vCont;c:pffffffff.ffffffff", "vCont;s:p64.99999;c", "T99999"} {
		if r := c.ask(pkt); !strings.HasPrefix(r, "E") {
			t.Fatalf("%s: %q, want an error", pkt, r)
		}
	}
	if len(f.steps) != 0 || f.resumes != 0 {
		t.Fatalf("bad thread ids resumed the replay: steps %v, continues %d", f.steps, f.resumes)
	}
	for _, pkt := range []string{"Hg65", "Hgp64.65", "Hg0", "Hg-1", "Hc-1", "Hcp64.-1"} {
		if r := c.ask(pkt); r != "OK" {
			t.Fatalf("%s: %q", pkt, r)
		}
	}
	if r := c.ask("vCont;s:65"); !strings.HasPrefix(r, "T05") || len(f.steps) != 1 || f.steps[0] != 101 {
		t.Fatalf("vCont;s:65: %q, steps %v", r, f.steps)
	}
	// Threads come leader first.
	if r := c.ask("qfThreadInfo"); r != "mp64.64,p64.65" {
		t.Fatalf("qfThreadInfo: %q", r)
	}
	if r := c.ask("D"); r != "OK" {
		t.Fatalf("D: %q", r)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// frameRaw frames body as is (no escaping), with a correct checksum.
func frameRaw(body string) []byte {
	var b bytes.Buffer
	b.WriteByte('$')
	b.WriteString(body)
	b.WriteByte('#')
	sum := gdbrsp.Checksum([]byte(body))
	b.WriteString(string("0123456789abcdef"[sum>>4]) + string("0123456789abcdef"[sum&0xf]))
	return b.Bytes()
}

// FuzzServe feeds the server arbitrary bytes (after a few well-formed
// packets, in no-ack mode) and checks that it still answers a
// well-formed packet afterwards.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		"$?#00", "$m}#00", "$vCont;s:99999#00", "$Hg99999#00", "$qXfer:features:read:target.xml:ffffffffffffffff,ffffffff#00",
		"$m1000,ffffffffffffffff#00", "$p9999#00", "$Z2,1000,3#00", "$qRRCmd:checkpoint:-1:zz#00", "$vRun;;63ffff#00",
		"$qXfer:auxv:read::fffffffffffffff0,10#00", "$x0,0#00", "$M1000,2:0#00", "$G00#00", "$P10=#00", "$bc#00", "$D#00",
		"\x03", "$$$###", "$a*#00", "}", "$k#00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, done := startFake(t)
		if r := c.ask("QStartNoAckMode"); r != "OK" {
			t.Fatalf("QStartNoAckMode: %q", r)
		}
		c.ok = true
		// Fix up the checksums so that the packets in data are taken
		// (a random checksum is rarely right), and keep out what ends a
		// session on purpose (D, k) and what waits for a long time.
		var in bytes.Buffer
		for _, p := range bytes.Split(data, []byte{'$'}) {
			body, _, _ := bytes.Cut(p, []byte{'#'})
			if len(body) == 0 || body[0] == 'D' || body[0] == 'k' || bytes.ContainsAny(body, "$#\x03") {
				continue
			}
			in.Write(frameRaw(string(body)))
		}
		in.Write(gdbrsp.Frame([]byte("qC")))
		go func() {
			c.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			c.c.Write(in.Bytes())
		}()
		for {
			c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
			r := c.reply()
			if r == "QCp64.64" {
				break
			}
			select {
			case err := <-done:
				t.Fatalf("the session ended (%v) on %q", err, in.Bytes())
			default:
			}
		}
		c.c.Close()
		<-done
	})
}
