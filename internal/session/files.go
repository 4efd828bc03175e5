package session

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// The files a debugger may ask for (gdb's host I/O, vFile): the files
// the recording captured (executables, libraries), by the path the
// recorded program saw, and the debugged process's /proc/PID/maps as the
// recording had it.

// mapEvents remembers the mappings events of the debugged process made,
// by event number, across runs (a run from a snapshot does not see the
// events before it). Only the replay goroutine touches it.
type mapEvents struct {
	at    map[uint64]mapEvent
	files map[string]string // path the program saw -> captured copy (relative to the trace)
}

type mapEvent struct {
	exec bool // the mappings replace the address space
	maps []trace.Mapping
}

func newMapEvents() *mapEvents {
	return &mapEvents{at: map[uint64]mapEvent{}, files: map[string]string{}}
}

// noteMaps is called at the boundary after each event.
func (d *driver) noteMaps(ev *trace.Event) {
	me := d.maps
	if me == nil || len(ev.Maps) == 0 {
		return
	}
	for _, m := range ev.Maps {
		if m.File != "" && m.Name != "" {
			me.files[m.Name] = m.File
		}
	}
	if !d.started {
		return
	}
	tid := ev.Tid
	if ev.Kind == trace.KindExec {
		tid = ev.NewTid
	}
	if t := d.e.Task(tid); t == nil || t.Proc() != d.debugProc() {
		return
	}
	me.at[d.e.Event()] = mapEvent{exec: ev.Kind == trace.KindExec, maps: ev.Maps}
}

// recordedMaps returns the mappings the recording made in the debugged
// process up to event n, the latest first.
func (me *mapEvents) recordedMaps(n uint64) []trace.Mapping {
	var evs []uint64
	for e := range me.at {
		if e <= n {
			evs = append(evs, e)
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i] > evs[j] })
	var out []trace.Mapping
	for _, e := range evs {
		me := me.at[e]
		for i := len(me.maps) - 1; i >= 0; i-- {
			out = append(out, me.maps[i])
		}
		if me.exec {
			break
		}
	}
	return out
}

// CapturedFile returns the path of the trace's copy of a file the
// recorded program mapped (an executable, a library), by the path the
// program saw it at.
func (s *Session) CapturedFile(path string) (string, bool) {
	var rel string
	_ = s.do(func() {
		if s.cur.d.dbgExeName == path && s.cur.d.dbgExe != "" {
			rel = s.cur.d.dbgExe
			return
		}
		if f := s.mapEv.files[path]; f != "" {
			rel = s.opts.Reader.Path(f)
		}
	})
	return rel, rel != ""
}

// ProcMaps returns the debugged process's /proc/PID/maps at the current
// position: the address ranges and protections of the replayed process
// (which are the recorded ones), named as the recording named them.
func (s *Session) ProcMaps() ([]byte, error) {
	var out []byte
	err := fmt.Errorf("no process")
	_ = s.do(func() {
		t := s.cur.d.debugTask()
		if t == nil {
			return
		}
		var real []byte
		if real, err = os.ReadFile(fmt.Sprintf("/proc/%d/maps", t.Real())); err != nil {
			return
		}
		out = renameMaps(real, s.mapEv.recordedMaps(s.cur.d.e.Event()))
	})
	return out, err
}

// renameMaps gives the lines of a maps file the names (and file offsets)
// of the recorded mappings that cover them.
func renameMaps(real []byte, rec []trace.Mapping) []byte {
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(real))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		name := ""
		if len(f) > 5 {
			name = strings.Join(f[5:], " ")
		}
		off, dev, ino := f[2], "00:00", "0"
		for _, m := range rec {
			if m.Start <= start && start < m.End {
				if m.Name != "" {
					name = m.Name
				}
				if m.File != "" {
					off = fmt.Sprintf("%08x", m.Offset+(start-m.Start))
					dev, ino = "00:00", "1"
				}
				break
			}
		}
		if strings.HasPrefix(name, "/") && ino == "0" {
			// A file the replay mapped itself (the preload stub): not the program's.
			name = ""
		}
		fmt.Fprintf(&b, "%08x-%08x %s %s %s %s", start, end, f[1], off, dev, ino)
		if name != "" {
			b.WriteString("    " + name)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}
