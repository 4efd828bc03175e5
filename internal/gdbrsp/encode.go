package gdbrsp

import (
	"strconv"
	"strings"
)

// AppendHex appends the lowercase hex encoding of src to dst.
func AppendHex(dst, src []byte) []byte {
	for _, b := range src {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0xf])
	}
	return dst
}

// EncodeHex returns the lowercase hex encoding of src.
func EncodeHex(src []byte) []byte {
	return AppendHex(make([]byte, 0, 2*len(src)), src)
}

// DecodeHex decodes an even-length hex string (either case). Empty input
// gives nil. Errors wrap ErrMalformed.
func DecodeHex(src []byte) ([]byte, error) {
	if len(src)%2 != 0 {
		return nil, malformed("odd-length hex string")
	}
	if len(src) == 0 {
		return nil, nil
	}
	out := make([]byte, len(src)/2)
	for i := range out {
		hi, lo := unhex(src[2*i]), unhex(src[2*i+1])
		if hi < 0 || lo < 0 {
			return nil, malformed("bad hex digit in %q", src[2*i:2*i+2])
		}
		out[i] = byte(hi<<4 | lo)
	}
	return out, nil
}

// EncodeRegister returns the hex encoding of a size-byte register holding
// v in target (little-endian) byte order, as used by g, p and stop replies.
// Bytes beyond the eighth are zero.
func EncodeRegister(v uint64, size int) []byte {
	out := make([]byte, 0, 2*max(size, 0))
	for i := range max(size, 0) {
		var b byte
		if i < 8 {
			b = byte(v >> (8 * i))
		}
		out = append(out, hexDigits[b>>4], hexDigits[b&0xf])
	}
	return out
}

// DecodeRegister decodes a little-endian hex register value of at most 8
// bytes (as sent in P and G packets).
func DecodeRegister(hex []byte) (uint64, error) {
	b, err := DecodeHex(hex)
	if err != nil {
		return 0, err
	}
	if len(b) > 8 {
		return 0, malformed("register value longer than 8 bytes")
	}
	var v uint64
	for i, x := range b {
		v |= uint64(x) << (8 * i)
	}
	return v, nil
}

// UnavailableRegister returns the encoding of a size-byte register whose
// value is unavailable ("xx" per byte).
func UnavailableRegister(size int) []byte {
	return []byte(strings.Repeat("xx", max(size, 0)))
}

// Ok returns the "OK" reply.
func Ok() []byte { return []byte("OK") }

// Error returns the "Exx" error reply.
func Error(code uint8) []byte {
	return []byte{'E', hexDigits[code>>4], hexDigits[code&0xf]}
}

// needsEscape reports whether b must be escaped inside a packet: '$' and
// '#' delimit packets, '}' is the escape character and '*' introduces
// run-length encoding.
func needsEscape(b byte) bool {
	return b == '$' || b == '#' || b == '}' || b == '*'
}

// AppendEscaped appends data to dst with the RSP binary escaping: each of
// `$ # } *` becomes `}` followed by the byte XOR 0x20. Conn.WritePacket
// applies it to every packet, so reply builders return unescaped data.
func AppendEscaped(dst, data []byte) []byte {
	for _, b := range data {
		if needsEscape(b) {
			dst = append(dst, '}', b^0x20)
		} else {
			dst = append(dst, b)
		}
	}
	return dst
}

// Escape returns data with the RSP binary escaping applied.
func Escape(data []byte) []byte {
	return AppendEscaped(make([]byte, 0, len(data)), data)
}

// Unescape reverses Escape (it does not expand run-length encoding).
func Unescape(data []byte) ([]byte, error) {
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		b := data[i]
		if b == '}' {
			i++
			if i >= len(data) {
				return nil, malformed("escape character at end of data")
			}
			b = data[i] ^ 0x20
		}
		out = append(out, b)
	}
	return out, nil
}

// XferReply returns the reply to a qXfer read of object contents data at
// offset for up to length bytes: `m<chunk>` if more data follows the
// chunk, `l<chunk>` if the chunk reaches the end (an offset at or past the
// end gives "l"). The data is unescaped; Conn.WritePacket escapes it.
func XferReply(data []byte, offset, length uint64) []byte {
	size := uint64(len(data))
	if offset >= size {
		return []byte{'l'}
	}
	rest := data[offset:]
	if length < uint64(len(rest)) {
		return append([]byte{'m'}, rest[:length]...)
	}
	return append([]byte{'l'}, rest...)
}

// BinaryMemoryReply returns the reply to an `x` packet in gdb's format:
// `b` followed by the (unescaped) memory contents.
func BinaryMemoryReply(data []byte) []byte {
	return append([]byte{'b'}, data...)
}

// ConsoleOutput returns an `O<hex>` console output packet, used to send
// text to the gdb console (e.g. qRcmd output) before the final reply.
func ConsoleOutput(text []byte) []byte {
	return AppendHex([]byte{'O'}, text)
}

// ExitedReply returns `W<status>[;process:<pid>]` (process exited with
// status). The process field is omitted when pid <= 0.
func ExitedReply(status uint8, pid int64) []byte {
	return exitReply('W', status, pid)
}

// TerminatedReply returns `X<sig>[;process:<pid>]` (process killed by
// signal sig). The process field is omitted when pid <= 0.
func TerminatedReply(sig uint8, pid int64) []byte {
	return exitReply('X', sig, pid)
}

func exitReply(kind, v uint8, pid int64) []byte {
	b := []byte{kind, hexDigits[v>>4], hexDigits[v&0xf]}
	if pid > 0 {
		b = append(b, ";process:"...)
		b = strconv.AppendUint(b, uint64(pid), 16)
	}
	return b
}

