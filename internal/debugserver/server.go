// Package debugserver serves a replay to gdb (and Delve) over the gdb
// remote serial protocol, in rr's dialect: it maps debugger requests to
// operations of a debug session (internal/session). It knows nothing
// about packet bytes (internal/gdbrsp) or about how replay works
// (internal/replay, internal/session).
package debugserver

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gorr-debugger/gorr/internal/debugapi"
	"github.com/gorr-debugger/gorr/internal/gdbrsp"
	"github.com/gorr-debugger/gorr/internal/loopback"
	"github.com/gorr-debugger/gorr/internal/ptrace"
)

// Server serves one replay session to one debugger connection.
type Server struct {
	sess    Session
	conn    *gdbrsp.Conn
	stop    debugapi.Stop
	gThread int32 // thread for register and memory requests (Hg)
	auxv    []byte
	exe     string
	exited  bool
	// Log, if set, receives every packet and reply.
	Log io.Writer
	// restarted: the last request was vRun; gdb (and Delve) follow it
	// with a continue that must report the restart position itself.
	restarted bool
	div       divState // diversion.go
	// hw holds the addresses of breakpoints gdb inserted as hardware ones
	// (Z1): their stops say hwbreak. Both kinds are int3s underneath.
	hw map[uint64]bool
	// ckptWhere describes each checkpoint for info checkpoints.
	ckptWhere map[int]string
	files     map[int]*hostFile // open vFile descriptors (hostio.go)
	// Delve (an LLDB-style client: it sends QThreadSuffixSupported)
	// takes rr's synthetic SIGKILL stop as the exit and keeps the
	// registers it read at the previous stop, so a reverse step from
	// there starts from a stale pc (Delve 1.27.2: "no source for PC
	// 0x0", a crash in proc.stepOutReverse). For such a client the stop
	// before the exit is first reported as a plain SIGTRAP, a stop Delve
	// ignores after refreshing its threads and resuming, and the next
	// forward resume reports the SIGKILL without moving (exitTrap).
	lldbStyle, exitTrap bool
}

// New prepares a server for a session stopped at first.
func New(sess Session, first debugapi.Stop) *Server {
	s := &Server{sess: sess, stop: first, gThread: first.Tid}
	s.exe, _ = sess.ExecFile()
	s.auxv = sess.Auxv()
	return s
}

// SetStop replaces the stop reported to the debugger when it connects.
func (s *Server) SetStop(st debugapi.Stop) {
	s.stop = st
	if st.Tid != 0 {
		s.gThread = st.Tid
	}
}

// ServeListener accepts one connection and serves it until the debugger
// detaches, kills the replay or disconnects.
func (s *Server) ServeListener(l *loopback.Listener) error {
	c, err := l.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	return s.Serve(c)
}

// Serve speaks the protocol over rw. Once acknowledgements are off
// (QStartNoAckMode), packets are read by a goroutine of their own, so
// that an interrupt (Ctrl-C in gdb) reaches a request that is running.
func (s *Server) Serve(rw io.ReadWriter) error {
	s.conn = gdbrsp.NewConn(rw)
	defer s.closeHostFiles()
	for !s.conn.NoAck() {
		data, err := s.conn.ReadPacket()
		if errors.Is(err, gdbrsp.ErrInterrupt) {
			continue // nothing runs
		}
		if badPacket(err) {
			if err := s.refuse(err); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if done, err := s.answer(data); done || err != nil {
			return err
		}
	}
	type packet struct {
		data []byte
		err  error
	}
	in := make(chan packet)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		for {
			data, err := s.conn.ReadPacket()
			select {
			case in <- packet{data, err}:
			case <-quit:
				return
			}
			if err != nil && !errors.Is(err, gdbrsp.ErrInterrupt) && !badPacket(err) {
				return
			}
		}
	}()
	for {
		p := <-in
		if errors.Is(p.err, gdbrsp.ErrInterrupt) {
			continue // nothing runs
		}
		if badPacket(p.err) {
			if err := s.refuse(p.err); err != nil {
				return err
			}
			continue
		}
		if p.err != nil {
			if errors.Is(p.err, io.EOF) {
				return nil
			}
			return p.err
		}
		type answered struct {
			done bool
			err  error
		}
		res := make(chan answered, 1)
		go func() {
			done, err := s.answer(p.data)
			res <- answered{done, err}
		}()
		var next []packet // packets that came while this one ran
	wait:
		for {
			select {
			case a := <-res:
				if a.done || a.err != nil {
					return a.err
				}
				break wait
			case q := <-in:
				if errors.Is(q.err, gdbrsp.ErrInterrupt) {
					s.sess.Interrupt()
					continue
				}
				// Clients do not send packets while the target runs in
				// all-stop mode, but some pipeline requests: answer them
				// after this one, in order.
				next = append(next, q)
				if q.err != nil && !badPacket(q.err) {
					a := <-res
					if a.done || a.err != nil {
						return a.err
					}
					break wait
				}
			}
		}
		for _, q := range next {
			if badPacket(q.err) {
				if err := s.refuse(q.err); err != nil {
					return err
				}
				continue
			}
			if q.err != nil {
				if errors.Is(q.err, io.EOF) {
					return nil
				}
				return q.err
			}
			if done, err := s.answer(q.data); done || err != nil {
				return err
			}
		}
	}
}

