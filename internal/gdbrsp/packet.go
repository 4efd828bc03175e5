package gdbrsp

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// Packet is a parsed request. The concrete types are the structs in this
// file; use a type switch.
type Packet interface {
	isPacket()
}

// ThreadID is a thread id as written in packets: either a plain `<tid>`
// (Multiprocess false, Pid 0) or the multiprocess form `p<pid>.<tid>`
// (Multiprocess true). `p<pid>` alone means all threads of pid (Tid -1).
// The values AllThreads (-1) and AnyThread (0) are special.
type ThreadID struct {
	Pid          int64
	Tid          int64
	Multiprocess bool
}

// Special thread and process id values.
const (
	AllThreads int64 = -1
	AnyThread  int64 = 0
)

// String formats t as it appears in packets: `p<pid>.<tid>` or `<tid>`,
// in hex, with -1 written as "-1".
func (t ThreadID) String() string {
	return string(t.AppendTo(nil))
}

// AppendTo appends the packet form of t to dst.
func (t ThreadID) AppendTo(dst []byte) []byte {
	if t.Multiprocess {
		dst = append(dst, 'p')
		dst = appendID(dst, t.Pid)
		dst = append(dst, '.')
	}
	return appendID(dst, t.Tid)
}

func appendID(dst []byte, v int64) []byte {
	if v < 0 {
		return strconv.AppendInt(dst, v, 10) // only -1 is meaningful
	}
	return strconv.AppendUint(dst, uint64(v), 16)
}

// ParseThreadID parses `<tid>`, `p<pid>` or `p<pid>.<tid>` where each id is
// hex, "-1" (all) or "0" (any).
func ParseThreadID(b []byte) (ThreadID, error) {
	if len(b) > 0 && b[0] == 'p' {
		b = b[1:]
		pidPart, tidPart, hasTid := bytes.Cut(b, []byte{'.'})
		pid, err := parseID(pidPart)
		if err != nil {
			return ThreadID{}, err
		}
		tid := AllThreads
		if hasTid {
			if tid, err = parseID(tidPart); err != nil {
				return ThreadID{}, err
			}
		}
		return ThreadID{Pid: pid, Tid: tid, Multiprocess: true}, nil
	}
	tid, err := parseID(b)
	if err != nil {
		return ThreadID{}, err
	}
	return ThreadID{Tid: tid}, nil
}

func parseID(b []byte) (int64, error) {
	if string(b) == "-1" {
		return -1, nil
	}
	v, err := parseHex(b, 63)
	if err != nil {
		return 0, malformed("thread id %q: %v", b, err)
	}
	return int64(v), nil
}

// QueryStopReason is `?`.
type QueryStopReason struct{}

// ReadRegisters is `g`. Thread is set when a `;thread:<id>;` suffix was
// present.
type ReadRegisters struct {
	Thread *ThreadID
}

// WriteRegisters is `G<hex>`; Data is the decoded register block.
type WriteRegisters struct {
	Data   []byte
	Thread *ThreadID
}

// ReadRegister is `p<regno>`.
type ReadRegister struct {
	Reg    uint32
	Thread *ThreadID
}

// WriteRegister is `P<regno>=<hex>`; Value is the decoded bytes in target
// (little-endian) order.
type WriteRegister struct {
	Reg    uint32
	Value  []byte
	Thread *ThreadID
}

// ReadMemory is `m<addr>,<len>` (hex reply).
type ReadMemory struct {
	Addr, Len uint64
	Thread    *ThreadID
}

// WriteMemory is `M<addr>,<len>:<hex>`. len(Data) == Len.
type WriteMemory struct {
	Addr, Len uint64
	Data      []byte
	Thread    *ThreadID
}

// ReadMemoryBinary is `x<addr>,<len>` (binary reply).
type ReadMemoryBinary struct {
	Addr, Len uint64
	Thread    *ThreadID
}

// WriteMemoryBinary is `X<addr>,<len>:<binary>`. len(Data) == Len; a zero
// length write is gdb's probe for X support.
type WriteMemoryBinary struct {
	Addr, Len uint64
	Data      []byte
}

// BreakpointType is the type field of Z and z packets.
type BreakpointType uint8

// Breakpoint and watchpoint types.
const (
	SoftwareBreakpoint BreakpointType = 0
	HardwareBreakpoint BreakpointType = 1
	WriteWatchpoint    BreakpointType = 2
	ReadWatchpoint     BreakpointType = 3
	AccessWatchpoint   BreakpointType = 4
)