// ThreadListReply returns the qfThreadInfo/qsThreadInfo reply
// `m<id>,<id>...`, or "l" (end of list) when threads is empty.
func ThreadListReply(threads []ThreadID) []byte {
	if len(threads) == 0 {
		return []byte{'l'}
	}
	b := []byte{'m'}
	for i, t := range threads {
		if i > 0 {
			b = append(b, ',')
		}
		b = t.AppendTo(b)
	}
	return b
}

// CurrentThreadReply returns the qC reply `QC<id>`.
func CurrentThreadReply(t ThreadID) []byte {
	return t.AppendTo([]byte("QC"))
}

// StopReply builds a `T` stop reply packet. Fields are emitted in the
// order the methods are called, after `T<sig>thread:<id>;`.
//
//	NewStopReply(5, ThreadID{Pid: 0x10, Tid: 0x11, Multiprocess: true}).Core(2).SwBreak().Bytes()
//	// "T05thread:p10.11;core:2;swbreak:;"
type StopReply struct {
	buf []byte
}

// NewStopReply starts a stop reply for signal sig (gdb signal number,
// e.g. 5 for SIGTRAP) in thread.
func NewStopReply(sig uint8, thread ThreadID) *StopReply {
	b := make([]byte, 0, 64)
	b = append(b, 'T', hexDigits[sig>>4], hexDigits[sig&0xf])
	b = append(b, "thread:"...)
	b = thread.AppendTo(b)
	return &StopReply{buf: append(b, ';')}
}

// Pair appends a raw `key:value;` field.
func (r *StopReply) Pair(key, value string) *StopReply {
	r.buf = append(r.buf, key...)
	r.buf = append(r.buf, ':')
	r.buf = append(r.buf, value...)
	r.buf = append(r.buf, ';')
	return r
}

func (r *StopReply) pairHex(key string, v uint64) *StopReply {
	return r.Pair(key, strconv.FormatUint(v, 16))
}

// Core appends `core:<n>;`, the CPU the thread last ran on.
func (r *StopReply) Core(core uint64) *StopReply { return r.pairHex("core", core) }

// SwBreak appends `swbreak:;` (stopped at a software breakpoint).
func (r *StopReply) SwBreak() *StopReply { return r.Pair("swbreak", "") }

// HwBreak appends `hwbreak:;` (stopped at a hardware breakpoint).
func (r *StopReply) HwBreak() *StopReply { return r.Pair("hwbreak", "") }

// Watch appends `watch:<addr>;` (write watchpoint hit).
func (r *StopReply) Watch(addr uint64) *StopReply { return r.pairHex("watch", addr) }

// RWatch appends `rwatch:<addr>;` (read watchpoint hit).
func (r *StopReply) RWatch(addr uint64) *StopReply { return r.pairHex("rwatch", addr) }

// AWatch appends `awatch:<addr>;` (access watchpoint hit).
func (r *StopReply) AWatch(addr uint64) *StopReply { return r.pairHex("awatch", addr) }

// ReplayLogBegin appends `replaylog:begin;` (reverse execution reached the
// start of the recording).
func (r *StopReply) ReplayLogBegin() *StopReply { return r.Pair("replaylog", "begin") }

// ReplayLogEnd appends `replaylog:end;` (forward execution reached the end
// of the recording).
func (r *StopReply) ReplayLogEnd() *StopReply { return r.Pair("replaylog", "end") }

// Register appends `<regno>:<hex value>;`; value is in target byte order.
func (r *StopReply) Register(regno uint32, value []byte) *StopReply {
	r.buf = strconv.AppendUint(r.buf, uint64(regno), 16)
	r.buf = append(r.buf, ':')
	r.buf = AppendHex(r.buf, value)
	r.buf = append(r.buf, ';')
	return r
}

// Threads appends `threads:<id>,<id>...;` (QListThreadsInStopReply).
func (r *StopReply) Threads(threads []ThreadID) *StopReply {
	r.buf = append(r.buf, "threads:"...)
	for i, t := range threads {
		if i > 0 {
			r.buf = append(r.buf, ',')
		}
		r.buf = t.AppendTo(r.buf)
	}
	r.buf = append(r.buf, ';')
	return r
}

// Bytes returns the packet body built so far (a copy).
func (r *StopReply) Bytes() []byte {
	return append([]byte(nil), r.buf...)
}

// SupportedReply formats a qSupported reply from a feature list, e.g.
// {"PacketSize=100000", "multiprocess+"} -> "PacketSize=100000;multiprocess+".
func SupportedReply(features []string) []byte {
	return []byte(strings.Join(features, ";"))
}

// DefaultFeatures returns the qSupported features of an rr-style replay
// server: a PacketSize matching DefaultMaxPacketSize, target descriptions,
// reverse execution, multiprocess thread ids, swbreak/hwbreak stop
// reasons, no-ack mode, the thread suffix, auxv/exec-file/siginfo
// transfers, vCont and no-resumed. The slice is fresh; edit it freely.
func DefaultFeatures() []string {
	return []string{
		"PacketSize=" + strconv.FormatUint(DefaultMaxPacketSize, 16),
		"qXfer:features:read+",
		"ReverseContinue+",
		"ReverseStep+",
		"multiprocess+",
		"swbreak+",
		"hwbreak+",
		"QStartNoAckMode+",
		"QThreadSuffixSupported+",
		"qXfer:auxv:read+",
		"qXfer:exec-file:read+",
		"qXfer:siginfo:read+",
		"qXfer:siginfo:write+",
		"vContSupported+",
		"no-resumed+",
	}
}
