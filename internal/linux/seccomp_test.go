package linux

import "testing"

func bpfStmt(code uint16, k uint32) BPFInsn { return BPFInsn{Code: code, K: k} }
func bpfJump(code uint16, k uint32, jt, jf uint8) BPFInsn {
	return BPFInsn{Code: code, Jt: jt, Jf: jf, K: k}
}

func TestRunSeccomp(t *testing.T) {
	// nr == 203 -> ERRNO|55; nr == 140 and arg0 has bit 1 -> TRAP; else ALLOW.
	f := []BPFInsn{
		bpfStmt(0x20, 0),         // ld nr
		bpfJump(0x15, 203, 0, 1), // jeq 203
		bpfStmt(0x06, SeccompRetErrno|55),
		bpfJump(0x15, 140, 0, 3), // jeq 140
		bpfStmt(0x20, 16),        // ld args[0] low
		bpfJump(0x45, 2, 0, 1),   // jset 2
		bpfStmt(0x06, SeccompRetTrap),
		bpfStmt(0x06, SeccompRetAllow),
	}
	kill := []BPFInsn{
		bpfStmt(0x20, 4), // ld arch
		bpfJump(0x15, auditArchX86_64, 1, 0),
		bpfStmt(0x06, SeccompRetKillProcess),
		bpfStmt(0x20, 0),
		bpfJump(0x15, 39, 0, 1), // getpid: log
		bpfStmt(0x06, SeccompRetLog),
		bpfStmt(0x06, SeccompRetAllow),
	}
	cases := []struct {
		d    SeccompData
		want uint32
	}{
		{SeccompData{Nr: 203}, SeccompRetErrno | 55},
		{SeccompData{Nr: 140, Args: Args{2}}, SeccompRetTrap},
		{SeccompData{Nr: 140, Args: Args{1}}, SeccompRetAllow},
		{SeccompData{Nr: 39}, SeccompRetLog},
		{SeccompData{Nr: -1}, SeccompRetAllow},
	}
	for _, c := range cases {
		got, err := RunSeccomp([][]BPFInsn{f, kill}, &c.d)
		if err != nil || got != c.want {
			t.Errorf("nr %d args %v: got 0x%x, %v; want 0x%x", c.d.Nr, c.d.Args, got, err, c.want)
		}
	}
	if SeccompErrno(SeccompRetErrno|55) != 55 {
		t.Error("SeccompErrno")
	}
	// Precedence: KILL_PROCESS beats everything (signed comparison).
	if got, _ := RunSeccomp([][]BPFInsn{{bpfStmt(0x06, SeccompRetKillProcess)}, f}, &SeccompData{Nr: 203}); got != SeccompRetKillProcess {
		t.Errorf("kill precedence: 0x%x", got)
	}
	if _, err := RunSeccomp([][]BPFInsn{{bpfStmt(0x20, 200)}}, &SeccompData{}); err == nil {
		t.Error("out-of-range load accepted")
	}
	raw := []byte{0x20, 0, 1, 2, 4, 0, 0, 0}
	if in := DecodeBPF(raw); len(in) != 1 || in[0] != (BPFInsn{Code: 0x20, Jt: 1, Jf: 2, K: 4}) {
		t.Errorf("DecodeBPF: %+v", in)
	}
}
