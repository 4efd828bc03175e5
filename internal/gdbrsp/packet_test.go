package gdbrsp

import (
	"errors"
	"reflect"
	"testing"
)

func tid(t int64) *ThreadID { return &ThreadID{Tid: t} }

func ptid(p, t int64) *ThreadID { return &ThreadID{Pid: p, Tid: t, Multiprocess: true} }

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Packet
	}{
		// Registers, with and without the thread suffix.
		{"?", QueryStopReason{}},
		{"g", ReadRegisters{}},
		{"g;thread:1f;", ReadRegisters{Thread: tid(0x1f)}},
		{"g;thread:p10.11;", ReadRegisters{Thread: ptid(0x10, 0x11)}},
		{"g;thread:2a", ReadRegisters{Thread: tid(0x2a)}},
		{"G0011aAbB", WriteRegisters{Data: []byte{0x00, 0x11, 0xaa, 0xbb}}},
		{"G0102;thread:5;", WriteRegisters{Data: []byte{1, 2}, Thread: tid(5)}},
		{"p10", ReadRegister{Reg: 0x10}},
		{"p10;thread:p1.2;", ReadRegister{Reg: 0x10, Thread: ptid(1, 2)}},
		{"P10=0102030405060708", WriteRegister{Reg: 0x10, Value: []byte{1, 2, 3, 4, 5, 6, 7, 8}}},
		{"P0=ff;thread:3;", WriteRegister{Reg: 0, Value: []byte{0xff}, Thread: tid(3)}},

		// Memory.
		{"m7fff0000,100", ReadMemory{Addr: 0x7fff0000, Len: 0x100}},
		{"mffffffffffffffff,1", ReadMemory{Addr: 0xffffffffffffffff, Len: 1}},
		{"m1000,8;thread:p1.2;", ReadMemory{Addr: 0x1000, Len: 8, Thread: ptid(1, 2)}},
		{"M1000,3:0a0b0c", WriteMemory{Addr: 0x1000, Len: 3, Data: []byte{0xa, 0xb, 0xc}}},
		{"M1000,0:", WriteMemory{Addr: 0x1000}},
		{"x400000,40", ReadMemoryBinary{Addr: 0x400000, Len: 0x40}},
		{"x0,0", ReadMemoryBinary{}},
		{"X1000,4:\x00#}$", WriteMemoryBinary{Addr: 0x1000, Len: 4, Data: []byte{0, '#', '}', '$'}}},
		{"X1000,2::;", WriteMemoryBinary{Addr: 0x1000, Len: 2, Data: []byte(":;")}},
		{"X1000,0:", WriteMemoryBinary{Addr: 0x1000}},

		// Breakpoints and watchpoints.
		{"Z0,401000,1", Breakpoint{Insert: true, Type: SoftwareBreakpoint, Addr: 0x401000, Kind: 1}},
		{"z0,401000,1", Breakpoint{Type: SoftwareBreakpoint, Addr: 0x401000, Kind: 1}},
		{"Z1,401000,1", Breakpoint{Insert: true, Type: HardwareBreakpoint, Addr: 0x401000, Kind: 1}},
		{"Z2,601040,8", Breakpoint{Insert: true, Type: WriteWatchpoint, Addr: 0x601040, Kind: 8}},
		{"z3,601040,4", Breakpoint{Type: ReadWatchpoint, Addr: 0x601040, Kind: 4}},
		{"Z4,601040,2", Breakpoint{Insert: true, Type: AccessWatchpoint, Addr: 0x601040, Kind: 2}},
		{"Z0,401000,1;X2,2201X1,27", Breakpoint{Insert: true, Addr: 0x401000, Kind: 1,
			Conditions: [][]byte{{0x22, 0x01}, {0x27}}}},
		{"Z0,401000,1;X1,27;X1,28", Breakpoint{Insert: true, Addr: 0x401000, Kind: 1,
			Conditions: [][]byte{{0x27}, {0x28}}}},
		{"Z0,401000,1;X1,27;cmds:1,X2,0102", Breakpoint{Insert: true, Addr: 0x401000, Kind: 1,
			Conditions: [][]byte{{0x27}}, Commands: [][]byte{{1, 2}}, Persist: true}},
		{"Z0,401000,1;", Breakpoint{Insert: true, Addr: 0x401000, Kind: 1}},
		{"Z5,1000,1", Unknown{Raw: []byte("Z5,1000,1")}},

		// Resumption.
		{"c", Continue{}},
		{"c401000", Continue{Addr: 0x401000, HasAddr: true}},
		{"s", Step{}},
		{"s401000", Step{Addr: 0x401000, HasAddr: true}},
		{"C0b", Continue{Signal: 11, HasSignal: true}},
		{"C0b;401000", Continue{Signal: 11, HasSignal: true, Addr: 0x401000, HasAddr: true}},
		{"S05", Step{Signal: 5, HasSignal: true}},
		{"S05;10", Step{Signal: 5, HasSignal: true, Addr: 0x10, HasAddr: true}},
		{"bc", ReverseContinue{}},
		{"bs", ReverseStep{}},
		{"b9600", Unknown{Raw: []byte("b9600")}},
		{"vCont?", VContQuery{}},
		{"vCont;c", VCont{Actions: []VContAction{{Action: 'c'}}}},
		{"vCont;s:p1.2;c", VCont{Actions: []VContAction{
			{Action: 's', Thread: ptid(1, 2)}, {Action: 'c'}}}},
		{"vCont;C0b:p1.2;c", VCont{Actions: []VContAction{
			{Action: 'C', Signal: 11, Thread: ptid(1, 2)}, {Action: 'c'}}}},
		{"vCont;S05:1f;t:p1.-1;c:-1", VCont{Actions: []VContAction{
			{Action: 'S', Signal: 5, Thread: tid(0x1f)},
			{Action: 't', Thread: ptid(1, -1)},
			{Action: 'c', Thread: tid(-1)}}}},
		{"vCont;r1000,1010:p1.2;c", VCont{Actions: []VContAction{
			{Action: 'r', Start: 0x1000, End: 0x1010, Thread: ptid(1, 2)}, {Action: 'c'}}}},

		// v packets.
		{"vRun;", VRun{}},
		{"vRun;;6333", VRun{Args: []string{"c3"}}},
		{"vRun;2f62696e2f6c73;2d6c;", VRun{Filename: "/bin/ls", Args: []string{"-l", ""}}},
		{"vKill;1a2b", VKill{Pid: 0x1a2b}},
		{"vMustReplyEmpty", VMustReplyEmpty{}},
		{"vFile:open:2f6574632f706173737764,0,1a4", VFile{Op: "open", Args: []byte("2f6574632f706173737764,0,1a4")}},
		{"vFile:pwrite:3,0:\x00$#", VFile{Op: "pwrite", Args: []byte("3,0:\x00$#")}},
		{"vFile:setfs:0", VFile{Op: "setfs", Args: []byte("0")}},
		{"vAttach;1234", Unknown{Raw: []byte("vAttach;1234")}},
		{"vContX", Unknown{Raw: []byte("vContX")}},

		// Threads.
		{"Hg0", SetThread{Op: 'g', Thread: ThreadID{}}},
		{"Hc-1", SetThread{Op: 'c', Thread: ThreadID{Tid: -1}}},
		{"Hgp1f.20", SetThread{Op: 'g', Thread: *ptid(0x1f, 0x20)}},
		{"Hgp0.0", SetThread{Op: 'g', Thread: *ptid(0, 0)}},
		{"Hgp0", SetThread{Op: 'g', Thread: *ptid(0, -1)}},
		{"Hcp-1.-1", SetThread{Op: 'c', Thread: *ptid(-1, -1)}},
		{"T1f", ThreadAlive{Thread: ThreadID{Tid: 0x1f}}},
		{"Tp10.11", ThreadAlive{Thread: *ptid(0x10, 0x11)}},
		{"qfThreadInfo", ThreadInfoFirst{}},
		{"qsThreadInfo", ThreadInfoNext{}},
		{"qC", CurrentThread{}},
		{"qThreadExtraInfo,p10.11", ThreadExtraInfo{Thread: *ptid(0x10, 0x11)}},
		{"qThreadExtraInfo,1f", ThreadExtraInfo{Thread: ThreadID{Tid: 0x1f}}},

		// Queries.
		{"qSupported", QSupported{}},
		{"qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;fork-events-;xmlRegisters=i386",
			QSupported{Features: []string{"multiprocess+", "swbreak+", "hwbreak+", "qRelocInsn+", "fork-events-", "xmlRegisters=i386"}}},
		{"qXfer:features:read:target.xml:0,fff", XferRead{Object: "features", Annex: "target.xml", Offset: 0, Length: 0xfff}},
		{"qXfer:auxv:read::1000,ffb", XferRead{Object: "auxv", Offset: 0x1000, Length: 0xffb}},
		{"qXfer:exec-file:read:1a2b:0,fff", XferRead{Object: "exec-file", Annex: "1a2b", Length: 0xfff}},
		{"qXfer:siginfo:write::0:\x01\x00:}", XferWrite{Object: "siginfo", Data: []byte("\x01\x00:}")}},
		{"qXfer:siginfo:write::10:", XferWrite{Object: "siginfo", Offset: 0x10}},
		{"qXfer:features:frob:x:0,1", Unknown{Raw: []byte("qXfer:features:frob:x:0,1")}},
		{"qAttached", Attached{}},
		{"qAttached:1a2b", Attached{Pid: 0x1a2b, HasPid: true}},
		{"qSymbol::", Symbol{}},
		{"qSymbol::6d61696e", Symbol{Name: "main"}},
		{"qSymbol:401000:6d61696e", Symbol{Value: 0x401000, HasValue: true, Name: "main"}},
		{"qOffsets", Offsets{}},
		{"qTStatus", TraceStatus{}},
		{"qGetTLSAddr:p1.2,10,7ffff7d8e000", GetTLSAddr{Thread: *ptid(1, 2), Offset: 0x10, LoadModule: 0x7ffff7d8e000}},
		{"qSearch:memory:1000;100;ab\x00", SearchMemory{Addr: 0x1000, Len: 0x100, Pattern: []byte("ab\x00")}},
		{"qCRC:1000,10", Unknown{Raw: []byte("qCRC:1000,10")}},
		{"qRegisterInfo0", Unknown{Raw: []byte("qRegisterInfo0")}},
		{"qSupportedX", Unknown{Raw: []byte("qSupportedX")}},

		// rr commands: current form (plain name, decimal tid, hex args) ...
		{"qRRCmd:when:-1", RRCmd{Name: "when", TID: -1}},
		{"qRRCmd:when:12345", RRCmd{Name: "when", TID: 12345}},
		{"qRRCmd:checkpoint:100:6d61696e2e633a3132", RRCmd{Name: "checkpoint", TID: 100, Args: []string{"main.c:12"}}},
		{"qRRCmd:seek-ticks:7:31303030:", RRCmd{Name: "seek-ticks", TID: 7, Args: []string{"1000", ""}}},
		// ... and the legacy all-hex form Delve sends.
		{"qRRCmd:7768656e", RRCmd{Name: "when", TID: -1, Legacy: true}},
		{"qRRCmd:636865636b706f696e74:6d61696e2e633a3132", RRCmd{Name: "checkpoint", TID: -1, Args: []string{"main.c:12"}, Legacy: true}},

		// Q packets.
		{"QStartNoAckMode", StartNoAckMode{}},
		{"QThreadSuffixSupported", ThreadSuffixSupported{}},
		{"QListThreadsInStopReply", ListThreadsInStopReply{}},
		{"QNonStop:0", NonStop{}},
		{"QNonStop:1", NonStop{Enable: true}},
		{"QPassSignals:", PassSignals{}},
		{"QPassSignals:e;14;1d", PassSignals{Signals: []uint8{0xe, 0x14, 0x1d}}},
		{"QProgramSignals:0;1;3", ProgramSignals{Signals: []uint8{0, 1, 3}}},
		{"QDisableRandomization:1", DisableRandomization{Disable: true}},
		{"QDisableRandomization:0", DisableRandomization{}},
		{"QEnvironmentHexEncoded:413d42", Environment{Name: "QEnvironmentHexEncoded", Arg: []byte("413d42")}},
		{"QEnvironmentUnset:41", Environment{Name: "QEnvironmentUnset", Arg: []byte("41")}},
		{"QEnvironmentReset", Environment{Name: "QEnvironmentReset"}},
		{"QSetWorkingDir:2f746d70", Unknown{Raw: []byte("QSetWorkingDir:2f746d70")}},

		// Session.
		{"D", Detach{}},
		{"D;1a2b", Detach{Pid: 0x1a2b, HasPid: true}},
		{"k", Kill{}},
		{"!", ExtendedMode{}},
		{"A0,1,2", Unknown{Raw: []byte("A0,1,2")}},
		{"jThreadsInfo", Unknown{Raw: []byte("jThreadsInfo")}},
	}
	for _, tc := range tests {
		got, err := Parse([]byte(tc.in))
		if err != nil {
			t.Errorf("Parse(%q): unexpected error %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q)\n got %#v\nwant %#v", tc.in, got, tc.want)
		}
	}
}

