package tracee

import (
	"bufio"
	"context"
	"crypto/rand"
	"hash/crc32"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// checksumChildEnv makes the test binary a child that fills memory with
// random bytes, says so and sleeps (TestChecksumParallel reads it).
const checksumChildEnv = "GORR_TRACEE_CHECKSUM_CHILD"

func init() {
	if os.Getenv(checksumChildEnv) == "" {
		return
	}
	heap := make([]byte, 24<<20)
	rand.Read(heap[:len(heap)/2]) // the rest stays zero
	os.Stdout.WriteString("ready\n")
	time.Sleep(time.Minute)
	os.Stdout.Write(heap[:1])
	os.Exit(0)
}

// The checksum of a process is the same whether its pages are hashed on
// one goroutine or split between several, and it covers each non-zero
// page once, in address order, with the page's CRC-32C.
func TestChecksumParallel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), checksumChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("child said %q: %v", line, err)
	}
	// Stopped, so that its runtime changes no memory between the sums.
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	pid := cmd.Process.Pid
	mem, err := OpenMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	runs, total, err := presentRuns(pid)
	if err != nil {
		t.Fatal(err)
	}
	if total < 3072 {
		t.Fatalf("%d pages present in a child that filled 12 MiB", total)
	}
	skip := []trace.Span{{Addr: runs[len(runs)/2].addr + 100, Len: 5000}}
	for _, crc := range []bool{false, true} {
		var one, three []uint64
		sum1 := foldRuns(mem, splitRuns(runs, total, 1, 0), 0, 0, skip, crc, func(a uint64, c uint32) { one = append(one, a, uint64(c)) })
		parts := splitRuns(runs, total, 3, 0)
		if len(parts) != 3 {
			t.Fatalf("%d runs of %d pages split in %d parts, want 3", len(runs), total, len(parts))
		}
		sum3 := foldRuns(mem, parts, 0, 0, skip, crc, func(a uint64, c uint32) { three = append(three, a, uint64(c)) })
		if sum1 != sum3 {
			t.Fatalf("crc %v: checksum 0x%x on one goroutine, 0x%x on three", crc, sum1, sum3)
		}
		if !crc {
			continue
		}
		if len(one) != len(three) || len(one) < 2*3072 {
			t.Fatalf("%d and %d pages given, want the same, at least 3072", len(one)/2, len(three)/2)
		}
		buf := make([]byte, 4096)
		for i := 0; i < len(one); i += 2 {
			if one[i] != three[i] || one[i+1] != three[i+1] {
				t.Fatalf("page %d: 0x%x %x on one goroutine, 0x%x %x on three", i/2, one[i], one[i+1], three[i], three[i+1])
			}
			if i > 0 && one[i] <= one[i-2] {
				t.Fatalf("page 0x%x given after 0x%x", one[i], one[i-2])
			}
			if i%512 == 0 && !skipped(one[i], skip) {
				if err := mem.ReadMem(one[i], buf); err != nil {
					t.Fatal(err)
				}
				if c := crc32.Checksum(buf, castagnoli); uint64(c) != one[i+1] {
					t.Fatalf("page 0x%x: CRC %x given, %x read", one[i], one[i+1], c)
				}
			}
		}
	}
}

// skipped tells whether the page at pa overlaps a span of skip.
func skipped(pa uint64, skip []trace.Span) bool {
	for _, s := range skip {
		if s.Addr < pa+4096 && s.Addr+s.Len > pa {
			return true
		}
	}
	return false
}
