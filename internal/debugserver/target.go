package debugserver

import (
	"encoding/binary"
	"sync"

	"github.com/gorr-debugger/gorr/internal/ptrace"
	"github.com/gorr-debugger/gorr/internal/trace"
)

// targetDocs is the target description served through
// qXfer:features:read: target.xml includes one document per feature (the
// layout rr and gdbserver use, which Delve requires). Registers follow
// gdb's amd64-linux numbering: 0-23 general and segment registers, 24-39
// x87, 40-55 xmm, 56 mxcsr, 57 orig_rax, 58 fs_base, 59 gs_base.
var targetDocs = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"target.xml": `<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target>
  <architecture>i386:x86-64</architecture>
  <osabi>GNU/Linux</osabi>
  <xi:include href="64bit-core.xml"/>
  <xi:include href="64bit-sse.xml"/>
  <xi:include href="64bit-linux.xml"/>
  <xi:include href="64bit-segments.xml"/>
</target>
`,
		"64bit-core.xml": `<?xml version="1.0"?>
<!DOCTYPE feature SYSTEM "gdb-target.dtd">
<feature name="org.gnu.gdb.i386.core">
    <flags id="i386_eflags" size="4">
      <field name="CF" start="0" end="0"/>
      <field name="" start="1" end="1"/>
      <field name="PF" start="2" end="2"/>
      <field name="AF" start="4" end="4"/>
      <field name="ZF" start="6" end="6"/>
      <field name="SF" start="7" end="7"/>
      <field name="TF" start="8" end="8"/>
      <field name="IF" start="9" end="9"/>
      <field name="DF" start="10" end="10"/>
      <field name="OF" start="11" end="11"/>
      <field name="RF" start="16" end="16"/>
    </flags>
    <reg name="rax" bitsize="64" type="int64"/>
    <reg name="rbx" bitsize="64" type="int64"/>
    <reg name="rcx" bitsize="64" type="int64"/>
    <reg name="rdx" bitsize="64" type="int64"/>
    <reg name="rsi" bitsize="64" type="int64"/>
    <reg name="rdi" bitsize="64" type="int64"/>
    <reg name="rbp" bitsize="64" type="data_ptr"/>
    <reg name="rsp" bitsize="64" type="data_ptr"/>
    <reg name="r8" bitsize="64" type="int64"/>
    <reg name="r9" bitsize="64" type="int64"/>
    <reg name="r10" bitsize="64" type="int64"/>
    <reg name="r11" bitsize="64" type="int64"/>
    <reg name="r12" bitsize="64" type="int64"/>
    <reg name="r13" bitsize="64" type="int64"/>
    <reg name="r14" bitsize="64" type="int64"/>
    <reg name="r15" bitsize="64" type="int64"/>
    <reg name="rip" bitsize="64" type="code_ptr"/>
    <reg name="eflags" bitsize="32" type="i386_eflags"/>
    <reg name="cs" bitsize="32" type="int32"/>
    <reg name="ss" bitsize="32" type="int32"/>
    <reg name="ds" bitsize="32" type="int32"/>
    <reg name="es" bitsize="32" type="int32"/>
    <reg name="fs" bitsize="32" type="int32"/>
    <reg name="gs" bitsize="32" type="int32"/>
    <reg name="st0" bitsize="80" type="i387_ext"/>
    <reg name="st1" bitsize="80" type="i387_ext"/>
    <reg name="st2" bitsize="80" type="i387_ext"/>
    <reg name="st3" bitsize="80" type="i387_ext"/>
    <reg name="st4" bitsize="80" type="i387_ext"/>
    <reg name="st5" bitsize="80" type="i387_ext"/>
    <reg name="st6" bitsize="80" type="i387_ext"/>
    <reg name="st7" bitsize="80" type="i387_ext"/>
    <reg name="fctrl" bitsize="32" type="int" group="float"/>
    <reg name="fstat" bitsize="32" type="int" group="float"/>
    <reg name="ftag" bitsize="32" type="int" group="float"/>
    <reg name="fiseg" bitsize="32" type="int" group="float"/>
    <reg name="fioff" bitsize="32" type="int" group="float"/>
    <reg name="foseg" bitsize="32" type="int" group="float"/>
    <reg name="fooff" bitsize="32" type="int" group="float"/>
    <reg name="fop" bitsize="32" type="int" group="float"/>
  </feature>
`,
		"64bit-sse.xml": `<?xml version="1.0"?>
<!DOCTYPE feature SYSTEM "gdb-target.dtd">
<feature name="org.gnu.gdb.i386.sse">
    <vector id="v8bf16" type="bfloat16" count="8"/>
    <vector id="v4f" type="ieee_single" count="4"/>
    <vector id="v2d" type="ieee_double" count="2"/>
    <vector id="v16i8" type="int8" count="16"/>
    <vector id="v8i16" type="int16" count="8"/>
    <vector id="v4i32" type="int32" count="4"/>
    <vector id="v2i64" type="int64" count="2"/>
    <union id="vec128">
      <field name="v8_bfloat16" type="v8bf16"/>
      <field name="v4_float" type="v4f"/>
      <field name="v2_double" type="v2d"/>
      <field name="v16_int8" type="v16i8"/>
      <field name="v8_int16" type="v8i16"/>
      <field name="v4_int32" type="v4i32"/>
      <field name="v2_int64" type="v2i64"/>
      <field name="uint128" type="uint128"/>
    </union>
    <reg name="xmm0" bitsize="128" type="vec128" regnum="40"/>
    <reg name="xmm1" bitsize="128" type="vec128"/>
    <reg name="xmm2" bitsize="128" type="vec128"/>
    <reg name="xmm3" bitsize="128" type="vec128"/>
    <reg name="xmm4" bitsize="128" type="vec128"/>
    <reg name="xmm5" bitsize="128" type="vec128"/>
    <reg name="xmm6" bitsize="128" type="vec128"/>
    <reg name="xmm7" bitsize="128" type="vec128"/>
    <reg name="xmm8" bitsize="128" type="vec128"/>
    <reg name="xmm9" bitsize="128" type="vec128"/>
    <reg name="xmm10" bitsize="128" type="vec128"/>
    <reg name="xmm11" bitsize="128" type="vec128"/>
    <reg name="xmm12" bitsize="128" type="vec128"/>
    <reg name="xmm13" bitsize="128" type="vec128"/>
    <reg name="xmm14" bitsize="128" type="vec128"/>
    <reg name="xmm15" bitsize="128" type="vec128"/>
    <reg name="mxcsr" bitsize="32" type="int" group="vector"/>
  </feature>
`,
		"64bit-linux.xml": `<?xml version="1.0"?>
<!DOCTYPE feature SYSTEM "gdb-target.dtd">
<feature name="org.gnu.gdb.i386.linux">
    <reg name="orig_rax" bitsize="64" type="int" regnum="57"/>
  </feature>
`,
		"64bit-segments.xml": `<?xml version="1.0"?>
<!DOCTYPE feature SYSTEM "gdb-target.dtd">
<feature name="org.gnu.gdb.i386.segments">
    <reg name="fs_base" bitsize="64" type="int" regnum="58"/>
    <reg name="gs_base" bitsize="64" type="int" regnum="59"/>
  </feature>
`,
	}
})

