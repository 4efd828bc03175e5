// Tests os/exec: running /bin/echo with a random argument, `sh -c` with a pipeline and exit status, stdin piping, and env passing.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

func main() {
	arg := fmt.Sprintf("hello-%d", time.Now().UnixNano())
	out, err := exec.Command("/bin/echo", "echo says", arg).Output()
	fmt.Printf("echo: %q err=%v\n", strings.TrimSpace(string(out)), err)

	cmd := exec.Command("sh", "-c", "echo sh pid=$$ parent=$PPID; echo line2 | tr a-z A-Z; exit 7")
	out, err = cmd.Output()
	var ee *exec.ExitError
	code := -1
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	fmt.Printf("sh output:\n%s", out)
	fmt.Printf("sh exit code=%d parent matches=%v\n", code, strings.Contains(string(out), fmt.Sprintf("parent=%d", os.Getpid())))

	cat := exec.Command("sh", "-c", "wc -c")
	cat.Stdin = strings.NewReader(strings.Repeat("x", 1000+os.Getpid()%1000))
	out, err = cat.Output()
	fmt.Printf("wc -c of piped stdin: %s err=%v\n", strings.TrimSpace(string(out)), err)

	env := exec.Command("sh", "-c", "echo GORR_VAR=$GORR_VAR")
	env.Env = append(os.Environ(), "GORR_VAR="+arg)
	out, _ = env.CombinedOutput()
	fmt.Printf("env: %s", out)

	err = exec.Command("definitely-not-a-command-gorr").Run()
	fmt.Printf("missing command error: %v\n", err != nil)
	fmt.Println("EXIT-SUCCESS")
}
