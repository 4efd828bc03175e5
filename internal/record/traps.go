package record

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/linux"
	"github.com/gorr-debugger/gorr/internal/osfile"
	"github.com/gorr-debugger/gorr/internal/trace"
	"github.com/gorr-debugger/gorr/internal/tracee"
)

// Where the kernel traps rdtsc, rdtscp and cpuid.
//
// The recorder patches every rdtsc, rdtscp and cpuid it finds in the code
// of the ELF files a process maps with an int3 (patchSites), so those
// stop and are emulated whatever the kernel does. The kernel's own traps
// (PR_SET_TSC's CR4.TSD and cpuid faulting's MSR) are only needed for
// code the recorder could not scan: anonymous executable memory (JIT
// compilers), writable or shared code, files that are not ELF or have no
// section headers. They are not free: the kernel switches CR4.TSD and the
// cpuid-faulting MSR on every context switch between a trapping thread
// and any other (the recorder itself, at each ptrace stop), and in a VM
// each switch is an exit to the hypervisor; measured here, a ptrace stop
// costs about four times as much with both on.
//
// So a process traps only when it needs to: at exec when one of its
// executable mappings is not covered (the KindExec event says which,
// trace.ExecUntrapped), and from the call that first gives it uncovered
// executable memory on (mmap, mprotect, shmat; trace.TrapsAfter on that
// call's exit event). Then every thread of the process is made to trap
// before it next runs user code (armTraps). Replay does the same.

// traps is what a thread's kernel flags trap, as the recorder set them:
// rdtsc and rdtscp (PR_SET_TSC) and cpuid (ARCH_SET_CPUID). Fork and
// clone copy both; exec keeps the first and clears the second.
type traps struct{ tsc, cpuid bool }

// trapCounts counts the processes by how they trap (record --stats).
type trapCounts struct {
	execs  int // exec'd address spaces
	atExec int // of which trapped from their exec
	later  int // processes that gained uncovered code later
}

// wantTraps tells whether t's process must trap the instructions by
// kernel: it has uncovered code, or the recording traps everywhere.
func (r *recorder) wantTraps(t *task) bool { return r.opts.AlwaysTrap || t.uncovered }

// setTraps makes the kernel trap (on) or not trap the instructions in t,
// which is stopped where resuming runs user code and has no signal to
// deliver (at most two injected calls, none when t is set so already).
func (r *recorder) setTraps(t *task, on bool) error {
	if t.kern.tsc != on {
		mode := uint64(unix.PR_TSC_ENABLE)
		if on {
			mode = unix.PR_TSC_SIGSEGV
		}
		if _, err := tracee.MustInject(t.tid, t.sc, unix.SYS_PRCTL, unix.PR_SET_TSC, mode); err != nil {
			return fmt.Errorf("%s rdtsc: %w", trapVerb(on), err)
		}
		t.kern.tsc = on
	}
	// cpuid faulting exists on Intel CPUs and some VMs; without it cpuid
	// in uncovered code runs natively, and replay must run on the same
	// CPU model. The CPU's answer does not change: once it said no, it
	// is not asked again.
	if t.kern.cpuid != on && !r.noCpuidFaulting {
		arg := uint64(1) // ARCH_SET_CPUID: 1 enables cpuid, 0 makes it fault
		if on {
			arg = 0
		}
		ret, _, err := tracee.Inject(t.tid, t.sc, unix.SYS_ARCH_PRCTL, 0x1012, arg)
		switch {
		case err != nil:
			return fmt.Errorf("%s cpuid: %w", trapVerb(on), err)
		case ret == 0:
			t.kern.cpuid = on
			r.cpuidFaulting = r.cpuidFaulting || on
		case on && !r.cpuidFaulting:
			r.noCpuidFaulting = true
		}
	}
	return nil
}

func trapVerb(on bool) string {
	if on {
		return "trap"
	}
	return "untrap"
}

// armTraps makes t trap the instructions before it runs user code, if
// its process needs that and t does not yet (another thread of the
// process gained uncovered code while t was stopped). A thread at a
// signal-delivery stop with a signal to deliver is armed at its next
// resume instead: a call injected there would cancel the signal. It
// runs no code of its own before that (the delivery stops it at the
// handler's first instruction).
func (r *recorder) armTraps(t *task, sig int) error {
	if !r.wantTraps(t) || sig != 0 || t.kern.tsc && (t.kern.cpuid || r.noCpuidFaulting) {
		return nil
	}
	if err := r.setTraps(t, true); err != nil {
		return fmt.Errorf("tid %d: %w", t.tid, err)
	}
	return nil
}

