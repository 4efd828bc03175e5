package syscallbuf

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/gorr-debugger/gorr/internal/linux"
)

func TestScanLibc(t *testing.T) {
	f, err := os.Open("/lib/x86_64-linux-gnu/libc.so.6")
	if err != nil {
		t.Skip("no glibc here:", err)
	}
	defer f.Close()
	sites, err := Scan(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, s := range sites {
		seen[s.Nr] = true
	}
	// read, write, close; ioctl and posix_fadvise (`syscall; mov %eax,
	// %edx; ...` sites); syscall(2) (number from rdi).
	for _, nr := range []int{0, 1, 3, 16, 221, DynNr} {
		if !seen[nr] {
			t.Errorf("no site for call %d in libc (%d sites)", nr, len(sites))
		}
	}
	t.Logf("%d sites, calls %v", len(sites), seen)
}

func TestDisplaced(t *testing.T) {
	for _, c := range []struct {
		code []byte
		want int
	}{
		{[]byte{0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff, 0x73, 0x01}, 6},       // cmp $-4096, %rax
		{[]byte{0x3d, 0x00, 0xf0, 0xff, 0xff, 0x77, 0x1c}, 5},             // cmp $-4096, %eax
		{[]byte{0x89, 0xc2, 0x3d, 0x00, 0xf0, 0xff, 0xff, 0x77, 0x1c}, 7}, // mov %eax,%edx; cmp
		{[]byte{0x89, 0xc2, 0xf7, 0xda, 0x3d, 0x00, 0xf0, 0xff, 0xff}, 9}, // mov; neg; cmp
		{[]byte{0x89, 0xc2, 0x89, 0xc1, 0x89, 0xc6, 0x77, 0x00}, 0},       // moves only: flags not set
		{[]byte{0xc3, 0x90, 0x90, 0x90, 0x90, 0x90}, 0},                   // ret
		{[]byte{0x48, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00}, 0},             // rip-relative load
		{[]byte{0x89, 0xc2, 0x73, 0x01, 0x3d, 0x00, 0xf0, 0xff, 0xff}, 0}, // a branch
		{[]byte{0x48, 0x85, 0xc0, 0x78, 0x01}, 0},                         // test (3 bytes), then a branch
		{[]byte{0x48, 0x85, 0xc0, 0x48, 0x89, 0xc2, 0x73, 0x00}, 6},       // test; mov
	} {
		if got := displaced(c.code); got != c.want {
			t.Errorf("displaced(% x) = %d, want %d", c.code, got, c.want)
		}
	}
}

func TestTrampoline(t *testing.T) {
	cmp := [6]byte{0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff}
	const site = 0x7f0000001000
	const tr = TrampBase + 96
	b := Trampoline(tr, site, cmp[:])
	if binary.LittleEndian.Uint64(b) != tr+16 || binary.LittleEndian.Uint64(b[8:]) != site+8 {
		t.Fatalf("slots %x", b[:16])
	}
	var ops []x86asm.Op
	for pc := 16; pc < 47; {
		inst, err := x86asm.Decode(b[pc:], 64)
		if err != nil {
			t.Fatalf("decode at %d: %v", pc, err)
		}
		ops = append(ops, inst.Op)
		if inst.Op == x86asm.CALL {
			if got := tr + uint64(pc+inst.Len) + uint64(int64(inst.Args[0].(x86asm.Rel))); got != Entry {
				t.Errorf("call goes to 0x%x, want 0x%x", got, Entry)
			}
		}
		if inst.Op == x86asm.JMP {
			if m := inst.Args[0].(x86asm.Mem); uint64(m.Disp) != tr+8 || m.Base != 0 {
				t.Errorf("jmp through %v, want slot 0x%x", m, tr+8)
			}
		}
		pc += inst.Len
	}
	want := []x86asm.Op{x86asm.LEA, x86asm.CALL, x86asm.LEA, x86asm.CMP, x86asm.JMP}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("ops %v, want %v", ops, want)
	}
	j := Jump(tr, 8)
	inst, err := x86asm.Decode(j, 64)
	if err != nil || inst.Op != x86asm.JMP || inst.Len != 7 || uint64(inst.Args[0].(x86asm.Mem).Disp) != tr {
		t.Fatalf("jump %x: %v %v", j, inst, err)
	}
}