func TestParseMalformed(t *testing.T) {
	bad := []string{
		"",
		"?x",
		"gx",
		"g;thread:zz;",
		"g;thread:;",
		"G0",
		"G0g",
		"p",
		"p100000000", // overflows 32 bits
		"P10",
		"P10=",
		"P10=0",
		"Pzz=00",
		"m",
		"m1000",
		"m1000,",
		"m,10",
		"m10000000000000000,1", // overflows 64 bits
		"m1000,10000000000000000",
		"mx,1",
		"M1000,2:01",
		"M1000,1:0102",
		"M1000,1",
		"M1000,1:zz",
		"x1000",
		"X1000,2:a",
		"X1000,1",
		"Z",
		"Z0",
		"Z0,1000",
		"Z0,1000,",
		"Zx,1000,1",
		"Z0,1000,1;Y",
		"Z0,1000,1;X2,01",
		"Z0,1000,1;X1",
		"Z0,1000,1;Xffffffff,00",
		"Z0,1000,1;cmds:2,X1,00",
		"Z0,1000,1;cmds:1",
		"Z0,1000,1;cmds:1,X1,00;cmds:1,",
		"Z100000000000000000,1,1",
		"cz",
		"c10000000000000000",
		"C",
		"C100",
		"Cxx",
		"C05;",
		"S05;zz",
		"vCont",
		"vCont;",
		"vCont;;c",
		"vCont;x",
		"vCont;c1",
		"vCont;C",
		"vCont;C100",
		"vCont;c:",
		"vCont;c:p",
		"vCont;c:zz",
		"vCont;r1000",
		"vCont;r1000,:1",
		"vRun",
		"vRun;zz",
		"vRun;;6",
		"vKill;",
		"vKill;x",
		"vFile:",
		"vFile::x",
		"H",
		"Hg",
		"Hx1",
		"Hgx",
		"Hg-2",
		"Hgp",
		"Hgp1.",
		"Hgp1.2.3",
		"Hg8000000000000000",
		"T",
		"T-5",
		"qSymbol:",
		"qSymbol:zz:",
		"qSymbol::6",
		"qAttached:",
		"qAttached:q",
		"qThreadExtraInfo,",
		"qGetTLSAddr:1,2",
		"qGetTLSAddr:x,1,2",
		"qSearch:memory:1000;10",
		"qXfer:",
		"qXfer::read::0,1",
		"qXfer:features",
		"qXfer:features:read:target.xml",
		"qXfer:features:read:target.xml:0",
		"qXfer:features:read:target.xml:x,1",
		"qXfer:siginfo:write:",
		"qXfer:siginfo:write::0",
		"qXfer:siginfo:write::x:",
		"qRRCmd",
		"qRRCmd:",
		"qRRCmd:when",
		"qRRCmd:when:",
		"qRRCmd:when:x",
		"qRRCmd:when:-2",
		"qRRCmd:when:99999999999999999999",
		"qRRCmd:when:1:zz",
		"qRRCmd:7768656e:6",
		"QNonStop:",
		"QNonStop:2",
		"QDisableRandomization:x",
		"QPassSignals:100",
		"QPassSignals:1;;2",
		"QProgramSignals:x",
		"D;",
		"D1",
		"D;zz",
		"kk",
		"!!",
	}
	for _, in := range bad {
		p, err := Parse([]byte(in))
		if err == nil {
			t.Errorf("Parse(%q) = %#v, want error", in, p)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) error %v does not wrap ErrMalformed", in, err)
		}
	}
}