// Breakpoint is `Z<type>,<addr>,<kind>[;cond...][;cmds:...]` (Insert true)
// or `z<type>,<addr>,<kind>` (Insert false). Conditions and Commands hold
// the bytecode of each `X<len>,<hex>` agent expression. Z/z packets with a
// type above 4 parse as Unknown.
type Breakpoint struct {
	Insert     bool
	Type       BreakpointType
	Addr       uint64
	Kind       uint64
	Conditions [][]byte
	Commands   [][]byte
	Persist    bool
}

// Continue is `c[addr]` or, with HasSignal, `C<sig>[;addr]`.
type Continue struct {
	Signal    uint8
	HasSignal bool
	Addr      uint64
	HasAddr   bool
}

// Step is `s[addr]` or, with HasSignal, `S<sig>[;addr]`.
type Step struct {
	Signal    uint8
	HasSignal bool
	Addr      uint64
	HasAddr   bool
}

// ReverseContinue is `bc`.
type ReverseContinue struct{}

// ReverseStep is `bs`.
type ReverseStep struct{}

// VContQuery is `vCont?`.
type VContQuery struct{}

// VContAction is one action of a vCont packet. Action is one of 'c', 'C',
// 's', 'S', 't', 'r'. Signal is set for C and S, Start and End (the
// half-open range [Start, End)) for r. Thread is nil for the default
// action, which applies to threads no other action names.
type VContAction struct {
	Action     byte
	Signal     uint8
	Start, End uint64
	Thread     *ThreadID
}

// VCont is `vCont;<action>[:<thread>]...`, with at least one action.
type VCont struct {
	Actions []VContAction
}

// VRun is `vRun;<hex filename>[;<hex arg>]...`. An empty Filename means
// the default program. rr and Delve use the first argument to select the
// restart point.
type VRun struct {
	Filename string
	Args     []string
}

// VKill is `vKill;<pid>`.
type VKill struct {
	Pid uint64
}

// VMustReplyEmpty is `vMustReplyEmpty`.
type VMustReplyEmpty struct{}

// VFile is a `vFile:<op>:<args>` host I/O request, kept raw: Op is e.g.
// "open", "pread", "close", "setfs"; Args is everything after "<op>:"
// (binary for pwrite).
type VFile struct {
	Op   string
	Args []byte
}

// SetThread is `H<op><thread>`; Op is 'g' (registers and memory) or 'c'
// (resumption).
type SetThread struct {
	Op     byte
	Thread ThreadID
}

// ThreadAlive is `T<thread>`.
type ThreadAlive struct {
	Thread ThreadID
}

// QSupported is `qSupported[:feature;...]`. Features are the raw items,
// such as "multiprocess+", "xmlRegisters=i386" or "fork-events-".
type QSupported struct {
	Features []string
}

// Supports reports whether the client listed name+ among its features.
func (q QSupported) Supports(name string) bool {
	for _, f := range q.Features {
		if len(f) == len(name)+1 && f[len(f)-1] == '+' && f[:len(name)] == name {
			return true
		}
	}
	return false
}

// Value returns the value of a name=value feature.
func (q QSupported) Value(name string) (string, bool) {
	for _, f := range q.Features {
		if len(f) > len(name) && f[len(name)] == '=' && f[:len(name)] == name {
			return f[len(name)+1:], true
		}
	}
	return "", false
}

// XferRead is `qXfer:<object>:read:<annex>:<offset>,<length>`.
type XferRead struct {
	Object, Annex  string
	Offset, Length uint64
}

// XferWrite is `qXfer:<object>:write:<annex>:<offset>:<data>`.
type XferWrite struct {
	Object, Annex string
	Offset        uint64
	Data          []byte
}

// RRCmd is rr's `qRRCmd` extension.
//
// Current rr gdb macros send `qRRCmd:<name>:<tid>[:<hex arg>]...`, where
// name is plain text and tid is the gdb-selected thread in decimal (-1 for
// none). The legacy form, which Delve sends, is `qRRCmd:<hex name>[:<hex
// arg>]...`: then Legacy is true and TID is -1. Args are hex-decoded in
// both forms.
type RRCmd struct {
	Name   string
	TID    int64
	Args   []string
	Legacy bool
}

// ThreadInfoFirst is `qfThreadInfo`.
type ThreadInfoFirst struct{}

// ThreadInfoNext is `qsThreadInfo`.
type ThreadInfoNext struct{}

// CurrentThread is `qC`.
type CurrentThread struct{}

// Attached is `qAttached[:pid]`.
type Attached struct {
	Pid    uint64
	HasPid bool
}

