package gdbrsp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// DefaultMaxPacketSize is the default bound on the size of a received
// packet body, both as transmitted and after decoding (1 MiB).
const DefaultMaxPacketSize = 1 << 20

// InterruptByte is the out-of-band byte gdb sends to interrupt the target.
const InterruptByte = 0x03

var (
	// ErrInterrupt is returned by ReadPacket when the client sent the
	// out-of-band interrupt byte (0x03, Ctrl-C) between packets.
	ErrInterrupt = errors.New("gdbrsp: interrupt request")
	// ErrPacketTooLarge is returned by ReadPacket for a packet whose body
	// exceeds the maximum packet size. The packet has been consumed.
	ErrPacketTooLarge = errors.New("gdbrsp: packet too large")
	// ErrBadChecksum is returned by ReadPacket in no-ack mode for a packet
	// whose checksum does not match (in ack mode a retransmission is
	// requested instead). The packet has been consumed.
	ErrBadChecksum = errors.New("gdbrsp: bad packet checksum")
	// ErrMalformed is wrapped by every error reporting a packet that cannot
	// be decoded (bad escape or run-length sequence) or parsed.
	ErrMalformed = errors.New("gdbrsp: malformed packet")
)

const hexDigits = "0123456789abcdef"

// Conn reads and writes RSP packets over an io.ReadWriter.
//
// ReadPacket must be called from one goroutine at a time. The write
// methods and SetNoAck may be called concurrently with ReadPacket and with
// each other (for instance a goroutine sending a stop reply while another
// waits for an interrupt).
type Conn struct {
	r *bufio.Reader

	wmu  sync.Mutex
	w    io.Writer
	last []byte // last packet frame written in ack mode, for retransmission

	noAck   atomic.Bool
	maxSize atomic.Int64

	raw []byte // reusable buffer for the raw body of the packet being read
}

// NewConn returns a Conn over rw in acknowledgment mode with the default
// maximum packet size.
func NewConn(rw io.ReadWriter) *Conn {
	c := &Conn{r: bufio.NewReaderSize(rw, 64<<10), w: rw}
	c.maxSize.Store(DefaultMaxPacketSize)
	return c
}

// SetNoAck turns no-acknowledgment mode on or off. A server calls
// SetNoAck(true) after writing the OK reply to QStartNoAckMode (that reply
// is still acknowledged by gdb; the stray `+` is skipped by ReadPacket).
func (c *Conn) SetNoAck(noAck bool) {
	c.noAck.Store(noAck)
	if noAck {
		c.wmu.Lock()
		c.last = nil
		c.wmu.Unlock()
	}
}

// NoAck reports whether no-acknowledgment mode is on.
func (c *Conn) NoAck() bool { return c.noAck.Load() }

// SetMaxPacketSize sets the bound on received packet bodies. Values below
// 64 are raised to 64.
func (c *Conn) SetMaxPacketSize(n int) {
	if n < 64 {
		n = 64
	}
	c.maxSize.Store(int64(n))
}

// MaxPacketSize returns the bound on received packet bodies.
func (c *Conn) MaxPacketSize() int { return int(c.maxSize.Load()) }

// ReadPacket returns the decoded body of the next packet. It returns
// ErrInterrupt for an interrupt byte, ErrPacketTooLarge, ErrBadChecksum (no-ack
// mode only) or an error wrapping ErrMalformed for a bad packet; after these
// the Conn remains usable. Errors from the underlying reader are returned
// as is (io.ErrUnexpectedEOF for EOF inside a packet).
func (c *Conn) ReadPacket() ([]byte, error) {
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			return nil, err
		}
		switch b {
		case '$':
		case InterruptByte:
			return nil, ErrInterrupt
		case '-':
			if err := c.retransmit(); err != nil {
				return nil, err
			}
			continue
		default:
			// '+' acknowledgments and garbage before a packet start.
			continue
		}

		raw, sumOK, tooLarge, err := c.readFrame()
		if err != nil {
			return nil, err
		}
		ack := !c.noAck.Load()
		if tooLarge {
			// Received, but we cannot take it: acknowledge so that the
			// client waits for our (error) reply instead of resending.
			if ack {
				if err := c.writeRaw([]byte{'+'}); err != nil {
					return nil, err
				}
			}
			return nil, ErrPacketTooLarge
		}
		if !sumOK {
			if ack {
				if err := c.writeRaw([]byte{'-'}); err != nil {
					return nil, err
				}
				continue
			}
			return nil, ErrBadChecksum
		}
		if ack {
			if err := c.writeRaw([]byte{'+'}); err != nil {
				return nil, err
			}
		}
		return decodeBody(raw, c.MaxPacketSize())
	}
}