// numRegs is the number of registers in targetXML.
const numRegs = 60

// gdbToUser maps gdb's general register numbers 0-23 to user_regs_struct.
var gdbToUser = [24]int{ptrace.RAX, ptrace.RBX, ptrace.RCX, ptrace.RDX, ptrace.RSI, ptrace.RDI, ptrace.RBP, ptrace.RSP,
	ptrace.R8, ptrace.R9, ptrace.R10, ptrace.R11, ptrace.R12, ptrace.R13, ptrace.R14, ptrace.R15,
	ptrace.RIP, ptrace.EFLAGS, ptrace.CS, ptrace.SS, ptrace.DS, ptrace.ES, ptrace.FS, ptrace.GS}

// regBytes returns register n's value in target byte order, from the
// general registers and the FXSAVE area fx (512 bytes).
func regBytes(n int, r *trace.Regs, fx []byte) []byte {
	le := binary.LittleEndian
	u32 := func(v uint32) []byte { return le.AppendUint32(nil, v) }
	u64 := func(v uint64) []byte { return le.AppendUint64(nil, v) }
	switch {
	case n < 17:
		return u64(r[gdbToUser[n]])
	case n < 24:
		return u32(uint32(r[gdbToUser[n]]))
	case n < 32:
		return append([]byte(nil), fx[32+16*(n-24):32+16*(n-24)+10]...)
	case n == 32:
		return u32(uint32(le.Uint16(fx[0:])))
	case n == 33:
		return u32(uint32(le.Uint16(fx[2:])))
	case n == 34:
		return u32(fullTag(fx[4]))
	case n == 35, n == 37:
		return u32(0)
	case n == 36:
		return u32(uint32(le.Uint64(fx[8:])))
	case n == 38:
		return u32(uint32(le.Uint64(fx[16:])))
	case n == 39:
		return u32(uint32(le.Uint16(fx[6:])))
	case n < 56:
		return append([]byte(nil), fx[160+16*(n-40):160+16*(n-40)+16]...)
	case n == 56:
		return u32(le.Uint32(fx[24:]))
	case n == 57:
		return u64(r[ptrace.ORIGRAX])
	case n == 58:
		return u64(r[ptrace.FSBASE])
	case n == 59:
		return u64(r[ptrace.GSBASE])
	}
	return nil
}

