package syscallbuf

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
	// %edx; ...` sites); mmap, munmap, mprotect; getrlimit (`mov $302,
	// %eax; xor %edi, %edi; syscall`); syscall(2) (number from rdi).
	for _, nr := range []int{0, 1, 3, 16, 221, 9, 10, 11, 302, DynNr} {
		if !seen[nr] {
			t.Errorf("no site for call %d in libc (%d sites)", nr, len(sites))
		}
	}
	t.Logf("%d sites, calls %v", len(sites), seen)
}

// TestScanGo scans this test's own binary, a static Go program: the
// runtime's syscall stubs and the register-ABI Syscall6 (number in rax
// from its caller) are sites; clone, vfork and sigreturn are not.
func TestScanGo(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	dir := t.TempDir()
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"os/exec\"\n\t\"syscall\"\n)\n\n" +
		"func main() { fmt.Println(syscall.Getpid(), exec.Command(\"true\").Run()) }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, sites := buildScanGo(t, goBin, dir, "prog")
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	if err != nil {
		t.Skip("no symbols:", err)
	}
	text := ef.Section(".text")
	in := map[string]Site{}
	for _, s := range sites {
		addr := s.Off - text.Offset + text.Addr
		for _, y := range syms {
			if elf.ST_TYPE(y.Info) == elf.STT_FUNC && y.Value <= addr && addr < y.Value+y.Size {
				in[y.Name] = s
			}
		}
	}
	for name, nr := range map[string]int{
		"internal/runtime/syscall/linux.Syscall6": DynNr,
		"runtime.futex.abi0":                      202,
		"runtime.read.abi0":                       0,
		"runtime.write1.abi0":                     1,
		"runtime.open.abi0":                       257,
		"runtime.closefd.abi0":                    3,
		"syscall.rawSyscallNoError.abi0":          DynNr, // syscall.Getpid
	} {
		s, ok := in[name]
		if !ok {
			t.Errorf("no site in %s (%d sites)", name, len(sites))
		} else if s.Nr != nr {
			t.Errorf("site in %s: call %d, want %d", name, s.Nr, nr)
		}
	}
	for _, name := range []string{"runtime.clone.abi0", "syscall.rawVforkSyscall.abi0", "runtime.sigreturn__sigaction.abi0", "runtime.exit.abi0"} {
		if _, ok := in[name]; ok {
			t.Errorf("a site in %s", name)
		}
	}
	t.Logf("%d sites", len(sites))

	// Linked without a symbol table (-s), the functions are found in
	// .gopclntab: the same sites.
	g, ssites := buildScanGo(t, goBin, dir, "prog-s", "-ldflags=-s")
	defer g.Close()
	if fmt.Sprint(ssites) != fmt.Sprint(sites) {
		t.Errorf("stripped binary: sites %v, want %v", ssites, sites)
	}
}

// buildScanGo builds dir's main.go into dir/name with the extra go
// build flags and returns the open binary and its sites.
func buildScanGo(t *testing.T, goBin, dir, name string, flags ...string) (*os.File, []Site) {
	t.Helper()
	exe := filepath.Join(dir, name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{"build"}, flags...), "-o", exe, "main.go")
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", flags, err, out)
	}
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	sites, err := Scan(f)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	return f, sites
}

func TestJmpTail(t *testing.T) {
	for _, c := range []struct {
		code        []byte
		n, jl, disp int
	}{
		{[]byte{0x48, 0x89, 0xc7, 0xe9, 0x0b, 0xd4, 0xff, 0xff}, 3, 5, -0x2bf5}, // mov %rax, %rdi; jmp rel32
		{[]byte{0x48, 0x89, 0xc7, 0xeb, 0x10}, 3, 2, 0x10},                      // mov; jmp rel8
		{[]byte{0xe9, 0x00, 0x01, 0x00, 0x00}, 0, 0, 0},                         // no move: not a displaced site
		{[]byte{0x48, 0x89, 0xc7, 0x75, 0x10, 0x90, 0x90}, 0, 0, 0},             // a conditional jump
		{[]byte{0x48, 0x89, 0xc7, 0xe8, 0x00, 0x01, 0x00, 0x00}, 0, 0, 0},       // a call
	} {
		if n, jl, d := jmpTail(c.code); n != c.n || jl != c.jl || d != c.disp {
			t.Errorf("jmpTail(% x) = %d, %d, %d", c.code, n, jl, d)
		}
	}
}

