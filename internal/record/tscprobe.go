package record

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Whether PR_SET_TSC traps rdtsc here. Some machines accept
// PR_TSC_SIGSEGV (and PR_GET_TSC reads it back) but never fault an
// rdtsc: paravirtualised guests whose kernel cannot set CR4.TSD (a PVM
// guest, this project's AMD machines). There the recorder's kernel trap
// for code it could not scan (JIT code, traps.go) does nothing, and an
// rdtsc in such code runs unrecorded. The recorder asks once, when a
// process first needs the trap, and warns.

// tscProbeCode is the probe's program: prctl(PR_SET_TSC, PR_TSC_SIGSEGV);
// rdtsc; write(1, "n", 1); exit(0). Where rdtsc traps it dies of SIGSEGV
// before the write. (The status cannot tell: gorr ignores SIGCHLD, so
// its children are reaped by the kernel.)
var tscProbeCode = []byte{
	0xb8, byte(unix.SYS_PRCTL), 0, 0, 0, // mov $SYS_prctl, %eax
	0xbf, unix.PR_SET_TSC, 0, 0, 0, // mov $PR_SET_TSC, %edi
	0xbe, unix.PR_TSC_SIGSEGV, 0, 0, 0, // mov $PR_TSC_SIGSEGV, %esi
	0x0f, 0x05, // syscall
	0x0f, 0x31, // rdtsc
	0xb8, byte(unix.SYS_WRITE), 0, 0, 0, // mov $SYS_write, %eax
	0xbf, 1, 0, 0, 0, // mov $1, %edi
	0x48, 0x8d, 0x35, 16, 0, 0, 0, // lea msg(%rip), %rsi
	0xba, 1, 0, 0, 0, // mov $1, %edx
	0x0f, 0x05, // syscall
	0xb8, byte(unix.SYS_EXIT), 0, 0, 0, // mov $SYS_exit, %eax
	0x31, 0xff, // xor %edi, %edi
	0x0f, 0x05, // syscall
	'n', // msg:
}

// probeTSCTrap runs the probe and tells whether rdtsc faulted in it.
func probeTSCTrap() (bool, error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return false, fmt.Errorf("rdtsc probe: %w", err)
	}
	defer rd.Close()
	probe, err := startTinyELF(tinyELF(tscProbeCode), "gorr-tsc-probe", &syscall.SysProcAttr{}, wr)
	wr.Close()
	if err != nil {
		return false, fmt.Errorf("start the rdtsc probe: %w", err)
	}
	out, err := io.ReadAll(rd) // to EOF: the probe has exited
	_, _ = probe.Wait()        // reaped already where SIGCHLD is ignored
	if err != nil {
		return false, fmt.Errorf("rdtsc probe: %w", err)
	}
	return string(out) != "n", nil
}

// tscTrapWorks tells whether PR_SET_TSC traps rdtsc on this machine,
// probing at the first call; a probe that cannot run counts as yes (no
// warning, as before the probe existed).
func (r *recorder) tscTrapWorks() bool {
	if r.tscProbed == 0 {
		r.tscProbed = 1
		if ok, err := probeTSCTrap(); err != nil {
			r.logf("%v", err)
		} else if !ok {
			r.tscProbed = 2
		}
	}
	return r.tscProbed == 1
}

// warnUntrappedTSC says, once a recording, that t's process runs code no
// scan covers on a machine where rdtsc cannot be trapped.
func (r *recorder) warnUntrappedTSC(t *task) {
	if r.tscWarned || r.tscTrapWorks() {
		return
	}
	r.tscWarned = true
	if r.opts.Warn != nil {
		fmt.Fprintf(r.opts.Warn, "gorr: warning: process %d runs code gorr could not scan (JIT code in anonymous or writable memory, a memfd, an ELF file without sections), and this machine does not trap rdtsc (PR_SET_TSC has no effect here, as in some paravirtualised VMs): an rdtsc or rdtscp in that code runs unrecorded, and replay reports a divergence if its value reaches a register it checks\n", t.tgid)
	}
}
