package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A workload is one program run natively, under `gorr record` and under
// `gorr replay`.
type workload struct {
	name string
	desc string
	dir  string   // working directory of every run
	argv []string // the command
	// reset, when non-nil, runs (untimed) before every native run and every
	// recording, so that each one starts from the same state.
	reset func() error
}

// setupFunc prepares a workload's files under its own directory dir.
type setupFunc func(dir string) (*workload, error)

// workloads lists the workloads in the order they run and are reported.
var workloads = []struct {
	name  string
	setup setupFunc
	long  bool // takes minutes under gorr: -skip-long leaves it out
}{
	{"syscall-heavy", setupSyscallHeavy, false},
	{"cpu-bound", setupCPUBound, false},
	{"process-heavy", setupProcessHeavy, false},
	{"multi-threaded", setupMultiThreaded, false},
	{"go-program", setupGoProgram, false},
	{"mutex", setupMutex, false},
	{"python-json", setupPythonJSON, false},
	{"go-build", setupGoBuild, true},
	{"compute-threads", setupComputeThreads, false},
	{"spin-counter", setupSpinCounter, false},
	{"alarm-buffer-O0", setupAlarmBuffer("-O0"), false},
	{"alarm-buffer-O2", setupAlarmBuffer("-O2"), false},
}

const alarmBufferC = `#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

/* Rewrites a 64-byte buffer until SIGALRM arrives (10 times, every
   20 ms): each signal is delivered at a point inside the hot loop. */
static volatile sig_atomic_t ticks;
static void on_alarm(int s) { (void)s; ticks++; }

int main(void) {
	static unsigned char buf[64];
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, 0);
	struct itimerval it = {{0, 20000}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, 0);
	unsigned long passes = 0;
	while (ticks < 10) {
		for (int i = 0; i < 64; i++) buf[i] = (unsigned char)(buf[i] * 31 + i + passes);
		passes++;
	}
	unsigned sum = 0;
	for (int i = 0; i < 64; i++) sum = sum * 131 + buf[i];
	printf("%d %d\n", passes > 0, sum > 0);
	return 0;
}
`

// setupAlarmBuffer compiles, with optimisation opt, a loop rewriting a
// 64-byte buffer until SIGALRM has arrived 10 times.
func setupAlarmBuffer(opt string) setupFunc {
	return func(dir string) (*workload, error) {
		exe, err := compileC(dir, "alarm.c", alarmBufferC, opt)
		if err != nil {
			return nil, err
		}
		return &workload{
			name: "alarm-buffer" + opt,
			desc: "a loop rewriting a 64-byte buffer, interrupted by SIGALRM every 20 ms, 10 times (gcc " + opt + ")",
			dir:  dir,
			argv: []string{exe},
		}, nil
	}
}

const computeThreadsC = `#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

/* Four threads compute with no system call; each must be preempted for
   the others to progress when threads run one at a time. */
static void *work(void *arg) {
	uint64_t x = (uintptr_t)arg * 0x9E3779B97F4A7C15ULL + 1, sum = 0;
	for (long i = 0; i < 40000000L; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += x;
	}
	return (void *)(uintptr_t)sum;
}

int main(void) {
	pthread_t t[4];
	for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, work, (void *)(i + 1));
	uint64_t all = 0;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		all ^= (uintptr_t)r;
	}
	printf("%016llx\n", (unsigned long long)all);
	return 0;
}
`

// setupComputeThreads compiles four threads that compute without system
// calls (preemption by timeslice).
func setupComputeThreads(dir string) (*workload, error) {
	exe, err := compileC(dir, "threads.c", computeThreadsC)
	if err != nil {
		return nil, err
	}
	return &workload{
		name: "compute-threads",
		desc: "4 pthreads each running a 4e7-iteration xorshift loop with no system call (gcc -O2)",
		dir:  dir,
		argv: []string{exe},
	}, nil
}

const spinCounterC = `#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

/* A thread spins on a flag, counting iterations in memory (its registers
   repeat on every iteration), while main computes and then sets the flag. */
static atomic_int flag;
static atomic_long spins;
static void *spin(void *a) {
	while (!atomic_load(&flag)) atomic_fetch_add(&spins, 1);
	return a;
}

int main(void) {
	pthread_t t;
	pthread_create(&t, 0, spin, 0);
	uint64_t x = 88172645463325252ULL, sum = 0;
	for (long i = 0; i < 100000000L; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += x;
	}
	atomic_store(&flag, 1);
	pthread_join(t, 0);
	printf("%016llx %s\n", (unsigned long long)sum, atomic_load(&spins) > 0 ? "spun" : "no spin");
	return 0;
}
`