// Symbol is `qSymbol:[<value>]:[<hex name>]`. `qSymbol::` (no value, no
// name) announces that gdb is ready to serve symbol lookups.
type Symbol struct {
	Value    uint64
	HasValue bool
	Name     string
}

// Offsets is `qOffsets`.
type Offsets struct{}

// TraceStatus is `qTStatus`.
type TraceStatus struct{}

// ThreadExtraInfo is `qThreadExtraInfo,<thread>`.
type ThreadExtraInfo struct {
	Thread ThreadID
}

// GetTLSAddr is `qGetTLSAddr:<thread>,<offset>,<lm>`.
type GetTLSAddr struct {
	Thread     ThreadID
	Offset     uint64
	LoadModule uint64
}

// SearchMemory is `qSearch:memory:<addr>;<len>;<pattern>`.
type SearchMemory struct {
	Addr, Len uint64
	Pattern   []byte
}

// StartNoAckMode is `QStartNoAckMode`.
type StartNoAckMode struct{}

// ThreadSuffixSupported is `QThreadSuffixSupported`.
type ThreadSuffixSupported struct{}

// ListThreadsInStopReply is `QListThreadsInStopReply`.
type ListThreadsInStopReply struct{}

// NonStop is `QNonStop:<0|1>`.
type NonStop struct {
	Enable bool
}

// PassSignals is `QPassSignals:<sig>[;<sig>]...`.
type PassSignals struct {
	Signals []uint8
}

// ProgramSignals is `QProgramSignals:<sig>[;<sig>]...`.
type ProgramSignals struct {
	Signals []uint8
}

// DisableRandomization is `QDisableRandomization:<0|1>`.
type DisableRandomization struct {
	Disable bool
}

// Environment is one of `QEnvironmentHexEncoded:<hex>`,
// `QEnvironmentUnset:<hex>` and `QEnvironmentReset`, kept raw: Name is
// the packet name, Arg what follows the ':'.
type Environment struct {
	Name string
	Arg  []byte
}

// Detach is `D[;pid]`.
type Detach struct {
	Pid    uint64
	HasPid bool
}

// Kill is `k`.
type Kill struct{}

// ExtendedMode is `!`.
type ExtendedMode struct{}

// Unknown is any packet this package does not parse; the server should
// reply with an empty packet.
type Unknown struct {
	Raw []byte
}

func (QueryStopReason) isPacket()        {}
func (ReadRegisters) isPacket()          {}
func (WriteRegisters) isPacket()         {}
func (ReadRegister) isPacket()           {}
func (WriteRegister) isPacket()          {}
func (ReadMemory) isPacket()             {}
func (WriteMemory) isPacket()            {}
func (ReadMemoryBinary) isPacket()       {}
func (WriteMemoryBinary) isPacket()      {}
func (Breakpoint) isPacket()             {}
func (Continue) isPacket()               {}
func (Step) isPacket()                   {}
func (ReverseContinue) isPacket()        {}
func (ReverseStep) isPacket()            {}
func (VContQuery) isPacket()             {}
func (VCont) isPacket()                  {}
func (VRun) isPacket()                   {}
func (VKill) isPacket()                  {}
func (VMustReplyEmpty) isPacket()        {}
func (VFile) isPacket()                  {}
func (SetThread) isPacket()              {}
func (ThreadAlive) isPacket()            {}
func (QSupported) isPacket()             {}
func (XferRead) isPacket()               {}
func (XferWrite) isPacket()              {}
func (RRCmd) isPacket()                  {}
func (ThreadInfoFirst) isPacket()        {}
func (ThreadInfoNext) isPacket()         {}
func (CurrentThread) isPacket()          {}
func (Attached) isPacket()               {}
func (Symbol) isPacket()                 {}
func (Offsets) isPacket()                {}
func (TraceStatus) isPacket()            {}
func (ThreadExtraInfo) isPacket()        {}
func (GetTLSAddr) isPacket()             {}
func (SearchMemory) isPacket()           {}
func (StartNoAckMode) isPacket()         {}
func (ThreadSuffixSupported) isPacket()  {}
func (ListThreadsInStopReply) isPacket() {}
func (NonStop) isPacket()                {}
func (PassSignals) isPacket()            {}
func (ProgramSignals) isPacket()         {}
func (DisableRandomization) isPacket()   {}
func (Environment) isPacket()            {}
func (Detach) isPacket()                 {}
func (Kill) isPacket()                   {}
func (ExtendedMode) isPacket()           {}
func (Unknown) isPacket()                {}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// Parse parses one decoded packet body (as returned by Conn.ReadPacket).
// Packets it does not know are returned as Unknown; malformed packets
// return an error wrapping ErrMalformed. The result does not alias data.
func Parse(data []byte) (Packet, error) {
	if len(data) == 0 {
		return nil, malformed("empty packet")
	}
	p, err := parse(data)
	if err != nil {
		if len(data) > 64 {
			data = append(data[:64:64], "..."...)
		}
		return nil, fmt.Errorf("%w (packet %q)", err, data)
	}
	return p, nil
}

