package syscallbuf

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStubMatchesTable checks that the stub's dispatch (the `cmp $nr,
// %eax` chain at its entry) names exactly the calls the table marks
// Buffered, so the filter, the decoder and the stub agree.
func TestStubMatchesTable(t *testing.T) {
	src, err := os.ReadFile("stub_amd64.S")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start := strings.Index(text, "\nentry:")
	end := strings.Index(text[start:], "\tjmp traced\n")
	if start < 0 || end < 0 {
		t.Fatal("no entry dispatch in stub_amd64.S")
	}
	var got []int
	for _, m := range regexp.MustCompile(`cmp \$(\d+), %eax`).FindAllStringSubmatch(text[start:start+end], -1) {
		nr, _ := strconv.Atoi(m[1])
		got = append(got, nr)
	}
	slices.Sort(got)
	if !slices.Equal(got, Buffered) {
		t.Fatalf("stub dispatches %v, table marks %v", got, Buffered)
	}
}

// TestStubHeaderFields checks that the header offsets the stub names
// (`.set NAME, HDR + off`) are the ones this package documents.
func TestStubHeaderFields(t *testing.T) {
	src, err := os.ReadFile("stub_amd64.S")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"PROBE_NR":  HdrProbeNr,
		"PROBE_ARG": HdrProbeArg,
		"ZERO_TS":   HdrZeroTS,
		"BLOCKED":   HdrBlocked,
		"BLOCKED_N": HdrBlockedN,
		"SCRATCH":   128,
		"YIELD":     HdrYield,
		"STDIO":     HdrStdio,
	}
	got := map[string]int{}
	for _, m := range regexp.MustCompile(`\.set (\w+), HDR \+ (\d+)`).FindAllStringSubmatch(string(src), -1) {
		n, _ := strconv.Atoi(m[2])
		got[m[1]] = n
	}
	for name, off := range want {
		if got[name] != off {
			t.Errorf("stub sets %s at HDR+%d, syscallbuf.go says %d", name, got[name], off)
		}
	}
	// The fields must not overlap: the zero timespec stays zero, the
	// bitmap (64 bytes) ends before the stub's fstatfs scratch (120
	// bytes from 128), and the counter follows that.
	for name, v := range map[string]uint64{"MAP_START": Base, "MAP_END": Base + Size, "HDRLEN": HdrLen} {
		m := regexp.MustCompile(`\.set ` + name + `, (0x[0-9a-f]+|\d+)\n`).FindStringSubmatch(string(src))
		if m == nil {
			t.Errorf("stub sets no %s", name)
		} else if got, _ := strconv.ParseUint(m[1], 0, 64); got != v {
			t.Errorf("stub sets %s to %s, syscallbuf.go says 0x%x", name, m[1], v)
		}
	}
	if HdrProbeArg+8 > HdrZeroTS || HdrZeroTS+16 > HdrBlocked || HdrBlocked+64 > 128 || 128+120 > HdrBlockedN || HdrBlockedN+4 > HdrYield || HdrYield+4 > HdrStdio || HdrStdio+4 > HdrLen {
		t.Errorf("header fields overlap")
	}
}