// badPacket says whether err reports a packet the connection received
// but could not take (too large, bad checksum in no-ack mode, malformed):
// the session goes on after an error reply.
func badPacket(err error) bool {
	return errors.Is(err, gdbrsp.ErrPacketTooLarge) || errors.Is(err, gdbrsp.ErrBadChecksum) || errors.Is(err, gdbrsp.ErrMalformed)
}

// refuse answers a packet that could not be read with an error reply.
// (In ack mode a bad checksum was NAKed by the connection, which waits
// for the retransmission; this is for the others, and for no-ack mode,
// where a NAK means nothing.)
func (s *Server) refuse(err error) error {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "gorr rsp: <- bad packet: %v\ngorr rsp: -> \"E01\"\n", err)
	}
	return s.conn.WritePacket(gdbrsp.Error(1))
}

// answer handles one packet and writes the reply.
func (s *Server) answer(data []byte) (done bool, err error) {
	reply, done := s.handle(data)
	if s.Log != nil {
		fmt.Fprintf(s.Log, "gorr rsp: <- %q\ngorr rsp: -> %q\n", data, reply)
	}
	if reply != nil {
		if err := s.conn.WritePacket(reply); err != nil {
			return true, err
		}
	}
	return done, nil
}

func (s *Server) threadID(tid int32) gdbrsp.ThreadID {
	return gdbrsp.ThreadID{Pid: int64(s.stop.Pid), Tid: int64(tid), Multiprocess: true}
}

