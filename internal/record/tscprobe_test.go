package record

import (
	"os"
	"testing"
)

// The probe runs and answers. What it answers is the machine's: both are
// right somewhere (GORR_EXPECT_TSC_TRAP=0/1 checks it where known).
func TestProbeTSCTrap(t *testing.T) {
	ok, err := probeTSCTrap()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PR_SET_TSC traps rdtsc: %v", ok)
	if want := os.Getenv("GORR_EXPECT_TSC_TRAP"); want != "" && want != map[bool]string{false: "0", true: "1"}[ok] {
		t.Fatalf("probe says %v, GORR_EXPECT_TSC_TRAP=%s", ok, want)
	}
}