// fullTag expands FXSAVE's abridged tag byte into the x87 tag word
// (valid registers as 00, empty as 11).
func fullTag(abridged byte) uint32 {
	var tag uint32
	for i := 0; i < 8; i++ {
		if abridged&(1<<i) == 0 {
			tag |= 3 << (2 * i)
		}
	}
	return tag
}

// regSize is the size in bytes of register n in the g/G block.
func regSize(n int) int {
	switch {
	case n < 17:
		return 8
	case n < 24:
		return 4
	case n < 32:
		return 10
	case n < 40:
		return 4
	case n < 56:
		return 16
	case n == 56:
		return 4
	case n < numRegs:
		return 8
	}
	return 0
}

// setRegBytes stores v (target byte order, regSize(n) bytes) into
// register n of the general registers r or the FXSAVE area fx; the
// inverse of regBytes. fiseg and foseg (35, 37) are not kept by FXSAVE
// in 64-bit mode and are ignored.
func setRegBytes(n int, r *trace.Regs, fx []byte, v []byte) bool {
	if len(v) != regSize(n) || len(v) == 0 {
		return false
	}
	le := binary.LittleEndian
	switch {
	case n < 17:
		r[gdbToUser[n]] = le.Uint64(v)
	case n < 24:
		r[gdbToUser[n]] = uint64(le.Uint32(v))
	case n < 32:
		copy(fx[32+16*(n-24):], v)
	case n == 32:
		le.PutUint16(fx[0:], uint16(le.Uint32(v)))
	case n == 33:
		le.PutUint16(fx[2:], uint16(le.Uint32(v)))
	case n == 34:
		fx[4] = abridgedTag(le.Uint32(v))
	case n == 35, n == 37:
	case n == 36:
		le.PutUint32(fx[8:], le.Uint32(v))
	case n == 38:
		le.PutUint32(fx[16:], le.Uint32(v))
	case n == 39:
		le.PutUint16(fx[6:], uint16(le.Uint32(v)))
	case n < 56:
		copy(fx[160+16*(n-40):], v)
	case n == 56:
		le.PutUint32(fx[24:], le.Uint32(v))
	case n == 57:
		r[ptrace.ORIGRAX] = le.Uint64(v)
	case n == 58:
		r[ptrace.FSBASE] = le.Uint64(v)
	case n == 59:
		r[ptrace.GSBASE] = le.Uint64(v)
	}
	return true
}

// abridgedTag folds the x87 tag word into FXSAVE's tag byte (a register
// is valid unless its tag is 11, empty).
func abridgedTag(tag uint32) byte {
	var b byte
	for i := 0; i < 8; i++ {
		if (tag>>(2*i))&3 != 3 {
			b |= 1 << i
		}
	}
	return b
}
