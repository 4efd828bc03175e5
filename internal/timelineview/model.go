// Package timelineview turns a trace into a picture of what its threads
// and processes did and when: the model (one lane per thread, grouped by
// process, with spans for system calls and marks for signals, points,
// forks, execs and exits), a self-contained HTML page drawing it on a
// canvas (`gorr timeline`), and Chrome trace-event JSON (`gorr export
// --format=chrome`).
package timelineview

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Item kinds.
const (
	KSyscall  = 0 // a system call: a span from entry to exit
	KSignal   = 1
	KPoint    = 2 // a preemption point (SCHED)
	KFork     = 3 // a new process (NewTask without CLONE_THREAD)
	KClone    = 4 // a new thread
	KExec     = 5
	KExit     = 6
	KInsn     = 7 // an emulated rdtsc/cpuid
	numKinds  = 8
	kindNames = "syscall signal point fork clone exec exit insn"
)

// KindName names an item kind.
func KindName(k int) string { return strings.Fields(kindNames)[k] }

// Item is one mark or span of a lane.
type Item struct {
	Start, End uint64 // nanoseconds since the recording started
	Lane       int    // index in Model.Threads
	Kind       int
	Event      uint64 // the event number (gorr dump, gorr replay -g)
	EndEvent   uint64 // the exit event of a system call (0: none)
	Call       int    // system call number, signal number, or new tid
	Result     int64
	// Blocking is true for a system call that may block (a span
	// rather than a mark in the picture).
	Blocking bool
}

// Thread is one lane.
type Thread struct {
	Tid, Pid   int32
	Start, End uint64
	Exit       string // "exit 0", "signal 9", "" while alive at the end
}

// Process groups threads.
type Process struct {
	Pid, Ppid int32 // Ppid -1: the first process
	Cmd       string
	Threads   []int // lanes
}

// Model is a trace, ready to draw.
type Model struct {
	Trace      string
	Argv       []string
	EventCount uint64
	Duration   uint64
	// First is the time of the first event.
	First   uint64
	Threads []Thread
	Procs   []Process
	Items   []Item
	// Timed is false for traces without event times: item times are
	// then event numbers.
	Timed bool
}

