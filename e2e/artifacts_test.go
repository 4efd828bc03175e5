package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// artifactProg reads a data file and prints values that differ between
// runs (time, pid, random bytes), so a replay that re-ran it would differ.
const artifactProg = `#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
int main(int argc, char **argv) {
	char buf[64] = {0};
	FILE *f = fopen(argv[1], "r");
	if (!f) { perror("fopen"); return 2; }
	fgets(buf, sizeof buf, f);
	fclose(f);
	unsigned r; getrandom(&r, sizeof r, 0);
	struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts);
	printf("data=%s pid=%d rand=%u t=%ld HOME=%s\n", buf, getpid(), r, ts.tv_nsec, getenv("HOME"));
	return 3;
}
`

// ctxArtifacts bounds a whole test of this file (several recordings and
// replays on a shared, sometimes loaded machine).
func ctxArtifacts(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// gorrIn runs gorr with save directory save, in dir, with extra env.
func gorrIn(ctx context.Context, t *testing.T, save, dir string, env []string, args ...string) Run {
	t.Helper()
	cmd := exec.CommandContext(ctx, gorrBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GORR_TRACE_DIR="+save), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := Run{Stdout: o.Bytes(), Stderr: e.Bytes()}
	if ee, ok := err.(*exec.ExitError); ok {
		ws := ee.Sys().(syscall.WaitStatus)
		r.Code, r.Signal = ws.ExitStatus(), 0
		if ws.Signaled() {
			r.Signal = int(ws.Signal())
		}
	} else if err != nil {
		t.Fatalf("gorr %v: %v", args, err)
	}
	return r
}

// recordArtifact builds artifactProg with its data file in a fresh
// directory and records it into traceDir, with extra env.
func recordArtifact(ctx context.Context, t *testing.T, save, traceDir string, env ...string) (bin, data string, rec Run) {
	t.Helper()
	bin = cprog(t, "artifact", artifactProg)
	data = filepath.Join(filepath.Dir(bin), "input.txt")
	if err := os.WriteFile(data, []byte("recorded-input"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"record"}
	if traceDir != "" {
		args = append(args, "-o", traceDir)
	}
	rec = gorrIn(ctx, t, save, filepath.Dir(bin), env, append(args, bin, data)...)
	if rec.Code != 3 || !bytes.Contains(rec.Stdout, []byte("data=recorded-input")) {
		t.Fatalf("record: %v", rec)
	}
	return bin, data, rec
}

// Pack, copy the trace elsewhere, delete the program and every file it
// read, and replay from another directory with another environment.
func TestPackReplayElsewhere(t *testing.T) {
	ctx := ctxArtifacts(t)
	save := t.TempDir()
	traceDir := filepath.Join(t.TempDir(), "trace")
	bin, data, rec := recordArtifact(ctx, t, save, traceDir)

	if r := gorrIn(ctx, t, save, t.TempDir(), nil, "pack", traceDir); r.Code != 0 {
		t.Fatalf("pack: %v", r)
	}
	// No file of the packed trace is linked anywhere else, and none is the
	// inode of a file the recording mapped.
	err := filepath.Walk(traceDir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			if n := fi.Sys().(*syscall.Stat_t).Nlink; n > 1 {
				t.Errorf("%s has %d links", p, n)
			}
			for _, orig := range []string{bin, "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"} {
				if ofi, err := os.Stat(orig); err == nil && os.SameFile(fi, ofi) {
					t.Errorf("%s is %s", p, orig)
				}
			}
			if strings.Contains(p, "/files/") && fi.Mode().Perm() != 0o400 {
				t.Errorf("%s has mode %v, want read-only 0400", p, fi.Mode())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Copy it with tar as one would to another machine; delete the originals.
	dest := t.TempDir()
	tarball := filepath.Join(t.TempDir(), "trace.tar")
	if out, err := exec.Command("tar", "-C", filepath.Dir(traceDir), "-cf", tarball, "trace").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	if out, err := exec.Command("tar", "-C", dest, "-xf", tarball).CombinedOutput(); err != nil {
		t.Fatalf("untar: %v %s", err, out)
	}
	os.RemoveAll(traceDir)
	os.Remove(bin)
	os.Remove(data)
	os.Remove(bin + ".c")
	moved := filepath.Join(dest, "trace")
	cmd := exec.CommandContext(ctx, gorrBin, "replay", "-a", moved)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "LANG=C", "GORR_TRACE_DIR=" + t.TempDir()}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 || !bytes.Equal(o.Bytes(), rec.Stdout) {
		t.Fatalf("replay of the moved trace: %v\nstdout %q\nstderr %s\nwant stdout %q", err, o.Bytes(), e.Bytes(), rec.Stdout)
	}
}

// Tampering with any file of a trace (every captured file, and the
// header) is reported with its name by replay (both paths), traceinfo
// and pack, before anything runs.
func TestTamperReported(t *testing.T) {
	ctx := ctxArtifacts(t)
	save := t.TempDir()
	traceDir := filepath.Join(t.TempDir(), "trace")
	// A file cache of its own: writing through the trace's files writes
	// the cache's copies (and other traces linked to them).
	recordArtifact(ctx, t, save, traceDir, "XDG_CACHE_HOME="+t.TempDir())
	files, _ := filepath.Glob(filepath.Join(traceDir, "files", "*"))
	if len(files) < 3 {
		t.Fatalf("only %d captured files", len(files))
	}
	check := func(what, name, want string) {
		t.Helper()
		for _, args := range [][]string{{"replay", "-a", traceDir}, {"replay", "-s", "0", traceDir}, {"traceinfo", traceDir}, {"pack", traceDir}} {
			r := gorrIn(ctx, t, save, t.TempDir(), nil, args...)
			if r.Code == 0 || !strings.Contains(string(r.Stderr), name+": "+want) || len(r.Stdout) != 0 {
				t.Errorf("%s %s: gorr %v: want failure naming %q\n%v", what, name, args, name+": "+want, r)
			}
		}
	}
	for _, p := range files {
		name := "files/" + filepath.Base(p)
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, 0o600)
		b := append([]byte(nil), orig...)
		b[len(b)/2] ^= 0x20
		os.WriteFile(p, b, 0o600)
		check("flipped byte in", name, "content does not match the recording")
		os.WriteFile(p, orig[:len(orig)/2], 0o600)
		check("truncated", name, "content does not match the recording")
		os.WriteFile(p, orig, 0o400)
		os.Chmod(p, 0o400)
	}
	hp := filepath.Join(traceDir, "header.json")
	orig, _ := os.ReadFile(hp)
	for _, edit := range []struct{ key, val string }{{"ExitStatus", "0"}, {"Argv", `["edited"]`}, {"XSaveSize", "1"}} {
		var m map[string]json.RawMessage
		json.Unmarshal(orig, &m)
		m[edit.key] = json.RawMessage(edit.val)
		b, _ := json.MarshalIndent(m, "", "\t")
		os.WriteFile(hp, b, 0o600)
		check("edited "+edit.key+" in", "header.json", "content does not match the recording")
	}
	os.WriteFile(hp, orig, 0o600)
	if r := gorrIn(ctx, t, save, t.TempDir(), nil, "replay", "-a", traceDir); r.Code != 3 {
		t.Fatalf("restored trace does not replay: %v", r)
	}
}

// TestFileCacheLinks: a second recording links the copies of the file
// cache (never the system's files) and replays; a write through a
// trace's link is reported and not served to the next recording; pack
// makes the files private; GORR_FILE_CACHE=off copies.
func TestFileCacheLinks(t *testing.T) {
	ctx := ctxArtifacts(t)
	save := t.TempDir()
	cacheHome := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + cacheHome}
	libc := "/lib/x86_64-linux-gnu/libc.so.6"
	lfi, err := os.Stat(libc)
	if err != nil {
		t.Skip(err)
	}
	// capturedLibc is the trace's copy of libc and its link count.
	capturedLibc := func(dir string) (string, os.FileInfo) {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(dir, "files", "*-libc.so.6"))
		if len(files) != 1 {
			t.Fatalf("%s: libc captured as %v", dir, files)
		}
		fi, err := os.Stat(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if os.SameFile(fi, lfi) {
			t.Fatalf("%s is the system's libc", files[0])
		}
		return files[0], fi
	}
	nlink := func(fi os.FileInfo) uint64 { return uint64(fi.Sys().(*syscall.Stat_t).Nlink) }
	var traces []string
	var recs []Run
	for i := 0; i < 3; i++ {
		dir := filepath.Join(t.TempDir(), "trace")
		_, _, rec := recordArtifact(ctx, t, save, dir, env...)
		traces, recs = append(traces, dir), append(recs, rec)
	}
	_, fi0 := capturedLibc(traces[0])
	_, fi2 := capturedLibc(traces[2])
	if !os.SameFile(fi0, fi2) || nlink(fi2) < 4 {
		t.Fatalf("libc of the third recording: %d links, shared with the first: %v; want the cache's copy", nlink(fi2), os.SameFile(fi0, fi2))
	}
	for i, dir := range traces {
		if r := gorrIn(ctx, t, save, t.TempDir(), env, "replay", "-a", dir); r.Code != 3 || !bytes.Equal(r.Stdout, recs[i].Stdout) {
			t.Fatalf("replay %d: %v", i, r)
		}
	}
	// A byte changed through the second trace's link: every trace linked
	// to that copy is reported, and the next recording copies anew.
	p, _ := capturedLibc(traces[1])
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o600)
	b := append([]byte(nil), orig...)
	b[len(b)/2] ^= 1
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o400)
	for _, dir := range traces {
		if r := gorrIn(ctx, t, save, t.TempDir(), env, "replay", "-a", dir); r.Code == 0 || !strings.Contains(string(r.Stderr), "content does not match the recording") {
			t.Errorf("replay of %s after the write: %v", dir, r)
		}
	}
	fresh := filepath.Join(t.TempDir(), "trace")
	_, _, rec := recordArtifact(ctx, t, save, fresh, env...)
	if _, fi := capturedLibc(fresh); os.SameFile(fi, fi0) {
		t.Error("the written copy was linked into a new recording")
	}
	if r := gorrIn(ctx, t, save, t.TempDir(), env, "replay", "-a", fresh); r.Code != 3 || !bytes.Equal(r.Stdout, rec.Stdout) {
		t.Fatalf("replay of the new recording: %v", r)
	}
	// Pack: private copies with one link.
	if r := gorrIn(ctx, t, save, t.TempDir(), env, "pack", fresh); r.Code != 0 {
		t.Fatalf("pack: %v", r)
	}
	if _, fi := capturedLibc(fresh); nlink(fi) != 1 {
		t.Errorf("packed libc has %d links", nlink(fi))
	}
	if r := gorrIn(ctx, t, save, t.TempDir(), env, "replay", "-a", fresh); r.Code != 3 || !bytes.Equal(r.Stdout, rec.Stdout) {
		t.Fatalf("replay of the packed recording: %v", r)
	}
	// Off: a copy.
	off := filepath.Join(t.TempDir(), "trace")
	recordArtifact(ctx, t, save, off, append(env, "GORR_FILE_CACHE=off")...)
	if _, fi := capturedLibc(off); nlink(fi) != 1 {
		t.Errorf("GORR_FILE_CACHE=off: libc has %d links", nlink(fi))
	}
}

