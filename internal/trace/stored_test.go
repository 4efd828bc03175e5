package trace

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestStoredFrameDecodes checks that the raw-block frames a writer
// stores before it compresses are zstd frames the reader's decoder
// takes, whatever their size (block boundaries at 128 KB included).
func TestStoredFrameDecodes(t *testing.T) {
	dec, err := newDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 100, 128<<10 - 1, 128 << 10, 128<<10 + 1, 300 << 10, dataBufCap} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.UintN(256))
		}
		frame := appendStoredFrame([]byte("prefix"), src)
		if !bytes.HasPrefix(frame, []byte("prefix")) {
			t.Fatalf("%d bytes: the frame did not append", n)
		}
		got, err := dec.DecodeAll(frame[len("prefix"):], make([]byte, 0, n))
		if err != nil {
			t.Fatalf("%d bytes: decode: %v", n, err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: decoded %d bytes that differ", n, len(got))
		}
	}
}

// TestEncoderStoresThenCompresses checks the encoder's switch: raw
// frames for the first storedBytes, compressed ones after.
func TestEncoderStoresThenCompresses(t *testing.T) {
	enc, err := newEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	src := bytes.Repeat([]byte("gorr records "), 64<<10/13)
	stored := 0
	for enc.done < storedBytes {
		out := enc.encode(src, nil)
		if len(out) <= len(src) {
			t.Fatalf("block %d of the first MB: %d bytes from %d, want it stored", stored, len(out), len(src))
		}
		stored++
	}
	if out := enc.encode(src, nil); len(out) > len(src)/4 {
		t.Fatalf("after %d stored blocks: %d bytes from %d of repeats, want them compressed", stored, len(out), len(src))
	}
}

// TestStoredBlocksMatchAppendBlocks checks that the no-copy path writes
// exactly the blocks appendBlocks would, CRCs included.
func TestStoredBlocksMatchAppendBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 4095, 128 << 10, 200 << 10, storedBytes} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.UintN(7))
		}
		for _, size := range []int{eventsBlockSize, dataBlockSize} {
			a, err := newEncoder()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := newEncoder()
			want := appendBlocks(nil, a, src, size)
			var got []byte
			for _, s := range b.storedBlocks(src, size) {
				got = append(got, s...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes in blocks of %d: storedBlocks wrote %d bytes, appendBlocks %d, or they differ", n, size, len(got), len(want))
			}
			if a.done != b.done {
				t.Fatalf("done %d and %d", a.done, b.done)
			}
			a.Close()
			b.Close()
		}
	}
}
