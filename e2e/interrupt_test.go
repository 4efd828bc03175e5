package e2e

import (
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/gdbrsp"
)

const manyCallsProg = `#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>
int main(void) {
	unsigned r;
	getrandom(&r, sizeof r, 0);
	long sum = 0;
	for (int i = 0; i < 40000; i++) sum += getppid() & 1;
	printf("r %u sum %ld\n", r, sum);
	return 0;
}
`

// An interrupt (gdb's Ctrl-C, the 0x03 byte) stops a running continue at
// the next event with SIGINT; continuing then runs on to the end.
func TestDebugServerInterrupt(t *testing.T) {
	traceDir, _ := recordC(t, "many", manyCallsProg)
	lines := startDebugServer(t, traceDir)
	m := regexp.MustCompile(`target extended-remote (127\.0\.0\.1:\d+)`).FindStringSubmatch(strings.Join(lines, "\n"))
	if m == nil {
		t.Fatalf("launch lines: %q", lines)
	}
	addr := m[1]
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(50 * time.Second))
	c := gdbrsp.NewConn(nc)
	ask := func(pkt string) string {
		t.Helper()
		if err := c.WritePacket([]byte(pkt)); err != nil {
			t.Fatal(err)
		}
		b, err := c.ReadPacket()
		if err != nil {
			t.Fatalf("%s: %v", pkt, err)
		}
		return string(b)
	}
	if r := ask("QStartNoAckMode"); r != "OK" {
		t.Fatalf("QStartNoAckMode: %q", r)
	}
	c.SetNoAck(true)
	if err := c.WritePacket([]byte("vCont;c")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := nc.Write([]byte{gdbrsp.InterruptByte}); err != nil {
		t.Fatal(err)
	}
	b, err := c.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "T02") {
		t.Fatalf("after an interrupt: %q, want a SIGINT stop (T02)", b)
	}
	when := ask("qRRCmd:when:-1")
	if r := ask("vCont;c"); !strings.HasPrefix(r, "T09") {
		t.Fatalf("continuing after the interrupt: %q, want the stop before the exit (T09); when said %q", r, when)
	}
}
