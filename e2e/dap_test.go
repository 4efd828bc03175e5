package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dapClient speaks the Debug Adapter Protocol to `dlv dap`, as VS Code does.
type dapClient struct {
	t    *testing.T
	conn net.Conn
	rd   *bufio.Reader
	seq  int
}

func (c *dapClient) send(command string, args any) int {
	c.seq++
	msg := map[string]any{"seq": c.seq, "type": "request", "command": command, "arguments": args}
	b, _ := json.Marshal(msg)
	fmt.Fprintf(c.conn, "Content-Length: %d\r\n\r\n%s", len(b), b)
	return c.seq
}

func (c *dapClient) read() map[string]any {
	var n int
	for {
		line, err := c.rd.ReadString('\n')
		if err != nil {
			c.t.Fatalf("dap read: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.rd, b); err != nil {
		c.t.Fatalf("dap read body: %v", err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// await reads messages until one matches (a response to seq, or an event).
func (c *dapClient) await(seq int, event string) map[string]any {
	for i := 0; i < 500; i++ {
		m := c.read()
		if event != "" && m["type"] == "event" && m["event"] == event {
			return m
		}
		if seq != 0 && m["type"] == "response" && int(m["request_seq"].(float64)) == seq {
			if m["success"] != true {
				c.t.Fatalf("request %d failed: %v", seq, m)
			}
			return m
		}
	}
	c.t.Fatalf("no %q / response %d", event, seq)
	return nil
}

func (c *dapClient) call(command string, args any) map[string]any {
	return c.await(c.send(command, args), "")
}

// local returns the value of a local variable in the top frame.
func (c *dapClient) local(name string) string {
	th := c.call("threads", map[string]any{})
	threads := th["body"].(map[string]any)["threads"].([]any)
	tid := threads[0].(map[string]any)["id"]
	st := c.call("stackTrace", map[string]any{"threadId": tid, "levels": 1})
	frame := st["body"].(map[string]any)["stackFrames"].([]any)[0].(map[string]any)
	sc := c.call("scopes", map[string]any{"frameId": frame["id"]})
	for _, s := range sc["body"].(map[string]any)["scopes"].([]any) {
		ref := s.(map[string]any)["variablesReference"]
		vs := c.call("variables", map[string]any{"variablesReference": ref})
		for _, v := range vs["body"].(map[string]any)["variables"].([]any) {
			if v.(map[string]any)["name"] == name {
				return v.(map[string]any)["value"].(string)
			}
		}
	}
	c.t.Fatalf("no variable %s", name)
	return ""
}

// A DAP session (what VS Code's Go extension runs) over a gorr trace:
// breakpoint, continue, reverseContinue and stepBack, reading variables.
func TestDelveDAP(t *testing.T) {
	dlv := findDelve(t)
	allowDelve(t)
	dir := t.TempDir()
	bindir := rrOnPath(t, dir)
	src := writeDelveProg(t, dir)
	bin := buildDelveProg(t, src)
	env := append(os.Environ(), "PATH="+bindir+":"+os.Getenv("PATH"))
	traceDir := filepath.Join(dir, "trace")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rec := exec.CommandContext(ctx, filepath.Join(bindir, "rr"), "record", "-o", traceDir, bin)
	recOut, err := rec.Output()
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	want := strings.Fields(string(recOut))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := exec.CommandContext(ctx, dlv, "dap", "--listen="+addr)
	srv.Env = env
	srv.Dir = filepath.Dir(src)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	var conn net.Conn
	for i := 0; i < 100; i++ {
		if conn, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if conn == nil {
		t.Fatalf("dlv dap did not listen: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(80 * time.Second))
	c := &dapClient{t: t, conn: conn, rd: bufio.NewReader(conn)}
	c.call("initialize", map[string]any{"adapterID": "go", "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"})
	launch := c.send("launch", map[string]any{"mode": "replay", "traceDirPath": traceDir, "program": bin})
	c.await(0, "initialized")
	c.await(launch, "")
	c.call("setBreakpoints", map[string]any{"source": map[string]any{"path": src}, "breakpoints": []any{map[string]any{"line": 15}}})
	c.call("configurationDone", map[string]any{})
	c.await(0, "stopped")
	first := c.local("v")
	if first != want[0] {
		t.Fatalf("v at the first hit = %s, recorded %s", first, want[0])
	}
	c.send("continue", map[string]any{"threadId": 1})
	c.await(0, "stopped")
	if v := c.local("v"); v != want[1] {
		t.Fatalf("v at the second hit = %s, recorded %s", v, want[1])
	}
	c.send("reverseContinue", map[string]any{"threadId": 1})
	c.await(0, "stopped")
	if v := c.local("v"); v != want[0] {
		t.Fatalf("after reverseContinue v = %s, want the first hit's %s", v, want[0])
	}
	c.send("stepBack", map[string]any{"threadId": 1})
	c.await(0, "stopped")
	c.send("disconnect", map[string]any{})
}
