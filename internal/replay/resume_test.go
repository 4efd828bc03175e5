package replay

import "testing"

func TestResumesInside(t *testing.T) {
	p := &rproc{}
	if p.resumesInside(0x1000, 8) {
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
		if got := p.resumesInside(c.site, c.n); got != c.want {
			t.Errorf("resumesInside(0x%x, %d) = %v, want %v", c.site, c.n, got, c.want)
		}
	}
	// Many addresses: the other lookup order gives the same answers.
	for a := uint64(0x2000); a < 0x2040; a += 4 {
		p.interrupted(a)
	}
	if !p.resumesInside(0x1000, 8) || p.resumesInside(0x2001, 3) || !p.resumesInside(0x2001, 4) {
		t.Fatal("lookup by address range disagrees")
	}
	// A forked address space starts with the parent's addresses and
	// goes on alone.
	c := p.clone()
	c.interrupted(0x3004)
	if !c.resumesInside(0x1000, 8) || p.resumesInside(0x3000, 8) {
		t.Fatal("clone shares or lost the addresses")
	}
}
