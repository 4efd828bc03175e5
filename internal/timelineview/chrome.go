package timelineview

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// WriteChrome writes the model as Chrome trace-event JSON (the format
// Perfetto and chrome://tracing open): a process_name and thread_name
// metadata event per process and thread (one track each), a complete
// event ("X") per system call and an instant event ("i") per other mark.
// Times are in microseconds.
func WriteChrome(w io.Writer, m *Model) error {
	bw := bufio.NewWriter(w)
	first := true
	emit := func(v map[string]any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		_, err = bw.Write(b)
		return err
	}
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":{"producer":"gorr","events":` + fmt.Sprint(m.EventCount) + `},"traceEvents":[` + "\n")
	for _, p := range m.Procs {
		name := p.Cmd
		if name == "" {
			name = fmt.Sprintf("process %d", p.Pid)
		}
		if err := emit(map[string]any{"ph": "M", "name": "process_name", "pid": p.Pid, "tid": p.Pid, "args": map[string]any{"name": fmt.Sprintf("%s (pid %d)", name, p.Pid)}}); err != nil {
			return err
		}
	}
	for _, t := range m.Threads {
		if err := emit(map[string]any{"ph": "M", "name": "thread_name", "pid": t.Pid, "tid": t.Tid, "args": map[string]any{"name": fmt.Sprintf("tid %d", t.Tid)}}); err != nil {
			return err
		}
	}
	us := func(ns uint64) float64 { return float64(ns) / 1000 }
	if !m.Timed {
		us = func(n uint64) float64 { return float64(n) }
	}
	for i := range m.Items {
		it := &m.Items[i]
		th := m.Threads[it.Lane]
		args := map[string]any{"event": it.Event, "replay": fmt.Sprintf("gorr replay -g %d", it.Event)}
		ev := map[string]any{"name": it.CallName(), "cat": KindName(it.Kind), "pid": th.Pid, "tid": th.Tid, "ts": us(it.Start), "args": args}
		if it.Kind == KSyscall {
			ev["ph"] = "X"
			ev["dur"] = us(it.End) - us(it.Start)
			args["result"] = it.Result
			if it.EndEvent != 0 {
				args["exit_event"] = it.EndEvent
			}
		} else {
			ev["ph"] = "i"
			ev["s"] = "t"
		}
		if err := emit(ev); err != nil {
			return err
		}
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}
