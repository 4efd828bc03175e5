package linux

import (
	"encoding/binary"
	"fmt"
)

// Seccomp filter evaluation. The recorder answers some calls itself
// (Syscall.Entry) by turning them into syscall -1 before the kernel sees
// them; a seccomp filter the program installed would then judge -1
// instead of the real call. So the recorder first runs the task's filters
// on the real call, as the kernel would, and only answers itself when
// they allow it.

// Seccomp return actions (SECCOMP_RET_*), compared as signed values: the
// lowest action of all filters wins.
const (
	SeccompRetKillProcess = 0x80000000
	SeccompRetKillThread  = 0x00000000
	SeccompRetTrap        = 0x00030000
	SeccompRetErrno       = 0x00050000
	SeccompRetUserNotif   = 0x7fc00000
	SeccompRetTrace       = 0x7ff00000
	SeccompRetLog         = 0x7ffc0000
	SeccompRetAllow       = 0x7fff0000

	seccompRetActionFull = 0xffff0000
	seccompRetData       = 0x0000ffff
	auditArchX86_64      = 0xc000003e
)

// SeccompAction is the action part of a filter's return value.
func SeccompAction(ret uint32) uint32 { return ret & seccompRetActionFull }

// SeccompData is the input of a filter (struct seccomp_data).
type SeccompData struct {
	Nr   int32
	IP   uint64
	Args Args
}

func (d *SeccompData) bytes() []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], uint32(d.Nr))
	binary.LittleEndian.PutUint32(b[4:], auditArchX86_64)
	binary.LittleEndian.PutUint64(b[8:], d.IP)
	for i, a := range d.Args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// BPFInsn is one classic BPF instruction (struct sock_filter).
type BPFInsn struct {
	Code   uint16
	Jt, Jf uint8
	K      uint32
}

// DecodeBPF decodes n instructions from the kernel's 8-byte layout.
func DecodeBPF(raw []byte) []BPFInsn {
	out := make([]BPFInsn, len(raw)/8)
	for i := range out {
		b := raw[8*i:]
		out[i] = BPFInsn{Code: binary.LittleEndian.Uint16(b), Jt: b[2], Jf: b[3], K: binary.LittleEndian.Uint32(b[4:])}
	}
	return out
}

// RunSeccomp evaluates filters (any order) on d and returns the value the
// kernel acts on: the return value whose action ranks lowest.
func RunSeccomp(filters [][]BPFInsn, d *SeccompData) (uint32, error) {
	best := uint32(SeccompRetAllow)
	data := d.bytes()
	for _, f := range filters {
		ret, err := runBPF(f, data)
		if err != nil {
			return 0, err
		}
		if int32(SeccompAction(ret)) < int32(SeccompAction(best)) {
			best = ret
		}
	}
	return best, nil
}

// SeccompErrno is the errno of a SECCOMP_RET_ERRNO value (capped as the
// kernel caps it).
func SeccompErrno(ret uint32) int64 { return int64(min(ret&seccompRetData, 4095)) }

// runBPF is a classic BPF interpreter restricted to what seccomp accepts
// (kernel/seccomp.c seccomp_check_filter).
func runBPF(prog []BPFInsn, data []byte) (uint32, error) {
	var a, x uint32
	var mem [16]uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		k := in.K
		switch in.Code {
		case 0x20: // ld [k]
			if k%4 != 0 || int(k)+4 > len(data) {
				return 0, fmt.Errorf("seccomp filter loads offset %d", k)
			}
			a = binary.LittleEndian.Uint32(data[k:])
		case 0x80: // ld len
			a = uint32(len(data))
		case 0x81: // ldx len
			x = uint32(len(data))
		case 0x00: // ld #k
			a = k
		case 0x01: // ldx #k
			x = k
		case 0x60: // ld M[k]
			a = mem[k&15]
		case 0x61: // ldx M[k]
			x = mem[k&15]
		case 0x02: // st M[k]
			mem[k&15] = a
		case 0x03: // stx M[k]
			mem[k&15] = x
		case 0x06: // ret #k
			return k, nil
		case 0x16: // ret a
			return a, nil
		case 0x07: // tax
			x = a
		case 0x87: // txa
			a = x
		case 0x05: // ja
			pc += int(k)
		default:
			switch in.Code & 0x07 {
			case 0x04: // ALU
				src := k
				if in.Code&0x08 != 0 {
					src = x
				}
				switch in.Code & 0xf0 {
				case 0x00:
					a += src
				case 0x10:
					a -= src
				case 0x20:
					a *= src
				case 0x30:
					if src == 0 {
						return 0, nil // the kernel's interpreter returns 0 (kill)
					}
					a /= src
				case 0x40:
					a |= src
				case 0x50:
					a &= src
				case 0x60:
					a <<= src & 31
				case 0x70:
					a >>= src & 31
				case 0x80:
					a = -a
				case 0x90:
					if src == 0 {
						return 0, nil
					}
					a %= src
				case 0xa0:
					a ^= src
				default:
					return 0, fmt.Errorf("seccomp filter has ALU op 0x%x", in.Code)
				}
			case 0x05: // JMP
				src := k
				if in.Code&0x08 != 0 {
					src = x
				}
				var cond bool
				switch in.Code & 0xf0 {
				case 0x10:
					cond = a == src
				case 0x20:
					cond = a > src
				case 0x30:
					cond = a >= src
				case 0x40:
					cond = a&src != 0
				default:
					return 0, fmt.Errorf("seccomp filter has jump 0x%x", in.Code)
				}
				if cond {
					pc += int(in.Jt)
				} else {
					pc += int(in.Jf)
				}
			default:
				return 0, fmt.Errorf("seccomp filter has instruction 0x%x", in.Code)
			}
		}
	}
	return 0, fmt.Errorf("seccomp filter runs off its end")
}
