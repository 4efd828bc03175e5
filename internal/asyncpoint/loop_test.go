package asyncpoint

import (
	"testing"

	"github.com/gorr-debugger/gorr/internal/trace"
)

// The loop nest of preempt_itimer_compute as gcc -O1 builds it (addresses
// as in its binary): an inner loop of 75000 iterations whose only site is
// the 8-byte xor at 0x12e1, and the outer loop's code, with a 7-byte
// rip-relative store (progress = r + 1) at 0x130a.
var nestCode = map[uint64][]byte{
	0x12db: {0x4c, 0x89, 0xc2},                               // mov %r8,%rdx
	0x12de: {0x0f, 0xb6, 0xc2},                               // movzbl %dl,%eax
	0x12e1: {0x48, 0x33, 0x9c, 0xc4, 0x00, 0x01, 0x00, 0x00}, // xor 0x100(%rsp,%rax,8),%rbx
	0x12e9: {0x48, 0x89, 0xd8},                               // mov %rbx,%rax
	0x12ec: {0x48, 0x0f, 0xaf, 0xc7},                         // imul %rdi,%rax
	0x12f0: {0x48, 0x89, 0xc1},                               // mov %rax,%rcx
	0x12f3: {0x48, 0xc1, 0xe9, 0x1d},                         // shr $0x1d,%rcx
	0x12f7: {0x48, 0x31, 0xc1},                               // xor %rax,%rcx
	0x12fa: {0x48, 0x89, 0xcb},                               // mov %rcx,%rbx
	0x12fd: {0x48, 0x83, 0xc2, 0x01},                         // add $0x1,%rdx
	0x1301: {0x48, 0x39, 0xd6},                               // cmp %rdx,%rsi
	0x1304: {0x75, 0xd8},                                     // jne 12de
	0x1306: {0x49, 0x83, 0xc0, 0x01},                         // add $0x1,%r8
	0x130a: {0x4c, 0x89, 0x05, 0xbf, 0x2d, 0x00, 0x00},       // mov %r8,0x2dbf(%rip)
	0x1311: {0x48, 0x83, 0xc6, 0x01},                         // add $0x1,%rsi
	0x1315: {0x49, 0x81, 0xf8, 0xe8, 0x03, 0x00, 0x00},       // cmp $0x3e8,%r8
	0x131c: {0x75, 0xbd},                                     // jne 12db
}

// nestRun returns the addresses the thread executes from pc, in the last
// inner iteration of a round, through the next round's first inner
// iterations (inner of them).
func nestRun(pc uint64, inner int) []uint64 {
	body := []uint64{0x12de, 0x12e1, 0x12e9, 0x12ec, 0x12f0, 0x12f3, 0x12f7, 0x12fa, 0x12fd, 0x1301, 0x1304}
	var run []uint64
	for _, a := range body {
		if a >= pc {
			run = append(run, a)
		}
	}
	run = append(run, 0x1306, 0x130a, 0x1311, 0x1315, 0x131c, 0x12db)
	for i := 0; i < inner; i++ {
		run = append(run, body...)
	}
	return run
}

// A search that begins in the last iteration of an inner loop first sees
// an address repeat after going round the outer loop: the site must still
// end up in the inner loop, reached within one more inner iteration, not
// in the outer loop's code, which the thread meets again only after the
// whole inner loop (75000 iterations, far beyond the step budget: the
// point was then taken without a site, and replay's breakpoint search
// ran out of its time box under load).
func TestLoopSiteInInnerLoop(t *testing.T) {
	var regs trace.Regs
	for _, from := range []uint64{0x12e9, 0x12f7, 0x1301, 0x1304} {
		lp := &Loop{Entered: noBranches}
		steps := 0
		for _, pc := range nestRun(from, 1000) {
			in, ok := Decode(nestCode[pc], pc, &regs)
			if !ok {
				t.Fatalf("0x%x does not decode", pc)
			}
			if lp.Arrive(in) {
				break
			}
			steps++
		}
		site, n := lp.Site()
		if site != 0x12e1 || n != 8 {
			t.Errorf("from 0x%x: site 0x%x (%d bytes), want the inner loop's xor at 0x12e1 (8 bytes)", from, site, n)
		}
		if steps > 40 {
			t.Errorf("from 0x%x: %d steps before the site, want at most one round of the outer code and two inner iterations", from, steps)
		}
	}
}

