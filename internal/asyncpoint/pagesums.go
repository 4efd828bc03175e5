package asyncpoint

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// PageSum is a page of a point's memory checksum with the low 16 bits of
// its CRC-32C (the pad recomputes it natively with the crc32
// instruction).
type PageSum struct {
	Addr uint64
	Sum  uint16
}

// MaxSumPages is the number of pages a pad digests at most.
const MaxSumPages = 128

// EncodePageSums encodes sums (ascending addresses) for the trace: per
// page, the uvarint distance in pages from the previous one and the
// 16-bit digest, little-endian.
func EncodePageSums(sums []PageSum) []byte {
	var b []byte
	prev := uint64(0)
	for _, s := range sums {
		b = binary.AppendUvarint(b, s.Addr/4096-prev)
		b = binary.LittleEndian.AppendUint16(b, s.Sum)
		prev = s.Addr / 4096
	}
	return b
}

// DecodePageSums decodes EncodePageSums into a map from page address to
// digest.
func DecodePageSums(b []byte) (map[uint64]uint16, error) {
	out := map[uint64]uint16{}
	prev := uint64(0)
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 || len(b) < n+2 {
			return nil, errors.New("bad page sums")
		}
		prev += d
		out[prev*4096] = binary.LittleEndian.Uint16(b[n:])
		b = b[n+2:]
	}
	return out, nil
}

// ZeroPageSum is the digest of a page of zeros (pages the checksum
// leaves out).
var ZeroPageSum = uint16(crc32.Checksum(make([]byte, 4096), crc32.MakeTable(crc32.Castagnoli)))
