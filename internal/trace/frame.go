package trace

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gorr-debugger/gorr/internal/machine"
)

// Frame encoding: a protobuf-like tag-length-value message. Each field is
// a varint tag (field number << 3 | wire type) followed by its value.
// Unknown fields are skipped, so later versions can add fields.
const (
	wireVarint = 0 // varint
	wireI64    = 1 // 8 bytes little endian (skipped only)
	wireLen    = 2 // varint length + bytes
	wireI32    = 5 // 4 bytes little endian (skipped only)
)

// Event field numbers. Never reuse or renumber.
const (
	evKind    = 1  // varint
	evTid     = 2  // zigzag varint
	evSysno   = 3  // zigzag varint
	evResult  = 4  // zigzag varint
	evSigno   = 5  // zigzag varint
	evNewTid  = 6  // zigzag varint
	evFlags   = 7  // varint
	evRegs    = 8  // len: 216 bytes, 27 little-endian uint64
	evRegs2   = 9  // len: same as Regs
	evXState  = 10 // len: blob
	evSigInfo = 11 // len: blob
	evMem     = 12 // len: MemWrite message; repeated
	evMaps    = 13 // len: Mapping message; repeated
	evText    = 14 // len: bytes
	evEmpty   = 15 // varint: bit 0: Mem is empty but not nil; bit 1: same for Maps
	evSum     = 16 // varint: memory checksum (record --checksum)
	evStack   = 17 // varint: checksum of the thread's stack (KindSched)
	evTime    = 18 // varint: nanoseconds since the recording started
	evSkip    = 19 // len: uvarint pairs (addr, len): bytes Checksum leaves out (KindSched)
	evSums    = 20 // len: page digests of Checksum (KindSched, asyncpoint.PageSums)
	// evPair (len: uvarint rax, uvarint flags), in a KindSyscallExit
	// frame: the frame holds two events, the exit and, before it, its
	// SYSCALL_ENTRY, which has the exit's tid, call, time and registers
	// but rax and flags, which the field gives, and nothing else (a
	// call drained from the syscall buffer; Writer.WriteCall). Format 3.
	evPair = 21
	// evRegsDelta (len) stands for evRegs: the registers as a change
	// from the previous frame's Regs in the stream (regsBase): a uvarint
	// mask of the words that differ (bit i: word i), then for each, in
	// order, the uvarint zigzag of the difference (new - old, mod 2^64).
	// The writer uses it when it is the shorter (always, but for the
	// stream's first registers). Format 4.
	evRegsDelta = 22
	// evRun (len: Run message), in a KindSyscallExit frame with Tid,
	// Time and Regs: the frame holds the SYSCALL_ENTRY and SYSCALL_EXIT
	// of each call of a run of buffered calls (callrec.go), rebuilt from
	// the call records with the frame's Regs for what a record does not
	// hold. Format 6.
	evRun = 23
)

// Run field numbers.
const (
	runCalls   = 1 // varint: number of records (> 0)
	runFlags   = 2 // varint: Flags of every event
	runRip     = 3 // varint: rip and rcx of every event
	runRecords = 4 // len: the records (in the frame: a run is read whole, from the events stream only)
	runExits   = 5 // len: uvarint pairs (index delta from the previous pair's, bits): Flags added to some exits
)

// MemWrite field numbers.
const (
	memAddr = 1 // varint
	memData = 2 // len: blob (absent: Data is nil)
)

// Mapping field numbers.
const (
	mapStart  = 1 // varint
	mapEnd    = 2 // varint
	mapProt   = 3 // varint
	mapFlags  = 4 // varint
	mapOffset = 5 // varint
	mapName   = 6 // len
	mapFile   = 7 // len
)

// Blob encoding: the value of a blob field starts with a varint mode.
const (
	blobInline = 0 // the rest of the value is the bytes
	blobRef    = 1 // varint offset, varint length in the uncompressed data stream
)

const (
	regsSize = 27 * 8
	// inlineMax: blobs shorter than this are stored inline in the frame.
	inlineMax = 64
	// maxFrameLen bounds the length of one frame.
	maxFrameLen = 64 << 20
	// maxBlobLen bounds the length of one blob (MemWrite.Data, XState...).
	maxBlobLen = 1 << 30
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

func appendUint(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

func appendSint(b []byte, field int, v int64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, field, wireVarint), zigzag(v))
}

