package main

import (
	"os"
)

// gdbInit defines rr's gdb commands on top of the qRRCmd packet: when
// ("Completed event: N"), when-ticks (gorr has no ticks: always 0),
// when-tid, when-end, elapsed-time, checkpoint, delete checkpoint, info
// checkpoints, restart [N], seek-event N (rr's seek-ticks, by event).
const gdbInit = `set pagination off
set unwindonsignal on
python
import gdb
def _gorr_cmd(name, arg=""):
    tid = gdb.selected_thread().ptid[1] if gdb.selected_thread() else -1
    pkt = "qRRCmd:%s:%d" % (name, tid)
    if arg:
        pkt += ":" + arg.encode().hex()
    out = gdb.execute("maint packet " + pkt, to_string=True)
    start = out.find('received: "')
    if start < 0:
        return out
    hexs = out[start + len('received: "'):].split('"')[0]
    try:
        return bytes.fromhex(hexs).decode()
    except ValueError:
        return hexs
class _GorrCommand(gdb.Command):
    def __init__(self, name):
        super().__init__(name, gdb.COMMAND_USER)
        self._name = name
    def invoke(self, arg, from_tty):
        gdb.write(_gorr_cmd(self._name, arg))
for _n in ("when", "when-ticks", "when-tid", "when-end", "elapsed-time"):
    _GorrCommand(_n)
def _gorr_where():
    try:
        f = gdb.selected_frame()
        sal = f.find_sal()
        where = "%s" % (f.name() or "0x%x" % f.pc())
        if sal.symtab:
            where += " at %s:%d" % (sal.symtab.filename, sal.line)
        return where
    except gdb.error:
        return ""
class _GorrCheckpoint(gdb.Command):
    """checkpoint: remember this position (restart N goes back to it)."""
    def __init__(self):
        super().__init__("checkpoint", gdb.COMMAND_USER)
    def invoke(self, arg, from_tty):
        gdb.write(_gorr_cmd("checkpoint", arg.strip() or _gorr_where()))
_GorrCheckpoint()
class _GorrDelete(gdb.Command):
    """delete checkpoint N: forget an rr/gorr checkpoint."""
    def __init__(self):
        super().__init__("delete checkpoint", gdb.COMMAND_USER)
    def invoke(self, arg, from_tty):
        gdb.write(_gorr_cmd("delete checkpoint", arg.strip()))
_GorrDelete()
class _GorrInfoCheckpoints(gdb.Command):
    """info checkpoints: list checkpoints."""
    def __init__(self):
        super().__init__("info checkpoints", gdb.COMMAND_STATUS)
    def invoke(self, arg, from_tty):
        gdb.write(_gorr_cmd("info checkpoints"))
_GorrInfoCheckpoints()
class _GorrRestart(gdb.Command):
    """restart [N]: go back to the start, or to checkpoint N."""
    def __init__(self):
        super().__init__("restart", gdb.COMMAND_RUNNING)
    def invoke(self, arg, from_tty):
        # gdb's run remembers its arguments: always pass one (c0 = start).
        gdb.execute("run c" + (arg.strip() or "0"), to_string=False)
_GorrRestart()
class _GorrSeekEvent(gdb.Command):
    """seek-event N: go to the boundary after event N (gorr's seek-ticks: gorr counts events, not ticks)."""
    def __init__(self):
        super().__init__("seek-event", gdb.COMMAND_RUNNING)
    def invoke(self, arg, from_tty):
        gdb.execute("run " + arg.strip(), to_string=False)
_GorrSeekEvent()
end
set non-stop off
`

// cmdGdbinit prints the gdb script that defines rr's commands, for a
// gdb started by hand against 'gorr replay -s' (rr gdbinit).
func cmdGdbinit(args []string) int {
	if len(args) > 0 {
		return fatalf("gdbinit takes no arguments")
	}
	if _, err := os.Stdout.WriteString(gdbInit); err != nil {
		return fatalf("gdbinit: %v", err)
	}
	return 0
}
