package debugserver

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/gdbrsp"
	"github.com/gorr-debugger/gorr/internal/record"
	"github.com/gorr-debugger/gorr/internal/replay"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// session records `true` and starts a debug session on it.
func session(t *testing.T) (*replay.Session, replay.DebugStop) {
	t.Helper()
	prog, err := exec.LookPath("true")
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "trace")
	w, err := trace.Create(dir, trace.Header{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := record.Record(record.Options{Argv: []string{prog}, Env: os.Environ(), Writer: w, BindCPU: -1})
	if err != nil {
		t.Fatal(err)
	}
	h := w.Header()
	h.ExitStatus = int(res.Status)
	w.Close(h)
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	s, st, err := replay.StartSession(replay.Options{Reader: rd, BindCPU: -1, Reopen: func() (*trace.Reader, error) { return trace.Open(dir) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, st
}

func TestProtocol(t *testing.T) {
	sess, first := session(t)
	client, server := net.Pipe()
	defer client.Close()
	srv := New(sess, first)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(server) }()
	c := gdbrsp.NewConn(client)
	ask := func(pkt string) string {
		t.Helper()
		client.SetDeadline(time.Now().Add(20 * time.Second))
		if err := c.WritePacket([]byte(pkt)); err != nil {
			t.Fatal(err)
		}
		b, err := c.ReadPacket()
		if err != nil {
			t.Fatalf("%s: %v", pkt, err)
		}
		return string(b)
	}
	// The server starts in ack mode: switch both sides off.
	if r := ask("QStartNoAckMode"); r != "OK" {
		t.Fatalf("QStartNoAckMode: %q", r)
	}
	c.SetNoAck(true)
	if r := ask("qSupported:multiprocess+;swbreak+"); !strings.Contains(r, "ReverseContinue+") || !strings.Contains(r, "qXfer:features:read+") {
		t.Fatalf("qSupported: %q", r)
	}
	xml := ask("qXfer:features:read:target.xml:0,ffff")
	if !strings.Contains(xml, `xi:include href="64bit-core.xml"`) {
		t.Fatalf("target.xml: %q", xml)
	}
	if core := ask("qXfer:features:read:64bit-core.xml:0,ffff"); !strings.Contains(core, `name="rip"`) {
		t.Fatalf("core feature: %q", core)
	}
	if r := ask("?"); !strings.HasPrefix(r, "T05") {
		t.Fatalf("stop reason: %q", r)
	}
	// 60 registers: 17*8 + 7*4 + 8*10 + 8*4 + 16*16 + 4 + 3*8 = 560 bytes.
	if r := ask("g"); len(r) != 2*560 {
		t.Fatalf("g reply has %d hex digits, want %d", len(r), 2*560)
	}
	if r := ask("m0,8"); !strings.HasPrefix(r, "E") {
		t.Fatalf("reading page 0: %q", r)
	}
	if r := ask("M1000,1:00"); r != "E01" {
		t.Fatalf("memory write must be refused: %q", r)
	}
	if r := ask("Zzz"); r != "" && !strings.HasPrefix(r, "E") {
		t.Fatalf("malformed Z: %q", r)
	}
	if r := ask("qNoSuchThing"); r != "" {
		t.Fatalf("unknown packet: %q", r)
	}
	if r := ask("qXfer:auxv:read::0,1000"); len(r) < 2 || r[0] != 'l' && r[0] != 'm' {
		t.Fatalf("auxv: %q", r)
	}
	if r := ask("vCont;c"); !strings.HasPrefix(r, "T09") {
		t.Fatalf("continue to the end should stop with SIGKILL before the exit: %q", r)
	}
	if r := ask("vCont;c"); !strings.HasPrefix(r, "W00") {
		t.Fatalf("then the exit: %q", r)
	}
	if r := ask("bc"); !strings.Contains(r, "replaylog:begin") {
		t.Fatalf("reverse from the end of `true` reaches the start: %q", r)
	}
	if r := ask("D"); r != "OK" {
		t.Fatalf("detach: %q", r)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
