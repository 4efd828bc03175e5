package timelineview

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// big is a model of n events: 8 threads in 2 processes, a system call
// every other event.
func big(n int) *Model {
	m := &Model{Trace: "big", EventCount: uint64(n), Timed: true}
	for i := 0; i < 8; i++ {
		m.Threads = append(m.Threads, Thread{Tid: int32(100 + i), Pid: int32(100 + 4*(i/4))})
	}
	m.Procs = []Process{{Pid: 100, Ppid: -1, Cmd: "a", Threads: []int{0, 1, 2, 3}}, {Pid: 104, Ppid: 100, Cmd: "b", Threads: []int{4, 5, 6, 7}}}
	for e := 1; e < n; e += 2 {
		t := uint64(e) * 1000
		m.Items = append(m.Items, Item{Start: t, End: t + 1500, Lane: e % 8, Kind: KSyscall, Event: uint64(e), EndEvent: uint64(e + 1), Call: 0, Result: 8, Blocking: e%3 == 0})
	}
	m.Duration = uint64(n) * 1000
	return m
}

func TestPageIsSelfContainedAndCompact(t *testing.T) {
	var b bytes.Buffer
	const n = 1000000
	if err := WriteHTML(&b, big(n)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Fatal("the page names a network address")
	}
	// 41 bytes an item, in base64: well under 100 bytes an event.
	if b.Len() > 40*n {
		t.Fatalf("page of %d bytes for %d events", b.Len(), n)
	}
	if p := os.Getenv("GORR_TIMELINE_BIG"); p != "" {
		_ = os.WriteFile(p, b.Bytes(), 0o644)
	}
}

func TestChromeJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteChrome(&b, big(100)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	names := 0
	for _, ev := range doc.TraceEvents {
		if ev["name"] == "thread_name" {
			names++
		}
	}
	if names != 8 || len(doc.TraceEvents) != 2+8+50 {
		t.Fatalf("%d thread names, %d events", names, len(doc.TraceEvents))
	}
}

// TestPageEscapesTheTraceName checks the page's substitutions: a trace
// named like markup stays text, and a name in the JSON description
// cannot close the script.
func TestPageEscapesTheTraceName(t *testing.T) {
	m := big(10)
	m.Trace = `</title><script>alert("x")</script>&`
	var b bytes.Buffer
	if err := WriteHTML(&b, m); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, `<script>alert`) || strings.Count(page, "</script>") != strings.Count(pageSource, "</script>") {
		t.Fatal("the trace name went into the page as markup")
	}
	if !strings.Contains(page, "&lt;/title&gt;&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;") {
		t.Fatal("the title does not hold the escaped trace name")
	}
	if strings.Contains(page, "{{") {
		t.Fatal("a placeholder is left")
	}
}