func appendBytes(b []byte, field int, v []byte) []byte {
	b = appendTag(b, field, wireLen)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	b = appendTag(b, field, wireLen)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendRegs(b []byte, field int, r *Regs) []byte {
	if r == nil {
		return b
	}
	b = appendTag(b, field, wireLen)
	b = binary.AppendUvarint(b, regsSize)
	for _, v := range r {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// regsBase is the Regs of the last frame of a stream that had them,
// which the next frame's evRegsDelta is relative to.
type regsBase struct {
	r  Regs
	ok bool
}

// encoder builds frames; big blobs go to the data stream.
type encoder struct {
	data    []byte   // pending data stream bytes
	dataOff uint64   // data stream offset of the end of data
	sub     []byte   // scratch for nested messages
	base    regsBase // the registers of the last frame with Regs
}

// appendRegsDelta appends r as evRegsDelta against e.base when that is
// shorter than the raw words, and as evRegs otherwise; r becomes the
// base.
func (e *encoder) appendRegsDelta(b []byte, r *Regs) []byte {
	if r == nil {
		return b
	}
	if !e.base.ok {
		e.base = regsBase{r: *r, ok: true}
		return appendRegs(b, evRegs, r)
	}
	var mask uint64
	for i, v := range r {
		if v != e.base.r[i] {
			mask |= 1 << i
		}
	}
	var scratch [binary.MaxVarintLen64 * (len(Regs{}) + 1)]byte
	d := binary.AppendUvarint(scratch[:0], mask)
	for i, v := range r {
		if mask&(1<<i) != 0 {
			d = binary.AppendUvarint(d, zigzag(int64(v-e.base.r[i])))
		}
	}
	e.base.r = *r
	if len(d) >= regsSize {
		return appendRegs(b, evRegs, r)
	}
	return appendBytes(b, evRegsDelta, d)
}

// decodeRegsDelta decodes evRegsDelta p against base into r.
func decodeRegsDelta(p []byte, base *regsBase, r *Regs) error {
	if !base.ok {
		return badFrame("field %d: register changes without earlier registers", evRegsDelta)
	}
	mask, n := binary.Uvarint(p)
	if n <= 0 || mask>>len(Regs{}) != 0 {
		return badFrame("field %d: bad register mask", evRegsDelta)
	}
	p = p[n:]
	*r = base.r
	for i := range r {
		if mask&(1<<i) == 0 {
			continue
		}
		d, n := binary.Uvarint(p)
		if n <= 0 {
			return badFrame("field %d: bad change of register %d", evRegsDelta, i)
		}
		p = p[n:]
		r[i] += uint64(unzigzag(d))
	}
	if len(p) != 0 {
		return badFrame("field %d: %d bytes after the register changes", evRegsDelta, len(p))
	}
	return nil
}

func (e *encoder) appendBlob(b []byte, field int, v []byte) []byte {
	if v == nil {
		return b
	}
	b = appendTag(b, field, wireLen)
	if len(v) < inlineMax {
		b = binary.AppendUvarint(b, uint64(1+len(v)))
		b = append(b, blobInline)
		return append(b, v...)
	}
	var ref [1 + 2*binary.MaxVarintLen64]byte
	r := append(ref[:0], blobRef)
	r = binary.AppendUvarint(r, e.dataOff)
	r = binary.AppendUvarint(r, uint64(len(v)))
	e.data = append(e.data, v...)
	e.dataOff += uint64(len(v))
	b = binary.AppendUvarint(b, uint64(len(r)))
	return append(b, r...)
}

func (e *encoder) appendSub(b []byte, field int, sub []byte) []byte {
	b = appendTag(b, field, wireLen)
	b = binary.AppendUvarint(b, uint64(len(sub)))
	return append(b, sub...)
}

// appendEvent appends the frame of ev (without its length prefix) to b.
// Blob data is appended to e.data in the order of the fields in the frame.
func (e *encoder) appendEvent(b []byte, ev *Event) []byte {
	return e.appendFrame(b, ev, nil)
}

// pairable says whether entry and exit can share a frame (evPair): the
// entry has nothing the frame would not rebuild.
func pairable(entry, exit *Event) bool {
	if entry.Kind != KindSyscallEntry || exit.Kind != KindSyscallExit || entry.Regs == nil || exit.Regs == nil ||
		entry.Tid != exit.Tid || entry.Sysno != exit.Sysno || entry.Time != exit.Time {
		return false
	}
	if entry.Result != 0 || entry.Signo != 0 || entry.NewTid != 0 || entry.Regs2 != nil || entry.XState != nil ||
		entry.SigInfo != nil || entry.Mem != nil || entry.Maps != nil || entry.Text != "" || entry.Checksum != 0 ||
		entry.StackSum != 0 || entry.Skip != nil || entry.PageSums != nil {
		return false
	}
	a, b := *entry.Regs, *exit.Regs
	a[machine.RAX] = b[machine.RAX]
	return a == b
}

// appendFrame appends the frame of ev, which also holds entry, the
// SYSCALL_ENTRY before it, when entry is not nil (pairable).
func (e *encoder) appendFrame(b []byte, ev, entry *Event) []byte {
	b = appendUint(b, evKind, uint64(ev.Kind))
	b = appendSint(b, evTid, int64(ev.Tid))
	b = appendSint(b, evSysno, int64(ev.Sysno))
	b = appendSint(b, evResult, ev.Result)
	b = appendSint(b, evSigno, int64(ev.Signo))
	b = appendSint(b, evNewTid, int64(ev.NewTid))
	b = appendUint(b, evFlags, ev.Flags)
	// The registers go last, as a change from the previous frame's
	// (evRegsDelta), unless raw words are shorter: then here.
	var regs []byte
	if ev.Regs != nil {
		var scratch [regsSize + 8]byte
		regs = e.appendRegsDelta(scratch[:0], ev.Regs)
		if tag, _ := binary.Uvarint(regs); tag>>3 == evRegs {
			b, regs = append(b, regs...), nil
		}
	}
	b = appendRegs(b, evRegs2, ev.Regs2)
	b = e.appendBlob(b, evXState, ev.XState)
	b = e.appendBlob(b, evSigInfo, ev.SigInfo)
	for i := range ev.Mem {
		m := &ev.Mem[i]
		s := appendUint(e.sub[:0], memAddr, m.Addr)
		s = e.appendBlob(s, memData, m.Data)
		e.sub = s
		b = e.appendSub(b, evMem, s)
	}
	for i := range ev.Maps {
		m := &ev.Maps[i]
		s := appendUint(e.sub[:0], mapStart, m.Start)
		s = appendUint(s, mapEnd, m.End)
		s = appendUint(s, mapProt, uint64(m.Prot))
		s = appendUint(s, mapFlags, uint64(m.Flags))
		s = appendUint(s, mapOffset, m.Offset)
		s = appendString(s, mapName, m.Name)
		s = appendString(s, mapFile, m.File)
		e.sub = s
		b = e.appendSub(b, evMaps, s)
	}
	b = appendString(b, evText, ev.Text)
	b = appendUint(b, evSum, ev.Checksum)
	b = appendUint(b, evStack, ev.StackSum)
	b = appendUint(b, evTime, ev.Time)
	if len(ev.Skip) > 0 {
		var sk []byte
		for _, s := range ev.Skip {
			sk = binary.AppendUvarint(sk, s.Addr)
			sk = binary.AppendUvarint(sk, s.Len)
		}
		b = appendTag(b, evSkip, wireLen)
		b = binary.AppendUvarint(b, uint64(len(sk)))
		b = append(b, sk...)
	}
	if len(ev.PageSums) > 0 {
		b = appendTag(b, evSums, wireLen)
		b = binary.AppendUvarint(b, uint64(len(ev.PageSums)))
		b = append(b, ev.PageSums...)
	}
	var empty uint64
	if ev.Mem != nil && len(ev.Mem) == 0 {
		empty |= 1
	}
	if ev.Maps != nil && len(ev.Maps) == 0 {
		empty |= 2
	}
	b = appendUint(b, evEmpty, empty)
	if entry != nil {
		var pr [2 * binary.MaxVarintLen64]byte
		p := binary.AppendUvarint(pr[:0], entry.Regs[machine.RAX])
		b = appendBytes(b, evPair, binary.AppendUvarint(p, entry.Flags))
	}
	return append(b, regs...)
}

// checkEvent rejects events the format cannot hold.
func checkEvent(ev *Event) error {
	check := func(what string, v []byte) error {
		if len(v) > maxBlobLen {
			return fmt.Errorf("trace: %s of %d bytes exceeds the limit of %d bytes", what, len(v), maxBlobLen)
		}
		return nil
	}
	if err := check("XState", ev.XState); err != nil {
		return err
	}
	if err := check("SigInfo", ev.SigInfo); err != nil {
		return err
	}
	for i := range ev.Mem {
		if err := check("MemWrite", ev.Mem[i].Data); err != nil {
			return err
		}
	}
	return nil
}

// frameError is a frame that does not decode.
type frameError struct{ reason string }

func (e *frameError) Error() string { return e.reason }

func badFrame(format string, args ...any) error {
	return &frameError{fmt.Sprintf(format, args...)}
}

// msgReader walks the fields of one message.
type msgReader struct {
	b []byte
}

// next returns the next field. For wireVarint, v is the value; for
// wireLen, p is the value. ok is false at the end of the message.
func (m *msgReader) next() (field uint64, wire int, v uint64, p []byte, ok bool, err error) {
	if len(m.b) == 0 {
		return 0, 0, 0, nil, false, nil
	}
	tag, n := binary.Uvarint(m.b)
	if n <= 0 {
		return 0, 0, 0, nil, false, badFrame("bad field tag")
	}
	m.b = m.b[n:]
	field, wire = tag>>3, int(tag&7)
	if field == 0 {
		return 0, 0, 0, nil, false, badFrame("field number 0")
	}
	switch wire {
	case wireVarint:
		v, n = binary.Uvarint(m.b)
		if n <= 0 {
			return 0, 0, 0, nil, false, badFrame("field %d: bad varint", field)
		}
		m.b = m.b[n:]
	case wireI64:
		if len(m.b) < 8 {
			return 0, 0, 0, nil, false, badFrame("field %d: truncated", field)
		}
		v = binary.LittleEndian.Uint64(m.b)
		m.b = m.b[8:]
	case wireI32:
		if len(m.b) < 4 {
			return 0, 0, 0, nil, false, badFrame("field %d: truncated", field)
		}
		v = uint64(binary.LittleEndian.Uint32(m.b))
		m.b = m.b[4:]
	case wireLen:
		l, n := binary.Uvarint(m.b)
		if n <= 0 {
			return 0, 0, 0, nil, false, badFrame("field %d: bad length", field)
		}
		m.b = m.b[n:]
		if l > uint64(len(m.b)) {
			return 0, 0, 0, nil, false, badFrame("field %d: length %d exceeds the frame", field, l)
		}
		p = m.b[:l:l]
		m.b = m.b[l:]
	default:
		return 0, 0, 0, nil, false, badFrame("field %d: unknown wire type %d", field, wire)
	}
	return field, wire, v, p, true, nil
}

func wantWire(field uint64, wire, want int) error {
	if wire != want {
		return badFrame("field %d: wire type %d, want %d", field, wire, want)
	}
	return nil
}

func toInt32(field uint64, v uint64) (int32, error) {
	s := unzigzag(v)
	if s < math.MinInt32 || s > math.MaxInt32 {
		return 0, badFrame("field %d: value %d out of range", field, s)
	}
	return int32(s), nil
}

func toUint32(field uint64, v uint64) (uint32, error) {
	if v > math.MaxUint32 {
		return 0, badFrame("field %d: value %d out of range", field, v)
	}
	return uint32(v), nil
}

func decodeRegs(field uint64, p []byte, r *Regs) error {
	if len(p) != regsSize {
		return badFrame("field %d: registers of %d bytes, want %d", field, len(p), regsSize)
	}
	for i := range r {
		r[i] = binary.LittleEndian.Uint64(p[8*i:])
	}
	return nil
}

// eventRegs is an event and its registers, allocated together (most
// events have Regs and nothing else of variable size).
type eventRegs struct {
	ev   Event
	regs Regs
}

// slabLen is how many events a slab holds.
const slabLen = 64

// evSlab hands out decoded events from chunks of slabLen: replay decodes
// tens of thousands of events a second (two per buffered call), and one
// allocation per chunk costs a fraction of one per event. A chunk lives
// as long as any of its events does. The zero value is ready to use.
type evSlab struct {
	free []eventRegs
}

// get returns a zeroed eventRegs no one else holds.
func (s *evSlab) get() *eventRegs {
	if len(s.free) == 0 {
		s.free = make([]eventRegs, slabLen)
	}
	er := &s.free[0]
	s.free = s.free[1:]
	return er
}

// dataSource resolves a data reference (offset, length) to its bytes.
type dataSource func(off, n uint64) ([]byte, error)

func decodeBlob(field uint64, p []byte, data dataSource) ([]byte, error) {
	mode, n := binary.Uvarint(p)
	if n <= 0 {
		return nil, badFrame("field %d: bad blob", field)
	}
	p = p[n:]
	switch mode {
	case blobInline:
		return append(make([]byte, 0, len(p)), p...), nil
	case blobRef:
		off, n := binary.Uvarint(p)
		if n <= 0 {
			return nil, badFrame("field %d: bad data reference", field)
		}
		p = p[n:]
		l, n := binary.Uvarint(p)
		if n <= 0 {
			return nil, badFrame("field %d: bad data reference", field)
		}
		if l > maxBlobLen {
			return nil, badFrame("field %d: data reference of %d bytes exceeds the limit", field, l)
		}
		if off > math.MaxUint64-l {
			return nil, badFrame("field %d: data reference overflows", field)
		}
		return data(off, l)
	default:
		return nil, badFrame("field %d: unknown blob mode %d", field, mode)
	}
}

// decodeEvent decodes one frame. Errors are *frameError for a frame that
// does not decode, or whatever data returned.
// decodeEvent decodes frame b: one event, two for a frame with evPair
// (entry, then ev), or a run of calls (evRun: run, the others nil).
// base is the stream's last registers (evRegsDelta); decodeEvent
// updates it.
func decodeEvent(b []byte, data dataSource, base *regsBase, slab *evSlab) (entry, ev *Event, run *callRun, err error) {
	er := slab.get()
	ev = &er.ev
	var empty uint64
	var pair, runField []byte
	m := msgReader{b}
	for {
		field, wire, v, p, ok, err := m.next()
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			break
		}
		switch field {
		case evKind:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return nil, nil, nil, err
			}
			if v > math.MaxUint8 {
				return nil, nil, nil, badFrame("field %d: kind %d out of range", field, v)
			}
			ev.Kind = Kind(v)
		case evTid, evSysno, evSigno, evNewTid:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return nil, nil, nil, err
			}
			x, err := toInt32(field, v)
			if err != nil {
				return nil, nil, nil, err
			}
			switch field {
			case evTid:
				ev.Tid = x
			case evSysno:
				ev.Sysno = x
			case evSigno:
				ev.Signo = x
			case evNewTid:
				ev.NewTid = x
			}
		case evResult:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return nil, nil, nil, err
			}
			ev.Result = unzigzag(v)
		case evFlags:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return nil, nil, nil, err
			}
			ev.Flags = v
		case evRegs, evRegs2:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			r := &er.regs
			if field == evRegs2 {
				r = new(Regs)
			}
			if err := decodeRegs(field, p, r); err != nil {
				return nil, nil, nil, err
			}
			if field == evRegs {
				ev.Regs = r
				*base = regsBase{r: *r, ok: true}
			} else {
				ev.Regs2 = r
			}
		case evRegsDelta:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			if err := decodeRegsDelta(p, base, &er.regs); err != nil {
				return nil, nil, nil, err
			}
			ev.Regs = &er.regs
			base.r = er.regs
		case evXState, evSigInfo:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			d, err := decodeBlob(field, p, data)
			if err != nil {
				return nil, nil, nil, err
			}
			if field == evXState {
				ev.XState = d
			} else {
				ev.SigInfo = d
			}
		case evMem:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			mw, err := decodeMemWrite(p, data)
			if err != nil {
				return nil, nil, nil, err
			}
			ev.Mem = append(ev.Mem, mw)
		case evMaps:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			mp, err := decodeMapping(p)
			if err != nil {
				return nil, nil, nil, err
			}
			ev.Maps = append(ev.Maps, mp)
		case evText:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			ev.Text = string(p)
		case evSum:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return nil, nil, nil, err
			}
			ev.Checksum = v
		case evStack:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return nil, nil, nil, err
			}
			ev.StackSum = v
		case evTime:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return nil, nil, nil, err
			}
			ev.Time = v
		case evSkip:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			for q := p; len(q) > 0; {
				a, n := binary.Uvarint(q)
				if n <= 0 {
					return nil, nil, nil, badFrame("field %d: bad span", field)
				}
				l, m := binary.Uvarint(q[n:])
				if m <= 0 {
					return nil, nil, nil, badFrame("field %d: bad span", field)
				}
				ev.Skip = append(ev.Skip, Span{Addr: a, Len: l})
				q = q[n+m:]
			}
		case evSums:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			ev.PageSums = append([]byte(nil), p...)
		case evEmpty:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return nil, nil, nil, err
			}
			empty = v
		case evRun:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			runField = p
		case evPair:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, nil, nil, err
			}
			pair = p
		}
	}
	if empty&1 != 0 && ev.Mem == nil {
		ev.Mem = []MemWrite{}
	}
	if empty&2 != 0 && ev.Maps == nil {
		ev.Maps = []Mapping{}
	}
	if pair != nil {
		if entry, err = pairEntry(ev, pair, slab); err != nil {
			return nil, nil, nil, err
		}
	}
	if runField != nil {
		if pair != nil {
			return nil, nil, nil, badFrame("field %d: a run in a paired frame", evRun)
		}
		if run, err = decodeRun(ev, runField); err != nil {
			return nil, nil, nil, err
		}
		return nil, nil, run, nil
	}
	return entry, ev, nil, nil
}