// The trace management commands on real traces, their --help, and their
// errors on a missing or a corrupt trace.
func TestTraceCommands(t *testing.T) {
	ctx := ctxArtifacts(t)
	save := filepath.Join(t.TempDir(), "save")
	wd := t.TempDir()
	// No trace yet: ls prints nothing and succeeds.
	for _, args := range [][]string{{"ls"}, {"ls", "-l"}} {
		if r := gorrIn(ctx, t, save, wd, nil, args...); r.Code != 0 || len(r.Stdout) != 0 {
			t.Errorf("gorr %v without traces: %v", args, r)
		}
	}
	recordArtifact(ctx, t, save, "")
	bin, _, _ := recordArtifact(ctx, t, save, "")
	r := gorrIn(ctx, t, save, wd, nil, "ls", "-l")
	if r.Code != 0 || !regexp.MustCompile(`(?m)^artifact-0 +[0-9.]+[KM]? +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +3 +\S*artifact `).Match(r.Stdout) {
		t.Errorf("ls -l: %v", r)
	}
	r = gorrIn(ctx, t, save, wd, nil, "buildid", "artifact-1")
	if r.Code != 0 || !regexp.MustCompile(`(?m)^[0-9a-f]{40} .*/artifact$`).Match(r.Stdout) || !strings.Contains(string(r.Stdout), "libc.so.6") {
		t.Errorf("buildid: %v", r)
	}
	if out, err := exec.Command("readelf", "-n", bin).Output(); err == nil {
		id := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
		if id == nil || !bytes.Contains(r.Stdout, id[1]) {
			t.Errorf("buildid does not print readelf's %s", id)
		}
	}
	r = gorrIn(ctx, t, save, wd, nil, "sources")
	var src struct {
		Relevant []string            `json:"relevant_binaries"`
		Files    map[string][]string `json:"files"`
	}
	if err := json.Unmarshal(r.Stdout, &src); r.Code != 0 || err != nil {
		t.Fatalf("sources: %v %v", err, r)
	}
	found := false
	for dir, fs := range src.Files {
		for _, f := range fs {
			found = found || filepath.Join(dir, f) == bin+".c" || f == bin+".c"
		}
	}
	if !found || len(src.Relevant) == 0 {
		t.Errorf("sources does not name %s.c: %s", bin, r.Stdout)
	}
	r = gorrIn(ctx, t, save, wd, nil, "cpufeatures")
	if r.Code != 0 || !regexp.MustCompile(`^--disable-cpuid-features 0x[0-9a-f]+,0x[0-9a-f]+ --disable-cpuid-features-ext 0x[0-9a-f]+,0x[0-9a-f]+,0x[0-9a-f]+ --disable-cpuid-features-xsave 0x[0-9a-f]+\n$`).Match(r.Stdout) {
		t.Errorf("cpufeatures: %v", r)
	}
	// mv updates latest-trace; rm takes several traces.
	if r := gorrIn(ctx, t, save, wd, nil, "mv", "artifact-1", "renamed"); r.Code != 0 {
		t.Fatalf("mv: %v", r)
	}
	if l, _ := os.Readlink(filepath.Join(save, "latest-trace")); l != "renamed" {
		t.Errorf("latest-trace -> %q after mv, want renamed", l)
	}
	if r := gorrIn(ctx, t, save, wd, nil, "replay", "-a", "-q"); r.Code != 3 {
		t.Errorf("replay of the latest trace after mv: %v", r)
	}
	// Two traces packed together share their common files.
	if r := gorrIn(ctx, t, save, wd, nil, "pack", "artifact-0", "renamed"); r.Code != 0 || !strings.Contains(string(r.Stderr), "moved to the shared store") {
		t.Fatalf("pack: %v", r)
	}
	for _, n := range []string{"artifact-0", "renamed"} {
		if r := gorrIn(ctx, t, save, wd, nil, "replay", "-a", "-q", n); r.Code != 3 {
			t.Errorf("replay of packed %s: %v", n, r)
		}
	}
	// Moving a packed trace out of its directory takes its files along.
	out := filepath.Join(t.TempDir(), "out")
	if r := gorrIn(ctx, t, save, wd, nil, "mv", "renamed", out); r.Code != 0 {
		t.Fatalf("mv out: %v", r)
	}
	if r := gorrIn(ctx, t, save, wd, nil, "replay", "-a", "-q", out); r.Code != 3 {
		t.Errorf("replay of the trace moved out: %v", r)
	}
	if r := gorrIn(ctx, t, save, wd, nil, "rm", "artifact-0", out); r.Code != 0 {
		t.Fatalf("rm: %v", r)
	}
	if ents, _ := os.ReadDir(save); len(ents) != 0 {
		t.Errorf("save directory after rm: %v", ents)
	}

	cmds := []string{"pack", "buildid", "sources", "mv", "rm", "ls", "cpufeatures"}
	for _, c := range cmds {
		if r := gorrIn(ctx, t, save, wd, nil, c, "--help"); r.Code != 0 || !strings.Contains(string(r.Stdout), "usage: gorr "+c) {
			t.Errorf("gorr %s --help: %v", c, r)
		}
	}
	corrupt := filepath.Join(t.TempDir(), "corrupt")
	os.Mkdir(corrupt, 0o700)
	os.WriteFile(filepath.Join(corrupt, "header.json"), []byte(`{"Version":2,`), 0o600)
	for _, c := range []string{"pack", "buildid", "sources", "traceinfo"} {
		if r := gorrIn(ctx, t, save, wd, nil, c, "/nonexistent/trace"); r.Code == 0 || !strings.Contains(string(r.Stderr), "/nonexistent/trace") {
			t.Errorf("gorr %s on a missing trace: %v", c, r)
		}
		if r := gorrIn(ctx, t, save, wd, nil, c, corrupt); r.Code == 0 || !strings.Contains(string(r.Stderr), "corrupt header.json") {
			t.Errorf("gorr %s on a corrupt trace: %v", c, r)
		}
	}
	for _, args := range [][]string{{"rm", "/nonexistent/trace"}, {"mv", "/nonexistent/trace", "x"}, {"rm", t.TempDir()}} {
		if r := gorrIn(ctx, t, save, wd, nil, args...); r.Code == 0 || len(r.Stderr) == 0 {
			t.Errorf("gorr %v: want an error: %v", args, r)
		}
	}
}