func parse(data []byte) (Packet, error) {
	rest := data[1:]
	switch data[0] {
	case '?':
		if len(rest) != 0 {
			return nil, malformed("trailing data")
		}
		return QueryStopReason{}, nil
	case 'g':
		body, th, err := cutThreadSuffix(rest)
		if err != nil {
			return nil, err
		}
		if len(body) != 0 {
			return nil, malformed("trailing data")
		}
		return ReadRegisters{Thread: th}, nil
	case 'G':
		body, th, err := cutThreadSuffix(rest)
		if err != nil {
			return nil, err
		}
		regs, err := DecodeHex(body)
		if err != nil {
			return nil, err
		}
		return WriteRegisters{Data: regs, Thread: th}, nil
	case 'p':
		body, th, err := cutThreadSuffix(rest)
		if err != nil {
			return nil, err
		}
		reg, err := parseHex(body, 32)
		if err != nil {
			return nil, malformed("register number: %v", err)
		}
		return ReadRegister{Reg: uint32(reg), Thread: th}, nil
	case 'P':
		body, th, err := cutThreadSuffix(rest)
		if err != nil {
			return nil, err
		}
		regPart, valPart, ok := bytes.Cut(body, []byte{'='})
		if !ok {
			return nil, malformed("missing '='")
		}
		reg, err := parseHex(regPart, 32)
		if err != nil {
			return nil, malformed("register number: %v", err)
		}
		if len(valPart) == 0 {
			return nil, malformed("empty register value")
		}
		val, err := DecodeHex(valPart)
		if err != nil {
			return nil, err
		}
		return WriteRegister{Reg: uint32(reg), Value: val, Thread: th}, nil
	case 'm', 'x':
		body, th, err := cutThreadSuffix(rest)
		if err != nil {
			return nil, err
		}
		addr, n, err := parseAddrLen(body)
		if err != nil {
			return nil, err
		}
		if data[0] == 'm' {
			return ReadMemory{Addr: addr, Len: n, Thread: th}, nil
		}
		return ReadMemoryBinary{Addr: addr, Len: n, Thread: th}, nil
	case 'M':
		body, th, err := cutThreadSuffix(rest)
		if err != nil {
			return nil, err
		}
		head, hexData, ok := bytes.Cut(body, []byte{':'})
		if !ok {
			return nil, malformed("missing ':'")
		}
		addr, n, err := parseAddrLen(head)
		if err != nil {
			return nil, err
		}
		mem, err := DecodeHex(hexData)
		if err != nil {
			return nil, err
		}
		if uint64(len(mem)) != n {
			return nil, malformed("length %#x but %#x bytes of data", n, len(mem))
		}
		return WriteMemory{Addr: addr, Len: n, Data: mem, Thread: th}, nil
	case 'X':
		head, bin, ok := bytes.Cut(rest, []byte{':'})
		if !ok {
			return nil, malformed("missing ':'")
		}
		addr, n, err := parseAddrLen(head)
		if err != nil {
			return nil, err
		}
		if uint64(len(bin)) != n {
			return nil, malformed("length %#x but %#x bytes of data", n, len(bin))
		}
		return WriteMemoryBinary{Addr: addr, Len: n, Data: clone(bin)}, nil
	case 'Z', 'z':
		return parseBreakpoint(data)
	case 'c', 's':
		var addr uint64
		has := len(rest) > 0
		if has {
			var err error
			if addr, err = parseHex(rest, 64); err != nil {
				return nil, malformed("address: %v", err)
			}
		}
		if data[0] == 'c' {
			return Continue{Addr: addr, HasAddr: has}, nil
		}
		return Step{Addr: addr, HasAddr: has}, nil
	case 'C', 'S':
		sigPart, addrPart, has := bytes.Cut(rest, []byte{';'})
		sig, err := parseHex(sigPart, 8)
		if err != nil {
			return nil, malformed("signal: %v", err)
		}
		var addr uint64
		if has {
			if addr, err = parseHex(addrPart, 64); err != nil {
				return nil, malformed("address: %v", err)
			}
		}
		if data[0] == 'C' {
			return Continue{Signal: uint8(sig), HasSignal: true, Addr: addr, HasAddr: has}, nil
		}
		return Step{Signal: uint8(sig), HasSignal: true, Addr: addr, HasAddr: has}, nil
	case 'b':
		switch string(rest) {
		case "c":
			return ReverseContinue{}, nil
		case "s":
			return ReverseStep{}, nil
		}
	case 'v':
		return parseV(data)
	case 'H':
		if len(rest) < 2 || (rest[0] != 'g' && rest[0] != 'c') {
			return nil, malformed("bad H packet")
		}
		th, err := ParseThreadID(rest[1:])
		if err != nil {
			return nil, err
		}
		return SetThread{Op: rest[0], Thread: th}, nil
	case 'T':
		th, err := ParseThreadID(rest)
		if err != nil {
			return nil, err
		}
		return ThreadAlive{Thread: th}, nil
	case 'q':
		return parseQuery(data)
	case 'Q':
		return parseSet(data)
	case 'D':
		if len(rest) == 0 {
			return Detach{}, nil
		}
		if rest[0] != ';' {
			return nil, malformed("bad D packet")
		}
		pid, err := parseHex(rest[1:], 64)
		if err != nil {
			return nil, malformed("pid: %v", err)
		}
		return Detach{Pid: pid, HasPid: true}, nil
	case 'k':
		if len(rest) != 0 {
			return nil, malformed("trailing data")
		}
		return Kill{}, nil
	case '!':
		if len(rest) != 0 {
			return nil, malformed("trailing data")
		}
		return ExtendedMode{}, nil
	}
	return Unknown{Raw: clone(data)}, nil
}