// pairEntry rebuilds the SYSCALL_ENTRY that the evPair field p of exit
// frame ev stands for.
func pairEntry(ev *Event, p []byte, slab *evSlab) (*Event, error) {
	if ev.Kind != KindSyscallExit || ev.Regs == nil {
		return nil, badFrame("field %d: a paired entry in a frame of kind %d without registers", evPair, ev.Kind)
	}
	rax, n := binary.Uvarint(p)
	if n <= 0 {
		return nil, badFrame("field %d: bad rax", evPair)
	}
	flags, m := binary.Uvarint(p[n:])
	if m <= 0 || n+m != len(p) {
		return nil, badFrame("field %d: bad flags", evPair)
	}
	er := slab.get()
	er.ev = Event{Kind: KindSyscallEntry, Tid: ev.Tid, Sysno: ev.Sysno, Flags: flags, Time: ev.Time}
	er.regs = *ev.Regs
	er.regs[machine.RAX] = rax
	er.ev.Regs = &er.regs
	return &er.ev, nil
}

func decodeMemWrite(b []byte, data dataSource) (MemWrite, error) {
	var mw MemWrite
	m := msgReader{b}
	for {
		field, wire, v, p, ok, err := m.next()
		if err != nil {
			return mw, err
		}
		if !ok {
			return mw, nil
		}
		switch field {
		case memAddr:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return mw, err
			}
			mw.Addr = v
		case memData:
			if err := wantWire(field, wire, wireLen); err != nil {
				return mw, err
			}
			if mw.Data, err = decodeBlob(field, p, data); err != nil {
				return mw, err
			}
		}
	}
}

