// Package gdbrsp implements the wire layer of the GDB Remote Serial
// Protocol (RSP) as spoken by gdb and Delve to rr-style replay servers.
// It contains no debugging logic: it frames, parses and formats packets,
// and is fuzzable in isolation.
//
// # Framing (Conn)
//
// [Conn] wraps an io.ReadWriter (normally a net.Conn).
// [Conn.ReadPacket] returns the body of the next `$<data>#<cc>` packet:
//
//   - the two-hex-digit checksum (either case) is verified; in
//     acknowledgment mode (the default) a good packet is answered with `+`,
//     a bad one with `-`, after which the retransmission is awaited;
//     after QStartNoAckMode call [Conn.SetNoAck] and no `+`/`-` is sent
//     any more (a bad checksum then yields [ErrBadChecksum]);
//   - `+` bytes are skipped; a `-` received in acknowledgment mode makes
//     the Conn retransmit the last packet it wrote;
//   - an out-of-band 0x03 byte outside a packet yields [ErrInterrupt];
//   - any other garbage before `$` is skipped; a `$` inside a packet
//     restarts the packet (as gdb itself does);
//   - `}` escapes (0x7d, next byte XOR 0x20) are removed and run-length
//     encoding (`x*<n+29>`) is expanded, so the returned body is the
//     logical packet content, binary data included;
//   - packets whose raw or decoded body exceeds the maximum size
//     (DefaultMaxPacketSize, 1 MiB, see [Conn.SetMaxPacketSize]) are
//     consumed without being buffered and reported as [ErrPacketTooLarge];
//     undecodable bodies are reported as [ErrMalformed]. The Conn stays
//     usable after both.
//
// [Conn.WritePacket] and [Conn.WriteNotification] frame logical content,
// escaping `$`, `#`, `}` and `*` and appending the checksum. Callers pass
// unescaped data everywhere; the reply helpers below produce unescaped data.
//
// # Parsing
//
// [Parse] turns one packet body into a typed [Packet]. Supported:
//
//	?  g  G<hex>  p<reg>  P<reg>=<hex>  m<addr>,<len>  M<addr>,<len>:<hex>
//	x<addr>,<len>  X<addr>,<len>:<binary>
//	Z/z<type 0-4>,<addr>,<kind>[;X<len>,<expr>...][;cmds:<persist>,X<len>,<expr>...]
//	c[addr]  s[addr]  C<sig>[;addr]  S<sig>[;addr]  bc  bs
//	vCont?  vCont;<action>[:<thread>]...  (actions c C<sig> s S<sig> t r<start>,<end>)
//	vRun;<hex file>[;<hex arg>]...  vKill;<pid>  vMustReplyEmpty  vFile:<op>:<raw>
//	H{g,c}<thread>  T<thread>  D[;pid]  k  !
//	qSupported[:features]  qXfer:<obj>:read:<annex>:<off>,<len>
//	qXfer:<obj>:write:<annex>:<off>:<data>  qRRCmd:<name>:<tid>[:<hex arg>]...
//	qRRCmd:<hex name>[:<hex arg>]... (legacy, as Delve sends)  qfThreadInfo
//	qsThreadInfo  qC  qAttached[:pid]  qSymbol:[value]:[hex name]  qOffsets
//	qTStatus  qThreadExtraInfo,<thread>  qGetTLSAddr:<thread>,<off>,<lm>
//	qSearch:memory:<addr>;<len>;<pattern>
//	QStartNoAckMode  QThreadSuffixSupported  QListThreadsInStopReply
//	QNonStop:<0|1>  QPassSignals:<sig>[;sig]...  QProgramSignals:...
//	QDisableRandomization:<0|1>  QEnvironment*:... (raw)
//
// Anything else parses as [Unknown] (a server replies with an empty
// packet). Malformed packets return an error wrapping [ErrMalformed] (a
// server replies E01). All numbers are hex and overflow is rejected,
// except the qRRCmd thread id, which rr's gdb macros send in decimal.
// Thread ids may be `<tid>` or multiprocess `p<pid>[.<tid>]`, with -1
// meaning all and 0 meaning any. The lldb/Delve thread suffix
// `;thread:<id>;` is accepted on g, G, p, P, m, M and x packets.
//
// # Replies
//
// encode.go provides hex helpers, little-endian register encoding, OK and
// Exx replies, a [StopReply] builder (T packets with thread, core,
// swbreak/hwbreak, watch/rwatch/awatch, replaylog and register values),
// W/X exit replies, qXfer `l`/`m` chunking, `b` binary memory replies,
// thread list replies and the qSupported reply built from a feature list.
package gdbrsp