func TestFilter(t *testing.T) {
	if len(stubCode) > int(FilterAt-Base) || FilterAt-Base+uint64(len(Filter())) > FprogAt-Base {
		t.Fatalf("stub %d bytes, filter %d bytes overlap", len(stubCode), len(Filter()))
	}
	prog := linux.DecodeBPF(Filter())
	run := func(nr int32, ip uint64, arch uint32) uint32 {
		d := linux.SeccompData{Nr: nr, IP: ip}
		if arch != 0xc000003e {
			return retTrace // the interpreter models x86-64 calls only
		}
		ret, err := linux.RunSeccomp([][]linux.BPFInsn{prog}, &d)
		if err != nil {
			t.Fatal(err)
		}
		return ret
	}
	const x86_64 = 0xc000003e
	if got := run(0, SyscallRet, x86_64); got != retAllow {
		t.Errorf("read from the stub: 0x%x", got)
	}
	if got := run(9, SyscallRet, x86_64); got != retTrace {
		t.Errorf("mmap from the stub: 0x%x", got)
	}
	if got := run(0, SyscallRet+0x100000000, x86_64); got != retTrace {
		t.Errorf("read elsewhere: 0x%x", got)
	}
	if got := run(0, Base+offTracedInsn+2, x86_64); got != retTrace {
		t.Errorf("read from the traced instruction: 0x%x", got)
	}
	if got := run(3, SyscallRet, 0x40000003); got != retTrace {
		t.Errorf("i386: 0x%x", got)
	}
}

func TestVsysSite(t *testing.T) {
	for _, c := range []struct {
		code []byte
		nr   int
		ok   bool
	}{
		{[]byte{0x48, 0xc7, 0xc0, 0x00, 0x00, 0x60, 0xff, 0xff, 0xd0}, 96, true},  // gettimeofday
		{[]byte{0x48, 0xc7, 0xc0, 0x00, 0x04, 0x60, 0xff, 0xff, 0xd0}, 201, true}, // time
		{[]byte{0x48, 0xc7, 0xc0, 0x00, 0x08, 0x60, 0xff, 0xff, 0xd0}, 309, true}, // getcpu
		{[]byte{0x48, 0xc7, 0xc0, 0x00, 0x0c, 0x60, 0xff, 0xff, 0xd0}, 0, false},  // no entry there
		{[]byte{0x48, 0xc7, 0xc1, 0x00, 0x00, 0x60, 0xff, 0xff, 0xd1}, 0, false},  // through rcx
		{[]byte{0x48, 0xc7, 0xc0, 0x00, 0x00, 0x60, 0xff, 0xff}, 0, false},        // short
	} {
		if nr, ok := isVsysCall(c.code); nr != c.nr || ok != c.ok {
			t.Errorf("isVsysCall(% x) = %d, %v", c.code, nr, ok)
		}
	}
	const site = 0x555500001000
	var next uint64
	w := Patch([]Site{{Off: 0x1000, Nr: 201, Vsys: true}}, site, 0x1000, 0x1000, &next)
	if len(w) != 2 || w[0].Addr != TrampBase || w[1].Addr != site+3 || binary.LittleEndian.Uint32(w[1].Data) != TrampBase+16 || len(w[1].Data) != 4 {
		t.Fatalf("writes %+v", w)
	}
	var ops []x86asm.Op
	b := w[0].Data
	for pc := 16; ; {
		inst, err := x86asm.Decode(b[pc:], 64)
		if err != nil {
			t.Fatalf("decode at %d: %v", pc, err)
		}
		ops = append(ops, inst.Op)
		if inst.Op == x86asm.CALL {
			if got := TrampBase + uint64(pc+inst.Len) + uint64(int64(inst.Args[0].(x86asm.Rel))); got != Entry {
				t.Errorf("call goes to 0x%x, want 0x%x", got, Entry)
			}
		}
		pc += inst.Len
		if inst.Op == x86asm.RET {
			break
		}
	}
	want := []x86asm.Op{x86asm.LEA, x86asm.PUSH, x86asm.PUSH, x86asm.MOV, x86asm.CALL, x86asm.POP, x86asm.POP, x86asm.LEA, x86asm.RET}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("ops %v, want %v", ops, want)
	}
}