func decodeMapping(b []byte) (Mapping, error) {
	var mp Mapping
	m := msgReader{b}
	for {
		field, wire, v, p, ok, err := m.next()
		if err != nil {
			return mp, err
		}
		if !ok {
			return mp, nil
		}
		switch field {
		case mapStart, mapEnd, mapOffset:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return mp, err
			}
			switch field {
			case mapStart:
				mp.Start = v
			case mapEnd:
				mp.End = v
			case mapOffset:
				mp.Offset = v
			}
		case mapProt, mapFlags:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return mp, err
			}
			x, err := toUint32(field, v)
			if err != nil {
				return mp, err
			}
			if field == mapProt {
				mp.Prot = x
			} else {
				mp.Flags = x
			}
		case mapName, mapFile:
			if err := wantWire(field, wire, wireLen); err != nil {
				return mp, err
			}
			if field == mapName {
				mp.Name = string(p)
			} else {
				mp.File = string(p)
			}
		}
	}
}

// appendRunFrame appends the frame of run (evRun) but for its last
// bytes, the records, which the caller appends after it.
func (e *encoder) appendRunFrame(b []byte, run *Run) []byte {
	b = appendUint(b, evKind, uint64(KindSyscallExit))
	b = appendSint(b, evTid, int64(run.Tid))
	b = appendUint(b, evTime, run.Time)
	b = e.appendRegsDelta(b, run.Cur)
	s := appendUint(e.sub[:0], runCalls, uint64(run.Calls))
	s = appendUint(s, runFlags, run.Flags)
	s = appendUint(s, runRip, run.Rip)
	if len(run.ExitFlags) > 0 {
		var x []byte
		prev := 0
		for _, f := range run.ExitFlags {
			x = binary.AppendUvarint(x, uint64(f.Index-prev))
			x = binary.AppendUvarint(x, f.Bits)
			prev = f.Index
		}
		s = appendBytes(s, runExits, x)
	}
	s = appendTag(s, runRecords, wireLen)
	s = binary.AppendUvarint(s, uint64(len(run.Records)))
	e.sub = s
	b = appendTag(b, evRun, wireLen)
	b = binary.AppendUvarint(b, uint64(len(s)+len(run.Records)))
	return append(b, s...)
}