// handle answers one packet; done ends the session.
func (s *Server) handle(data []byte) (reply []byte, done bool) {
	if string(data) == "qProcessInfo" {
		return s.processInfo(), false
	}
	pkt, err := gdbrsp.Parse(data)
	if err != nil {
		return gdbrsp.Error(1), false
	}
	switch p := pkt.(type) {
	case gdbrsp.QSupported:
		return gdbrsp.SupportedReply([]string{"PacketSize=10000", "QStartNoAckMode+", "qXfer:features:read+",
			"qXfer:auxv:read+", "qXfer:exec-file:read+", "multiprocess+", "swbreak+", "vContSupported+",
			"QThreadSuffixSupported+", "ReverseContinue+", "ReverseStep+", "qXfer:siginfo:read+", "qXfer:siginfo:write+"}), false
	case gdbrsp.StartNoAckMode:
		s.conn.WritePacket(gdbrsp.Ok())
		s.conn.SetNoAck(true)
		return nil, false
	case gdbrsp.ThreadSuffixSupported:
		s.lldbStyle = true
		return gdbrsp.Ok(), false
	case gdbrsp.ListThreadsInStopReply, gdbrsp.PassSignals, gdbrsp.ProgramSignals,
		gdbrsp.DisableRandomization, gdbrsp.Environment, gdbrsp.ExtendedMode:
		return gdbrsp.Ok(), false
	case gdbrsp.NonStop:
		if p.Enable {
			return gdbrsp.Error(1), false
		}
		return gdbrsp.Ok(), false
	case gdbrsp.QueryStopReason:
		return s.stopReply(), false
	case gdbrsp.XferRead:
		if p.Object == "siginfo" && p.Annex == "" {
			return s.siginfo(p), false
		}
		return s.xfer(p), false
	case gdbrsp.XferWrite:
		if p.Object == "siginfo" && p.Annex == "" {
			return s.siginfoWrite(p), false
		}
		return nil2(), false
	case gdbrsp.SetThread:
		if !s.knownThread(p.Thread) {
			return gdbrsp.Error(1), false
		}
		if p.Op == 'g' && p.Thread.Tid > 0 {
			s.gThread = int32(p.Thread.Tid)
		}
		return gdbrsp.Ok(), false
	case gdbrsp.ThreadAlive:
		for _, t := range s.sess.Threads() {
			if int64(t) == p.Thread.Tid {
				return gdbrsp.Ok(), false
			}
		}
		return gdbrsp.Error(1), false
	case gdbrsp.ThreadInfoFirst:
		var ids []gdbrsp.ThreadID
		for _, t := range s.threads() {
			ids = append(ids, s.threadID(t))
		}
		return gdbrsp.ThreadListReply(ids), false
	case gdbrsp.ThreadInfoNext:
		return []byte("l"), false
	case gdbrsp.CurrentThread:
		return gdbrsp.CurrentThreadReply(s.threadID(s.stop.Tid)), false
	case gdbrsp.Attached:
		return []byte("1"), false
	case gdbrsp.Symbol:
		return gdbrsp.Ok(), false
	case gdbrsp.ReadRegisters:
		return s.readRegs(s.pick(p.Thread), -1), false
	case gdbrsp.ReadRegister:
		return s.readRegs(s.pick(p.Thread), int(p.Reg)), false
	case gdbrsp.ReadMemory:
		if s.exited {
			return gdbrsp.Error(1), false // no process
		}
		b, err := s.sess.ReadMem(p.Addr, int(min(p.Len, 1<<20)))
		if err != nil {
			return gdbrsp.Error(1), false
		}
		return gdbrsp.EncodeHex(b), false
	case gdbrsp.ReadMemoryBinary:
		if s.exited {
			return gdbrsp.Error(1), false
		}
		b, err := s.sess.ReadMem(p.Addr, int(min(p.Len, 1<<20)))
		if err != nil && p.Len > 0 {
			return gdbrsp.Error(1), false
		}
		return gdbrsp.BinaryMemoryReply(b), false
	case gdbrsp.WriteRegister:
		// Writes that change something start a diversion (diversion.go).
		return s.writeRegister(p), false
	case gdbrsp.WriteRegisters:
		return s.writeRegisters(p), false
	case gdbrsp.WriteMemory:
		return s.writeMemory(p.Addr, p.Data), false
	case gdbrsp.WriteMemoryBinary:
		return s.writeMemory(p.Addr, p.Data), false
	case gdbrsp.Breakpoint:
		switch p.Type {
		case gdbrsp.SoftwareBreakpoint, gdbrsp.HardwareBreakpoint:
			var err error
			if p.Insert {
				err = s.sess.SetBreakpoint(p.Addr)
			} else {
				err = s.sess.ClearBreakpoint(p.Addr)
			}
			if err != nil {
				return gdbrsp.Error(1), false
			}
			if s.hw == nil {
				s.hw = map[uint64]bool{}
			}
			if p.Type == gdbrsp.HardwareBreakpoint && p.Insert {
				s.hw[p.Addr] = true
			} else {
				delete(s.hw, p.Addr)
			}
			return gdbrsp.Ok(), false
		}
		w := debugapi.Watch{Addr: p.Addr, Size: int(p.Kind), Kind: int(p.Type)}
		var err error
		if p.Insert {
			err = s.sess.SetWatchpoint(w)
		} else {
			err = s.sess.ClearWatchpoint(w)
		}
		if err != nil {
			return gdbrsp.Error(1), false
		}
		return gdbrsp.Ok(), false
	case gdbrsp.VContQuery:
		return []byte("vCont;c;C;s;S"), false
	case gdbrsp.VCont:
		for _, a := range p.Actions {
			if a.Thread != nil && !s.knownThread(*a.Thread) {
				return gdbrsp.Error(1), false // never resume for a thread that is not there
			}
		}
		if r, ok := s.divResume(vcontSignal(p)); ok {
			return r, false
		}
		return s.vcont(p), false
	case gdbrsp.Continue:
		if r, ok := s.divResume(false, p.Signal); ok {
			return r, false
		}
		return s.resume(false, 0), false
	case gdbrsp.Step:
		if r, ok := s.divResume(true, p.Signal); ok {
			return r, false
		}
		return s.resume(true, s.stop.Tid), false
	case gdbrsp.ReverseContinue:
		if r, ok := s.divReverse(); ok {
			return r, false
		}
		return s.reverse(s.sess.ReverseContinue()), false
	case gdbrsp.ReverseStep:
		if r, ok := s.divReverse(); ok {
			return r, false
		}
		return s.reverse(s.sess.ReverseStep()), false
	case gdbrsp.VRun:
		s.endDiversion()
		return s.vrun(p), false
	case gdbrsp.RRCmd:
		return s.rrcmd(p), false
	case gdbrsp.VFile:
		return s.hostIO(p), false
	case gdbrsp.Detach:
		s.endDiversion()
		return gdbrsp.Ok(), true
	case gdbrsp.VKill:
		// gdb's "run"/"restart" kill before vRun: the recording lives on.
		s.endDiversion()
		s.exited = true
		return gdbrsp.Ok(), false
	case gdbrsp.Kill:
		s.endDiversion()
		s.sess.Close()
		return nil, true
	}
	return nil2(), false
}