// latest-trace in the way, and trace roots others can write to.
func TestTraceRootChecks(t *testing.T) {
	ctx := ctxArtifacts(t)
	bin := cprog(t, "pidtime", pidTimeProg)
	for _, blocker := range []string{"latest-trace", ".latest-trace.tmp"} {
		save := t.TempDir()
		os.Mkdir(filepath.Join(save, blocker), 0o700)
		r := gorrIn(ctx, t, save, t.TempDir(), nil, "record", bin)
		if r.Code != 0 || !strings.Contains(string(r.Stderr), "cannot update "+filepath.Join(save, "latest-trace")) || !strings.Contains(string(r.Stderr), "directory") {
			t.Errorf("%s is a directory: %v", blocker, r)
		}
	}
	save := t.TempDir()
	os.Chmod(save, 0o777)
	if r := gorrIn(ctx, t, save, t.TempDir(), nil, "record", bin); r.Code == 0 || !strings.Contains(string(r.Stderr), "writable by other users") {
		t.Errorf("world-writable trace root: %v", r)
	}
	os.Chmod(save, os.ModeSticky|0o777)
	if r := gorrIn(ctx, t, save, t.TempDir(), nil, "record", bin); r.Code != 0 || !strings.Contains(string(r.Stderr), "warning: trace directory") {
		t.Errorf("sticky world-writable trace root: %v", r)
	}
}