func TestParseDoesNotAlias(t *testing.T) {
	in := []byte("X10,2:ab")
	p, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	in[6] = 'z'
	if got := p.(WriteMemoryBinary).Data; string(got) != "ab" {
		t.Errorf("data aliased input: %q", got)
	}
}

func TestThreadIDString(t *testing.T) {
	tests := []struct {
		id   ThreadID
		want string
	}{
		{ThreadID{Tid: 0x1f}, "1f"},
		{ThreadID{Tid: -1}, "-1"},
		{ThreadID{}, "0"},
		{ThreadID{Pid: 0x10, Tid: 0x11, Multiprocess: true}, "p10.11"},
		{ThreadID{Pid: -1, Tid: -1, Multiprocess: true}, "p-1.-1"},
	}
	for _, tc := range tests {
		if got := tc.id.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.id, got, tc.want)
		}
		back, err := ParseThreadID([]byte(tc.want))
		if err != nil || back != tc.id {
			t.Errorf("ParseThreadID(%q) = %#v, %v; want %#v", tc.want, back, err, tc.id)
		}
	}
}

func TestQSupportedHelpers(t *testing.T) {
	p, err := Parse([]byte("qSupported:multiprocess+;swbreak+;hwbreak-;xmlRegisters=i386"))
	if err != nil {
		t.Fatal(err)
	}
	q := p.(QSupported)
	if !q.Supports("multiprocess") || !q.Supports("swbreak") || q.Supports("hwbreak") || q.Supports("multi") {
		t.Errorf("Supports wrong for %v", q.Features)
	}
	if v, ok := q.Value("xmlRegisters"); !ok || v != "i386" {
		t.Errorf("Value(xmlRegisters) = %q, %v", v, ok)
	}
	if _, ok := q.Value("PacketSize"); ok {
		t.Errorf("Value(PacketSize) found")
	}
}