// processInfo answers LLDB's qProcessInfo (Delve asks it when the
// thread suffix is on, and names the process by it: "Process PID has
// exited"): the recorded pid and the program's original path.
func (s *Server) processInfo() []byte {
	_, orig := s.sess.ExecFile()
	return []byte(fmt.Sprintf("pid:%x;name:%s;", s.stop.Pid, gdbrsp.EncodeHex([]byte(orig))))
}

// nil2 is the empty reply: "not supported".
func nil2() []byte { return []byte{} }

// knownThread says whether t names the debugged process's threads: all
// or any of them, or one that exists now (a pid, when given, must be the
// process's).
func (s *Server) knownThread(t gdbrsp.ThreadID) bool {
	if t.Multiprocess && t.Pid != gdbrsp.AllThreads && t.Pid != gdbrsp.AnyThread && t.Pid != int64(s.stop.Pid) {
		return false
	}
	if t.Tid == gdbrsp.AllThreads || t.Tid == gdbrsp.AnyThread {
		return true
	}
	if _, ok := s.sess.Diverted(); ok && int64(s.gThread) == t.Tid {
		return true
	}
	for _, tid := range s.sess.Threads() {
		if int64(tid) == t.Tid {
			return true
		}
	}
	return false
}

// threads lists the debugged process's threads in a stable order, the
// leader first and then by thread id (creation order, mostly), so that a
// debugger numbering them as it learns of them gets the same numbers
// after a restart.
func (s *Server) threads() []int32 {
	ts := s.sess.Threads()
	sort.Slice(ts, func(i, j int) bool {
		if li, lj := ts[i] == s.stop.Pid, ts[j] == s.stop.Pid; li != lj {
			return li
		}
		return ts[i] < ts[j]
	})
	return ts
}

func (s *Server) pick(t *gdbrsp.ThreadID) int32 {
	if t != nil && t.Tid > 0 {
		return int32(t.Tid)
	}
	return s.gThread
}

func (s *Server) readRegs(tid int32, only int) []byte {
	regs, fx, err := s.sess.Regs(tid)
	if err != nil {
		return gdbrsp.Error(1)
	}
	if only >= 0 {
		if only >= numRegs {
			return gdbrsp.Error(1)
		}
		return gdbrsp.EncodeHex(regBytes(only, &regs, fx))
	}
	var all []byte
	for n := 0; n < numRegs; n++ {
		all = append(all, regBytes(n, &regs, fx)...)
	}
	return gdbrsp.EncodeHex(all)
}

func (s *Server) xfer(p gdbrsp.XferRead) []byte {
	var data []byte
	switch p.Object {
	case "features":
		doc, ok := targetDocs()[p.Annex]
		if !ok {
			return gdbrsp.Error(0)
		}
		data = []byte(doc)
	case "auxv":
		if s.exited {
			// No process: gdb 13 crashed in info sharedlibrary when it
			// got the auxv of a process that had exited.
			return gdbrsp.Error(1)
		}
		data = s.auxv
	case "exec-file":
		data = []byte(s.exe)
	default:
		return nil2()
	}
	return gdbrsp.XferReply(data, p.Offset, p.Length)
}

func (s *Server) vcont(p gdbrsp.VCont) []byte {
	for _, a := range p.Actions {
		switch a.Action {
		case 's', 'S':
			tid := s.stop.Tid
			if a.Thread != nil && a.Thread.Tid > 0 {
				tid = int32(a.Thread.Tid)
			}
			return s.resume(true, tid)
		}
	}
	return s.resume(false, 0)
}

