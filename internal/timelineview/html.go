package timelineview

import (
	"bufio"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

//go:embed timeline.html
var pageSource string

// The page is filled in by plain substitution of its placeholders, not
// with html/template: that package's initialization alone took 0.2-0.5
// ms of every gorr command's start (every recording), for a page whose
// only values are the trace's name (HTML-escaped), the JSON description
// (encoding/json escapes <, > and &, so it cannot close the script) and
// base64 strings.
const (
	titleHole = "{{.Title}}"
	metaHole  = "{{.Meta}}"
	colsHole  = "{{.Cols." // + column name + "}}"
)

// escapeHTML escapes s for HTML text.
func escapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// fillPage returns the page with its placeholders replaced: the title,
// the JSON description and the columns (name -> JavaScript literal).
func fillPage(title string, meta []byte, cols map[string]string) (string, error) {
	pairs := []string{titleHole, escapeHTML(title), metaHole, string(meta)}
	for name, lit := range cols {
		pairs = append(pairs, colsHole+name+"}}", lit)
	}
	out := strings.NewReplacer(pairs...).Replace(pageSource)
	if i := strings.Index(out, "{{"); i >= 0 {
		return "", fmt.Errorf("timeline page: placeholder left at byte %d", i)
	}
	return out, nil
}

// meta is the page's own description of the trace (window.gorrTimeline).
type meta struct {
	Trace      string       `json:"trace"`
	Argv       []string     `json:"argv"`
	EventCount uint64       `json:"eventCount"`
	Items      int          `json:"items"`
	Duration   uint64       `json:"duration"`
	First      uint64       `json:"first"`
	Timed      bool         `json:"timed"`
	Threads    []metaThread `json:"threads"`
	Processes  []metaProc   `json:"processes"`
	Kinds      []string     `json:"kinds"`
	Syscalls   []string     `json:"callNames"`
}

type metaThread struct {
	Tid  int32  `json:"tid"`
	Pid  int32  `json:"pid"`
	Exit string `json:"exit"`
}

type metaProc struct {
	Pid     int32  `json:"pid"`
	Ppid    int32  `json:"ppid"`
	Cmd     string `json:"cmd"`
	Threads []int  `json:"lanes"`
}

// WriteHTML writes the self-contained page: the model's description as
// JSON and its items as base64 columns of little-endian numbers, drawn
// by the page's script on a canvas (nothing is fetched).
func WriteHTML(w io.Writer, m *Model) error {
	md := meta{Trace: m.Trace, Argv: m.Argv, EventCount: m.EventCount, Items: len(m.Items), Duration: m.Duration, First: m.First, Timed: m.Timed}
	for _, t := range m.Threads {
		md.Threads = append(md.Threads, metaThread{Tid: t.Tid, Pid: t.Pid, Exit: t.Exit})
	}
	for _, p := range m.Procs {
		md.Processes = append(md.Processes, metaProc{Pid: p.Pid, Ppid: p.Ppid, Cmd: p.Cmd, Threads: p.Threads})
	}
	for k := 0; k < numKinds; k++ {
		md.Kinds = append(md.Kinds, KindName(k))
	}
	// Names of the system calls that occur, by number.
	maxCall := 0
	for i := range m.Items {
		if m.Items[i].Kind == KSyscall && m.Items[i].Call > maxCall && m.Items[i].Call < 1024 {
			maxCall = m.Items[i].Call
		}
	}
	names := make([]string, maxCall+1)
	for i := range m.Items {
		it := &m.Items[i]
		if it.Kind == KSyscall && it.Call >= 0 && it.Call <= maxCall {
			names[it.Call] = it.CallName()
		}
	}
	md.Syscalls = names
	items := append([]Item(nil), m.Items...)
	sort.SliceStable(items, func(i, j int) bool { return items[i].Start < items[j].Start })
	js, err := json.Marshal(md)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	cols := map[string]string{}
	f64 := func(get func(*Item) float64) string {
		b := make([]byte, 8*len(items))
		for i := range items {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(get(&items[i])))
		}
		return `"` + base64.StdEncoding.EncodeToString(b) + `"`
	}
	u32 := func(get func(*Item) uint32) string {
		b := make([]byte, 4*len(items))
		for i := range items {
			binary.LittleEndian.PutUint32(b[4*i:], get(&items[i]))
		}
		return `"` + base64.StdEncoding.EncodeToString(b) + `"`
	}
	cols["start"] = f64(func(it *Item) float64 { return float64(it.Start) })
	cols["end"] = f64(func(it *Item) float64 { return float64(it.End) })
	cols["result"] = f64(func(it *Item) float64 { return float64(it.Result) })
	cols["lane"] = u32(func(it *Item) uint32 { return uint32(it.Lane) })
	cols["kind"] = u32(func(it *Item) uint32 {
		k := uint32(it.Kind)
		if it.Blocking {
			k |= 0x100
		}
		return k
	})
	cols["event"] = u32(func(it *Item) uint32 { return uint32(it.Event) })
	cols["endEvent"] = u32(func(it *Item) uint32 { return uint32(it.EndEvent) })
	cols["call"] = u32(func(it *Item) uint32 { return uint32(int32(it.Call)) })
	page, err := fillPage(m.Trace, js, cols)
	if err != nil {
		return err
	}
	if _, err := bw.WriteString(page); err != nil {
		return err
	}
	return bw.Flush()
}