// readFrame reads the rest of a packet whose '$' has been consumed, up to
// and including the two checksum characters. A '$' seen before the
// checksum is complete restarts the packet. The returned raw body aliases
// c.raw. Bodies longer than the maximum size are discarded, not buffered.
func (c *Conn) readFrame() (raw []byte, sumOK, tooLarge bool, err error) {
	limit := c.MaxPacketSize()
restart:
	for {
		raw = c.raw[:0]
		tooLarge = false
		var sum byte
		for {
			b, err := c.r.ReadByte()
			if err != nil {
				return nil, false, false, eofIsUnexpected(err)
			}
			if b == '$' {
				continue restart
			}
			if b == '#' {
				break
			}
			sum += b
			if len(raw) >= limit {
				tooLarge = true
				continue
			}
			raw = append(raw, b)
		}
		var cs [2]byte
		for i := range cs {
			b, err := c.r.ReadByte()
			if err != nil {
				return nil, false, false, eofIsUnexpected(err)
			}
			if b == '$' {
				continue restart
			}
			cs[i] = b
		}
		if cap(raw) <= 2*limit {
			c.raw = raw[:0]
		}
		hi, lo := unhex(cs[0]), unhex(cs[1])
		sumOK = hi >= 0 && lo >= 0 && byte(hi<<4|lo) == sum
		return raw, sumOK, tooLarge, nil
	}
}

func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// decodeBody removes '}' escapes and expands run-length encoding. The
// result is a new slice.
func decodeBody(raw []byte, limit int) ([]byte, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		switch b {
		case '}':
			i++
			if i >= len(raw) {
				return nil, fmt.Errorf("%w: escape character at end of packet", ErrMalformed)
			}
			out = append(out, raw[i]^0x20)
		case '*':
			if len(out) == 0 {
				return nil, fmt.Errorf("%w: run-length marker at start of packet", ErrMalformed)
			}
			i++
			if i >= len(raw) {
				return nil, fmt.Errorf("%w: run-length marker at end of packet", ErrMalformed)
			}
			cnt := raw[i]
			if cnt < ' ' || cnt > '~' {
				return nil, fmt.Errorf("%w: bad run-length count %#x", ErrMalformed, cnt)
			}
			n := int(cnt) - 29
			if len(out)+n > limit {
				return nil, ErrPacketTooLarge
			}
			prev := out[len(out)-1]
			for range n {
				out = append(out, prev)
			}
		default:
			out = append(out, b)
		}
		if len(out) > limit {
			return nil, ErrPacketTooLarge
		}
	}
	return out, nil
}

// WritePacket sends data as a `$...#cc` packet, escaping `$`, `#`, `}` and
// `*`. In ack mode the frame is remembered and resent if the client answers
// `-` (the `-` is seen by the next ReadPacket); WritePacket does not wait
// for the acknowledgment.
func (c *Conn) WritePacket(data []byte) error {
	frame := appendFrame(make([]byte, 0, len(data)+len(data)/16+4), '$', data)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.noAck.Load() {
		c.last = nil
	} else {
		c.last = frame
	}
	_, err := c.w.Write(frame)
	return err
}

// WriteNotification sends data as an asynchronous `%...#cc` notification
// (for example "Stop:T05..." in non-stop mode). Notifications are not
// acknowledged and never retransmitted.
func (c *Conn) WriteNotification(data []byte) error {
	frame := appendFrame(make([]byte, 0, len(data)+len(data)/16+4), '%', data)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(frame)
	return err
}

func (c *Conn) writeRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(b)
	return err
}

func (c *Conn) retransmit() error {
	if c.noAck.Load() {
		return nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.last == nil {
		return nil
	}
	_, err := c.w.Write(c.last)
	return err
}

// appendFrame appends start, the escaped data, '#' and the checksum of the
// escaped data.
func appendFrame(dst []byte, start byte, data []byte) []byte {
	dst = append(dst, start)
	n := len(dst)
	dst = AppendEscaped(dst, data)
	var sum byte
	for _, b := range dst[n:] {
		sum += b
	}
	return append(dst, '#', hexDigits[sum>>4], hexDigits[sum&0xf])
}

// Checksum returns the RSP checksum (sum modulo 256) of the transmitted
// bytes of a packet body.
func Checksum(raw []byte) byte {
	var sum byte
	for _, b := range raw {
		sum += b
	}
	return sum
}

// Frame returns the complete wire form `$<escaped data>#<cc>` of a packet.
// It is what WritePacket sends; clients and tests can use it too.
func Frame(data []byte) []byte {
	return appendFrame(make([]byte, 0, len(data)+4), '$', data)
}

func unhex(b byte) int {
	switch {
	case '0' <= b && b <= '9':
		return int(b - '0')
	case 'a' <= b && b <= 'f':
		return int(b-'a') + 10
	case 'A' <= b && b <= 'F':
		return int(b-'A') + 10
	}
	return -1
}