func (s *Server) resume(step bool, tid int32) []byte {
	if s.restarted {
		s.restarted = false
		if !step {
			// Where the restart went, with no signal (as rr reports it:
			// gdb says "stopped", not "received signal SIGTRAP").
			sig := uint8(0)
			if s.stop.Kind == debugapi.StopExiting {
				sig = uint8(unix.SIGKILL)
			}
			s.gThread = s.stop.Tid // gdb takes a stop's thread as the one Hg selected
			return gdbrsp.NewStopReply(sig, s.threadID(s.stop.Tid)).Bytes()
		}
	}
	if s.exited {
		return gdbrsp.ExitedReply(uint8(s.stop.Status.ExitStatus()), int64(s.stop.Pid))
	}
	if s.exitTrap {
		s.exitTrap = false
		if s.stop.Kind == debugapi.StopExiting || s.stop.Kind == debugapi.StopExec {
			return s.stopReply()
		}
	}
	var st debugapi.Stop
	var err error
	if step {
		st, err = s.sess.Step(tid)
	} else {
		st, err = s.sess.Continue()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return gdbrsp.ConsoleOutput([]byte(fmt.Sprintf("gorr: %v\n", err)))
	}
	s.stop = st
	if st.Tid != 0 {
		s.gThread = st.Tid
	}
	if (st.Kind == debugapi.StopExiting || st.Kind == debugapi.StopExec) && s.lldbStyle {
		s.exitTrap = true
		return gdbrsp.NewStopReply(uint8(unix.SIGTRAP), s.threadID(st.Tid)).Bytes()
	}
	return s.stopReply()
}

func (s *Server) stopReply() []byte {
	st := s.stop
	if st.Tid != 0 {
		// gdb takes the thread of a stop reply as the one register and
		// memory requests go to, without an Hg (remote.c record_currthread).
		s.gThread = st.Tid
	}
	switch st.Kind {
	case debugapi.StopBreakpoint:
		if s.hw[st.Addr] {
			return gdbrsp.NewStopReply(uint8(unix.SIGTRAP), s.threadID(st.Tid)).HwBreak().Bytes()
		}
		return gdbrsp.NewStopReply(uint8(unix.SIGTRAP), s.threadID(st.Tid)).SwBreak().Bytes()
	case debugapi.StopWatch:
		r := gdbrsp.NewStopReply(uint8(unix.SIGTRAP), s.threadID(st.Tid))
		switch st.Watch.Kind {
		case 3:
			r.RWatch(st.Watch.Addr)
		case 4:
			r.AWatch(st.Watch.Addr)
		default:
			r.Watch(st.Watch.Addr)
		}
		return r.Bytes()
	case debugapi.StopSignal:
		return gdbrsp.NewStopReply(uint8(st.Signal), s.threadID(st.Tid)).Bytes()
	case debugapi.StopExiting:
		return gdbrsp.NewStopReply(uint8(unix.SIGKILL), s.threadID(st.Tid)).Bytes()
	case debugapi.StopExec:
		if s.lldbStyle {
			// Delve does not follow an exec, and takes a stop with no
			// signal going forwards as one to resume from: for it the
			// exec ends the program, as the stop before an exit.
			return gdbrsp.NewStopReply(uint8(unix.SIGKILL), s.threadID(st.Tid)).Bytes()
		}
		// As rr: a stop with no signal at the execve ("Program stopped"),
		// which forward requests do not leave.
		return gdbrsp.NewStopReply(0, s.threadID(st.Tid)).Bytes()
	case debugapi.StopExited, debugapi.StopEnd:
		s.exited = true
		if st.Status.Signaled() {
			return gdbrsp.TerminatedReply(uint8(st.Status.Signal()), int64(st.Pid))
		}
		return gdbrsp.ExitedReply(uint8(st.Status.ExitStatus()), int64(st.Pid))
	}
	return gdbrsp.NewStopReply(uint8(unix.SIGTRAP), s.threadID(st.Tid)).Bytes()
}

