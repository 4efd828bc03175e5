// Command bench measures gorr's overhead: for each of a few generated
// workloads it times the native run, `gorr record` and `gorr replay`, and
// measures the trace size, then prints a table.
//
// Usage, from anywhere in the module:
//
//	go run ./bench [-n 3] [-only NAME,...] [-skip-long] [-buffer both|on|off] [-compare OLDGORR] [-markdown] [-keep]
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	n := flag.Int("n", 3, "repetitions of each measurement (the median is reported)")
	only := flag.String("only", "", "run only the workloads `NAME[,NAME...]`")
	markdown := flag.Bool("markdown", false, "print the table as a Markdown table")
	keep := flag.Bool("keep", false, "keep the temporary directory (workloads, last traces)")
	buffer := flag.String("buffer", "both", "record with the system-call buffer `on` (record --syscall-buffer, columns \"buf\"), `off` (record -n), or both")
	skipLong := flag.Bool("skip-long", false, "leave out the workloads that take minutes under gorr (go-build)")
	compare := flag.String("compare", "", "also measure the gorr binary at `PATH` (record with its default flags), interleaved: before/after figures from the same minutes")
	flag.Parse()
	var modes []mode
	switch *buffer {
	case "both":
		modes = []mode{bufferOn, bufferOff}
	case "on":
		modes = []mode{bufferOn}
	case "off":
		modes = []mode{bufferOff}
	default:
		fatalf("-buffer wants on, off or both, got %q", *buffer)
	}
	if *compare != "" {
		abs, err := filepath.Abs(*compare)
		if err != nil {
			fatalf("%v", err)
		}
		modes = append([]mode{{name: "[compared]", gorr: abs}}, modes...)
	}
	if *n < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	selected := map[string]bool{}
	for _, name := range strings.Split(*only, ",") {
		if name == "" {
			continue
		}
		if !knownWorkload(name) {
			fatalf("unknown workload %q; known: %s", name, strings.Join(workloadNames(), ", "))
		}
		selected[name] = true
	}

	root, err := moduleRoot()
	if err != nil {
		fatalf("%v", err)
	}
	tmp, err := os.MkdirTemp("", "gorr-bench-")
	if err != nil {
		fatalf("%v", err)
	}
	if *keep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	gorr := filepath.Join(tmp, "gorr")
	logf("building gorr from %s", root)
	if out, err := combinedOutput(root, "go", "build", "-o", gorr, "./cmd/gorr"); err != nil {
		os.RemoveAll(tmp)
		fatalf("go build ./cmd/gorr: %v\n%s", err, out)
	}

	loadStart := loadAvg()
	var results []*result
	for _, wl := range workloads {
		if len(selected) > 0 && !selected[wl.name] || *skipLong && wl.long && len(selected) == 0 {
			continue
		}
		results = append(results, runWorkload(wl.name, wl.setup, gorr, tmp, *n, modes))
	}

	fmt.Println()
	printMachine(os.Stdout, root, *n)
	if *compare != "" {
		fmt.Printf("- [compared]: %s\n", *compare)
	}
	if len(modes) > 1 || modes[0].name != "" {
		fmt.Println("- record buf: record --syscall-buffer, with the system-call buffer; record -n: without it")
		if bufferIsNoop(gorr) {
			fmt.Println("- this gorr has no system-call buffer yet (`record -n` has no effect): both modes measure the same recorder")
		}
	}
	fmt.Printf("- load average (1, 5, 15 min) before: %s, after: %s\n", loadStart, loadAvg())
	fmt.Println()
	if *markdown {
		printMarkdown(os.Stdout, modes, results)
	} else {
		printText(os.Stdout, modes, results)
	}

	failed := false
	for _, r := range results {
		if r.err != nil {
			failed = true
		}
	}
	if failed {
		if !*keep {
			os.RemoveAll(tmp)
		}
		os.Exit(1)
	}
}

// runWorkload sets up and measures one workload, reporting progress and
// failures (with the child's full stderr) on stderr.
func runWorkload(name string, setup setupFunc, gorr, tmp string, n int, modes []mode) *result {
	dir := filepath.Join(tmp, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &result{w: &workload{name: name}, failedStage: "setup", err: err}
	}
	logf("%s: setting up", name)
	w, err := setup(dir)
	if err != nil {
		logf("%s: FAILED in setup: %v", name, err)
		return &result{w: &workload{name: name}, failedStage: "setup", err: err}
	}
	logf("%s: %s; %d runs each of native, record, replay", name, w.desc, n)
	traces := filepath.Join(tmp, "traces")
	if err := os.MkdirAll(traces, 0o755); err != nil {
		return &result{w: w, failedStage: "setup", err: err}
	}
	r := measure(w, gorr, traces, n, modes)
	for _, warning := range r.warnings {
		logf("%s: WARNING: %s", name, warning)
	}
	if r.err != nil {
		logf("%s: FAILED in %s: %v", name, r.failedStage, r.err)
		var re *runError
		if errors.As(r.err, &re) && len(re.stderr) > 0 {
			logf("%s: stderr of the failed run:\n%s", name, re.stderr)
		}
	} else {
		msg := "native " + samples(r.native)
		for _, mr := range r.modes {
			sfx := suffix(mr.mode)
			msg += fmt.Sprintf(", record%s %s, replay%s %s", sfx, samples(mr.record), sfx, samples(mr.replay))
		}
		logf("%s: %s (median [samples], ms)", name, msg)
	}
	return r
}

