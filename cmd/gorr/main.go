// Command gorr records and replays Linux x86-64 programs.
package main

import (
	"fmt"
	"github.com/gorr-debugger/gorr/internal/record"
	"os"
	"path/filepath"
)

// Version is gorr's version.
const Version = "0.1.0"

type command struct {
	name, usage, summary string
	run                  func(args []string) int
}

func commands() []command {
	return []command{
		{"record", "gorr record [OPTIONS] PROG [ARGS...]", "record PROG and its descendants into a new trace", cmdRecord},
		{"replay", "gorr replay [OPTIONS] [TRACE] [-- GDB ARGS]", "replay a trace in gdb (-a: without a debugger)", cmdReplay},
		{"ps", "gorr ps [TRACE]", "list the processes of a trace", cmdPs},
		{"dump", "gorr dump [--json] [-r] [TRACE] [EVENTS...]", "print the events of a trace", cmdDump},
		{"traceinfo", "gorr traceinfo [TRACE]", "print the trace header as JSON", cmdTraceinfo},
		{"ls", "gorr ls", "list saved traces", cmdLs},
		{"rm", "gorr rm TRACE", "delete a trace", cmdRm},
		{"help", "gorr help [COMMAND]", "show help", cmdHelp},
	}
}

func main() {
	if os.Getenv(record.GroupHolderEnv) != "" {
		record.HoldGroup() // never returns
	}
	// Invoked as rr (a symlink), behave as rr's command line.
	args := os.Args[1:]
	if len(args) == 0 {
		cmdHelp(nil)
		os.Exit(1)
	}
	switch args[0] {
	case "--version", "-V", "version":
		if filepath.Base(os.Args[0]) == "rr" {
			fmt.Println("rr version 5.9.0 (gorr " + Version + ")")
		} else {
			fmt.Println("gorr version " + Version)
		}
		return
	case "-h", "--help":
		os.Exit(cmdHelp(args[1:]))
	}
	for _, c := range commands() {
		if c.name == args[0] {
			os.Exit(c.run(args[1:]))
		}
	}
	fmt.Fprintf(os.Stderr, "gorr: unknown command %q (see 'gorr help')\n", args[0])
	os.Exit(2)
}

func cmdHelp(args []string) int {
	if len(args) > 0 {
		for _, c := range commands() {
			if c.name == args[0] {
				fmt.Printf("usage: %s\n\n%s\n", c.usage, helpText[c.name])
				return 0
			}
		}
		fmt.Fprintf(os.Stderr, "gorr: no command %q\n", args[0])
		return 2
	}
	fmt.Println("gorr: record and replay Linux x86-64 programs, no hardware counters needed\n\nusage: gorr COMMAND [ARGS]\n\ncommands:")
	for _, c := range commands() {
		fmt.Printf("  %-10s %s\n", c.name, c.summary)
	}
	fmt.Println("\n'gorr help COMMAND' describes a command's options. 'gorr --version' prints the version.")
	return 0
}

var helpText = map[string]string{
	"record": `Options:
  -o, --output-trace-dir DIR  save the trace in DIR (no latest-trace link)
  -p, --print-trace-dir FD    write the trace directory and a newline to FD
  -v, --env NAME=VALUE        set an environment variable for the tracee
  -n, --no-syscall-buffer     accepted for rr compatibility (no effect)
  -u, --cpu-unbound           do not bind tracer and tracees to one CPU
      --bind-to-cpu N         bind to CPU N
  -h, --chaos                 chaos scheduling: random thread choices,
                              streaks and timeslices (1 ms to twice the
                              timeslice), recorded so replay is exact
  -C, --checksum              store a checksum of writable memory at every
                              system call; replay verifies it (slow)
  -w, --wait                  record until every process has exited (by
                              default, as rr, the processes still alive when
                              the initial one exits are killed)
      --timeslice DURATION    preempt a thread that runs this long without a
                              system call while another thread is ready
                              (default 10ms; a thread a signal waits for
                              is interrupted after 2ms at most)
The trace goes to $GORR_TRACE_DIR, else $XDG_DATA_HOME/gorr, else
~/.local/share/gorr, as <program>-N. gorr exits with the program's status.`,
	"replay": `Without -a, gorr serves the replay to gdb and runs gdb on it
(arguments after -- go to gdb). Options:
  -a, --autopilot   replay without a debugger, reproducing the recorded
                    stdout and stderr, and exit with the recorded status
  -s, --dbgport P   only serve on 127.0.0.1:P (0: any free port) and print
                    rr's "Launch debugger with" lines
  -d, --debugger F  the gdb to run
  -g, --goto N      start debugging after event N (see 'gorr dump')
  -e, --goto-exit   start debugging just before the program exits
  -p, --onprocess P debug the process that exec'd with pid P or command P
  -f, --onfork P    debug the process forked with pid P
  -x FILE           a gdb script to run at start
  -q                do not reproduce the recorded output
  -u, --cpu-unbound do not bind to one CPU
TRACE defaults to the latest trace; a bare name is looked up in the
trace directory.`,
	"ps":        "Lists PID, PPID, EXIT and CMD for every process of the trace.",
	"dump":      "Prints every event (or those numbered in EVENTS: N, N-M). --json prints one JSON object per line; -r adds registers.",
	"traceinfo": "Prints the trace header as JSON.",
	"ls":        "Lists the traces in the save directory.",
	"rm":        "Deletes a trace directory.",
	"help":      "Shows help.",
}

func fatalf(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "gorr: "+format+"\n", args...)
	return 1
}