var threadSuffix = []byte(";thread:")

// cutThreadSuffix removes a trailing `;thread:<id>[;]` (lldb/Delve thread
// suffix) from body.
func cutThreadSuffix(body []byte) ([]byte, *ThreadID, error) {
	i := bytes.LastIndex(body, threadSuffix)
	if i < 0 {
		return body, nil, nil
	}
	id := bytes.TrimSuffix(body[i+len(threadSuffix):], []byte{';'})
	th, err := ParseThreadID(id)
	if err != nil {
		return nil, nil, err
	}
	return body[:i], &th, nil
}

func parseAddrLen(b []byte) (addr, n uint64, err error) {
	a, l, ok := bytes.Cut(b, []byte{','})
	if !ok {
		return 0, 0, malformed("missing ','")
	}
	if addr, err = parseHex(a, 64); err != nil {
		return 0, 0, malformed("address: %v", err)
	}
	if n, err = parseHex(l, 64); err != nil {
		return 0, 0, malformed("length: %v", err)
	}
	return addr, n, nil
}

func parseBreakpoint(data []byte) (Packet, error) {
	insert := data[0] == 'Z'
	typPart, b, ok := bytes.Cut(data[1:], []byte{','})
	if !ok {
		return nil, malformed("missing ','")
	}
	typ, err := parseHex(typPart, 64)
	if err != nil {
		return nil, malformed("type: %v", err)
	}
	if typ > uint64(AccessWatchpoint) {
		return Unknown{Raw: clone(data)}, nil
	}
	addrPart, b, ok := bytes.Cut(b, []byte{','})
	if !ok {
		return nil, malformed("missing ','")
	}
	addr, err := parseHex(addrPart, 64)
	if err != nil {
		return nil, malformed("address: %v", err)
	}
	kindPart, opts, _ := bytes.Cut(b, []byte{';'})
	kind, err := parseHex(kindPart, 64)
	if err != nil {
		return nil, malformed("kind: %v", err)
	}
	bp := Breakpoint{Insert: insert, Type: BreakpointType(typ), Addr: addr, Kind: kind}
	inCmds := false
	for len(opts) > 0 {
		switch {
		case opts[0] == ';':
			opts = opts[1:]
		case bytes.HasPrefix(opts, []byte("cmds:")):
			if inCmds {
				return nil, malformed("duplicate cmds")
			}
			inCmds = true
			persist, rest, ok := bytes.Cut(opts[len("cmds:"):], []byte{','})
			if !ok {
				return nil, malformed("cmds without ','")
			}
			switch string(persist) {
			case "0":
			case "1":
				bp.Persist = true
			default:
				return nil, malformed("cmds persist flag %q", persist)
			}
			opts = rest
		case opts[0] == 'X':
			expr, rest, err := parseAgentExpr(opts[1:])
			if err != nil {
				return nil, err
			}
			if inCmds {
				bp.Commands = append(bp.Commands, expr)
			} else {
				bp.Conditions = append(bp.Conditions, expr)
			}
			opts = rest
		default:
			return nil, malformed("bad breakpoint option %q", opts)
		}
	}
	return bp, nil
}