// In a simple loop the site is chosen at the first repeat and reached
// within the next iteration; a loop with no site keeps none.
func TestLoopSimple(t *testing.T) {
	var regs trace.Regs
	body := []uint64{0x12de, 0x12e1, 0x12e9, 0x12ec, 0x12f0, 0x12f3, 0x12f7, 0x12fa, 0x12fd, 0x1301, 0x1304}
	arrive := func(lp *Loop, pcs []uint64, times int) int {
		steps := 0
		for i := 0; i < times; i++ {
			for _, pc := range pcs {
				in, ok := Decode(nestCode[pc], pc, &regs)
				if !ok {
					t.Fatalf("0x%x does not decode", pc)
				}
				if lp.Arrive(in) {
					return steps
				}
				steps++
			}
		}
		return -1
	}
	lp := &Loop{Entered: noBranches}
	// From 0x12f0: 7 instructions to the end of the body, 4 more to the
	// repeat at 0x12f0 (the site is chosen there), 8 to the xor.
	if steps := arrive(lp, append(body[4:], append(body, body...)...), 1); steps != 19 {
		t.Errorf("%d steps before the site, want 19", steps)
	}
	if site, n := lp.Site(); site != 0x12e1 || n != 8 {
		t.Errorf("site 0x%x (%d bytes), want 0x12e1 (8)", site, n)
	}
	// cmp (3 bytes) and jne: no site.
	if steps := arrive(&Loop{Entered: noBranches}, []uint64{0x1301, 0x1304}, 10); steps >= 0 {
		t.Errorf("a loop without %d relocatable bytes arrived at a site after %d steps", JumpLen, steps)
	}
}

// preempt_pushf_loop's compute loop (gcc -O1) has no instruction of
// JumpLen bytes: its sites are runs of two (imul+add at 0x1219, add+sub
// at 0x121d), and a run cannot wrap round the end of the iteration it is
// chosen from. A search begun at the sub, with the thread resuming at
// the add in replay (its previous point, so the run at 0x1219 is out),
// finds no site in the iteration from 0x1220 and must try again at the
// next repeat (the one from 0x1224 has add+sub): a version that waited
// an iteration's length before trying again always came back to 0x1220,
// ran out of steps and took the point there without a site, and every
// later point, resuming at 0x1220, had no site either (replay's
// breakpoint search ran out of its time box).
func TestLoopSitePhase(t *testing.T) {
	code := map[uint64][]byte{
		0x1219: {0x48, 0x0f, 0xaf, 0xc6}, // imul %rsi,%rax
		0x121d: {0x48, 0x01, 0xc8},       // add %rcx,%rax
		0x1220: {0x48, 0x83, 0xea, 0x01}, // sub $0x1,%rdx
		0x1224: {0x75, 0xf3},             // jne 1219
	}
	var regs trace.Regs
	lp := &Loop{Entered: noBranches, Resumes: func(a uint64) bool { return a == 0x121d }}
	steps := 0
	for i := 0; i < 100 && steps >= 0; i++ {
		for _, pc := range []uint64{0x1220, 0x1224, 0x1219, 0x121d} {
			in, ok := Decode(code[pc], pc, &regs)
			if !ok {
				t.Fatalf("0x%x does not decode", pc)
			}
			if lp.Arrive(in) {
				steps = -steps - 1
				break
			}
			steps++
		}
	}
	if steps >= 0 {
		t.Fatalf("no site after %d steps", steps)
	}
	if site, n := lp.Site(); site != 0x121d || n != 7 || -steps-1 > 8 {
		t.Errorf("site 0x%x (%d bytes) after %d steps, want 0x121d (7) within two iterations", site, n, -steps-1)
	}
}

// Candidates offers the sites a long search has executed once, spread
// over its run: never the instruction the thread stands at, never one
// of fewer than JumpLen bytes or one a resume address falls inside.
func TestLoopCandidates(t *testing.T) {
	var regs trace.Regs
	// The outer loop's code, then one inner iteration up to the cmp: no
	// address repeats, so no site is chosen.
	pcs := []uint64{0x1306, 0x130a, 0x1311, 0x1315, 0x131c, 0x12db, 0x12de, 0x12e1, 0x12e9, 0x12ec, 0x12f0, 0x12f3, 0x12f7, 0x12fa, 0x12fd, 0x1301}
	lp := &Loop{Entered: noBranches}
	for _, pc := range pcs {
		in, ok := Decode(nestCode[pc], pc, &regs)
		if !ok {
			t.Fatalf("0x%x does not decode", pc)
		}
		if lp.Arrive(in) {
			t.Fatalf("arrived at a site at 0x%x without a repeat", pc)
		}
	}
	got := lp.Candidates(8)
	want := []Site{{0x130a, 7}, {0x1315, 7}, {0x12e1, 8}}
	if len(got) != len(want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("candidate %d: %v, want %v", i, got[i], want[i])
		}
	}
	if got := lp.Candidates(1); len(got) != 1 || got[0] != want[0] {
		t.Errorf("one candidate: %v, want %v", got, want[:1])
	}
	// A resume address inside the xor rules it out; the one the thread
	// stands at (the last added) is never offered.
	lp2 := &Loop{Entered: noBranches, Resumes: func(a uint64) bool { return a == 0x12e3 }}
	for _, pc := range pcs[:8] {
		in, _ := Decode(nestCode[pc], pc, &regs)
		lp2.Arrive(in)
	}
	for _, c := range lp2.Candidates(8) {
		if c.PC == 0x12e1 {
			t.Errorf("candidate %v: the thread resumes inside it, or stands at it", c)
		}
	}
}
