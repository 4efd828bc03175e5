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