// parseAgentExpr parses `<len>,<2*len hex digits>` and returns the bytes
// and the remaining input.
func parseAgentExpr(b []byte) ([]byte, []byte, error) {
	lenPart, b, ok := bytes.Cut(b, []byte{','})
	if !ok {
		return nil, nil, malformed("agent expression without ','")
	}
	n, err := parseHex(lenPart, 32)
	if err != nil {
		return nil, nil, malformed("agent expression length: %v", err)
	}
	if n > uint64(len(b)/2) {
		return nil, nil, malformed("agent expression shorter than its length")
	}
	expr, err := DecodeHex(b[:2*n])
	if err != nil {
		return nil, nil, err
	}
	return expr, b[2*n:], nil
}

func parseV(data []byte) (Packet, error) {
	s := string(data)
	switch {
	case s == "vCont?":
		return VContQuery{}, nil
	case s == "vCont":
		return nil, malformed("vCont without actions")
	case hasPrefix(data, "vCont;"):
		return parseVCont(data[len("vCont;"):])
	case s == "vRun":
		return nil, malformed("vRun without ';'")
	case s == "vMustReplyEmpty":
		return VMustReplyEmpty{}, nil
	case hasPrefix(data, "vRun;"):
		fields := bytes.Split(data[len("vRun;"):], []byte{';'})
		name, err := DecodeHex(fields[0])
		if err != nil {
			return nil, err
		}
		run := VRun{Filename: string(name)}
		for _, f := range fields[1:] {
			arg, err := DecodeHex(f)
			if err != nil {
				return nil, err
			}
			run.Args = append(run.Args, string(arg))
		}
		return run, nil
	case hasPrefix(data, "vKill;"):
		pid, err := parseHex(data[len("vKill;"):], 64)
		if err != nil {
			return nil, malformed("pid: %v", err)
		}
		return VKill{Pid: pid}, nil
	case hasPrefix(data, "vFile:"):
		op, args, _ := bytes.Cut(data[len("vFile:"):], []byte{':'})
		if len(op) == 0 {
			return nil, malformed("vFile without operation")
		}
		return VFile{Op: string(op), Args: clone(args)}, nil
	}
	return Unknown{Raw: clone(data)}, nil
}

func parseVCont(b []byte) (Packet, error) {
	var vc VCont
	for _, item := range bytes.Split(b, []byte{';'}) {
		actPart, thPart, hasThread := bytes.Cut(item, []byte{':'})
		if len(actPart) == 0 {
			return nil, malformed("empty vCont action")
		}
		a := VContAction{Action: actPart[0]}
		arg := actPart[1:]
		switch a.Action {
		case 'c', 's', 't':
			if len(arg) != 0 {
				return nil, malformed("vCont action %q", actPart)
			}
		case 'C', 'S':
			sig, err := parseHex(arg, 8)
			if err != nil {
				return nil, malformed("vCont signal: %v", err)
			}
			a.Signal = uint8(sig)
		case 'r':
			start, end, err := parseAddrLen(arg)
			if err != nil {
				return nil, err
			}
			a.Start, a.End = start, end
		default:
			return nil, malformed("unknown vCont action %q", actPart)
		}
		if hasThread {
			th, err := ParseThreadID(thPart)
			if err != nil {
				return nil, err
			}
			a.Thread = &th
		}
		vc.Actions = append(vc.Actions, a)
	}
	return vc, nil
}

