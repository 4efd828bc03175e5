package tracee

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/machine"
	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// Inject runs system call nr with args in stopped task tid by pointing
// its instruction pointer at a `syscall` instruction at scAddr, then
// restores its registers. The task must be stopped where resuming runs
// user code (a signal stop or a syscall-exit stop). Signals that arrive
// meanwhile are returned so the caller can decide what to do with them.
func Inject(tid int, scAddr uint64, nr int, args ...uint64) (int64, []int, error) {
	th := ptrace.NewThread(tid)
	saved, err := th.GetRegs()
	if err != nil {
		return 0, nil, err
	}
	r := saved
	var a [6]uint64
	copy(a[:], args)
	ptrace.SetSyscallArgs(&r, a)
	r[ptrace.RAX] = uint64(nr)
	r[ptrace.ORIGRAX] = ^uint64(0)
	r[ptrace.RIP] = scAddr
	if err := th.SetRegs(&r); err != nil {
		return 0, nil, err
	}
	var pending []int
	phase := ptrace.StopSyscallEntry
	if _, err := th.RunUntil(ptrace.Syscall, 0, func(st ptrace.Stop) (ptrace.Action, error) {
		switch st.Kind {
		case ptrace.StopExited:
			return ptrace.Accept, fmt.Errorf("inject %d into tid %d: %w", nr, tid, ErrGone)
		case ptrace.StopSignal:
			pending = append(pending, st.Signal)
			return ptrace.Again, nil
		case ptrace.StopSyscallExit:
			if phase == ptrace.StopSyscallEntry {
				// The exit of a call the task was held in by
				// PTRACE_SYSEMU (skipped): ours comes next.
				return ptrace.Again, nil
			}
			return ptrace.Accept, nil
		case ptrace.StopSyscallEntry:
			if phase != ptrace.StopSyscallEntry {
				return ptrace.Accept, fmt.Errorf("inject %d into tid %d: unexpected %v", nr, tid, st)
			}
			phase = ptrace.StopSyscallExit
			return ptrace.Again, nil
		case ptrace.StopEvent:
			return ptrace.Again, nil
		}
		return ptrace.Accept, fmt.Errorf("inject %d into tid %d: unexpected %v", nr, tid, st)
	}); err != nil {
		return 0, pending, err
	}
	out, err := th.GetRegs()
	if err != nil {
		return 0, pending, err
	}
	if err := th.SetRegs(&saved); err != nil {
		return 0, pending, err
	}
	return int64(out[ptrace.RAX]), pending, nil
}

// MustInject is Inject that turns a negative result into an error.
func MustInject(tid int, scAddr uint64, nr int, args ...uint64) (int64, error) {
	ret, _, err := Inject(tid, scAddr, nr, args...)
	if err != nil {
		return 0, err
	}
	if ret < 0 && ret > -4096 {
		return ret, fmt.Errorf("injected syscall %d in tid %d failed: %w", nr, tid, unix.Errno(-ret))
	}
	return ret, nil
}

// RegsOf is a small helper used by callers that only need a register copy.
func RegsOf(tid int) (trace.Regs, error) { return ptrace.NewThread(tid).GetRegs() }

// Call is one system call of a batch (InjectBatch).
type Call struct {
	Nr   int
	Args [6]uint64
	// FdOf, when not 0, is 1 + the index of an earlier call of the batch
	// whose result is this call's fifth argument (r8: mmap's descriptor)
	// instead of Args[4].
	FdOf int
}

// callCode is the size of one call's code in a batch: mov eax, nr; six
// movabs of the arguments; syscall; mov [rip+disp32], rax.
const callCode = 5 + 6*10 + 2 + 7

// BatchSize is the room InjectBatch needs at its code address for n calls:
// their code, a final int3, and a result slot each.
func BatchSize(n int) uint64 { return uint64(n*callCode+1+7)&^7 + uint64(8*n) }

// BatchCode is how many bytes InjectBatchInRegs writes for n calls.
func BatchCode(n int) uint64 { return uint64(n*callCode + 1) }

// InjectBatch runs calls one after the other in stopped task tid, without
// a stop between them: it writes their code at code (mapped readable,
// writable and executable, BatchSize(len(calls)) bytes that the calls
// leave alone) and runs the task to the int3 that ends it, then restores
// its registers. It returns every call's result (the calls after a failed
// one run too: callers check each). Signals that arrive meanwhile are
// discarded, as MustInject does. The task must be stopped where resuming
// runs user code (a signal stop or a syscall-exit stop).
func InjectBatch(tid int, mem *Mem, code uint64, calls []Call) ([]int64, error) {
	return injectBatch(tid, mem, code, calls, false)
}

// resultRegs keep the results of InjectBatchInRegs (the system call
// instruction changes only rax, rcx and r11).
var resultRegs = [...]struct {
	reg  int
	code [3]byte // mov reg, rax
}{
	{ptrace.RBX, [3]byte{0x48, 0x89, 0xc3}}, {ptrace.RBP, [3]byte{0x48, 0x89, 0xc5}},
	{ptrace.R12, [3]byte{0x49, 0x89, 0xc4}}, {ptrace.R13, [3]byte{0x49, 0x89, 0xc5}},
	{ptrace.R14, [3]byte{0x49, 0x89, 0xc6}}, {ptrace.R15, [3]byte{0x49, 0x89, 0xc7}},
}