// gainUncovered notes that t's call (ending with event ev) gave its
// process executable memory no scan covers: all its threads trap from
// now on, each armed before it next runs user code.
func (r *recorder) gainUncovered(t *task, ev *trace.Event) {
	if t.uncovered {
		return
	}
	r.warnUntrappedTSC(t)
	r.trapCount.later++
	if !r.opts.AlwaysTrap {
		ev.Flags |= trace.TrapsAfter
	}
	for _, o := range r.tasks {
		if o.tgid == t.tgid {
			o.uncovered = true
		}
	}
	t.uncovered = true
}

// uncoveredCall tells whether the successful call nr with arguments a
// made executable memory that the recorder does not scan: anonymous
// executable memory, executable protection added to a range by mprotect
// (the range may have been written), a System V segment attached with
// SHM_EXEC. A file mapping is judged in recordFileMap (coveredFile).
func uncoveredCall(nr int, a linux.Args) bool {
	const shmExec = 0o100000 // SHM_EXEC
	switch nr {
	case unix.SYS_MMAP:
		return a[3]&unix.MAP_ANONYMOUS != 0 && a[2]&unix.PROT_EXEC != 0
	case unix.SYS_MPROTECT, unix.SYS_PKEY_MPROTECT:
		return a[2]&unix.PROT_EXEC != 0
	case unix.SYS_SHMAT:
		return a[2]&shmExec != 0
	}
	return false
}

// coveredMapping tells whether executable mapping m (a mapping of a
// file: name, protection, shared or not) holds only code the recorder
// scanned: a private, read-only mapping of an ELF file with executable
// sections, not a memfd or a deleted file (code a program wrote). The
// file's status is known if given, else read through path.
func (r *recorder) coveredMapping(path string, known *unix.Stat_t, name string, prot uint32, shared bool) bool {
	if shared || prot&unix.PROT_WRITE != 0 || !strings.HasPrefix(name, "/") ||
		strings.HasPrefix(name, "/memfd:") || strings.HasSuffix(name, " (deleted)") {
		return false
	}
	var st unix.Stat_t
	if known != nil {
		st = *known
	} else if unix.Stat(path, &st) != nil {
		return false
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	key := codeKey{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim}
	if ok, seen := r.elfCode[key]; seen {
		return ok
	}
	ok := hasCodeSections(path)
	r.elfCode[key] = ok
	return ok
}

// codeKey identifies a file's version for coveredMapping's cache.
type codeKey struct {
	dev, ino uint64
	size     int64
	mtime    unix.Timespec
}

// hasCodeSections tells whether the file at path is an ELF file with an
// executable section, which is what patch.Scan decodes: without section
// headers, nothing of the file is scanned.
func hasCodeSections(path string) bool {
	f, err := osfile.Open(path, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	// Only the section headers are read (two reads): debug/elf's
	// NewFile reads every header and name one by one, 0.1 ms a file.
	var eh [64]byte
	if _, err := f.ReadAt(eh[:], 0); err != nil || string(eh[:4]) != elf.ELFMAG ||
		elf.Class(eh[elf.EI_CLASS]) != elf.ELFCLASS64 || elf.Data(eh[elf.EI_DATA]) != elf.ELFDATA2LSB {
		return false
	}
	le := binary.LittleEndian
	shoff, shentsize, shnum := le.Uint64(eh[0x28:]), int(le.Uint16(eh[0x3a:])), int(le.Uint16(eh[0x3c:]))
	if shoff == 0 || shentsize < 64 || shnum == 0 || shnum > 1<<15 {
		return false
	}
	sh := make([]byte, shnum*shentsize)
	if _, err := f.ReadAt(sh, int64(shoff)); err != nil {
		return false
	}
	for i := 0; i < shnum; i++ {
		h := sh[i*shentsize:]
		if elf.SectionType(le.Uint32(h[4:])) == elf.SHT_PROGBITS && elf.SectionFlag(le.Uint64(h[8:]))&elf.SHF_EXECINSTR != 0 {
			return true
		}
	}
	return false
}

// execCovered tells whether every executable mapping of a freshly exec'd
// address space (maps, read before gorr adds its own code) is covered.
func (r *recorder) execCovered(t *task, maps []tracee.Map) bool {
	for _, m := range maps {
		if m.Prot&unix.PROT_EXEC == 0 || m.Name == "[vdso]" || m.Name == "[vsyscall]" {
			continue
		}
		path := fmt.Sprintf("/proc/%d/map_files/%x-%x", t.tid, m.Start, m.End)
		if m.Inode == 0 || !r.coveredMapping(path, nil, m.Name, m.Prot, m.Shared) {
			return false
		}
	}
	return true
}
