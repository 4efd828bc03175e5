package debugserver

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/gdbrsp"
	"github.com/gorr-debugger/gorr/internal/replay"
	debugsession "github.com/gorr-debugger/gorr/internal/session"
	"github.com/gorr-debugger/gorr/internal/testrec"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// session records `true` and starts a debug session on it.
func session(t *testing.T) (*debugsession.Session, debugsession.DebugStop) {
	t.Helper()
	prog, err := exec.LookPath("true")
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "trace")
	testrec.Record(t, dir, []string{prog}, testrec.Options{})
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	s, st, err := debugsession.StartSession(debugsession.Options{Options: replay.Options{Reader: rd, BindCPU: -1}, Reopen: func() (*trace.Reader, error) { return trace.Open(dir) }})
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
	if r := ask("qProcessInfo"); !strings.HasPrefix(r, fmt.Sprintf("pid:%x;name:", first.Pid)) || first.Pid == 0 {
		t.Fatalf("qProcessInfo: %q (pid %d)", r, first.Pid)
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
	if r, _ := gdbrsp.DecodeHex([]byte(ask("qRRCmd:when-end:-1"))); !strings.HasPrefix(string(r), "Event at end of recording: ") || strings.HasSuffix(string(r), ": 0\n") {
		t.Fatalf("when-end: %q", r)
	}
	// rr's elapsed-time: the recording's clock at this event (> 0 here).
	if r, err := gdbrsp.DecodeHex([]byte(ask("qRRCmd:elapsed-time:-1"))); err != nil || !strings.HasPrefix(string(r), "Elapsed Time (s): ") || strings.HasPrefix(string(r), "Elapsed Time (s): 0.000000") {
		t.Fatalf("elapsed-time: %q %v", r, err)
	}
	if r := ask("vCont;c"); !strings.HasPrefix(r, "W00") {
		t.Fatalf("then the exit: %q", r)
	}
	if r := ask("bc"); !strings.Contains(r, "replaylog:begin") {
		t.Fatalf("reverse from the end of `true` reaches the start: %q", r)
	}
	// An LLDB-style client (Delve) gets a plain stop before the SIGKILL
	// one, at the same place, so that it reloads its threads' registers.
	if r := ask("QThreadSuffixSupported"); r != "OK" {
		t.Fatalf("QThreadSuffixSupported: %q", r)
	}
	if r := ask("vCont;c"); !strings.HasPrefix(r, "T05") {
		t.Fatalf("Delve: continue to the end should stop with SIGTRAP first: %q", r)
	}
	when := ask("qRRCmd:when:-1")
	if r := ask("vCont;c"); !strings.HasPrefix(r, "T09") {
		t.Fatalf("Delve: then the SIGKILL before the exit: %q", r)
	}
	if w := ask("qRRCmd:when:-1"); w != when {
		t.Fatalf("Delve: the SIGKILL stop moved: %q, then %q", when, w)
	}
	if r := ask("vCont;c"); !strings.HasPrefix(r, "W00") {
		t.Fatalf("Delve: then the exit: %q", r)
	}
	if r := ask("D"); r != "OK" {
		t.Fatalf("detach: %q", r)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Diversions: qXfer:siginfo:read starts one, writes go to the live copy
// and show in reads, the copy runs, and the first resume after the
// siginfo write returns to the untouched replay.
func TestDiversionPackets(t *testing.T) {
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
	ask("QStartNoAckMode")
	c.SetNoAck(true)
	if r := ask("qSupported:multiprocess+;swbreak+"); !strings.Contains(r, "qXfer:siginfo:read+") || !strings.Contains(r, "qXfer:siginfo:write+") {
		t.Fatalf("qSupported: %q", r)
	}
	le := func(hexs string) uint64 {
		b, err := gdbrsp.DecodeHex([]byte(hexs))
		if err != nil || len(b) != 8 {
			t.Fatalf("register %q", hexs)
		}
		var v uint64
		for i := 7; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	hex64 := func(v uint64) string {
		var b [8]byte
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		return string(gdbrsp.EncodeHex(b[:]))
	}
	rax, rsp, rip := ask("p0"), le(ask("p7")), ask("p10")
	argv := ask(fmt.Sprintf("m%x,8", rsp+8))

	// Writes that change nothing, the X probe and orig_rax are fine
	// outside a diversion; malformed writes are not.
	for _, pkt := range []string{"P0=" + rax, "P39=ffffffffffffffff", fmt.Sprintf("X%x,0:", rsp), fmt.Sprintf("M%x,8:%s", rsp+8, argv)} {
		if r := ask(pkt); r != "OK" {
			t.Fatalf("%s: %q", pkt, r)
		}
		if _, on := sess.Diverted(); on {
			t.Fatalf("%s started a diversion", pkt)
		}
	}
	if r := ask("P0=01"); r != "E01" {
		t.Fatalf("a register write of the wrong size: %q", r)
	}
	if _, on := sess.Diverted(); on {
		t.Fatal("a refused register write started a diversion")
	}
	if r := ask("M1000,1:00"); r != "E01" {
		t.Fatalf("writing unmapped memory: %q", r)
	}
	if _, on := sess.Diverted(); on {
		t.Fatal("no diversion should have started yet")
	}

	// Start one the way gdb and Delve do.
	si := ask("qXfer:siginfo:read::0,fff")
	if len(si) != 129 || si[0] != 'l' || si[1] != 5 {
		t.Fatalf("siginfo: %q", si)
	}
	if _, on := sess.Diverted(); !on {
		t.Fatal("qXfer:siginfo:read should start a diversion")
	}
	if r := ask("P0=" + hex64(0x1234)); r != "OK" {
		t.Fatalf("register write in a diversion: %q", r)
	}
	if r := ask("p0"); r != hex64(0x1234) {
		t.Fatalf("rax in the diversion: %q", r)
	}
	if r := ask(fmt.Sprintf("M%x,8:%s", rsp+8, hex64(0x5678))); r != "OK" {
		t.Fatalf("memory write in a diversion: %q", r)
	}
	if r := ask(fmt.Sprintf("m%x,8", rsp+8)); r != hex64(0x5678) {
		t.Fatalf("memory in the diversion: %q", r)
	}
	// The copy executes: one step moves its pc.
	if r := ask("vCont;s"); !strings.HasPrefix(r, "T05") {
		t.Fatalf("step in the diversion: %q", r)
	}
	stepped := ask("p10")
	if stepped == rip {
		t.Fatal("the step in the diversion did not move the pc")
	}
	// A breakpoint there is hit in the copy.
	if r := ask("P10=" + rip); r != "OK" {
		t.Fatalf("pc write: %q", r)
	}
	if r := ask("Z0," + fmt.Sprintf("%x", le(stepped)) + ",1"); r != "OK" {
		t.Fatalf("breakpoint in the diversion: %q", r)
	}
	if r := ask("vCont;c"); !strings.HasPrefix(r, "T05") || !strings.Contains(r, "swbreak") {
		t.Fatalf("continue to the breakpoint in the diversion: %q", r)
	}
	if r := ask("p10"); r != stepped {
		t.Fatalf("pc at the breakpoint: %q, want %q", r, stepped)
	}
	ask("z0," + fmt.Sprintf("%x", le(stepped)) + ",1")
	if r := ask("qXfer:siginfo:write::0:" + strings.Repeat("\x00", 128)); r != "80" {
		t.Fatalf("siginfo write: %q", r)
	}
	if _, on := sess.Diverted(); !on {
		t.Fatal("the diversion lasts until the next resume")
	}
	// The next resume ends it: the replay was never touched.
	if r := ask("vCont;s"); !strings.HasPrefix(r, "T05") {
		t.Fatalf("step after the diversion: %q", r)
	}
	if _, on := sess.Diverted(); on {
		t.Fatal("the resume should have ended the diversion")
	}
	if r := ask("p10"); r != stepped {
		t.Fatalf("replay pc after one step: %q, want %q", r, stepped)
	}
	if r := ask(fmt.Sprintf("m%x,8", rsp+8)); r != argv {
		t.Fatalf("replay memory after the diversion: %q, want %q", r, argv)
	}
	if r := ask("p0"); r == hex64(0x1234) {
		t.Fatalf("replay rax after the diversion: %q", r)
	}

	// A write alone starts a diversion; a crash kills the copy, which is
	// reported as SIGKILL; the replay carries on after a restart.
	if r := ask("P10=" + hex64(0)); r != "OK" {
		t.Fatalf("pc write: %q", r)
	}
	if r := ask("vCont;c"); !strings.HasPrefix(r, "T0b") {
		t.Fatalf("jump to 0 in the diversion: %q", r)
	}
	if r := ask("vCont;C0b"); !strings.HasPrefix(r, "X09") {
		t.Fatalf("delivering SIGSEGV to the copy: %q", r)
	}
	if _, on := sess.Diverted(); on {
		t.Fatal("the copy died: the diversion is over")
	}
	if r := ask("vRun;"); !strings.HasPrefix(r, "T05") {
		t.Fatalf("restart: %q", r)
	}
	if r := ask("vCont;c"); !strings.HasPrefix(r, "T00") { // as rr: the restart position, no signal
		t.Fatalf("continue after restart: %q", r)
	}
	if r := ask("vCont;c"); !strings.HasPrefix(r, "T09") {
		t.Fatalf("continue to the end: %q", r)
	}
	if r := ask("D"); r != "OK" {
		t.Fatalf("detach: %q", r)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

var _ Session = (*debugsession.Session)(nil)