func TestDisplaced(t *testing.T) {
	for _, c := range []struct {
		code []byte
		want int
	}{
		{[]byte{0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff, 0x73, 0x01}, 6},                                                       // cmp $-4096, %rax
		{[]byte{0x3d, 0x00, 0xf0, 0xff, 0xff, 0x77, 0x1c}, 5},                                                             // cmp $-4096, %eax
		{[]byte{0x89, 0xc2, 0x3d, 0x00, 0xf0, 0xff, 0xff, 0x77, 0x1c}, 7},                                                 // mov %eax,%edx; cmp
		{[]byte{0x89, 0xc2, 0xf7, 0xda, 0x3d, 0x00, 0xf0, 0xff, 0xff}, 9},                                                 // mov; neg; cmp
		{[]byte{0x89, 0xc2, 0x89, 0xc1, 0x89, 0xc6, 0x77, 0x00}, 0},                                                       // moves only: flags not set
		{[]byte{0xc3, 0x90, 0x90, 0x90, 0x90, 0x90}, 0},                                                                   // ret
		{[]byte{0x48, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00}, 0},                                                             // rip-relative load
		{[]byte{0x89, 0xc2, 0x73, 0x01, 0x3d, 0x00, 0xf0, 0xff, 0xff}, 0},                                                 // a branch
		{[]byte{0x48, 0x85, 0xc0, 0x78, 0x01}, 0},                                                                         // test (3 bytes), then a branch
		{[]byte{0x48, 0x85, 0xc0, 0x48, 0x89, 0xc2, 0x73, 0x00}, 6},                                                       // test; mov
		{[]byte{0x89, 0x44, 0x24, 0x30, 0xc3}, 5},                                                                         // Go: mov %eax, 0x30(%rsp); ret
		{[]byte{0x48, 0x89, 0x44, 0x24, 0x08, 0xc3}, 6},                                                                   // Go: mov %rax, 8(%rsp); ret
		{[]byte{0x48, 0x89, 0x44, 0x24, 0x28, 0x48, 0x89, 0x54, 0x24, 0x30, 0xc3}, 11},                                    // two stores; ret
		{[]byte{0x89, 0x43, 0x30, 0xc3, 0x90}, 0},                                                                         // a store through rbx
		{[]byte{0x89, 0x44, 0x24, 0x30, 0xc2, 0x08, 0x00}, 0},                                                             // ret $8
		{[]byte{0xba, 0x01, 0x00, 0x00, 0x00, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff}, 11},                                    // mov $1, %edx; cmp
		{[]byte{0x89, 0xc2, 0x89, 0xc1, 0x89, 0xc6, 0x89, 0xc7, 0x89, 0xc3, 0x89, 0xc2, 0x89, 0xc1, 0x89, 0xc6, 0xc3}, 0}, // moves beyond maxDisp
		{[]byte{0x48, 0x89, 0x05, 0x4a, 0x46, 0x01, 0x00, 0x48, 0x39, 0xf8, 0x72, 0x00}, 10},                              // ld.so's brk: mov %rax, x(%rip); cmp %rdi, %rax
		{[]byte{0x89, 0x05, 0x4a, 0x46, 0x01, 0x00, 0x85, 0xc0}, 8},                                                       // mov %eax, x(%rip); test
		{[]byte{0x48, 0x89, 0x1d, 0x4a, 0x46, 0x01, 0x00, 0x48, 0x39, 0xf8}, 0},                                           // a store of rbx
		{[]byte{0x89, 0xc2, 0x89, 0xc1, 0x89, 0xc6, 0x89, 0xc7, 0x48, 0x89, 0x05, 0, 0, 0, 0, 0x39, 0xf8}, 0},             // beyond maxDisp
		{[]byte{0x48, 0x8b, 0x15, 0xe2, 0x51, 0x0d, 0x00, 0x48, 0x89, 0x02, 0x48, 0x39, 0xf8, 0x72, 0x0a}, 13},            // libc's brk: mov x(%rip), %rdx; mov %rax, (%rdx); cmp
		{[]byte{0x48, 0x8b, 0x25, 0xe2, 0x51, 0x0d, 0x00, 0x48, 0x39, 0xf8}, 0},                                           // a load into rsp
		{[]byte{0x48, 0x8b, 0x15, 0, 0, 0, 0, 0x4c, 0x8b, 0x05, 0, 0, 0, 0, 0x85, 0xc0}, 0},                               // two loads: too long moved
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
	b := Trampoline(tr, site, nil, cmp[:])
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

// TestTrampolineRipStore checks that a displaced RIP-relative store
// (ld.so's brk: `syscall; mov %rax, 0x1464a(%rip); cmp %rdi, %rax`)
// stores to the same address from the trampoline.
func TestTrampolineRipStore(t *testing.T) {
	disp := []byte{0x48, 0x89, 0x05, 0x4a, 0x46, 0x01, 0x00, 0x48, 0x39, 0xf8}
	const site = 0x7f0000001000 // the syscall
	const tr = TrampBase + 96
	b := Trampoline(tr, site, nil, disp)
	var ops []x86asm.Op
	for pc := 16; pc < len(b) && b[pc] != 0xcc; {
		inst, err := x86asm.Decode(b[pc:], 64)
		if err != nil {
			t.Fatalf("decode at %d: %v", pc, err)
		}
		ops = append(ops, inst.Op)
		if inst.Op == x86asm.MOV {
			m, ok := inst.Args[0].(x86asm.Mem)
			if want := uint64(site + 2 + 7 + 0x1464a); !ok || uint64(m.Disp) != want || m.Base != 0 || inst.Args[1] != x86asm.RAX {
				t.Errorf("store %v, want rax to 0x%x", inst, want)
			}
		}
		pc += inst.Len
	}
	want := []x86asm.Op{x86asm.LEA, x86asm.CALL, x86asm.LEA, x86asm.MOV, x86asm.CMP, x86asm.JMP}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("ops %v, want %v", ops, want)
	}
	if len(b) != trampLen {
		t.Fatalf("trampoline of %d bytes", len(b))
	}
}

// TestTrampolineRipLoad checks libc's brk (`syscall; mov x(%rip), %rdx;
// mov %rax, (%rdx); cmp %rdi, %rax`) and a load into r9 moved into a
// trampoline.
func TestTrampolineRipLoad(t *testing.T) {
	const site = 0x7f0000001000
	const tr = TrampBase + 96
	for _, c := range []struct {
		disp []byte
		reg  x86asm.Reg
	}{
		{[]byte{0x48, 0x8b, 0x15, 0xe2, 0x51, 0x0d, 0x00, 0x48, 0x89, 0x02, 0x48, 0x39, 0xf8}, x86asm.RDX},
		{[]byte{0x4c, 0x8b, 0x0d, 0xe2, 0x51, 0x0d, 0x00, 0x48, 0x89, 0x02, 0x48, 0x39, 0xf8}, x86asm.R9},
	} {
		b := Trampoline(tr, site, nil, c.disp)
		want := uint64(site + 2 + 7 + 0xd51e2)
		var ops []string
		for pc := 16; pc < len(b) && b[pc] != 0xcc; {
			inst, err := x86asm.Decode(b[pc:], 64)
			if err != nil {
				t.Fatalf("decode at %d: %v", pc, err)
			}
			ops = append(ops, inst.Op.String())
			if inst.Op == x86asm.MOV && inst.Args[0] == c.reg {
				switch a := inst.Args[1].(type) {
				case x86asm.Imm:
					if uint64(a) != want {
						t.Errorf("%v: address 0x%x, want 0x%x", inst, uint64(a), want)
					}
				case x86asm.Mem:
					if a.Base != c.reg || a.Disp != 0 || a.Index != 0 {
						t.Errorf("%v: want a load through %v", inst, c.reg)
					}
				}
			}
			pc += inst.Len
		}
		if got := fmt.Sprint(ops); got != "[LEA CALL LEA MOV MOV MOV CMP JMP]" {
			t.Fatalf("%v: ops %v", c.reg, got)
		}
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
	if got := run(9, SyscallRet, x86_64); got != retAllow {
		t.Errorf("mmap from the stub: 0x%x", got)
	}
	if got := run(59, SyscallRet, x86_64); got != retTrace {
		t.Errorf("execve from the stub: 0x%x", got)
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

// TestScanMusl scans static musl programs: __syscall_cp_c's `syscall;
// ret` is a site with the moves before it displaced; with pthread_cancel
// linked, __syscall_cp_asm is not (the cancellation handler compares the
// interrupted pc with its labels: its number comes from `mov %rsi, %rax`,
// not a shape taken, and its __cp_end label lies in the bytes a patch
// would replace, which rules a site out too).
func TestScanMusl(t *testing.T) {
	cc, err := exec.LookPath("musl-gcc")
	if err != nil {
		t.Skip("no musl-gcc")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	if err := os.WriteFile(src, []byte("#include <pthread.h>\n#include <unistd.h>\n"+
		"static void *th(void *a) { char c; (void)a; for (;;) read(0, &c, 1); return 0; }\n"+
		"int main(int argc, char **argv) { char c; (void)argv;\n"+
		"#ifdef CANCEL\nif (argc > 1) { pthread_t t; pthread_create(&t, 0, th, 0); pthread_cancel(t); }\n#else\n(void)th;\n#endif\n"+
		"return read(0, &c, 1) + getpid() + lseek(0, 0, SEEK_CUR) > 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		fn   string
		want bool
	}{
		{[]string{"-DNONE"}, "__syscall_cp_c", true},
		{[]string{"-DNONE"}, "getpid", true},
		{[]string{"-DNONE"}, "lseek", true},
		{[]string{"-DCANCEL"}, "__syscall_cp_asm", false},
	} {
		exe := filepath.Join(dir, "m"+c.args[0])
		if out, err := exec.Command(cc, append([]string{"-O2", "-static", "-o", exe, src}, c.args...)...).CombinedOutput(); err != nil {
			t.Fatalf("musl-gcc: %v\n%s", err, out)
		}
		f, err := os.Open(exe)
		if err != nil {
			t.Fatal(err)
		}
		sites, err := Scan(f)
		if err != nil {
			t.Fatal(err)
		}
		ef, err := elf.NewFile(f)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := ef.Symbols()
		text := ef.Section(".text")
		var got *Site
		for i, s := range sites {
			addr := s.Off - text.Offset + text.Addr
			for _, y := range syms {
				if y.Name == c.fn && elf.ST_TYPE(y.Info) == elf.STT_FUNC && y.Value <= addr && addr < y.Value+max(y.Size, 1) {
					got = &sites[i]
				}
			}
		}
		f.Close()
		if (got != nil) != c.want {
			t.Errorf("%v: site in %s: %v, want %v (%d sites)", c.args, c.fn, got, c.want, len(sites))
		}
		if got != nil && c.fn == "__syscall_cp_c" && (got.Nr != DynNr || len(got.Pre) == 0 || len(got.Pre)+2+len(got.Disp) < 7) {
			t.Errorf("__syscall_cp_c site %+v", *got)
		}
		if got != nil && c.fn == "lseek" && (got.Nr != 8 || got.TailLen != 5 || got.Len() < 7) {
			t.Errorf("lseek site %+v", *got)
		}
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

// TestTrampolinePre: musl's `mov 8(%rsp), %r9; mov %rcx, %rdx; syscall;
// ret` runs its moves before the red-zone step and returns after the
// stub.
func TestTrampolinePre(t *testing.T) {
	pre := []byte{0x4c, 0x8b, 0x4c, 0x24, 0x08, 0x48, 0x89, 0xca}
	const site = 0x401000
	const tr = TrampBase + 64
	s := Site{Off: 0x1000, Nr: DynNr, Pre: pre, Disp: []byte{0xc3}}
	if s.Len() != 11 {
		t.Fatalf("Len %d", s.Len())
	}
	b := Trampoline(tr, site, pre, s.Disp)
	if len(b) != trampLen || binary.LittleEndian.Uint64(b[8:]) != site+11 {
		t.Fatalf("%d bytes, slots %x", len(b), b[:16])
	}
	var ops []x86asm.Op
	for pc := 16; ; {
		inst, err := x86asm.Decode(b[pc:], 64)
		if err != nil {
			t.Fatalf("decode at %d: %v", pc, err)
		}
		ops = append(ops, inst.Op)
		pc += inst.Len
		if inst.Op == x86asm.RET {
			break
		}
	}
	want := []x86asm.Op{x86asm.MOV, x86asm.MOV, x86asm.LEA, x86asm.CALL, x86asm.LEA, x86asm.RET}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("ops %v, want %v", ops, want)
	}
}

// TestPatchTail: a site ending in a tail jump leaves its trampoline
// through the jump's target (in the same mapping), not back to the site.
func TestPatchTail(t *testing.T) {
	const start, off, n = 0x400000, 0, 0x10000
	s := Site{Off: 0x421b, Nr: 8, Disp: []byte{0x48, 0x89, 0xc7}, Tail: 0x1630, TailLen: 5}
	var next uint64
	w := Patch([]Site{s}, start, off, n, &next)
	if len(w) != 2 || w[1].Addr != start+0x421b || len(w[1].Data) != 10 {
		t.Fatalf("writes %+v", w)
	}
	if got := binary.LittleEndian.Uint64(w[0].Data[8:]); got != start+0x1630 {
		t.Errorf("trampoline leaves to 0x%x, want 0x%x", got, start+0x1630)
	}
	s.Tail = 0x20000 // beyond the mapping
	if w := Patch([]Site{s}, start, off, n, &next); len(w) != 0 {
		t.Errorf("patched with the jump's target outside the mapping: %+v", w)
	}
}

// TestPatchManySites: the trampolines of many sites come as one write of
// consecutive blocks, each the one its builder makes, and each site gets
// its own jump (a Vsys site the new address of its call).
func TestPatchManySites(t *testing.T) {
	const start, off, n = 0x7f0000000000, 0x1000, 0x10000
	sites := []Site{
		{Off: 0x1100, Nr: 0, Disp: []byte{0x48, 0x89, 0xc7}},
		{Off: 0x1200, Nr: 39, Ret: true},
		{Off: 0x1300, Nr: 201, Vsys: true},
		{Off: 0x1400, Nr: 228, Ret: true, Vclock: true},
		{Off: 0x1500, Nr: 1, Pre: []byte{0x89, 0xc7}, Disp: []byte{0x48, 0x89, 0xc7}},
		{Off: 0x100, Nr: 1, Disp: []byte{0x48, 0x89, 0xc7}}, // before the mapping
	}
	var next uint64
	w := Patch(sites, start, off, n, &next)
	if len(w) != 6 || w[0].Addr != TrampBase || len(w[0].Data) != 5*trampLen || next != TrampBase+5*trampLen {
		t.Fatalf("writes %d, first at 0x%x of %d bytes, next 0x%x", len(w), w[0].Addr, len(w[0].Data), next)
	}
	for i, s := range sites[:5] {
		tr := TrampBase + uint64(i)*trampLen
		site := start + s.Off - off
		var want []byte
		switch {
		case s.Vsys:
			want = VsysTrampoline(tr, s.Nr)
		case s.Vclock:
			want = VclockTrampoline(tr)
		case s.Ret:
			want = RetTrampoline(tr, s.Nr)
		default:
			want = Trampoline(tr, site, s.Pre, s.Disp)
		}
		if got := w[0].Data[i*trampLen : (i+1)*trampLen]; !bytes.Equal(got, want) {
			t.Errorf("site %d: trampoline\n% x\nwant\n% x", i, got, want)
		}
		j := w[i+1]
		if s.Vsys {
			if j.Addr != site+3 || binary.LittleEndian.Uint32(j.Data) != uint32(tr+16) || len(j.Data) != 4 {
				t.Errorf("site %d: write %+v", i, j)
			}
			continue
		}
		if j.Addr != site || !bytes.Equal(j.Data, Jump(tr, s.Len())) {
			t.Errorf("site %d: jump %+v, want % x at 0x%x", i, j, Jump(tr, s.Len()), site)
		}
	}
}