func parseQuery(data []byte) (Packet, error) {
	s := string(data)
	switch s {
	case "qSupported":
		return QSupported{}, nil
	case "qfThreadInfo":
		return ThreadInfoFirst{}, nil
	case "qsThreadInfo":
		return ThreadInfoNext{}, nil
	case "qC":
		return CurrentThread{}, nil
	case "qAttached":
		return Attached{}, nil
	case "qOffsets":
		return Offsets{}, nil
	case "qTStatus":
		return TraceStatus{}, nil
	case "qRRCmd":
		return nil, malformed("qRRCmd without command")
	}
	switch {
	case hasPrefix(data, "qSupported:"):
		var q QSupported
		for f := range bytes.SplitSeq(data[len("qSupported:"):], []byte{';'}) {
			if len(f) > 0 {
				q.Features = append(q.Features, string(f))
			}
		}
		return q, nil
	case hasPrefix(data, "qXfer:"):
		return parseXfer(data)
	case hasPrefix(data, "qRRCmd:"):
		return parseRRCmd(data[len("qRRCmd:"):])
	case hasPrefix(data, "qAttached:"):
		pid, err := parseHex(data[len("qAttached:"):], 64)
		if err != nil {
			return nil, malformed("pid: %v", err)
		}
		return Attached{Pid: pid, HasPid: true}, nil
	case hasPrefix(data, "qSymbol:"):
		valPart, namePart, ok := bytes.Cut(data[len("qSymbol:"):], []byte{':'})
		if !ok {
			return nil, malformed("qSymbol without second ':'")
		}
		var sym Symbol
		if len(valPart) > 0 {
			v, err := parseHex(valPart, 64)
			if err != nil {
				return nil, malformed("symbol value: %v", err)
			}
			sym.Value, sym.HasValue = v, true
		}
		name, err := DecodeHex(namePart)
		if err != nil {
			return nil, err
		}
		sym.Name = string(name)
		return sym, nil
	case hasPrefix(data, "qThreadExtraInfo,"):
		th, err := ParseThreadID(data[len("qThreadExtraInfo,"):])
		if err != nil {
			return nil, err
		}
		return ThreadExtraInfo{Thread: th}, nil
	case hasPrefix(data, "qGetTLSAddr:"):
		parts := bytes.Split(data[len("qGetTLSAddr:"):], []byte{','})
		if len(parts) != 3 {
			return nil, malformed("qGetTLSAddr needs 3 fields")
		}
		th, err := ParseThreadID(parts[0])
		if err != nil {
			return nil, err
		}
		off, err := parseHex(parts[1], 64)
		if err != nil {
			return nil, malformed("offset: %v", err)
		}
		lm, err := parseHex(parts[2], 64)
		if err != nil {
			return nil, malformed("load module: %v", err)
		}
		return GetTLSAddr{Thread: th, Offset: off, LoadModule: lm}, nil
	case hasPrefix(data, "qSearch:memory:"):
		b := data[len("qSearch:memory:"):]
		addrPart, b, ok1 := bytes.Cut(b, []byte{';'})
		lenPart, pat, ok2 := bytes.Cut(b, []byte{';'})
		if !ok1 || !ok2 {
			return nil, malformed("qSearch:memory needs 3 fields")
		}
		addr, err := parseHex(addrPart, 64)
		if err != nil {
			return nil, malformed("address: %v", err)
		}
		n, err := parseHex(lenPart, 64)
		if err != nil {
			return nil, malformed("length: %v", err)
		}
		return SearchMemory{Addr: addr, Len: n, Pattern: clone(pat)}, nil
	}
	return Unknown{Raw: clone(data)}, nil
}

func parseXfer(data []byte) (Packet, error) {
	b := data[len("qXfer:"):]
	object, b, ok := bytes.Cut(b, []byte{':'})
	if !ok || len(object) == 0 {
		return nil, malformed("qXfer without object")
	}
	mode, b, ok := bytes.Cut(b, []byte{':'})
	if !ok {
		return nil, malformed("qXfer without mode")
	}
	switch string(mode) {
	case "read":
		// The annex may in principle contain ':'; offset,length cannot.
		i := bytes.LastIndexByte(b, ':')
		if i < 0 {
			return nil, malformed("qXfer read without offset")
		}
		off, n, err := parseAddrLen(b[i+1:])
		if err != nil {
			return nil, err
		}
		return XferRead{Object: string(object), Annex: string(b[:i]), Offset: off, Length: n}, nil
	case "write":
		annex, b, ok := bytes.Cut(b, []byte{':'})
		if !ok {
			return nil, malformed("qXfer write without offset")
		}
		offPart, payload, ok := bytes.Cut(b, []byte{':'})
		if !ok {
			return nil, malformed("qXfer write without data")
		}
		off, err := parseHex(offPart, 64)
		if err != nil {
			return nil, malformed("offset: %v", err)
		}
		return XferWrite{Object: string(object), Annex: string(annex), Offset: off, Data: clone(payload)}, nil
	}
	return Unknown{Raw: clone(data)}, nil
}

