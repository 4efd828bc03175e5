package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gorr-debugger/gorr/internal/timelineview"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracedir"
)

// loadModel opens the trace named by args (default: the latest) and
// builds its timeline model.
func loadModel(cmd string, args []string) (*timelineview.Model, string, int) {
	name := ""
	if len(args) > 1 {
		return nil, "", fatalf("%s: one trace at most, got %v", cmd, args)
	}
	if len(args) == 1 {
		name = args[0]
	}
	dir, err := tracedir.Resolve(name)
	if err != nil {
		return nil, "", fatalf("%s: %v", cmd, err)
	}
	rd, err := trace.Open(dir)
	if err != nil {
		return nil, "", fatalf("%s: %v", cmd, err)
	}
	defer rd.Close()
	m, err := timelineview.Build(rd, dir)
	if err != nil {
		return nil, "", fatalf("%s: read %s: %v", cmd, dir, err)
	}
	return m, dir, 0
}

// writeOut writes to path ("-" or "": stdout when dflt is "").
func writeOut(path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(os.Stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func cmdTimeline(args []string) int {
	p, err := parseFlags(args, []flagSpec{{"o", "output", true}})
	if err != nil {
		return fatalf("timeline: %v (see 'gorr help timeline')", err)
	}
	m, dir, rc := loadModel("timeline", p.rest)
	if m == nil {
		return rc
	}
	out := p.get("output")
	if out == "" {
		out = filepath.Base(dir) + "-timeline.html"
	}
	if err := writeOut(out, func(w io.Writer) error { return timelineview.WriteHTML(w, m) }); err != nil {
		return fatalf("timeline: %v", err)
	}
	if out != "-" {
		fmt.Fprintf(os.Stderr, "gorr: wrote the timeline of %s (%d events, %d threads, %d processes) to %s\n", dir, m.EventCount, len(m.Threads), len(m.Procs), out)
	}
	return 0
}

func cmdExport(args []string) int {
	p, err := parseFlags(args, []flagSpec{{"o", "output", true}, {"", "format", true}})
	if err != nil {
		return fatalf("export: %v (see 'gorr help export')", err)
	}
	if f := p.get("format"); f != "chrome" {
		return fatalf("export: --format=chrome is the only format (got %q)", f)
	}
	m, _, rc := loadModel("export", p.rest)
	if m == nil {
		return rc
	}
	out := p.get("output")
	if out == "" {
		out = "-"
	}
	if err := writeOut(out, func(w io.Writer) error { return timelineview.WriteChrome(w, m) }); err != nil {
		return fatalf("export: %v", err)
	}
	return 0
}
