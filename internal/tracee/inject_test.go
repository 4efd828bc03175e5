package tracee

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/ptrace"
)

// TestInjectBatch runs a batch in the stopped stub: it opens the stub's
// own file, maps it through the descriptor the openat returned (FdOf),
// and asks for the pid, all at one stop.
func TestInjectBatch(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	stub, err := WriteStub(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Cmd{Path: stub, Args: []string{stub}, SysProcAttr: &syscall.SysProcAttr{Ptrace: true}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	th := ptrace.NewThread(pid)
	defer th.KillAndReap()
	timer := time.AfterFunc(30*time.Second, func() { _ = unix.Kill(pid, unix.SIGKILL) })
	defer timer.Stop()
	if st, err := th.Wait(); err != nil || st.Kind != ptrace.StopSignal {
		t.Fatalf("stub's first stop: %v %v", st, err)
	}
	if err := th.SetOptions(ptrace.Options); err != nil {
		t.Fatal(err)
	}
	mem, err := OpenMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	before, err := th.GetRegs()
	if err != nil {
		t.Fatal(err)
	}
	const scratch, at = 0x7e0000000000, 0x7e0000100000
	if _, err := MustInject(pid, StubEntry, unix.SYS_MMAP, scratch, 0x2000, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED, ^uint64(0), 0); err != nil {
		t.Fatal(err)
	}
	path := uint64(scratch + 0x1000)
	if err := mem.WriteMem(path, append([]byte(stub), 0)); err != nil {
		t.Fatal(err)
	}
	atFdcwd := int64(unix.AT_FDCWD)
	calls := []Call{
		{Nr: unix.SYS_OPENAT, Args: [6]uint64{uint64(atFdcwd), path, unix.O_RDONLY}},
		{Nr: unix.SYS_MMAP, Args: [6]uint64{at, 0x1000, unix.PROT_READ, unix.MAP_PRIVATE | unix.MAP_FIXED, ^uint64(0), 0}, FdOf: 1},
		{Nr: unix.SYS_GETPID},
		{Nr: unix.SYS_CLOSE, Args: [6]uint64{1000}}, // fails: results are per call
	}
	if BatchSize(len(calls)) > 0x1000 {
		t.Fatalf("batch of %d calls needs %d bytes", len(calls), BatchSize(len(calls)))
	}
	res, err := InjectBatch(pid, mem, scratch, calls)
	if err != nil {
		t.Fatal(err)
	}
	if res[0] < 0 || uint64(res[1]) != at || res[2] != int64(pid) || res[3] != -int64(unix.EBADF) {
		t.Fatalf("results %d", res)
	}
	magic := make([]byte, 4)
	if err := mem.ReadMem(at, magic); err != nil || string(magic) != "\x7fELF" {
		t.Fatalf("mapped file starts with %q (%v)", magic, err)
	}
	if err := MustInjectBatch(pid, mem, scratch, calls[3:]); err == nil {
		t.Fatal("MustInjectBatch: no error for a failed call")
	}
	// In code the tracee cannot write (the file mapped above, read-only:
	// made executable), the results come back in registers.
	if _, err := MustInject(pid, StubEntry, unix.SYS_MPROTECT, at, 0x1000, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		t.Fatal(err)
	}
	res, err = InjectBatchInRegs(pid, mem, at, calls[2:])
	if err != nil {
		t.Fatal(err)
	}
	if res[0] != int64(pid) || res[1] != -int64(unix.EBADF) {
		t.Fatalf("results in registers %d", res)
	}
	if _, err := InjectBatchInRegs(pid, mem, at, calls[:2]); err == nil {
		t.Fatal("InjectBatchInRegs accepted FdOf")
	}
	after, err := th.GetRegs()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatal("registers not restored after the batches")
	}
}
