package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/patch"
	"github.com/gorr-debugger/gorr/internal/record"
	"github.com/gorr-debugger/gorr/internal/syscallbuf"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracedir"
)

var recordFlags = []flagSpec{
	{"o", "output-trace-dir", true},
	{"p", "print-trace-dir", true},
	{"v", "env", true},
	{"n", "no-syscall-buffer", false},
	{"", "syscall-buffer", false},
	{"u", "cpu-unbound", false},
	{"", "bind-to-cpu", true},
	{"", "verbose", false},
	{"", "timeslice", true},
	{"", "watchdog", true}, // the name before preemption existed
	{"h", "chaos", false},
	{"C", "checksum", false},
	{"", "portable", false},
	{"", "always-trap", false},
	{"w", "wait", false},
	{"", "until-failure", false},
	{"", "max-runs", true},
	{"", "jobs", true},
	{"", "keep", true},
	{"", "fail-if-output", true},
	{"", "stats", false},
	{"", "no-file-cache", false},
}

func cmdRecord(args []string) int {
	begin := time.Now()
	p, err := parseFlags(args, recordFlags)
	if err != nil {
		return fatalf("record: %v (see 'gorr help record')", err)
	}
	if len(p.rest) == 0 {
		return fatalf("record: no program given (usage: gorr record [OPTIONS] PROG [ARGS...])")
	}
	prog := p.rest[0]
	path, err := exec.LookPath(prog)
	if err != nil {
		return fatalf("record: cannot run %s: %v", prog, errors.Unwrap(err))
	}
	if p.has("until-failure") {
		return cmdHunt(p, path)
	}
	for _, name := range huntOnly {
		if p.has(name) {
			return fatalf("record: --%s needs --until-failure", name)
		}
	}
	env := os.Environ()
	for _, kv := range p.vals["env"] {
		if !strings.Contains(kv, "=") {
			return fatalf("record: --env wants NAME=VALUE, got %q", kv)
		}
		env = setEnv(env, kv)
	}
	cpu := chooseCPU()
	if p.has("cpu-unbound") {
		cpu = -1
	}
	if v := p.get("bind-to-cpu"); v != "" && v != "any" {
		if cpu, err = strconv.Atoi(v); err != nil {
			return fatalf("record: --bind-to-cpu wants a number, got %q", v)
		}
	}
	printFD := -1
	if fd := p.get("print-trace-dir"); fd != "" {
		if printFD, err = strconv.Atoi(fd); err != nil {
			return fatalf("record: --print-trace-dir wants a file descriptor, got %q", fd)
		}
	}
	// The trace is created on a goroutine while the program starts (its
	// directory, header, compressor and caches took 3-5 ms before the
	// program's exec, on the CPU the recording then runs on); the
	// recorder takes it once the program has stopped at its exec.
	tp := traceParams{path: path, dir: p.get("output-trace-dir"), argv: p.rest, env: env, cpu: cpu,
		portable: p.has("portable"), fileCache: !p.has("no-file-cache"), printFD: printFD}
	made := make(chan createdTrace, 1)
	go func() { made <- createTrace(tp) }()
	var created *createdTrace
	openTrace := func() (*trace.Writer, error) {
		if created == nil {
			c := <-made
			created = &c
		}
		return created.w, created.err
	}
	var log *os.File
	if p.has("verbose") {
		log = os.Stderr
	}
	opts := record.Options{Argv: p.rest, Env: env, OpenWriter: openTrace, BindCPU: cpu, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Warn: os.Stderr}
	opts.Checksum = p.has("checksum")
	opts.Portable = p.has("portable")
	opts.AlwaysTrap = p.has("always-trap")
	opts.WaitAll = p.has("wait")
	// The buffer is on by default; -n (or GORR_SYSCALL_BUFFER=0, unless
	// --syscall-buffer is given) turns it off, and -n wins.
	opts.SyscallBuffer = (p.has("syscall-buffer") || os.Getenv("GORR_SYSCALL_BUFFER") != "0") && !p.has("no-syscall-buffer")
	opts.SiteCache = patch.DefaultCacheDir()
	if p.has("chaos") {
		opts.Chaos, opts.ChaosSeed = true, rand.Uint64()
	}
	for _, name := range []string{"watchdog", "timeslice"} {
		if v := p.get(name); v != "" {
			if opts.Timeslice, err = time.ParseDuration(v); err != nil || opts.Timeslice <= 0 {
				return fatalf("record: --%s wants a duration such as 10ms, got %q", name, v)
			}
		}
	}
	if log != nil {
		opts.Log = log
	}
	setup := time.Since(begin)
	res, err := record.Record(opts)
	recorded := time.Since(begin) - setup
	w, werr := openTrace()
	if werr != nil {
		if err == nil || errors.Is(err, werr) {
			return fatalf("record: %v", werr)
		}
		return fatalf("record: %v", err)
	}
	if err != nil {
		return fatalf("record: %v\ngorr: the trace in %s is incomplete", err, created.abs)
	}
	hdr := w.Header()
	hdr.ExitStatus = int(res.Status)
	hdr.CPUIDFaulting = res.CPUIDFaulting
	hdr.SyscallBuffer = opts.SyscallBuffer
	hdr.SharedFiles, hdr.SharedFilesListed = res.SharedFiles, true
	if opts.SyscallBuffer {
		hdr.SyscallBufferLayout = syscallbuf.Layout
	}
	// The verification-cache markers are written while Close fsyncs.
	marked := w.MarkCaptured(trace.DefaultVerifyCacheDir())
	err = w.Close(hdr)
	marked()
	if err != nil {
		return fatalf("record: finish trace: %v", err)
	}
	if p.has("stats") {
		fmt.Fprintf(os.Stderr, "gorr: %d events; set-up %.1f ms, recording %.1f ms, closing the trace %.1f ms\n",
			res.Events, ms(setup), ms(recorded), ms(time.Since(begin)-setup-recorded))
		fmt.Fprintf(os.Stderr, "gorr: %d preemption points (%d searches ran to the sites they had seen, %d arrived), %d timeslices ended at a call the syscall buffer traced when asked\n", res.Points, res.SiteRuns, res.SiteHits, res.Yields)
		fmt.Fprintf(os.Stderr, "gorr: %d processes exec'd, %d trapped rdtsc/cpuid by kernel from exec, %d from a later call (uncovered code)\n", res.Processes, res.TrappedAtExec, res.TrappedLater)
		record.PrintStats(os.Stderr, res.Stats)
		record.PrintCalls(os.Stderr, res.Calls, 25)
	}
	return exitLike(res.Status)
}

