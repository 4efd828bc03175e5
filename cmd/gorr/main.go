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
		{"gdbinit", "gorr gdbinit", "print the gdb script defining rr's commands (when, checkpoint, restart, ...)", cmdGdbinit},
		{"ps", "gorr ps [TRACE]", "list the processes of a trace", cmdPs},
		{"dump", "gorr dump [--json] [-r] [TRACE] [EVENTS...]", "print the events of a trace", cmdDump},
		{"traceinfo", "gorr traceinfo [TRACE]", "print the trace header as JSON", cmdTraceinfo},
		{"ls", "gorr ls [-l]", "list saved traces", cmdLs},
		{"rm", "gorr rm TRACE...", "delete traces", cmdRm},
		{"mv", "gorr mv OLD NEW", "rename or move a trace", cmdMv},
		{"pack", "gorr pack [--self-contained] [TRACE...]", "make traces self-contained, ready to copy elsewhere", cmdPack},
		{"buildid", "gorr buildid [TRACE]", "print the build IDs of the ELF files mapped in a trace", cmdBuildid},
		{"sources", "gorr sources [TRACE]", "list the source files of the recorded binaries (JSON, as rr)", cmdSources},
		{"timeline", "gorr timeline [-o FILE] [TRACE]", "write a self-contained HTML timeline of a trace's threads and processes", cmdTimeline},
		{"export", "gorr export --format=chrome [-o FILE] [TRACE]", "write a trace as Chrome trace-event JSON (Perfetto, chrome://tracing)", cmdExport},
		{"cpufeatures", "gorr cpufeatures", "print the record options limiting CPUID features to this machine's", cmdCpufeatures},
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
			// Exactly rr's form: Delve parses "rr version X.Y.Z" and
			// nothing after it. `gorr --version` names gorr itself.
			fmt.Println("rr version 5.9.0")
		} else {
			fmt.Println("gorr version " + Version)
		}
		return
	case "-h", "--help":
		os.Exit(cmdHelp(args[1:]))
	}
	for _, c := range commands() {
		if c.name == args[0] {
			tuneGC(c.name)
			stop := startProfiles()
			code := c.run(args[1:])
			stop()
			os.Exit(code)
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
  -n, --no-syscall-buffer     record every system call through ptrace
                              (also GORR_SYSCALL_BUFFER=0)
      --syscall-buffer        make common calls (read, write, stat, ...) in
                              the tracee without a stop each, recorded
                              through an in-process buffer (the default;
                              -n wins)
  -u, --cpu-unbound           do not bind tracer and tracees to one CPU
      --bind-to-cpu N         bind to CPU N
  -h, --chaos                 chaos scheduling: random thread choices,
                              streaks and timeslices (1 ms to twice the
                              timeslice), recorded so replay is exact
  -C, --checksum              store a checksum of writable memory at every
                              system call; replay verifies it (slow)
      --portable              show the program only the CPUID features of
                              the x86-64-v3 baseline (AVX2, BMI2, FMA, ...:
                              no AVX-512), so the trace replays on any such
                              CPU (replay checks the CPU has what a trace needs)
      --always-trap           have the kernel trap rdtsc and cpuid in every
                              process (by default only in those running code
                              gorr did not scan and patch: JIT code,
                              writable or non-ELF code)
      --no-file-cache         copy every mapped file into the trace; by
                              default, for a file captured before (same
                              device, inode, size and times), the private
                              copy then made is hard-linked from gorr's
                              per-user cache, ~/.cache/gorr/files-v1
                              (also GORR_FILE_CACHE=off)
      --stats                 print, at the end, the recorder's wall time by
                              phase (waiting for stops, syscall handling,
                              exec snapshots, file capture, patching, ...)
  -w, --wait                  record until every process has exited (by
                              default, as rr, the processes still alive when
                              the initial one exits are killed)
      --timeslice DURATION    preempt a thread that runs this long without a
                              system call while another thread is ready
                              (default 10ms; a thread a signal waits for
                              is interrupted after 2ms at most)
      --until-failure         hunt a flaky failure: record again and again,
                              several recordings at once, until a run fails
                              (non-zero exit status, death by a signal, or
                              output matching --fail-if-output); keep the
                              failing traces, delete the passing ones, and
                              exit with the failing run's status (see
                              docs/flakes.md). With it:
      --max-runs N            stop after N recordings (default 100)
      --jobs J                record J at once, each bound to its own CPU
                              (default: the number of CPUs)
      --keep K                keep the first K failing traces; the hunt
                              ends when it has them (default 1)
      --fail-if-output REGEX  a run whose output matches REGEX fails too
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
trace directory. Before anything runs, replay verifies the header and every
captured file against the hashes written at record time (an error names
the file that changed), and checks that this CPU has the CPUID features
the trace needs.`,
	"gdbinit":   "Prints the gdb commands gorr's gdb gets (rr's: when, when-ticks, when-tid, when-end, elapsed-time,\ncheckpoint, delete checkpoint, info checkpoints, restart [N], seek-event N), for a gdb\nstarted by hand against 'gorr replay -s PORT': gorr gdbinit > FILE; gdb -x FILE ...",
	"ps":        "Lists PID, PPID, EXIT and CMD for every process of the trace.",
	"dump":      "Prints every event (or those numbered in EVENTS: N, N-M). --json prints one JSON object per line; -r adds registers.",
	"traceinfo": "Prints the trace header as JSON, after verifying the header and every captured\nfile against the hashes written at record time.",
	"ls": `Lists the traces in the save directory (nothing, and exit status 0,
when there are none). -l adds the size on disk, the date of recording,
the exit status of the program and its command line.`,
	"rm": `Deletes the traces named (their directories). latest-trace is removed
when it pointed at one of them, and files of the shared pack store that no
trace uses any more are deleted.`,
	"mv": `Renames the trace OLD to NEW (a bare NEW stays in OLD's directory)
and updates latest-trace when it pointed at OLD. A packed trace that links
to the shared store of its directory gets private copies first when it
leaves that directory.`,
	"pack": `Makes each trace (default: the latest) independent of the system it
was recorded on, ready for cp -a or tar to another machine of the same
kind: every captured file becomes a private read-only copy (no hard link
to files outside the trace, link count 1), identical files are stored once
(a duplicate becomes a symbolic link within the trace), and pack checks
that every file the events map is in the trace. Traces packed together
that live in the same directory store the files they have in common once,
in that directory's .gorr-files store (copy the directory, not one trace);
--self-contained keeps each trace complete on its own. The trace is
verified before and after.`,
	"buildid": `Prints "BUILDID PATH" for every ELF file mapped in the trace (the GNU
build ID, "-" when the file has none).`,
	"sources": `Prints, as rr sources does, a JSON object listing the recorded
binaries with debug information and the source files their DWARF line
tables name that exist here, grouped by version-control root.`,
	"cpufeatures": `Prints, as rr cpufeatures does, the record options that would limit
a tracee to the CPUID features of this machine (run it on the machine
you plan to replay on).`,
	"timeline": `Writes one HTML file (no network needed to view it; default
<trace>-timeline.html here, - for stdout) showing the recording on a time
axis: one lane per thread, grouped by process in the process tree; system
calls as marks, or spans when they took time (blocking ones), signals,
preemption points, clones, forks, execs and exits. Hovering shows the
event number, thread, call and result; clicking pins it, with the
'gorr replay -g N' command that starts there. Wheel zooms, dragging pans;
marks that would overlap are drawn once, so a million events stay usable.`,
	"export": `Writes the trace as Chrome trace-event JSON (to stdout, or -o FILE),
which Perfetto (ui.perfetto.dev) and chrome://tracing open: one track per
thread (named by tid) in one per process, a complete event per system
call and an instant event per signal, point, clone, fork, exec and exit,
each with its event number.`,
	"help": "Shows help.",
}

func fatalf(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "gorr: "+format+"\n", args...)
	return 1
}
