package asyncpoint

// JumpLen is the size of the jump replay writes at a site.
const JumpLen = 5

// Targets returns the addresses execution reached other than by falling
// through from the instruction before (branch targets), given the
// instructions in the order they executed.
func Targets(run []Insn) map[uint64]bool {
	t := map[uint64]bool{}
	for i := 1; i < len(run); i++ {
		if run[i].PC != run[i-1].PC+uint64(run[i-1].Len) {
			t[run[i].PC] = true
		}
	}
	return t
}

// ChooseSite picks where in one loop iteration (cycle: the instructions
// of the iteration in execution order) a point can be taken with a pad:
// an instruction of at least JumpLen bytes that can be relocated, or else
// a run of consecutive relocatable instructions of at least JumpLen bytes
// that execution only enters at its first one: none of the others is an
// observed branch target (targets) or a possible one (entered(pc) true:
// a direct branch in the file leads there, or the code is not known). A
// site never has an address after its first byte where code may be
// entered from elsewhere in replay (resumes(addr) true: where the thread
// resumes, where a signal interrupted a thread). It returns the site's
// address and length, or ok false.
func ChooseSite(cycle []Insn, targets map[uint64]bool, entered func(pc uint64) bool, resumes func(addr uint64) bool) (pc uint64, n int, ok bool) {
	inside := func(pc uint64, n int) bool { return ResumesInside(pc, uint64(n), resumes) }
	for _, in := range cycle {
		if in.Relocatable && in.Len >= JumpLen && !inside(in.PC, in.Len) {
			return in.PC, in.Len, true
		}
	}
	for i := range cycle {
		if !cycle[i].Relocatable {
			continue
		}
		total := 0
		for j := i; j < len(cycle); j++ {
			in := cycle[j]
			if !in.Relocatable || j > i && (in.PC != cycle[j-1].PC+uint64(cycle[j-1].Len) || targets[in.PC] || entered == nil || entered(in.PC)) {
				break
			}
			total += in.Len
			if total >= JumpLen && !inside(cycle[i].PC, total) {
				return cycle[i].PC, total, true
			}
		}
	}
	return 0, 0, false
}

// ResumesInside tells whether resumes (nil: none) holds an address of
// [site, site+n) after its first byte, where the jump replay writes at
// a site would be entered in its middle.
func ResumesInside(site, n uint64, resumes func(addr uint64) bool) bool {
	if resumes == nil {
		return false
	}
	for a := site + 1; a < site+n; a++ {
		if resumes(a) {
			return true
		}
	}
	return false
}

// Loop follows the instructions a thread executes, one at a time, while
// the recorder single-steps it towards a point, and keeps a site in the
// loop the thread runs now. The site is chosen (ChooseSite) when an
// address repeats, from the instructions since its latest execution:
// one iteration of the innermost loop around it. It is chosen again when
// the thread goes once around a loop without passing the site: a site
// taken from an iteration that crossed into an enclosing loop (stepping
// began in the last iteration of an inner loop, so the first repeat
// came round through the outer loop's code) would otherwise be met only
// at the next outer iteration, after the whole inner loop; the point
// was then taken where the step budget ran out, without a site, and
// replay examined every arrival there with a breakpoint
// (preempt_itimer_compute: 75000 inner iterations a round; under load
// the search ran out of its time box).
type Loop struct {
	run     []Insn
	last    map[uint64]int  // address -> index in run of its latest execution
	targets map[uint64]bool // addresses reached other than by falling through
	site    uint64
	n       int
	// Entered and Resumes are ChooseSite's entered and resumes.
	Entered func(pc uint64) bool
	Resumes func(addr uint64) bool
}

// Site returns the current site and its length (0, 0: none yet).
func (l *Loop) Site() (pc uint64, n int) { return l.site, l.n }

// Steps returns how many instructions have been added.
func (l *Loop) Steps() int { return len(l.run) }

// Arrive is called with the instruction the thread is about to execute.
// It reports whether the thread stands at the site (the point is taken
// there, before the instruction runs; it is not added then). Otherwise
// the instruction is added to the run (the caller then executes it).
func (l *Loop) Arrive(in Insn) (atSite bool) {
	if l.last == nil {
		l.last, l.targets = map[uint64]int{}, map[uint64]bool{}
	}
	if i, ok := l.last[in.PC]; ok {
		// One more time around a loop: run[i:] is its latest iteration.
		if s, seen := l.last[l.site]; l.site == 0 || !seen || s < i {
			if pc, n, ok := ChooseSite(l.run[i:], l.targets, l.Entered, l.Resumes); ok {
				l.site, l.n = pc, n
			}
		}
	}
	if l.site != 0 && in.PC == l.site {
		return true
	}
	if k := len(l.run); k > 0 && in.PC != l.run[k-1].PC+uint64(l.run[k-1].Len) {
		l.targets[in.PC] = true
	}
	l.last[in.PC] = len(l.run)
	l.run = append(l.run, in)
	return false
}

// Site is a place a point can be taken at: the address of its first
// instruction and its length in bytes (see ChooseSite).
type Site struct {
	PC  uint64
	Len int
}

// Candidates returns up to max sites among the instructions added so
// far, for a search that went on long without an address repeating (a
// loop whose body, calls included, runs hundreds of instructions): the
// current site if one is chosen, then single instructions ChooseSite
// would take on their own, spread evenly over the run from its first to
// its latest. The latest instruction added, where the thread stands, is
// never one. The thread executed each of them once; it arrives at one
// again if it goes round a loop that holds it.
func (l *Loop) Candidates(max int) []Site {
	var out []Site
	if l.site != 0 && max > 0 {
		out = append(out, Site{l.site, l.n})
	}
	var eligible []Site
	seen := map[uint64]bool{l.site: true}
	for i, in := range l.run {
		if i == len(l.run)-1 || seen[in.PC] {
			continue
		}
		seen[in.PC] = true
		if in.Relocatable && in.Len >= JumpLen && !ResumesInside(in.PC, uint64(in.Len), l.Resumes) {
			eligible = append(eligible, Site{in.PC, in.Len})
		}
	}
	want := max - len(out)
	switch {
	case want <= 0:
	case len(eligible) <= want:
		out = append(out, eligible...)
	case want == 1:
		out = append(out, eligible[0])
	default:
		for k := range want {
			out = append(out, eligible[k*(len(eligible)-1)/(want-1)])
		}
	}
	return out
}