// setupSpinCounter compiles a spin-wait on a flag beside a computation.
func setupSpinCounter(dir string) (*workload, error) {
	exe, err := compileC(dir, "spin.c", spinCounterC)
	if err != nil {
		return nil, err
	}
	return &workload{
		name: "spin-counter",
		desc: "a thread spins on an atomic flag with lock add on a counter while main runs a 1e8-iteration loop, then sets the flag (gcc -O2)",
		dir:  dir,
		argv: []string{exe},
	}, nil
}

// setupSyscallHeavy generates a tree of 2000 files of 1-8 KiB in 40
// directories; the workload copies it with `cp -a src dst`.
func setupSyscallHeavy(dir string) (*workload, error) {
	const nDirs, filesPerDir = 40, 50
	rng := rand.New(rand.NewSource(1)) // the same tree on every run
	src := filepath.Join(dir, "src")
	for d := 0; d < nDirs; d++ {
		sub := filepath.Join(src, fmt.Sprintf("dir%02d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return nil, err
		}
		for f := 0; f < filesPerDir; f++ {
			buf := make([]byte, 1024+rng.Intn(7*1024+1))
			rng.Read(buf)
			name := filepath.Join(sub, fmt.Sprintf("file%03d.dat", f))
			if err := os.WriteFile(name, buf, 0o644); err != nil {
				return nil, err
			}
		}
	}
	dst := filepath.Join(dir, "dst")
	return &workload{
		name:  "syscall-heavy",
		desc:  fmt.Sprintf("cp -a of %d files of 1-8 KiB in %d directories", nDirs*filesPerDir, nDirs),
		dir:   dir,
		argv:  []string{"cp", "-a", "src", "dst"},
		reset: func() error { return os.RemoveAll(dst) },
	}, nil
}

const cpuBoundC = `#include <stdint.h>
#include <stdio.h>

/* A pure compute loop: no system call between start-up and the final printf. */
int main(void) {
	uint64_t x = 88172645463325252ULL, sum = 0;
	for (long i = 0; i < 200000000L; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sum += x * 0x9E3779B97F4A7C15ULL + (uint64_t)i;
	}
	printf("checksum %016llx\n", (unsigned long long)sum);
	return 0;
}
`

// setupCPUBound compiles a C program that runs a compute loop for a few
// hundred milliseconds without any system call.
func setupCPUBound(dir string) (*workload, error) {
	exe, err := compileC(dir, "cpu.c", cpuBoundC)
	if err != nil {
		return nil, err
	}
	return &workload{
		name: "cpu-bound",
		desc: "C compute loop (xorshift, 2e8 iterations, gcc -O2), prints a checksum",
		dir:  dir,
		argv: []string{exe},
	}, nil
}

const processHeavyScript = `i=0
while [ $i -lt 70 ]; do
	/bin/true
	echo $i | cat > /dev/null
	i=$((i+1))
done
`

// setupProcessHeavy returns a shell loop that forks about 200 short-lived
// processes (per iteration: /bin/true, the echo side of the pipe, cat).
func setupProcessHeavy(dir string) (*workload, error) {
	return &workload{
		name: "process-heavy",
		desc: "sh -c loop of 70 iterations: /bin/true; echo $i | cat > /dev/null (210 forks)",
		dir:  dir,
		argv: []string{"sh", "-c", processHeavyScript},
	}, nil
}

const multiThreadedC = `#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define NTHREADS 4
#define ITERS 20000
#define WRITES_PER_THREAD (ITERS / 4)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long pids;
static int fds[2];

/* Each thread mixes mutex-protected updates with system calls: a pipe
   write, getpid or clock_gettime, in turn. No thread ever spins. */
static void *worker(void *arg) {
	long id = (long)arg;
	char msg[8] = {'w', (char)('0' + id), 0, 0, 0, 0, 0, '\n'};
	struct timespec ts;
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
		switch (i % 4) {
		case 0:
			if (write(fds[1], msg, sizeof msg) != sizeof msg) {
				perror("write");
				exit(1);
			}
			break;
		case 1:
			if (syscall(SYS_getpid) > 0) {
				pthread_mutex_lock(&mu);
				pids++;
				pthread_mutex_unlock(&mu);
			}
			break;
		default:
			clock_gettime(CLOCK_MONOTONIC, &ts);
			break;
		}
	}
	return NULL;
}

int main(void) {
	pthread_t th[NTHREADS];
	if (pipe(fds) != 0) {
		perror("pipe");
		return 1;
	}
	for (long t = 0; t < NTHREADS; t++) {
		if (pthread_create(&th[t], NULL, worker, (void *)t) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	/* The main thread drains the pipe (blocking reads) so writers never
	   block for long; it knows exactly how many bytes to expect. */
	long want = (long)NTHREADS * WRITES_PER_THREAD * 8, got = 0;
	char buf[4096];
	while (got < want) {
		ssize_t n = read(fds[0], buf, sizeof buf);
		if (n <= 0) {
			perror("read");
			return 1;
		}
		got += n;
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	printf("counter %ld pids %ld bytes %ld\n", counter, pids, got);
	return counter == (long)NTHREADS * ITERS ? 0 : 1;
}
`

// setupMultiThreaded compiles a C program whose 4 pthreads share a
// mutex-protected counter and make system calls in their loop.
func setupMultiThreaded(dir string) (*workload, error) {
	exe, err := compileC(dir, "threads.c", multiThreadedC, "-pthread")
	if err != nil {
		return nil, err
	}
	return &workload{
		name: "multi-threaded",
		desc: "C, 4 pthreads x 20000 iterations: mutex + shared counter, then pipe write / getpid / clock_gettime",
		dir:  dir,
		argv: []string{exe},
	}, nil
}

const goProgram = `package main

import (
	"fmt"
	"hash/fnv"
	"sync"
	"time"
)

// A pipeline: a producer, 8 worker goroutines that allocate and hash
// buffers, a collector, and timers ticking while it runs.
func main() {
	const items = 150000
	jobs := make(chan int, 64)
	results := make(chan uint64, 64)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				buf := make([]byte, 64+(j*37)%2048)
				for k := range buf {
					buf[k] = byte(j + k)
				}
				m := map[int]int{j: len(buf), j + 1: k(j)}
				h := fnv.New64a()
				h.Write(buf)
				results <- h.Sum64() + uint64(m[j])
			}
		}()
	}
	go func() {
		for i := 0; i < items; i++ {
			jobs <- i
		}
		close(jobs)
	}()
	go func() {
		wg.Wait()
		close(results)
	}()

	ticker := time.NewTicker(20 * time.Millisecond)
	defer ticker.Stop()
	timeout := time.After(time.Minute)
	var sum uint64
	n, ticks := 0, 0
	for results != nil {
		select {
		case r, ok := <-results:
			if !ok {
				results = nil
				break
			}
			sum += r
			n++
		case <-ticker.C:
			ticks++
		case <-timeout:
			panic("timeout")
		}
	}
	time.Sleep(5 * time.Millisecond)
	// ticks depends on timing, so only whether there were any is printed.
	fmt.Printf("items %d sum %016x ticked %v\n", n, sum, ticks > 0)
}

func k(j int) int { return j * j }
`

// setupGoProgram builds a Go program using goroutines, channels, timers
// and allocation.
func setupGoProgram(dir string) (*workload, error) {
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(goProgram), 0o644); err != nil {
		return nil, err
	}
	exe := filepath.Join(dir, "goprog")
	if out, err := combinedOutput(dir, "go", "build", "-o", exe, src); err != nil {
		return nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	return &workload{
		name: "go-program",
		desc: "Go: producer, 8 worker goroutines allocating and hashing buffers, channels, a ticker",
		dir:  dir,
		argv: []string{exe},
	}, nil
}

// compileC writes source to dir/name and compiles it with gcc -O2.
func compileC(dir, name, source string, extra ...string) (string, error) {
	src := filepath.Join(dir, name)
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		return "", err
	}
	exe := src[:len(src)-len(filepath.Ext(src))]
	args := append([]string{"-O2", "-Wall", "-o", exe, src}, extra...)
	if out, err := combinedOutput(dir, "gcc", args...); err != nil {
		return "", fmt.Errorf("gcc %s: %v\n%s", name, err, out)
	}
	return exe, nil
}

