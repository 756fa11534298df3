package client

import (
	"context"
	"fmt"

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
	fs := c.config.MaxFrameSize
	args := map[string]any{"dtype": dt.String(), "size": n, "frame_size": fs}
	for _, o := range opts {
		o(args)
	}
	frames := make([][]byte, transfer.NumFrames(len(body), fs))
	for i := range frames {
		lo, hi := transfer.FrameBounds(i, len(body), fs)
		frames[i] = body[lo:hi]
	}
	rep, m, err := c.Call(ctx, "upload", args, frames)
	if err != nil {
		return ArrayInfo{}, err
	}
	m.Close()
	if err := rep.Err(); err != nil {
		return ArrayInfo{}, err
	}
	return parseInfo(rep.Result)
}

// Download fetches the whole array stored under name. T must match its
// dtype. The frames are copied once, from libzmq's buffers into the result.
func Download[T pdarray.Element](ctx context.Context, c *Client, name string) ([]T, error) {
	a, err := c.download(ctx, name, nil, pdarray.DTypeOf[T]())
	if err != nil {
		return nil, err
	}
	return pdarray.View[T](a), nil
}

// DownloadRange fetches elements [start, stop) of the array stored under name.
func DownloadRange[T pdarray.Element](ctx context.Context, c *Client, name string, start, stop int) ([]T, error) {
	a, err := c.download(ctx, name, map[string]any{"start": start, "stop": stop}, pdarray.DTypeOf[T]())
	if err != nil {
		return nil, err
	}
	return pdarray.View[T](a), nil
}

// DownloadArray fetches the array stored under name, whatever its dtype.
func DownloadArray(ctx context.Context, c *Client, name string) (*pdarray.Array, error) {
	return c.download(ctx, name, nil, pdarray.Invalid)
}

// download fetches name; want is the dtype the caller needs, or Invalid for any.
func (c *Client) download(ctx context.Context, name string, args map[string]any, want pdarray.DType) (*pdarray.Array, error) {
	if args == nil {
		args = map[string]any{}
	}
	args["name"] = name
	rep, m, err := c.Call(ctx, "download", args, nil)
	if err != nil {
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
	if want != pdarray.Invalid && info.DType != want {
		return nil, fmt.Errorf("client: array '%s' is %v, not %v; download it as []%v", name, info.DType, want, info.DType)
	}
	if info.NBytes != info.Size*info.DType.Size() {
		return nil, fmt.Errorf("client: server described %d %v elements as %d bytes", info.Size, info.DType, info.NBytes)
	}
	fs := int(asInt(rep.Result["frame_size"]))
	sizes := make([]int, m.Len()-1)
	for i := range sizes {
		sizes[i] = m.FrameSize(i + 1)
	}
	if fs <= 0 {
		return nil, fmt.Errorf("client: server sent frame_size %d", fs)
	}
	if err := transfer.CheckFrames(sizes, info.NBytes, fs, fmt.Sprintf("%d %v elements", info.Size, info.DType)); err != nil {
		return nil, fmt.Errorf("client: server's reply to download: %w", err)
	}
	a, err := pdarray.Alloc(info.DType, info.Size)
	if err != nil {
		return nil, err
	}
	dst, off := a.Bytes(), 0
	for i := 1; i < m.Len(); i++ {
		off += copy(dst[off:], m.Frame(i))
	}
	return a, nil
}
