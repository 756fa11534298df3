package transfer

import (
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/arktos-dev/arktos/internal/par"
)

// Compression names a payload frame codec. Frames are compressed one by one
// (each a complete zstd frame that records its content size), so frame
// checks apply to the decompressed sizes and frames decompress in parallel.
const (
	CompressionNone = ""
	CompressionZstd = "zstd"
)

var (
	zOnce  sync.Once
	zEnc   *zstd.Encoder
	zSmall *zstd.Encoder // single segment: frames under 256 bytes declare their size too
	zDec   *zstd.Decoder
	zErr   error
)

// smallFrame is the size below which a multi-segment zstd frame header
// leaves out the content size (klauspost's EncodeAll takes single segments
// only past 1 KiB), which DecompressFrame requires: an array whose last
// frame was that short could not be sent compressed.
const smallFrame = 256

// zstdCodec returns the shared encoders and decoder; EncodeAll and
// DecodeAll are safe for concurrent use.
func zstdCodec() (*zstd.Encoder, *zstd.Decoder, error) {
	zOnce.Do(func() {
		zEnc, zErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if zErr == nil {
			zSmall, zErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
				zstd.WithSingleSegment(true), zstd.WithZeroFrames(true))
		}
		if zErr == nil {
			zDec, zErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(1<<31))
		}
	})
	return zEnc, zDec, zErr
}

// CompressFrameAppend appends src compressed as one zstd frame to dst.
func CompressFrameAppend(dst, src []byte) ([]byte, error) {
	enc, _, err := zstdCodec()
	if err != nil {
		return nil, err
	}
	if len(src) < smallFrame {
		enc = zSmall
	}
	return enc.EncodeAll(src, dst), nil
}

// DecompressFrame decompresses one zstd frame into exactly dst. The frame
// must declare its content size, and it must be len(dst): nothing is
// allocated on the word of the sender, so a frame cannot expand past dst.
func DecompressFrame(dst, src []byte) error {
	_, dec, err := zstdCodec()
	if err != nil {
		return err
	}
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return fmt.Errorf("not a zstd frame: %v", err)
	}
	if !h.HasFCS || h.FrameContentSize != uint64(len(dst)) {
		return fmt.Errorf("zstd frame declares %d bytes (declared: %v), want %d", h.FrameContentSize, h.HasFCS, len(dst))
	}
	out, err := dec.DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		return fmt.Errorf("zstd: %v", err)
	}
	if len(out) != len(dst) || (len(dst) > 0 && &out[0] != &dst[0]) {
		return errors.New("zstd frame decoded to a different size than it declared")
	}
	return nil
}

// ParallelFrames runs f(i) for every frame i on up to workers goroutines
// and returns the first error.
func ParallelFrames(n, workers int, f func(i int) error) error {
	if workers < 1 {
		workers = 1
	}
	var g par.Group
	errs := make([]error, n)
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < min(workers, n); w++ {
		g.Go(func() {
			for i := range next {
				errs[i] = f(i)
			}
		})
	}
	g.Wait() // a worker's panic (a decoder's bug) reaches the caller
	return errors.Join(errs...)
}