const mutexC = `#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>

#define NTHREADS 4
#define ITERS 20000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter, pidsum;

/* Each thread locks, increments, unlocks; every 4th iteration it also
   calls getpid (a real system call, not a cached one). */
static void *worker(void *arg) {
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&mu);
		counter++;
		pthread_mutex_unlock(&mu);
		if (i % 4 == 0) {
			long p = syscall(SYS_getpid);
			pthread_mutex_lock(&mu);
			pidsum += p > 0;
			pthread_mutex_unlock(&mu);
		}
	}
	return arg;
}

int main(void) {
	pthread_t th[NTHREADS];
	for (long t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	printf("counter %ld getpids %ld\n", counter, pidsum);
	return counter == (long)NTHREADS * ITERS ? 0 : 1;
}
`

// setupMutex compiles the issue-12 mutex workload: 4 pthreads x 20000
// lock/increment/unlock, a getpid every 4th iteration.
func setupMutex(dir string) (*workload, error) {
	exe, err := compileC(dir, "mutex.c", mutexC, "-pthread")
	if err != nil {
		return nil, err
	}
	return &workload{
		name: "mutex",
		desc: "C, 4 pthreads x 20000 lock/increment/unlock of a shared mutex, a getpid every 4th iteration",
		dir:  dir,
		argv: []string{exe},
	}, nil
}

