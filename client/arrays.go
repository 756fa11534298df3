package client

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// UploadOption configures Upload.
type UploadOption func(map[string]any)

// WithName stores the array under name instead of a server-chosen one.
func WithName(name string) UploadOption { return func(a map[string]any) { a["name"] = name } }

// Upload stores data on the server and describes the new array. The bytes
// are sent straight from data (no per-element encode; libzmq copies each
// frame once into its message).
func Upload[T pdarray.Element](ctx context.Context, c *Client, data []T, opts ...UploadOption) (ArrayInfo, error) {
	return c.uploadBytes(ctx, pdarray.DTypeOf[T](), len(data), pdarray.AsBytes(data), opts)
}

// UploadArray stores a on the server.
func UploadArray(ctx context.Context, c *Client, a *pdarray.Array, opts ...UploadOption) (ArrayInfo, error) {
	return c.uploadBytes(ctx, a.DType(), a.Len(), a.Bytes(), opts)
}

func (c *Client) uploadBytes(ctx context.Context, dt pdarray.DType, n int, body []byte, opts []UploadOption) (ArrayInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	args := map[string]any{"dtype": dt.String(), "size": n}
	for _, o := range opts {
		o(args)
	}
	st, err := c.useStream(ctx, len(body))
	if err != nil {
		return ArrayInfo{}, err
	}
	var frames [][]byte
	var whileWaiting func()
	var streamErr error
	if st != nil {
		args["stream"] = st.id
		// Straight from the caller's slice into the kernel: no copy.
		whileWaiting = func() {
			st.deadline(ctx)
			if _, streamErr = st.conn.Write(body); streamErr != nil {
				c.closeStream() // the server closed it: its reply says why
			}
		}
	} else {
		fs := c.config.MaxFrameSize
		args["frame_size"] = fs
		frames = make([][]byte, transfer.NumFrames(len(body), fs))
		for i := range frames {
			lo, hi := transfer.FrameBounds(i, len(body), fs)
			frames[i] = body[lo:hi]
		}
		if c.compression != "" {
			args["compression"] = c.compression
			err := transfer.ParallelFrames(len(frames), runtime.GOMAXPROCS(0), func(i int) error {
				var err error
				frames[i], err = transfer.CompressFrameAppend(nil, frames[i])
				return err
			})
			if err != nil {
				return ArrayInfo{}, fmt.Errorf("client: compress: %w", err)
			}
		}
	}
	rep, m, err := c.callLocked(ctx, "upload", args, frames, whileWaiting)
	if err != nil {
		if st != nil {
			c.closeStream() // the bytes may be half-sent
		}
		return ArrayInfo{}, err
	}
	m.Close()
	if err := rep.Err(); err != nil {
		return ArrayInfo{}, err
	}
	if streamErr != nil {
		return ArrayInfo{}, fmt.Errorf("client: upload stream: %w", streamErr)
	}
	return parseInfo(rep.Result)
}

// Download fetches the whole array stored under name. T must match its
// dtype. The frames are copied once, from libzmq's buffers into the result.
func Download[T pdarray.Element](ctx context.Context, c *Client, name string) ([]T, error) {
	a, err := c.download(ctx, name, nil, pdarray.DTypeOf[T](), nil)
	if err != nil {
		return nil, err
	}
	return pdarray.View[T](a), nil
}

// DownloadInto fetches the array stored under name into dst, which must
// hold at least its length, and returns how many elements it wrote. Reusing
// dst saves faulting in fresh memory on every download.
func DownloadInto[T pdarray.Element](ctx context.Context, c *Client, name string, dst []T) (int, error) {
	a, err := c.download(ctx, name, nil, pdarray.DTypeOf[T](), pdarray.AsBytes(dst))
	if err != nil {
		return 0, err
	}
	return a.Len(), nil
}

// DownloadRange fetches elements [start, stop) of the array stored under name.
func DownloadRange[T pdarray.Element](ctx context.Context, c *Client, name string, start, stop int) ([]T, error) {
	a, err := c.download(ctx, name, map[string]any{"start": start, "stop": stop}, pdarray.DTypeOf[T](), nil)
	if err != nil {
		return nil, err
	}
	return pdarray.View[T](a), nil
}

// DownloadArray fetches the array stored under name, whatever its dtype.
func DownloadArray(ctx context.Context, c *Client, name string) (*pdarray.Array, error) {
	return c.download(ctx, name, nil, pdarray.Invalid, nil)
}