func parseRRCmd(b []byte) (Packet, error) {
	fields := bytes.Split(b, []byte{':'})
	if len(fields[0]) == 0 {
		return nil, malformed("qRRCmd without command name")
	}
	decodeArgs := func(fs [][]byte) ([]string, error) {
		var args []string
		for _, f := range fs {
			a, err := DecodeHex(f)
			if err != nil {
				return nil, err
			}
			args = append(args, string(a))
		}
		return args, nil
	}
	if name, ok := legacyRRName(fields[0]); ok {
		args, err := decodeArgs(fields[1:])
		if err != nil {
			return nil, err
		}
		return RRCmd{Name: name, TID: -1, Args: args, Legacy: true}, nil
	}
	if len(fields) < 2 {
		return nil, malformed("qRRCmd without thread id")
	}
	tid, err := parseDecimalTID(fields[1])
	if err != nil {
		return nil, err
	}
	args, err := decodeArgs(fields[2:])
	if err != nil {
		return nil, err
	}
	return RRCmd{Name: string(fields[0]), TID: tid, Args: args}, nil
}

// legacyRRName reports whether f is a hex-encoded command name: an even
// number of hex digits decoding to printable ASCII. Plain rr command names
// ("when", "checkpoint", "elapsed-time", ...) never are.
func legacyRRName(f []byte) (string, bool) {
	name, err := DecodeHex(f)
	if err != nil || len(name) == 0 {
		return "", false
	}
	for _, c := range name {
		if c < 0x20 || c > 0x7e {
			return "", false
		}
	}
	return string(name), true
}

func parseDecimalTID(b []byte) (int64, error) {
	if string(b) == "-1" {
		return -1, nil
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, malformed("qRRCmd thread id %q", b)
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, malformed("qRRCmd thread id %q", b)
		}
		if v > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, malformed("qRRCmd thread id %q overflows", b)
		}
		v = v*10 + int64(c-'0')
	}
	return v, nil
}

func parseSet(data []byte) (Packet, error) {
	s := string(data)
	switch s {
	case "QStartNoAckMode":
		return StartNoAckMode{}, nil
	case "QThreadSuffixSupported":
		return ThreadSuffixSupported{}, nil
	case "QListThreadsInStopReply":
		return ListThreadsInStopReply{}, nil
	}
	switch {
	case hasPrefix(data, "QNonStop:"):
		on, err := parseBool(data[len("QNonStop:"):])
		if err != nil {
			return nil, err
		}
		return NonStop{Enable: on}, nil
	case hasPrefix(data, "QDisableRandomization:"):
		on, err := parseBool(data[len("QDisableRandomization:"):])
		if err != nil {
			return nil, err
		}
		return DisableRandomization{Disable: on}, nil
	case hasPrefix(data, "QPassSignals:"):
		sigs, err := parseSignalList(data[len("QPassSignals:"):])
		if err != nil {
			return nil, err
		}
		return PassSignals{Signals: sigs}, nil
	case hasPrefix(data, "QProgramSignals:"):
		sigs, err := parseSignalList(data[len("QProgramSignals:"):])
		if err != nil {
			return nil, err
		}
		return ProgramSignals{Signals: sigs}, nil
	case hasPrefix(data, "QEnvironment"):
		name, arg, _ := bytes.Cut(data, []byte{':'})
		return Environment{Name: string(name), Arg: clone(arg)}, nil
	}
	return Unknown{Raw: clone(data)}, nil
}

func parseBool(b []byte) (bool, error) {
	switch string(b) {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, malformed("expected 0 or 1, got %q", b)
}

func parseSignalList(b []byte) ([]uint8, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var sigs []uint8
	for f := range bytes.SplitSeq(b, []byte{';'}) {
		sig, err := parseHex(f, 8)
		if err != nil {
			return nil, malformed("signal: %v", err)
		}
		sigs = append(sigs, uint8(sig))
	}
	return sigs, nil
}

// parseHex parses a non-empty hex number that must fit in bits bits.
func parseHex(b []byte, bits uint) (uint64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("empty number")
	}
	limit := uint64(math.MaxUint64) >> (64 - bits)
	var v uint64
	for _, c := range b {
		d := unhex(c)
		if d < 0 {
			return 0, fmt.Errorf("bad hex digit %q", c)
		}
		if v > limit>>4 {
			return 0, fmt.Errorf("number %q overflows %d bits", b, bits)
		}
		v = v<<4 | uint64(d)
		if v > limit {
			return 0, fmt.Errorf("number %q overflows %d bits", b, bits)
		}
	}
	return v, nil
}

func hasPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

// clone copies b; empty input gives nil.
func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte{}, b...)
}