const pythonJSON = `import json, random
random.seed(1)
total = 0
for i in range(300):
    xs = [random.random() for _ in range(200)] + [random.randrange(1 << 40) for _ in range(100)]
    total += len(json.dumps({"round": i, "xs": xs, "s": [str(x) for x in xs[:50]]}))
print("bytes", total)
`

// setupPythonJSON runs python3 dumping random lists to JSON. The
// interpreter is resolved to its real path (not a pyenv shim, which is a
// shell script that would add processes).
func setupPythonJSON(dir string) (*workload, error) {
	out, err := combinedOutput(dir, "python3", "-c", "import sys; print(sys.executable)")
	if err != nil {
		return nil, fmt.Errorf("python3: %v\n%s", err, out)
	}
	py := strings.TrimSpace(string(out))
	script := filepath.Join(dir, "dumps.py")
	if err := os.WriteFile(script, []byte(pythonJSON), 0o644); err != nil {
		return nil, err
	}
	return &workload{
		name: "python-json",
		desc: "python3: json.dumps of lists of 300 random numbers (and their strings), 300 rounds",
		dir:  dir,
		argv: []string{py, "-S", script},
	}, nil
}

// goBuildFiles is a small module of three packages importing a dozen
// standard packages: built with an empty GOCACHE, go compiles those too
// (about 120 processes: compile, asm, link, cgo and vet helpers).
var goBuildFiles = map[string]string{
	"go.mod": "module example.com/small\n\ngo 1.21\n",
	"main.go": `package main

import (
	"encoding/json"
	"fmt"
	"os"

	"example.com/small/shapes"
	"example.com/small/words"
)

func main() {
	b, _ := json.Marshal(shapes.All())
	fmt.Fprintln(os.Stdout, string(b), words.Count("a b c"))
}
`,
	"shapes/shapes.go": `package shapes

import (
	"math"
	"sort"
)

type Shape struct {
	Name string
	Area float64
}

func All() []Shape {
	s := []Shape{{"circle", math.Pi}, {"square", 1}}
	sort.Slice(s, func(i, j int) bool { return s[i].Area < s[j].Area })
	return s
}
`,
	"words/words.go": `package words

import (
	"bufio"
	"strings"
)

func Count(s string) int {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Split(bufio.ScanWords)
	n := 0
	for sc.Scan() {
		n++
	}
	return n
}
`,
}

// setupGoBuild writes a small module; every run builds it with an empty
// GOCACHE (a fresh directory, removed before each run).
func setupGoBuild(dir string) (*workload, error) {
	mod := filepath.Join(dir, "mod")
	for name, body := range goBuildFiles {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	cache := filepath.Join(dir, "gocache")
	out := filepath.Join(dir, "small")
	// Go's telemetry counter files are mapped shared and written by every
	// go process on the machine: a private configuration directory with
	// telemetry off keeps other builds' writes out of the recording
	// (docs/limitations.md).
	cfg := filepath.Join(dir, "config")
	if err := os.MkdirAll(filepath.Join(cfg, "go", "telemetry"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cfg, "go", "telemetry", "mode"), []byte("off\n"), 0o644); err != nil {
		return nil, err
	}
	return &workload{
		name: "go-build",
		desc: "cold go build of a 3-package module importing a dozen standard packages (empty GOCACHE, about 120 processes)",
		dir:  mod,
		argv: []string{"env", "GOCACHE=" + cache, "XDG_CONFIG_HOME=" + cfg, "GOFLAGS=", "GOTOOLCHAIN=local", "CGO_ENABLED=0",
			goBin, "build", "-o", out, "."},
		reset: func() error {
			os.Remove(out)
			return os.RemoveAll(cache)
		},
	}, nil
}
