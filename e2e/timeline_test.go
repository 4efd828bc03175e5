package e2e

import (
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// treeProg is a process tree with threads: the parent starts a thread
// and forks a child that starts two; each prints its pid, tid and time.
const treeProg = `#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static void *work(void *arg) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("%s pid %d tid %ld at %ld.%09ld\n", (char *)arg, getpid(), (long)syscall(SYS_gettid), (long)ts.tv_sec, ts.tv_nsec);
	fflush(stdout);
	usleep(2000);
	return NULL;
}
int main(void) {
	pthread_t a, b;
	pthread_create(&a, NULL, work, "parent thread");
	pid_t c = fork();
	if (c == 0) {
		pthread_create(&a, NULL, work, "child thread 1");
		pthread_create(&b, NULL, work, "child thread 2");
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		return 3;
	}
	int st;
	waitpid(c, &st, 0);
	pthread_join(a, NULL);
	printf("child %d exited %d\n", c, WEXITSTATUS(st));
	return 0;
}
`

func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium (apt-get install chromium): the timeline is not checked in a browser")
	return ""
}

// traceTids lists the threads of a trace and its event count, from
// gorr dump --json.
func traceTids(t *testing.T, dir string) ([]string, int) {
	out, err := exec.Command(gorrBin, "dump", "--json", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("dump line %q: %v", line, err)
		}
		n++
		if tid, ok := ev["tid"].(float64); ok {
			seen[strconv.Itoa(int(tid))] = true
		}
	}
	var tids []string
	for tid := range seen {
		tids = append(tids, tid)
	}
	sort.Strings(tids)
	return tids, n
}

// The timeline of a recording with two processes and five threads, opened
// in headless Chromium: one lane per thread, drawn; the page's own data
// names every thread and the event count. The Chrome export is valid
// trace-event JSON with one track per thread.
func TestTimelineInChromium(t *testing.T) {
	browser := chromium(t)
	bin := cprog(t, "tree", treeProg)
	work := t.TempDir()
	dir := filepath.Join(work, "trace")
	ctx := ctxHunt(t, 3*time.Minute)
	if rec, err := run(ctx, work, "", gorrBin, "record", "-o", dir, bin); err != nil || rec.Code != 0 {
		t.Fatalf("record: %v\n%v", err, rec)
	}
	tids, events := traceTids(t, dir)
	if len(tids) != 5 {
		t.Fatalf("want 5 threads in the trace, have %v", tids)
	}
	page := filepath.Join(work, "t.html")
	if r, err := run(ctx, work, "", gorrBin, "timeline", "-o", page, dir); err != nil || r.Code != 0 {
		t.Fatalf("timeline: %v\n%v", err, r)
	}
	b, _ := os.ReadFile(page)
	if regexp.MustCompile(`(?i)(src|href)=["']?(https?:)?//`).Match(b) {
		t.Fatal("the page loads something from the network")
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + filepath.Join(work, "profile"), "--window-size=1200,400"}
	dom, err := run(ctx, work, "", browser, append(args, "--dump-dom", "file://"+page)...)
	if err != nil || !strings.Contains(string(dom.Stdout), `data-ready="1"`) {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, dom.Stderr)
	}
	html := string(dom.Stdout)
	var lanes []string
	ys := map[string]int{}
	for _, m := range regexp.MustCompile(`class="lane" data-tid="(\d+)" data-y="(\d+)"`).FindAllStringSubmatch(html, -1) {
		lanes = append(lanes, m[1])
		ys[m[1]], _ = strconv.Atoi(m[2])
	}
	sort.Strings(lanes)
	if strings.Join(lanes, " ") != strings.Join(tids, " ") {
		t.Fatalf("lanes %v, threads %v", lanes, tids)
	}
	m := regexp.MustCompile(`data-events="(\d+)" data-threads="([\d ]+)"`).FindStringSubmatch(html)
	if m == nil || m[1] != strconv.Itoa(events) {
		t.Fatalf("the page's data: want %d events, have %v", events, m)
	}
	pageTids := strings.Fields(m[2])
	sort.Strings(pageTids)
	if strings.Join(pageTids, " ") != strings.Join(tids, " ") {
		t.Fatalf("the page's threads %v, the trace's %v", pageTids, tids)
	}
	shot := filepath.Join(work, "shot.png")
	if r, err := run(ctx, work, "", browser, append(args, "--screenshot="+shot, "file://"+page)...); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%v", err, r)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Every lane's row of the canvas has marks: pixels that are neither
	// the page, the lane background nor the thread's life line.
	top := 31 // the header bar above #main
	for _, tid := range tids {
		if n := marks(img, top+ys[tid]+2, top+ys[tid]+20); n == 0 {
			t.Errorf("lane of tid %s (y %d) shows nothing", tid, top+ys[tid])
		}
	}
	// Chrome trace-event JSON.
	exp, err := run(ctx, work, "", gorrBin, "export", "--format=chrome", dir)
	if err != nil || exp.Code != 0 {
		t.Fatalf("export: %v\n%v", err, exp)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(exp.Stdout, &doc); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	tracks := map[string]bool{}
	for _, ev := range doc.TraceEvents {
		ph, _ := ev["ph"].(string)
		_, hasPid := ev["pid"].(float64)
		_, hasTid := ev["tid"].(float64)
		if !hasPid || !hasTid || ph == "" {
			t.Fatalf("event without ph/pid/tid: %v", ev)
		}
		switch ph {
		case "M":
			if ev["name"] == "thread_name" {
				tracks[strconv.Itoa(int(ev["tid"].(float64)))] = true
			}
		case "X":
			if d, ok := ev["dur"].(float64); !ok || d < 0 {
				t.Fatalf("complete event without a duration: %v", ev)
			}
			fallthrough
		case "i":
			if _, ok := ev["ts"].(float64); !ok {
				t.Fatalf("event without ts: %v", ev)
			}
		default:
			t.Fatalf("unexpected phase %q", ph)
		}
	}
	var got []string
	for tid := range tracks {
		got = append(got, tid)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(tids, " ") {
		t.Fatalf("tracks %v, threads %v", got, tids)
	}
}

// marks counts the pixels of rows y0..y1 right of the labels that are
// drawn marks.
func marks(img image.Image, y0, y1 int) int {
	n := 0
	b := img.Bounds()
	for y := y0; y < y1 && y < b.Max.Y; y++ {
		for x := 262; x < b.Max.X-12; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			bg := r == 255 && g == 255 && bl == 255 || r == 0xf4 && g == 0xf4 && bl == 0xf4 ||
				r == 0xdd && g == 0xe6 && bl == 0xf4 || r == 0xee && g == 0xee && bl == 0xff || r == 0xee && g == 0xee && bl == 0xee
			if !bg {
				n++
			}
		}
	}
	return n
}
