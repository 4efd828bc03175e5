package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/asyncpoint"
	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracedir"
)

func openTrace(args []string) (*trace.Reader, []string, int) {
	name := ""
	if len(args) > 0 && !isEventSpec(args[0]) {
		name, args = args[0], args[1:]
	}
	dir, err := tracedir.Resolve(name)
	if err != nil {
		return nil, nil, fatalf("%v", err)
	}
	rd, err := trace.Open(dir)
	if err != nil {
		return nil, nil, fatalf("%v", err)
	}
	return rd, args, 0
}

func isEventSpec(s string) bool {
	if s == "end" {
		return true
	}
	a, b, _ := strings.Cut(s, "-")
	_, err1 := strconv.ParseUint(a, 10, 64)
	_, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && (b == "" || err2 == nil)
}

func cmdTraceinfo(args []string) int {
	rd, _, rc := openTrace(args)
	if rd == nil {
		return rc
	}
	defer rd.Close()
	if err := rd.VerifyFiles(); err != nil {
		return fatalf("traceinfo: %v", err)
	}
	b, _ := json.MarshalIndent(rd.Header(), "", "  ")
	fmt.Println(string(b))
	return 0
}

type procInfo struct {
	pid, ppid int32
	exit      string
	cmd       string
}

func cmdPs(args []string) int {
	rd, _, rc := openTrace(args)
	if rd == nil {
		return rc
	}
	defer rd.Close()
	tgid := map[int32]int32{} // tid -> process id
	var procs []*procInfo
	byPid := map[int32]*procInfo{}
	first := true
	err := eachEvent(rd, func(n uint64, ev *trace.Event) {
		switch ev.Kind {
		case trace.KindExec:
			pid := ev.NewTid
			if first {
				first = false
				tgid[pid] = pid
				p := &procInfo{pid: pid, ppid: -1, exit: "-"}
				procs = append(procs, p)
				byPid[pid] = p
			}
			if p := byPid[tgid[ev.Tid]]; p != nil {
				_, cmd, _ := strings.Cut(ev.Text, "\x00\x00")
				p.cmd = strings.ReplaceAll(cmd, "\x00", " ")
				if p.pid != pid {
					delete(byPid, p.pid)
					p.pid = pid
					byPid[pid] = p
				}
			}
			tgid[pid] = pid
		case trace.KindNewTask:
			if ev.Flags&unix.CLONE_THREAD != 0 {
				tgid[ev.NewTid] = tgid[ev.Tid]
				return
			}
			tgid[ev.NewTid] = ev.NewTid
			parent := byPid[tgid[ev.Tid]]
			p := &procInfo{pid: ev.NewTid, ppid: tgid[ev.Tid], exit: "-"}
			if parent != nil {
				p.cmd = parent.cmd
			}
			procs = append(procs, p)
			byPid[ev.NewTid] = p
		case trace.KindExit:
			if p := byPid[ev.Tid]; p != nil {
				ws := unix.WaitStatus(ev.Result)
				if ws.Signaled() {
					p.exit = strconv.Itoa(-int(ws.Signal()))
				} else {
					p.exit = strconv.Itoa(ws.ExitStatus())
				}
			}
		}
	})
	fmt.Println("PID\tPPID\tEXIT\tCMD")
	for _, p := range procs {
		ppid := "--"
		if p.ppid >= 0 {
			ppid = strconv.Itoa(int(p.ppid))
		}
		fmt.Printf("%d\t%s\t%s\t%s\n", p.pid, ppid, p.exit, p.cmd)
	}
	if err != nil {
		return fatalf("%v", err)
	}
	return 0
}

func eachEvent(rd *trace.Reader, fn func(uint64, *trace.Event)) error {
	for n := uint64(1); ; n++ {
		ev, err := rd.Next()
		if err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return err
		}
		fn(n, ev)
	}
}

var kindNames = map[trace.Kind]string{
	trace.KindSyscallEntry: "SYSCALL_ENTRY", trace.KindSyscallExit: "SYSCALL_EXIT", trace.KindSignal: "SIGNAL",
	trace.KindExec: "EXEC", trace.KindNewTask: "NEW_TASK", trace.KindExit: "EXIT", trace.KindInstruction: "INSTRUCTION",
	trace.KindMmap: "MMAP", trace.KindSched: "SCHED", trace.KindPtraceWrite: "PTRACE_WRITE",
}