// InjectBatchInRegs is InjectBatch for code that the tracee may execute
// but not write (the vDSO): at most six calls, without FdOf, whose
// results are kept in registers, and only BatchSize(len(calls)) bytes at
// code are written (by gorr, as a debugger writes code).
func InjectBatchInRegs(tid int, mem *Mem, code uint64, calls []Call) ([]int64, error) {
	if len(calls) > len(resultRegs) {
		return nil, fmt.Errorf("inject a batch into tid %d: %d calls, at most %d keep their results in registers", tid, len(calls), len(resultRegs))
	}
	return injectBatch(tid, mem, code, calls, true)
}

func injectBatch(tid int, mem *Mem, code uint64, calls []Call, inRegs bool) ([]int64, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	end := uint64(len(calls) * callCode)
	results := (end + 1 + 7) &^ 7
	buf := make([]byte, results+uint64(8*len(calls)))
	if inRegs {
		buf = buf[:end+1]
	}
	argOps := [6][2]byte{{0x48, 0xbf}, {0x48, 0xbe}, {0x48, 0xba}, {0x49, 0xba}, {0x49, 0xb8}, {0x49, 0xb9}}
	p := buf[:0]
	for i, c := range calls {
		if c.FdOf < 0 || c.FdOf > i || inRegs && c.FdOf != 0 {
			return nil, fmt.Errorf("inject a batch into tid %d: call %d takes the result of call %d", tid, i, c.FdOf-1)
		}
		p = append(p, 0xb8)
		p = binary.LittleEndian.AppendUint32(p, uint32(c.Nr))
		for j, op := range argOps {
			if j == 4 && c.FdOf > 0 {
				// mov r8, [rip+disp32]; nop (the slot's 10 bytes)
				p = append(p, 0x4c, 0x8b, 0x05)
				next := uint64(len(p) + 4)
				p = binary.LittleEndian.AppendUint32(p, uint32(results+uint64(8*(c.FdOf-1))-next))
				p = append(p, 0x0f, 0x1f, 0x00)
				continue
			}
			p = append(p, op[0], op[1])
			p = binary.LittleEndian.AppendUint64(p, c.Args[j])
		}
		if inRegs {
			// syscall; mov reg, rax; nop (the store's 7 bytes)
			rr := resultRegs[i].code
			p = append(p, 0x0f, 0x05, rr[0], rr[1], rr[2], 0x0f, 0x1f, 0x40, 0x00)
			continue
		}
		p = append(p, 0x0f, 0x05, 0x48, 0x89, 0x05)
		next := uint64(len(p) + 4) // rip after this instruction
		p = binary.LittleEndian.AppendUint32(p, uint32(results+uint64(8*i)-next))
	}
	p = append(p, 0xcc)
	if err := mem.WriteMem(code, buf); err != nil {
		return nil, fmt.Errorf("inject a batch into tid %d: %w", tid, err)
	}
	th := ptrace.NewThread(tid)
	saved, err := th.GetRegs()
	if err != nil {
		return nil, err
	}
	r := saved
	r[ptrace.RIP] = code
	r[ptrace.ORIGRAX] = ^uint64(0)
	if err := th.SetRegs(&r); err != nil {
		return nil, err
	}
	var final machine.Regs
	if _, err := th.RunUntil(ptrace.Cont, 0, func(st ptrace.Stop) (ptrace.Action, error) {
		switch st.Kind {
		case ptrace.StopExited:
			return ptrace.Accept, fmt.Errorf("inject a batch into tid %d: %w", tid, ErrGone)
		case ptrace.StopSignal:
			if st.Signal == int(unix.SIGTRAP) {
				var err error
				if final, err = th.GetRegs(); err == nil && final[ptrace.RIP] == code+end+1 {
					return ptrace.Accept, nil
				}
				return ptrace.Accept, fmt.Errorf("inject a batch into tid %d: SIGTRAP outside the batch", tid)
			}
			if st.Signal == int(unix.SIGSEGV) || st.Signal == int(unix.SIGBUS) || st.Signal == int(unix.SIGILL) {
				return ptrace.Accept, fmt.Errorf("inject a batch into tid %d: %s in the batch", tid, unix.SignalName(unix.Signal(st.Signal)))
			}
			return ptrace.Again, nil
		case ptrace.StopEvent:
			return ptrace.Again, nil
		}
		return ptrace.Accept, fmt.Errorf("inject a batch into tid %d: unexpected %v", tid, st)
	}); err != nil {
		return nil, err
	}
	if err := th.SetRegs(&saved); err != nil {
		return nil, err
	}
	out := make([]int64, len(calls))
	if inRegs {
		for i := range out {
			out[i] = int64(final[resultRegs[i].reg])
		}
		return out, nil
	}
	res := make([]byte, 8*len(calls))
	if err := mem.ReadMem(code+results, res); err != nil {
		return nil, fmt.Errorf("inject a batch into tid %d: results: %w", tid, err)
	}
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(res[8*i:]))
	}
	return out, nil
}

// MustInjectBatch is InjectBatch that turns the first failed call into an
// error naming it.
func MustInjectBatch(tid int, mem *Mem, code uint64, calls []Call) error {
	res, err := InjectBatch(tid, mem, code, calls)
	if err != nil {
		return err
	}
	for i, ret := range res {
		if ret < 0 && ret > -4096 {
			return fmt.Errorf("injected syscall %d (%d of a batch) in tid %d failed: %w", calls[i].Nr, i, tid, unix.Errno(-ret))
		}
	}
	return nil
}
