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
// site never has avoid (where the thread resumes in replay) after its
// first byte. It returns the site's address and length, or ok false.
func ChooseSite(cycle []Insn, targets map[uint64]bool, entered func(pc uint64) bool, avoid uint64) (pc uint64, n int, ok bool) {
	inside := func(pc uint64, n int) bool { return avoid > pc && avoid < pc+uint64(n) }
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