// reverse reports where a backwards request stopped; reaching the start
// of the recording is replaylog:begin ("No more reverse-execution
// history" in gdb).
func (s *Server) reverse(st debugapi.Stop, err error) []byte {
	if err != nil {
		if s.Log != nil {
			fmt.Fprintf(s.Log, "gorr: reverse execution: %v\n", err)
		}
		return gdbrsp.Error(1)
	}
	s.stop, s.exited, s.exitTrap = st, false, false
	if st.Tid != 0 {
		s.gThread = st.Tid
	}
	if st.Kind == debugapi.StopStart {
		return gdbrsp.NewStopReply(0, s.threadID(st.Tid)).ReplayLogBegin().Bytes() // signal 0, as rr (Delve relies on it)
	}
	return s.stopReply()
}

// vrun restarts the replay: at the start (empty argument), at event N,
// or at checkpoint cN, as rr's vRun does.
func (s *Server) vrun(p gdbrsp.VRun) []byte {
	// vRun;<filename>;<arg>: the first argument says where to go.
	arg := ""
	if len(p.Args) > 0 {
		arg = strings.TrimSpace(p.Args[0])
	}
	var st debugapi.Stop
	var err error
	switch {
	case arg == "" || arg == "c0":
		st, err = s.sess.Restart()
	case strings.HasPrefix(arg, "c"):
		var n int
		if _, e := fmt.Sscanf(arg[1:], "%d", &n); e != nil {
			return gdbrsp.Error(1)
		}
		st, err = s.sess.RestartCheckpoint(n)
	default:
		var n uint64
		if _, e := fmt.Sscanf(arg, "%d", &n); e != nil {
			return gdbrsp.Error(1)
		}
		st, err = s.sess.Goto(n)
	}
	if err != nil {
		return gdbrsp.Error(1)
	}
	s.stop, s.exited, s.restarted, s.exitTrap = st, false, true, false
	if st.Tid != 0 {
		s.gThread = st.Tid
	}
	// gdb takes vRun's stop for a new process and numbers its threads
	// afresh from the one named here: name the leader, as a new process
	// would, so the numbers stay; the continue that follows reports the
	// thread the restart went to.
	first := st.Tid
	if ts := s.threads(); len(ts) > 0 {
		first = ts[0]
	}
	s.gThread = first
	return gdbrsp.NewStopReply(uint8(unix.SIGTRAP), s.threadID(first)).Bytes()
}

// rrcmd answers rr's extension commands; replies are hex-encoded text.
func (s *Server) rrcmd(p gdbrsp.RRCmd) []byte {
	var out string
	switch strings.TrimSpace(p.Name) {
	case "checkpoint":
		n, pos := s.sess.Checkpoint()
		where := ""
		if len(p.Args) > 0 {
			where = strings.TrimSpace(p.Args[0]) // the debugger's description (rr's rr-where)
		}
		if where == "" {
			if regs, _, err := s.sess.Regs(s.stop.Tid); err == nil {
				where = fmt.Sprintf("0x%x", regs[ptrace.RIP])
			}
		}
		if s.ckptWhere == nil {
			s.ckptWhere = map[int]string{}
		}
		s.ckptWhere[n] = where
		out = fmt.Sprintf("Checkpoint %d at event %d\n", n, pos.Event)
	case "delete checkpoint":
		var n int
		if len(p.Args) > 0 {
			fmt.Sscanf(p.Args[0], "%d", &n)
		}
		if s.sess.DeleteCheckpoint(n) {
			delete(s.ckptWhere, n)
			out = fmt.Sprintf("Deleted checkpoint %d.\n", n)
		} else {
			out = fmt.Sprintf("No checkpoint number %d.\n", n)
		}
	case "info checkpoints":
		out = "ID\tWhen\tWhere\n"
		cks := s.sess.Checkpoints()
		ids := make([]int, 0, len(cks))
		for id := range cks {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		for _, id := range ids {
			out += fmt.Sprintf("%d\t%d\t%s\n", id, cks[id].Event, s.ckptWhere[id])
		}
	case "when":
		out = fmt.Sprintf("Completed event: %d\n", s.stop.Event)
	case "when-end":
		out = fmt.Sprintf("Event at end of recording: %d\n", s.sess.EventCount())
	case "when-tid":
		out = fmt.Sprintf("Current tid: %d\n", s.stop.Tid)
	case "when-ticks":
		out = "Current tick: 0\n"
	case "elapsed-time":
		out = fmt.Sprintf("Elapsed Time (s): %f\n", s.sess.ElapsedTime().Seconds())
	default:
		out = fmt.Sprintf("gorr does not implement '%s' yet\n", p.Name)
	}
	return gdbrsp.EncodeHex([]byte(out))
}