// traceParams are what the trace of a recording is created from.
type traceParams struct {
	path      string // the program, resolved through PATH
	dir       string // --output-trace-dir ("": a new directory in the save directory)
	argv, env []string
	cpu       int
	portable  bool
	fileCache bool
	printFD   int // --print-trace-dir (-1: none)
}

// createdTrace is a trace created for a recording, or why it was not.
type createdTrace struct {
	w   *trace.Writer
	abs string // its directory, absolute
	err error
}

// createTrace creates the trace of a recording: its directory (and the
// latest-trace link when it is in the save directory), header and
// writer; it tells where the trace is saved as rr does.
func createTrace(tp traceParams) createdTrace {
	dir := tp.dir
	latest := dir == ""
	if latest {
		var err error
		if dir, err = tracedir.New(tp.path); err != nil {
			return createdTrace{err: err}
		}
		if warn, _ := tracedir.CheckRoot(tracedir.SaveDir()); warn != "" {
			fmt.Fprintf(os.Stderr, "gorr: warning: %s\n", warn)
		}
	}
	cwd, _ := os.Getwd()
	var un unix.Utsname
	_ = unix.Uname(&un)
	hdr := trace.Header{GorrVersion: Version, Created: time.Now(), Argv: tp.argv, Env: tp.env, Cwd: cwd, Exe: tp.path,
		Uname: trace.Uname{Sysname: cstr(un.Sysname[:]), Release: cstr(un.Release[:]), Version: cstr(un.Version[:]),
			Machine: cstr(un.Machine[:]), Nodename: cstr(un.Nodename[:])},
		CPUModel: cpuModel(), BindCPU: tp.cpu}
	hdr.CPUFeatures, hdr.CPUIDBaseline = recordedFeatures(tp.portable)
	w, err := trace.Create(dir, hdr)
	if err != nil {
		return createdTrace{err: err}
	}
	if tp.fileCache {
		w.UseFileCache(trace.DefaultFileCacheDir())
	}
	abs, _ := filepath.Abs(dir)
	fmt.Fprintf(os.Stderr, "gorr: Saving execution to trace directory '%s'.\n", abs)
	if tp.printFD >= 0 {
		f := os.NewFile(uintptr(tp.printFD), "print-trace-dir")
		if _, err := fmt.Fprintln(f, abs); err != nil {
			return createdTrace{w: w, abs: abs, err: fmt.Errorf("write trace directory to fd %d: %w", tp.printFD, err)}
		}
		f.Close()
	}
	if latest {
		if err := tracedir.SetLatest(abs); err != nil {
			fmt.Fprintf(os.Stderr, "gorr: warning: the trace is recorded, but %v\n", err)
		}
	}
	return createdTrace{w: w, abs: abs}
}

// exitLike exits (or dies) the way the recorded process did.
func exitLike(ws unix.WaitStatus) int {
	if ws.Signaled() {
		sig := ws.Signal()
		signalSelf(sig)
		return 128 + int(sig)
	}
	return ws.ExitStatus()
}

func signalSelf(sig syscall.Signal) {
	// Restore the default action and re-raise, so our parent sees the
	// same death; core dumps are not produced by gorr itself.
	var lim unix.Rlimit
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &lim)
	signalReset(sig)
	_ = unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
	time.Sleep(100 * time.Millisecond)
}

func setEnv(env []string, kv string) []string {
	name := kv[:strings.IndexByte(kv, '=')+1]
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name) {
			out = append(out, e)
		}
	}
	return append(out, kv)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// replayCPU is the CPU replay binds to: the recorded one when this
// process may run there (what the program read about its CPU, through
// getcpu's vDSO data, rdtscp's TSC_AUX or the limit of the per-CPU GDT
// segment that `lsl` reads, is then the same), another one otherwise.
func replayCPU(recorded int) int {
	var set unix.CPUSet
	if recorded >= 0 && unix.SchedGetaffinity(0, &set) == nil && set.IsSet(recorded) {
		return recorded
	}
	return chooseCPU()
}

// chooseCPU picks the CPU to bind the tracer and its tracees to: the one
// gorr runs on now, where the scheduler put it (concurrent recordings
// spread over the machine as the processes do), else one of those it may
// run on at random. Binding to a CPU another of gorr's threads was
// running on (the trace writer's compressor starts first) made the two
// share it until the scheduler moved one away, a tick or more: 4-5 ms
// of the start of 3 recordings in 4 of python.
func chooseCPU() int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return 0
	}
	var cur uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cur)), 0, 0); e == 0 && set.IsSet(int(cur)) {
		return int(cur)
	}
	var cpus []int
	for i := 0; i < runtime.NumCPU()*4 && i < 1024; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) == 0 {
		return 0
	}
	return cpus[rand.IntN(len(cpus))]
}