const cpuidProg = `#include <stdio.h>
#include <cpuid.h>
#include <time.h>
int main(void) {
	unsigned a, b, c, d;
	__cpuid(1, a, b, c, d);
	printf("l1 0x%x 0x%x\n", c, d);
	__cpuid_count(7, 0, a, b, c, d);
	printf("l7 0x%x 0x%x 0x%x\n", b, c, d);
	__cpuid(0x80000001, a, b, c, d);
	printf("e1 0x%x 0x%x\n", c, d);
	struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts);
	printf("t=%ld\n", ts.tv_nsec);
	return 0;
}
`

// record --portable: the CPUID answers stay within x86-64-v3, and replay
// refuses a CPU (simulated: GORR_TEST_HIDE_CPUID) lacking a feature the
// trace needs, listing it, while a portable trace does not need it.
func TestPortableCPUID(t *testing.T) {
	ctx := ctxArtifacts(t)
	bin := cprog(t, "cpuidp", cpuidProg)
	save := t.TempDir()
	portable := filepath.Join(t.TempDir(), "portable")
	native := filepath.Join(t.TempDir(), "native")
	rec := gorrIn(ctx, t, save, t.TempDir(), nil, "record", "--portable", "-o", portable, bin)
	if rec.Code != 0 {
		t.Fatalf("record --portable: %v", rec)
	}
	var l1c, l1d, l7b, l7c, l7d, e1c, e1d uint32
	if _, err := fmt.Sscanf(string(rec.Stdout), "l1 0x%x 0x%x\nl7 0x%x 0x%x 0x%x\ne1 0x%x 0x%x\n", &l1c, &l1d, &l7b, &l7c, &l7d, &e1c, &e1d); err != nil {
		t.Fatalf("parse %q: %v", rec.Stdout, err)
	}
	// x86-64-v3: sse3 ssse3 fma cx16 sse4.1 sse4.2 movbe popcnt xsave
	// osxsave avx f16c (+hypervisor); bmi1 avx2 bmi2; lahf lzcnt.
	const v3l1c = 1<<0 | 1<<9 | 1<<12 | 1<<13 | 1<<19 | 1<<20 | 1<<22 | 1<<23 | 1<<26 | 1<<27 | 1<<28 | 1<<29 | 1<<31
	if l1c&^v3l1c != 0 || l7b&^(1<<3|1<<5|1<<8) != 0 || l7c != 0 || l7d != 0 || e1c&^(1<<0|1<<5) != 0 {
		t.Errorf("portable recording saw features beyond x86-64-v3:\n%s", rec.Stdout)
	}
	if rep := gorrIn(ctx, t, save, t.TempDir(), nil, "replay", "-a", portable); rep.Code != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("replay of the portable trace: %v", rep)
	}
	if r := gorrIn(ctx, t, save, t.TempDir(), nil, "record", "-o", native, bin); r.Code != 0 {
		t.Fatalf("record: %v", r)
	}
	hide := []string{"GORR_TEST_HIDE_CPUID=2:0x20"} // avx2
	for _, dir := range []string{native, portable} {
		r := gorrIn(ctx, t, save, t.TempDir(), hide, "replay", "-a", dir)
		if l7b&(1<<5) != 0 && (r.Code == 0 || !strings.Contains(string(r.Stderr), "lacks CPUID features the trace needs") || !strings.Contains(string(r.Stderr), ": avx2;") || len(r.Stdout) != 0) {
			t.Errorf("replay of %s on a CPU without avx2: %v", dir, r)
		}
	}
	// A feature above the baseline (any bit the host shows in
	// cpuid(7).ebx outside it, adx for instance) is needed by the native
	// trace only.
	_, _ = l1d, e1d
	host := gorrIn(ctx, t, save, t.TempDir(), nil, "replay", "-a", native)
	var hb uint32
	fmt.Sscanf(strings.Split(string(host.Stdout), "\n")[1], "l7 0x%x", &hb)
	extra := hb &^ (1<<3 | 1<<5 | 1<<8)
	if extra == 0 {
		t.Skip("this CPU has no cpuid(7).ebx feature beyond x86-64-v3")
	}
	bit := extra & -extra
	hide = []string{fmt.Sprintf("GORR_TEST_HIDE_CPUID=2:0x%x", bit)}
	if r := gorrIn(ctx, t, save, t.TempDir(), hide, "replay", "-a", portable); r.Code != 0 || !bytes.Equal(r.Stdout, rec.Stdout) {
		t.Errorf("portable trace on a CPU without cpuid(7).ebx 0x%x: %v", bit, r)
	}
	if r := gorrIn(ctx, t, save, t.TempDir(), hide, "replay", "-a", native); r.Code == 0 || !strings.Contains(string(r.Stderr), "lacks CPUID features") {
		t.Errorf("native trace on a CPU without cpuid(7).ebx 0x%x: %v", bit, r)
	}
}