// header returns the table's columns for the modes measured.
func header(modes []mode) []string {
	h := []string{"workload", "native (ms)"}
	for _, m := range modes {
		sfx := suffix(m)
		h = append(h, "record"+sfx+" (ms)", "replay"+sfx+" (ms)")
	}
	for _, m := range modes {
		sfx := suffix(m)
		h = append(h, "record"+sfx+"/native", "replay"+sfx+"/native", "replay/record"+sfx)
	}
	return append(h, "trace MB", "captured files MB", "hard-linked MB (not counted)")
}

func suffix(m mode) string {
	if m.name == "" {
		return ""
	}
	return " " + m.name
}

// row formats a result as table cells. A failed measurement shows
// "failed: <reason>" in its column and "-" in the columns that depend on it.
func row(r *result) []string {
	cells := []string{r.w.name}
	stage := func(name string, xs []time.Duration) string {
		if r.failedStage == name {
			return "failed: " + short(r.err)
		}
		if len(xs) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f", ms(median(xs)))
	}
	cells = append(cells, stage("native", r.native))
	if r.failedStage == "setup" {
		cells[1] = "failed: " + short(r.err)
	}
	for _, mr := range r.modes {
		sfx := suffix(mr.mode)
		cells = append(cells, stage("record"+sfx, mr.record), stage("replay"+sfx, mr.replay))
	}
	ratio := func(a, b []time.Duration) string {
		if len(a) == 0 || len(b) == 0 || r.err != nil {
			return "-"
		}
		return fmt.Sprintf("%.1fx", float64(median(a))/float64(median(b)))
	}
	for _, mr := range r.modes {
		cells = append(cells, ratio(mr.record, r.native), ratio(mr.replay, r.native), ratio(mr.replay, mr.record))
	}
	// The trace sizes are those of the gorr built (the first mode that is
	// not a compared binary).
	var sized *modeResult
	for _, mr := range r.modes {
		if mr.mode.gorr == "" && sized == nil {
			sized = mr
		}
	}
	if sized == nil || len(sized.sizes) == 0 || r.err != nil {
		return append(cells, "-", "-", "-")
	}
	s := sizeMedians(sized.sizes)
	return append(cells, mb(s.total), mb(s.files), mb(s.linked))
}

func printMarkdown(w io.Writer, modes []mode, results []*result) {
	header := header(modes)
	fmt.Fprintf(w, "| %s |\n", strings.Join(header, " | "))
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---:"
	}
	sep[0] = "---"
	fmt.Fprintf(w, "|%s|\n", strings.Join(sep, "|"))
	for _, r := range results {
		fmt.Fprintf(w, "| %s |\n", strings.Join(row(r), " | "))
	}
}

func printText(w io.Writer, modes []mode, results []*result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t\n", strings.Join(header(modes), "\t"))
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row(r), "\t"))
	}
	tw.Flush()
}

// printMachine prints where and when the numbers were measured.
func printMachine(w io.Writer, root string, n int) {
	fmt.Fprintf(w, "- date: %s\n", time.Now().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "- kernel (uname -r): %s\n", commandLine("", "uname", "-r"))
	fmt.Fprintf(w, "- CPU: %s\n", cpuModel())
	fmt.Fprintf(w, "- nproc: %s\n", commandLine("", "nproc"))
	fmt.Fprintf(w, "- %s, %s\n", commandLine("", "go", "version"), commandLine("", "gcc", "--version"))
	if rev := commandLine(root, "git", "rev-parse", "--short", "HEAD"); rev != "?" {
		if commandLine(root, "git", "status", "--porcelain", "--untracked-files=no") != "" {
			rev += " (with uncommitted changes)"
		}
		fmt.Fprintf(w, "- gorr commit: %s\n", rev)
	}
	fmt.Fprintf(w, "- median of %d runs; MB = 10^6 bytes\n", n)
}

// bufferIsNoop says whether gorr's help says -n has no effect (the
// system-call buffer does not exist yet).
func bufferIsNoop(gorr string) bool {
	out, _ := exec.Command(gorr, "help", "record").CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "--no-syscall-buffer") {
			return strings.Contains(line, "no effect")
		}
	}
	return false
}

// commandLine returns the first line of a command's output, or "?".
func commandLine(dir, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "?"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// loadAvg returns the first three fields of /proc/loadavg: other work on
// the machine skews the timings.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if key, val, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(val)
		}
	}
	return "?"
}

// moduleRoot walks up from the current directory to the one holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found in the current directory or its parents")
		}
		dir = parent
	}
}

func knownWorkload(name string) bool {
	for _, wl := range workloads {
		if wl.name == name {
			return true
		}
	}
	return false
}

func workloadNames() []string {
	var names []string
	for _, wl := range workloads {
		names = append(names, wl.name)
	}
	return names
}

// samples formats a median and its samples: "85 [83 85 90]".
func samples(xs []time.Duration) string {
	var all []string
	for _, x := range xs {
		all = append(all, fmt.Sprintf("%.0f", ms(x)))
	}
	return fmt.Sprintf("%.0f [%s]", ms(median(xs)), strings.Join(all, " "))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mb(b int64) string { return fmt.Sprintf("%.2f", float64(b)/1e6) }

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func fatalf(format string, args ...any) {
	logf(format, args...)
	os.Exit(1)
}