// Build reads every event of rd.
func Build(rd *trace.Reader, name string) (*Model, error) {
	h := rd.Header()
	m := &Model{Trace: name, Argv: h.Argv}
	lane := map[int32]int{}
	proc := map[int32]int{} // pid -> index in Procs
	tgid := map[int32]int32{}
	open := map[int32]int{} // tid -> index of its open syscall item
	var last uint64
	laneOf := func(tid int32, t uint64) int {
		if l, ok := lane[tid]; ok {
			return l
		}
		pid, ok := tgid[tid]
		if !ok {
			pid = tid
			tgid[tid] = tid
		}
		pi, ok := proc[pid]
		if !ok {
			pi = len(m.Procs)
			m.Procs = append(m.Procs, Process{Pid: pid, Ppid: -1})
			proc[pid] = pi
		}
		l := len(m.Threads)
		m.Threads = append(m.Threads, Thread{Tid: tid, Pid: pid, Start: t, End: t})
		m.Procs[pi].Threads = append(m.Procs[pi].Threads, l)
		lane[tid] = l
		return l
	}
	for n := uint64(1); ; n++ {
		ev, err := rd.Next()
		if err == io.EOF || err != nil && err.Error() == "EOF" {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", n, err)
		}
		m.EventCount = n
		t := ev.Time
		if t != 0 {
			m.Timed = true
		}
		if t < last {
			t = last
		}
		last = t
		l := laneOf(ev.Tid, t)
		if m.Threads[l].End < t {
			m.Threads[l].End = t
		}
		add := func(it Item) {
			it.Lane, it.Event = l, n
			if it.End < it.Start {
				it.End = it.Start
			}
			m.Items = append(m.Items, it)
		}
		switch ev.Kind {
		case trace.KindSyscallEntry:
			sc := linux.Lookup(linux.Nr(uint64(ev.Sysno)))
			open[ev.Tid] = len(m.Items)
			add(Item{Start: t, End: t, Kind: KSyscall, Call: int(ev.Sysno), Blocking: sc == nil || sc.MayBlock})
		case trace.KindSyscallExit:
			if i, ok := open[ev.Tid]; ok && m.Items[i].Call == int(ev.Sysno) {
				m.Items[i].End, m.Items[i].EndEvent, m.Items[i].Result = t, n, ev.Result
				delete(open, ev.Tid)
			} else {
				add(Item{Start: t, End: t, Kind: KSyscall, Call: int(ev.Sysno), Result: ev.Result, EndEvent: n})
			}
		case trace.KindSignal:
			add(Item{Start: t, Kind: KSignal, Call: int(ev.Signo), Result: int64(ev.Flags)})
		case trace.KindSched:
			add(Item{Start: t, Kind: KPoint})
		case trace.KindInstruction:
			add(Item{Start: t, Kind: KInsn})
		case trace.KindNewTask:
			k := KClone
			if ev.Flags&unix.CLONE_THREAD != 0 {
				tgid[ev.NewTid] = tgid[ev.Tid]
			} else {
				k = KFork
				tgid[ev.NewTid] = ev.NewTid
				parent := m.Procs[proc[tgid[ev.Tid]]]
				proc[ev.NewTid] = len(m.Procs)
				m.Procs = append(m.Procs, Process{Pid: ev.NewTid, Ppid: parent.Pid, Cmd: parent.Cmd})
			}
			add(Item{Start: t, Kind: k, Call: int(ev.NewTid)})
		case trace.KindExec:
			_, cmd, _ := strings.Cut(ev.Text, "\x00\x00")
			cmd = strings.ReplaceAll(strings.TrimRight(cmd, "\x00"), "\x00", " ")
			pi := proc[tgid[ev.Tid]]
			m.Procs[pi].Cmd = cmd
			if ev.NewTid != 0 && ev.NewTid != ev.Tid {
				// A non-leader thread exec'd: it takes the leader's tid.
				lane[ev.NewTid] = l
				m.Threads[l].Tid = ev.NewTid
			}
			add(Item{Start: t, Kind: KExec})
		case trace.KindExit:
			if i, ok := open[ev.Tid]; ok {
				m.Items[i].End = t // exit, exit_group or a call the death cut short
				delete(open, ev.Tid)
			}
			ws := unix.WaitStatus(ev.Result)
			if ws.Signaled() {
				m.Threads[l].Exit = fmt.Sprintf("signal %d", ws.Signal())
			} else {
				m.Threads[l].Exit = fmt.Sprintf("exit %d", ws.ExitStatus())
			}
			add(Item{Start: t, Kind: KExit, Result: ev.Result})
		}
	}
	for _, i := range open {
		m.Items[i].End = last // still inside at the end
	}
	if !m.Timed {
		// No event times (an older trace): the axis counts events.
		for i := range m.Items {
			it := &m.Items[i]
			it.Start, it.End = it.Event, max(it.EndEvent, it.Event)
		}
		for i := range m.Threads {
			m.Threads[i].Start, m.Threads[i].End = 0, m.EventCount
		}
		last = m.EventCount
	}
	m.Duration = last
	if len(m.Items) > 0 {
		m.First = m.Items[0].Start
	}
	return m, nil
}

// CallName names an item's call for display.
func (it *Item) CallName() string {
	switch it.Kind {
	case KSyscall:
		return linux.Name(it.Call)
	case KSignal:
		return unix.SignalName(unix.Signal(it.Call))
	case KFork, KClone:
		return fmt.Sprintf("%s %d", KindName(it.Kind), it.Call)
	}
	return KindName(it.Kind)
}