// callRun is a run frame being read: the events of its calls not yet
// returned (Reader.runNext).
type callRun struct {
	tid          int32
	cur          Regs
	rip, flags   uint64
	time         uint64
	recs         []byte // the records, in the Reader's frame; read from off
	off          int
	index, calls int
	exits        []RunFlag
	exit         *Event // the exit of call index-1, not returned yet
}

// decodeRun decodes the evRun field p of frame ev (its template: Tid,
// Time, Regs) and checks every record. The run keeps p's records.
func decodeRun(ev *Event, p []byte) (*callRun, error) {
	if ev.Kind != KindSyscallExit || ev.Regs == nil {
		return nil, badFrame("field %d: a run in a frame of kind %d without registers", evRun, ev.Kind)
	}
	run := &callRun{tid: ev.Tid, cur: *ev.Regs, time: ev.Time}
	var recs []byte
	m := msgReader{p}
	for {
		field, wire, v, q, ok, err := m.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch field {
		case runCalls, runFlags, runRip:
			if err := wantWire(field, wire, wireVarint); err != nil {
				return nil, err
			}
			switch field {
			case runCalls:
				if v > maxFrameLen {
					return nil, badFrame("run of %d calls", v)
				}
				run.calls = int(v)
			case runFlags:
				run.flags = v
			case runRip:
				run.rip = v
			}
		case runRecords:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, err
			}
			recs = q // the Reader gives the run the frame (Reader.next)
		case runExits:
			if err := wantWire(field, wire, wireLen); err != nil {
				return nil, err
			}
			idx := 0
			for len(q) > 0 {
				d, n := binary.Uvarint(q)
				if n <= 0 {
					return nil, badFrame("run: bad exit flags")
				}
				bits, k := binary.Uvarint(q[n:])
				if k <= 0 {
					return nil, badFrame("run: bad exit flags")
				}
				q = q[n+k:]
				if d > uint64(run.calls) || idx+int(d) >= run.calls || len(run.exits) > 0 && d == 0 {
					return nil, badFrame("run: exit flags of call %d+%d of %d", idx, d, run.calls)
				}
				idx += int(d)
				run.exits = append(run.exits, RunFlag{Index: idx, Bits: bits})
			}
		}
	}
	if run.calls == 0 {
		return nil, badFrame("run without calls")
	}
	n := 0
	for off := 0; off < len(recs); n++ {
		_, next, err := NextCallRecord(recs, off)
		if err != nil {
			return nil, badFrame("run: %v", err)
		}
		off = next
	}
	if n != run.calls {
		return nil, badFrame("run of %d calls holds %d records", run.calls, n)
	}
	run.recs = recs
	return run, nil
}

// next returns the run's next event: a call's entry, then its exit.
// The exit's bytes are a copy: the records are the Reader's frame.
func (run *callRun) next(slab *evSlab) *Event {
	if ev := run.exit; ev != nil {
		run.exit = nil
		return ev
	}
	rec, next, _ := NextCallRecord(run.recs, run.off) // checked by decodeRun
	run.off = next
	if rec.Data != nil {
		rec.Data = append(make([]byte, 0, len(rec.Data)), rec.Data...)
	}
	a, b := slab.get(), slab.get()
	a.ev.Regs, b.ev.Regs = &a.regs, &b.regs
	rec.EventsInto(run.tid, &run.cur, run.rip, run.flags, &a.ev, &b.ev)
	a.ev.Time, b.ev.Time = run.time, run.time
	if len(run.exits) > 0 && run.exits[0].Index == run.index {
		b.ev.Flags |= run.exits[0].Bits
		run.exits = run.exits[1:]
	}
	run.index++
	run.exit = &b.ev
	return &a.ev
}

// done tells whether every event of run was returned.
func (run *callRun) done() bool { return run.index == run.calls && run.exit == nil }
