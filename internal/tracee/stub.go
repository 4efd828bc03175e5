package tracee

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// StubEntry is where the stub program's code is loaded: a `syscall;
// int3` pair that the replayer uses to inject system calls before the
// recorded address space exists.
const StubEntry = 0x10078

// StubELF returns a minimal static x86-64 executable that does nothing
// but hold a syscall instruction. The replayer execs it in place of the
// recorded program and then rebuilds the recorded address space.
func StubELF() []byte {
	const base = 0x10000
	code := []byte{0x0f, 0x05, 0xcc, 0xcc} // syscall; int3
	buf := make([]byte, 64+56+len(code))
	le := binary.LittleEndian
	copy(buf, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0})
	le.PutUint16(buf[16:], 2)  // ET_EXEC
	le.PutUint16(buf[18:], 62) // EM_X86_64
	le.PutUint32(buf[20:], 1)  // EV_CURRENT
	le.PutUint64(buf[24:], StubEntry)
	le.PutUint64(buf[32:], 64) // phoff
	le.PutUint16(buf[52:], 64) // ehsize
	le.PutUint16(buf[54:], 56) // phentsize
	le.PutUint16(buf[56:], 1)  // phnum
	ph := buf[64:]
	le.PutUint32(ph[0:], 1)     // PT_LOAD
	le.PutUint32(ph[4:], 5)     // R+X
	le.PutUint64(ph[8:], 0)     // offset
	le.PutUint64(ph[16:], base) // vaddr
	le.PutUint64(ph[24:], base) // paddr
	le.PutUint64(ph[32:], uint64(len(buf)))
	le.PutUint64(ph[40:], uint64(len(buf)))
	le.PutUint64(ph[48:], 0x1000)
	copy(buf[120:], code)
	return buf
}

// WriteStub writes the stub executable into dir and returns its path.
func WriteStub(dir string) (string, error) {
	p := filepath.Join(dir, "gorr-stub")
	if err := os.WriteFile(p, StubELF(), 0o700); err != nil {
		return "", fmt.Errorf("write replay stub: %w", err)
	}
	return p, nil
}
