package replay

import (
	"testing"

	"github.com/gorr-debugger/gorr/internal/asyncpoint"
)

// A pad's site must not cover, after its first byte, an address where a
// signal interrupted a thread of the process; a fork's copy starts with
// the parent's addresses and goes on alone.
func TestResumesInside(t *testing.T) {
	p := &rproc{}
	if asyncpoint.ResumesInside(0x1000, 8, p.resumes) {
		t.Fatal("no signal yet, yet an address inside")
	}
	p.interrupted(0x1004)
	for _, c := range []struct {
		site, n uint64
		want    bool
	}{
		{0x1000, 8, true},  // in the middle of the jump
		{0x1000, 5, true},  // the jump's last byte
		{0x1000, 4, false}, // just past the site
		{0x1004, 6, false}, // at the site's start: entering there is fine
		{0x1003, 2, true},
		{0x1005, 8, false},
	} {
		if got := asyncpoint.ResumesInside(c.site, c.n, p.resumes); got != c.want {
			t.Errorf("ResumesInside(0x%x, %d) = %v, want %v", c.site, c.n, got, c.want)
		}
	}
	c := p.clone()
	c.interrupted(0x3004)
	if !asyncpoint.ResumesInside(0x1000, 8, c.resumes) || asyncpoint.ResumesInside(0x3000, 8, p.resumes) {
		t.Fatal("clone shares or lost the addresses")
	}
}
