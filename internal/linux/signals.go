package linux

import (
	"strconv"
	"strings"
)

// Signal numbers used by the rest of gorr.
const (
	SIGTRAP = 5
	SIGKILL = 9
	SIGSEGV = 11
	SIGCHLD = 17
	SIGCONT = 18
	SIGSTOP = 19
	SIGSYS  = 31

	// SIGRTMIN is the kernel's first realtime signal. glibc keeps 32 and 33
	// for itself, so the SIGRTMIN programs see is 34 (SigRTMinLibc).
	SIGRTMIN     = 32
	SigRTMinLibc = 34
	SIGRTMAX     = 64
	// NSIG is one more than the highest signal number.
	NSIG = 65
)

// signalNames holds the classic signals 1..31 (x86-64 numbering).
var signalNames = [...]string{
	1:  "SIGHUP",
	2:  "SIGINT",
	3:  "SIGQUIT",
	4:  "SIGILL",
	5:  "SIGTRAP",
	6:  "SIGABRT",
	7:  "SIGBUS",
	8:  "SIGFPE",
	9:  "SIGKILL",
	10: "SIGUSR1",
	11: "SIGSEGV",
	12: "SIGUSR2",
	13: "SIGPIPE",
	14: "SIGALRM",
	15: "SIGTERM",
	16: "SIGSTKFLT",
	17: "SIGCHLD",
	18: "SIGCONT",
	19: "SIGSTOP",
	20: "SIGTSTP",
	21: "SIGTTIN",
	22: "SIGTTOU",
	23: "SIGURG",
	24: "SIGXCPU",
	25: "SIGXFSZ",
	26: "SIGVTALRM",
	27: "SIGPROF",
	28: "SIGWINCH",
	29: "SIGIO",
	30: "SIGPWR",
	31: "SIGSYS",
}

// signalAliases are other accepted names for classic signals.
var signalAliases = map[string]int{
	"SIGIOT":    6,
	"SIGCLD":    17,
	"SIGPOLL":   29,
	"SIGUNUSED": 31,
}

// SignalName returns the name of sig: "SIGSEGV" for classic signals;
// realtime signals are named as glibc programs see them, "SIGRTMIN" (34),
// "SIGRTMIN+1" (35) ... "SIGRTMAX" (64); 32 and 33, reserved by glibc, are
// "SIG32" and "SIG33". Anything else is "SIG<n>".
func SignalName(sig int) string {
	switch {
	case sig > 0 && sig < len(signalNames):
		return signalNames[sig]
	case sig == SigRTMinLibc:
		return "SIGRTMIN"
	case sig > SigRTMinLibc && sig < SIGRTMAX:
		return "SIGRTMIN+" + strconv.Itoa(sig-SigRTMinLibc)
	case sig == SIGRTMAX:
		return "SIGRTMAX"
	}
	return "SIG" + strconv.Itoa(sig)
}

// SignalByName parses a signal name: "SIGSEGV", "segv", "SIGIOT",
// "SIGRTMIN+3", "SIGRTMAX-2", "SIG40" or a plain number. It reports false
// for anything that is not a signal in 1..64.
func SignalByName(name string) (int, bool) {
	s := strings.ToUpper(strings.TrimSpace(name))
	if n, err := strconv.Atoi(s); err == nil {
		return validSignal(n)
	}
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	for i, n := range signalNames {
		if n != "" && n == s {
			return i, true
		}
	}
	if v, ok := signalAliases[s]; ok {
		return v, true
	}
	rest := s[3:]
	switch {
	case strings.HasPrefix(rest, "RTMIN"):
		return rtOffset(SigRTMinLibc, rest[5:], '+')
	case strings.HasPrefix(rest, "RTMAX"):
		return rtOffset(SIGRTMAX, rest[5:], '-')
	}
	if n, err := strconv.Atoi(rest); err == nil {
		return validSignal(n)
	}
	return 0, false
}

// rtOffset parses "" or "<sign><n>" after SIGRTMIN/SIGRTMAX.
func rtOffset(base int, off string, sign byte) (int, bool) {
	if off == "" {
		return base, true
	}
	if off[0] != sign {
		return 0, false
	}
	n, err := strconv.Atoi(off[1:])
	if err != nil || n < 0 {
		return 0, false
	}
	if sign == '-' {
		n = -n
	}
	sig := base + n
	if sig < SigRTMinLibc || sig > SIGRTMAX {
		return 0, false
	}
	return sig, true
}

func validSignal(n int) (int, bool) {
	if n < 1 || n > SIGRTMAX {
		return 0, false
	}
	return n, true
}

// Action is what the kernel does with a signal whose disposition is
// SIG_DFL.
type Action uint8

const (
	Terminate Action = iota // kill the process
	Core                    // kill the process and dump core
	Ignore                  // discard the signal
	Stop                    // stop the process (job control)
	Continue                // resume a stopped process
)

func (a Action) String() string {
	switch a {
	case Terminate:
		return "terminate"
	case Core:
		return "core"
	case Ignore:
		return "ignore"
	case Stop:
		return "stop"
	case Continue:
		return "continue"
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// DefaultAction returns the default disposition of sig (signal(7)).
// Realtime signals and unknown numbers terminate.
func DefaultAction(sig int) Action {
	switch sig {
	case 3, 4, 5, 6, 7, 8, 11, 24, 25, 31: // QUIT ILL TRAP ABRT BUS FPE SEGV XCPU XFSZ SYS
		return Core
	case 17, 23, 28: // CHLD URG WINCH
		return Ignore
	case 19, 20, 21, 22: // STOP TSTP TTIN TTOU
		return Stop
	case 18: // CONT
		return Continue
	}
	return Terminate
}