func cmdDump(args []string) int {
	asJSON, regs := false, false
	var rest []string
	for _, a := range args {
		switch a {
		case "--json":
			asJSON = true
		case "-r", "--regs":
			regs = true
		default:
			rest = append(rest, a)
		}
	}
	rd, specs, rc := openTrace(rest)
	if rd == nil {
		return rc
	}
	defer rd.Close()
	want := func(n uint64) bool {
		if len(specs) == 0 {
			return true
		}
		for _, s := range specs {
			a, b, isRange := strings.Cut(s, "-")
			lo, _ := strconv.ParseUint(a, 10, 64)
			hi := lo
			if isRange {
				hi, _ = strconv.ParseUint(b, 10, 64)
			}
			if n >= lo && n <= hi {
				return true
			}
		}
		return false
	}
	enc := json.NewEncoder(os.Stdout)
	err := eachEvent(rd, func(n uint64, ev *trace.Event) {
		if !want(n) {
			return
		}
		m := map[string]any{"event": n, "tid": ev.Tid, "kind": kindNames[ev.Kind]}
		switch ev.Kind {
		case trace.KindSyscallEntry, trace.KindSyscallExit:
			m["syscall"] = linux.Name(int(ev.Sysno))
			if ev.Kind == trace.KindSyscallExit {
				m["result"] = ev.Result
				if ev.Result < 0 && ev.Result > -4096 {
					m["errno"] = linux.ErrnoName(int(-ev.Result))
				}
				if ev.Flags&trace.TrapsAfter != 0 {
					m["traps_after"] = true // the process traps rdtsc/cpuid from here on
				}
			}
		case trace.KindSignal:
			m["signal"] = linux.SignalName(int(ev.Signo))
		case trace.KindNewTask:
			m["new_tid"] = ev.NewTid
			m["flags"] = fmt.Sprintf("0x%x", ev.Flags)
		case trace.KindExec:
			m["new_tid"] = ev.NewTid
			exe, cmd, _ := strings.Cut(ev.Text, "\x00\x00")
			m["exe"], m["cmd"] = exe, strings.ReplaceAll(cmd, "\x00", " ")
			m["mappings"] = len(ev.Maps)
			m["trapped"] = ev.Flags&trace.ExecUntrapped == 0 // rdtsc/cpuid trapped by the kernel
		case trace.KindExit:
			m["status"] = fmt.Sprintf("0x%x", ev.Result)
		case trace.KindSched:
			if ev.Regs != nil {
				m["rip"] = fmt.Sprintf("0x%x", ev.Regs[ptrace.RIP])
			}
			m["site_len"] = ev.Flags & 0xff
			if h := asyncpoint.HintFromFlags(ev.Flags); h > 0 {
				m["hint_reg"] = h - 1
			}
			words, pages := 0, 0
			for _, w := range ev.Mem {
				switch len(w.Data) {
				case 8:
					words++
				case 4096:
					pages++
				}
			}
			m["words"], m["pages"] = words, pages
		}
		if ev.Checksum != 0 {
			m["checksum"] = fmt.Sprintf("0x%x", ev.Checksum)
		}
		if ev.StackSum != 0 {
			m["stack_sum"] = fmt.Sprintf("0x%x", ev.StackSum)
		}
		if len(ev.Skip) > 0 {
			// The bytes the checksum leaves out, as address+length.
			spans := make([]string, len(ev.Skip))
			for i, sp := range ev.Skip {
				spans[i] = fmt.Sprintf("0x%x+0x%x", sp.Addr, sp.Len)
			}
			m["skip"] = spans
		}
		if len(ev.Mem) > 0 {
			total := 0
			for _, w := range ev.Mem {
				total += len(w.Data)
			}
			m["mem_bytes"] = total
		}
		if regs && ev.Regs != nil {
			rm := map[string]string{}
			for i, v := range ev.Regs {
				rm[ptrace.RegNames[i]] = fmt.Sprintf("0x%x", v)
			}
			m["regs"] = rm
		}
		if asJSON {
			_ = enc.Encode(m)
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			if k != "event" && k != "tid" && k != "kind" && k != "regs" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		fmt.Printf("{event %d tid %d %s", n, ev.Tid, m["kind"])
		for _, k := range keys {
			fmt.Printf(" %s=%v", k, m[k])
		}
		fmt.Println("}")
		if regs && ev.Regs != nil {
			for i, v := range ev.Regs {
				fmt.Printf("  %s=0x%x", ptrace.RegNames[i], v)
				if i%6 == 5 {
					fmt.Println()
				}
			}
			fmt.Println()
		}
	})
	if err != nil {
		return fatalf("%v", err)
	}
	return 0
}