// download fetches name; want is the dtype the caller needs, or Invalid for
// any; into, when not nil, is where the bytes go (a prefix of it).
func (c *Client) download(ctx context.Context, name string, args map[string]any, want pdarray.DType, into []byte) (*pdarray.Array, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if args == nil {
		args = map[string]any{}
	}
	args["name"] = name
	// The size is unknown until the reply; a stream is opened once the
	// client has seen a large array, and then used for every download.
	st := c.stream
	if c.transport == TransportFrames || c.compression != "" {
		st = nil
	} else if c.transport == TransportStream && st == nil {
		var err error
		if st, err = c.useStream(ctx, 0); err != nil {
			return nil, err
		}
	}
	if st != nil {
		args["stream"] = st.id
	}
	if c.compression != "" {
		args["compression"] = c.compression
	}
	rep, m, err := c.callLocked(ctx, "download", args, nil, nil)
	if err != nil {
		if st != nil {
			// Abandoned: the server will still write the bytes, so this
			// stream's position is lost.
			c.closeStream()
		}
		return nil, err
	}
	defer m.Close()
	if err := rep.Err(); err != nil {
		return nil, err
	}
	info, err := parseInfo(rep.Result)
	if err != nil {
		return nil, err
	}
	if st != nil {
		a, err := result(info, into)
		if err == nil {
			st.deadline(ctx)
			// Straight from the kernel into the result: no copy.
			_, err = io.ReadFull(st.conn, a.Bytes())
		}
		if err != nil {
			c.closeStream()
			return nil, fmt.Errorf("client: download stream: %w", err)
		}
		if want != pdarray.Invalid && info.DType != want {
			return nil, fmt.Errorf("client: array '%s' is %v, not %v; download it as []%v", name, info.DType, want, info.DType)
		}
		return a, nil
	}
	if want != pdarray.Invalid && info.DType != want {
		return nil, fmt.Errorf("client: array '%s' is %v, not %v; download it as []%v", name, info.DType, want, info.DType)
	}
	if info.NBytes >= StreamThreshold && c.transport == TransportAuto && c.stream == nil {
		c.useStream(ctx, info.NBytes) // the next download streams
	}
	if info.NBytes != info.Size*info.DType.Size() {
		return nil, fmt.Errorf("client: server described %d %v elements as %d bytes", info.Size, info.DType, info.NBytes)
	}
	fs := int(asInt(rep.Result["frame_size"]))
	if fs <= 0 {
		return nil, fmt.Errorf("client: server sent frame_size %d", fs)
	}
	if asString(rep.Result["compression"]) == transfer.CompressionZstd {
		if want := transfer.NumFrames(info.NBytes, fs); m.Len()-1 != want {
			return nil, fmt.Errorf("client: server sent %d compressed frames, want %d", m.Len()-1, want)
		}
		a, err := result(info, into)
		if err != nil {
			return nil, err
		}
		dst := a.Bytes()
		err = transfer.ParallelFrames(m.Len()-1, runtime.GOMAXPROCS(0), func(i int) error {
			lo, hi := transfer.FrameBounds(i, info.NBytes, fs)
			return transfer.DecompressFrame(dst[lo:hi], m.Frame(i+1))
		})
		if err != nil {
			return nil, fmt.Errorf("client: server's compressed download: %w", err)
		}
		return a, nil
	}
	sizes := make([]int, m.Len()-1)
	for i := range sizes {
		sizes[i] = m.FrameSize(i + 1)
	}
	if err := transfer.CheckFrames(sizes, info.NBytes, fs, fmt.Sprintf("%d %v elements", info.Size, info.DType)); err != nil {
		return nil, fmt.Errorf("client: server's reply to download: %w", err)
	}
	a, err := result(info, into)
	if err != nil {
		return nil, err
	}
	dst, off := a.Bytes(), 0
	for i := 1; i < m.Len(); i++ {
		off += copy(dst[off:], m.Frame(i))
	}
	return a, nil
}

// result is the array a download writes into: a new one, or a prefix of into.
func result(info ArrayInfo, into []byte) (*pdarray.Array, error) {
	if into == nil {
		return pdarray.Alloc(info.DType, info.Size)
	}
	if len(into) < info.NBytes {
		return nil, fmt.Errorf("client: array '%s' holds %d elements, more than the %d the destination holds", info.Name, info.Size, len(into)/max(info.DType.Size(), 1))
	}
	return pdarray.Wrap(info.DType, into[:info.NBytes])
}
