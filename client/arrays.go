package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
	"github.com/arktos-dev/arktos/transfer/zframe"
)

// UploadOption configures Upload.
type UploadOption func(map[string]any)

// WithName stores the array under name instead of a server-chosen one.
func WithName(name string) UploadOption { return func(a map[string]any) { a["name"] = name } }

// Upload stores data on the server and describes the new array. The bytes
// are sent straight from data, with no per-element encode and no copy: over
// a bulk stream, into shared memory, or in ZeroMQ frames that libzmq reads
// in place (frames of 64 KiB and more; smaller ones are copied). data is
// the caller's again once Upload returns; after an error (ctx ended before
// the reply) libzmq may still be sending it, so a write to data then may
// reach the server in the abandoned upload, whose array is deleted when
// its late reply comes.
func Upload[T pdarray.Element](ctx context.Context, c *Client, data []T, opts ...UploadOption) (ArrayInfo, error) {
	return c.uploadBytes(ctx, pdarray.DTypeOf[T](), len(data), pdarray.AsBytes(data), opts)
}

// UploadArray stores a on the server.
func UploadArray(ctx context.Context, c *Client, a *pdarray.Array, opts ...UploadOption) (ArrayInfo, error) {
	return c.uploadBytes(ctx, a.DType(), a.Len(), a.Bytes(), opts)
}

// UploadBytes stores n elements of dtype dt whose bytes are body (any
// alignment): a part of a larger buffer, as a coordinator sends each
// locale its block of an array.
func UploadBytes(ctx context.Context, c *Client, dt pdarray.DType, n int, body []byte, opts ...UploadOption) (ArrayInfo, error) {
	if n*dt.Size() != len(body) {
		return ArrayInfo{}, fmt.Errorf("client: %d bytes are not %d %v elements", len(body), n, dt)
	}
	return c.uploadBytes(ctx, dt, n, body, opts)
}

func (c *Client) uploadBytes(ctx context.Context, dt pdarray.DType, n int, body []byte, opts []UploadOption) (info ArrayInfo, err error) {
	if c.config.NumLocales > 1 && len(body) >= LocaleDirectMin && len(opts) == 0 {
		return c.uploadDirect(ctx, dt, n, body)
	}
	return c.uploadPlain(ctx, dt, n, body, opts)
}

// uploadPlain stores the array on the server this client talks to (on a
// coordinator, which spreads it).
func (c *Client) uploadPlain(ctx context.Context, dt pdarray.DType, n int, body []byte, opts []UploadOption) (info ArrayInfo, err error) {
	err = c.lockedAfterRestore(ctx, func() error {
		args := map[string]any{"dtype": dt.String(), "size": n}
		for _, o := range opts {
			o(args)
		}
		info, err = c.uploadLocked(ctx, args, body)
		return err
	})
	return info, err
}

// uploadLocked is uploadBytes with c.mu held; args are the request's own.
func (c *Client) uploadLocked(ctx context.Context, args map[string]any, body []byte) (ArrayInfo, error) {
	st, err := c.useStream(ctx, len(body))
	if err != nil {
		return ArrayInfo{}, err
	}
	leased := false
	if c.useShm(st, len(body)) {
		// One copy into a segment the server lends and then keeps as the
		// array's buffer; if this side cannot map it, the bytes stream.
		if leased, err = c.fillLease(ctx, st, body); err != nil {
			return ArrayInfo{}, err
		}
		if !leased {
			if st, err = c.useStream(ctx, len(body)); err != nil {
				return ArrayInfo{}, err
			}
		}
	}
	var frames [][]byte
	var whileWaiting func()
	var streamErr error
	if leased {
		args["stream"] = st.id
		args["lease"] = true
	} else if st != nil {
		args["stream"] = st.id
		if ids := c.stripesFor(ctx, st, len(body)); len(ids) > 0 {
			args["stripes"] = ids
		}
		// Straight from the caller's slice into the kernel: no copy.
		whileWaiting = func() {
			if _, ok := args["stripes"]; ok {
				if streamErr = st.striped(ctx, body, false); streamErr != nil {
					c.closeStream()
				}
				return
			}
			st.deadline(ctx)
			// A cancelled ctx (not only its deadline) stops the write.
			stop := context.AfterFunc(ctx, func() { st.conn.SetWriteDeadline(time.Now()) })
			defer stop()
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
		} else if l := c.laneForPayload(ctx, "upload", len(body), fs); l != nil {
			// A small array: its frames go over the request lane.
			rep, _, err := c.callLane(ctx, l, "upload", args, frames, nil, nil)
			if err != nil {
				return ArrayInfo{}, err
			}
			if err := rep.Err(); err != nil {
				return ArrayInfo{}, err
			}
			return parseInfo(rep.Result)
		}
	}
	var rep *transfer.Reply
	if l := c.laneForStream(ctx, st); l != nil {
		// The bytes go on the stream (or are in the lent segment): the
		// request and its reply, without payload, take the lane.
		if rep, _, err = c.callLane(ctx, l, "upload", args, nil, whileWaiting, nil); err == nil && rep.Err() == nil {
			laneStreamUploads.Add(1)
		}
	} else {
		var m *zframe.Multipart
		if rep, m, err = c.callLocked(ctx, "upload", args, frames, whileWaiting); err == nil {
			m.Close()
		}
	}
	if err != nil {
		if st != nil {
			c.closeStream() // the bytes may be half-sent
		}
		return ArrayInfo{}, err
	}
	if err := rep.Err(); err != nil {
		if st != nil {
			c.closeStream() // a refused upload's stream is closed by the server
		}
		return ArrayInfo{}, err
	}
	if streamErr != nil {
		return ArrayInfo{}, fmt.Errorf("client: upload stream: %w", streamErr)
	}
	return parseInfo(rep.Result)
}

// Download fetches the whole array stored under name. T must match its
// dtype. The result is new memory, copied once: from libzmq's frames, read
// straight off a bulk stream, or, from a server on this host, copied out of
// the array's shared-memory segment on several threads (ShmCopyMin bytes
// and more).
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
	if len(dst) > 0 && uintptr(unsafe.Pointer(&dst[0]))%8 != 0 {
		// pdarray buffers start on 8 bytes, and every download path wraps
		// its destination as one: a destination that does not (a slice
		// from an odd offset, a small allocation) takes the download into
		// new memory and one copy more.
		a, err := c.download(ctx, name, nil, pdarray.DTypeOf[T](), nil)
		if err != nil {
			return 0, err
		}
		src := pdarray.View[T](a)
		if len(src) > len(dst) {
			return 0, fmt.Errorf("client: array '%s' holds %d elements, more than the %d the destination holds", name, len(src), len(dst))
		}
		return copy(dst, src), nil
	}
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

// DownloadRangeInto fetches elements [start, stop) of the array stored
// under name, of dtype dt, into dst, which must start on 8 bytes and hold
// them; it returns how many it wrote. A coordinator gathers its locales'
// blocks into one buffer with it.
func DownloadRangeInto(ctx context.Context, c *Client, name string, dt pdarray.DType, start, stop int, dst []byte) (int, error) {
	if len(dst) > 0 && uintptr(unsafe.Pointer(&dst[0]))%8 != 0 {
		return 0, fmt.Errorf("client: DownloadRangeInto's destination must start on 8 bytes")
	}
	a, err := c.download(ctx, name, map[string]any{"start": start, "stop": stop}, dt, dst)
	if err != nil {
		return 0, err
	}
	return a.Len(), nil
}

// DownloadArray fetches the array stored under name, whatever its dtype.
func DownloadArray(ctx context.Context, c *Client, name string) (*pdarray.Array, error) {
	return c.download(ctx, name, nil, pdarray.Invalid, nil)
}

// download fetches name; want is the dtype the caller needs, or Invalid for
// any; into, when not nil, is where the bytes go (a prefix of it).
func (c *Client) download(ctx context.Context, name string, args map[string]any, want pdarray.DType, into []byte) (a *pdarray.Array, err error) {
	if args == nil {
		if c.config.NumLocales > 1 {
			if a, ok, err := c.downloadDirect(ctx, name, want, into); ok {
				return a, err
			}
		}
		args = map[string]any{}
	}
	args["name"] = name
	err = c.lockedAfterRestore(ctx, func() error {
		a, err = c.downloadLocked(ctx, name, args, want, into)
		return err
	})
	return a, err
}

// downloadLocked is download with c.mu held.
func (c *Client) downloadLocked(ctx context.Context, name string, args map[string]any, want pdarray.DType, into []byte) (*pdarray.Array, error) {
	if a, ok, err := c.downloadLane(ctx, name, args, want, into); ok {
		return a, err
	}
	// The size is unknown until the reply; a stream is opened once the
	// client has seen a large array, and then used for every download.
	st := c.liveStream()
	if c.transport == TransportFrames || c.compression != "" {
		st = nil
	} else if c.transport == TransportStream && st == nil {
		var err error
		if st, err = c.useStream(ctx, 0); err != nil {
			return nil, err
		}
	}
	if _, ranged := args["start"]; !ranged && st != nil && st.network == "unix" && !c.noShm && !c.noShmMin && c.compression == "" {
		a, err := c.downloadCopyOut(ctx, st, name, want, into, args)
		var te *transfer.Error
		if !errors.As(err, &te) || te.Code != transfer.ArgumentValue || !strings.Contains(te.Message, "'shm_min'") {
			return a, err
		}
		c.noShmMin = true // an older server: nothing was sent on the stream, download as before
	}
	if st != nil {
		args["stream"] = st.id
		// The size is not known yet (unless into gives it): the server
		// stripes arrays of StripeThreshold bytes or more over the
		// stripes open, and the first large download opens them.
		c.stripesFor(ctx, st, len(into))
		if len(st.stripes) > 0 {
			args["stripes"] = st.stripeIDs()
			args["stripe_min"] = StripeThreshold
		}
	}
	if c.compression != "" {
		args["compression"] = c.compression
	}
	place := placeDownload(into, want)
	rep, frames, done, err := c.downloadCall(ctx, args, place)
	if err != nil {
		if st != nil {
			// Abandoned: the server will still write the bytes, so this
			// stream's position is lost.
			c.closeStream()
		}
		return nil, err
	}
	defer func() { done() }()
	if err := rep.Err(); err != nil {
		if st != nil {
			c.closeStreamIfInternal(err)
		}
		return nil, err
	}
	info, err := parseInfo(rep.Result)
	if err != nil {
		if st != nil {
			c.closeStream() // the bytes may follow on it
		}
		return nil, err
	}
	_, streamed := rep.Result["stream"]
	inline, isBool := rep.Result["inline"].(bool) // a bool whenever inline_max was sent (downloadCall)
	if isBool && !inline && !streamed {
		// Too large to come inline, and no stream to send it on (the lane
		// carries no large reply): now that its size is known, open a
		// stream for it where one pays, else ask again on ZeroMQ.
		done()
		done = func() {}
		delete(args, "inline_max")
		if err := wrongDType(name, info, want); err != nil {
			return nil, err
		}
		if into != nil && len(into) < info.NBytes {
			return result(info, into) // its error says the destination is too small
		}
		if info.NBytes >= StreamThreshold && c.transport == TransportAuto && c.stream == nil {
			if st, _ := c.useStream(ctx, info.NBytes); st != nil {
				return c.downloadLocked(ctx, name, args, want, into)
			}
		}
		if rep, frames, done, err = c.zmqCall(ctx, args); err != nil {
			return nil, err
		}
		if err := rep.Err(); err != nil {
			return nil, err
		}
		if info, err = parseInfo(rep.Result); err != nil {
			return nil, err
		}
	} else if isBool && inline {
		st = nil // the bytes are in the reply's frames
	}
	if st != nil {
		if err := wrongDType(name, info, want); err != nil {
			// Not read into the caller's slice of another dtype: the
			// stream's bytes are dropped with it.
			c.closeStream()
			return nil, err
		}
		a, err := result(info, into)
		if _, striped := rep.Result["stripes"]; err == nil && striped {
			err = st.striped(ctx, a.Bytes(), true)
		} else if err == nil {
			st.deadline(ctx)
			// Straight from the kernel into the result: no copy.
			_, err = io.ReadFull(st.conn, a.Bytes())
		}
		if err != nil {
			c.closeStream()
			return nil, fmt.Errorf("client: download stream: %w", err)
		}
		if len(st.stripes) == 0 {
			c.stripesFor(ctx, st, info.NBytes) // a large array: the next one is striped
		}
		return a, nil
	}
	if err := wrongDType(name, info, want); err != nil {
		return nil, err
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
		if want := transfer.NumFrames(info.NBytes, fs); len(frames) != want {
			return nil, fmt.Errorf("client: server sent %d compressed frames, want %d", len(frames), want)
		}
		a, err := result(info, into)
		if err != nil {
			return nil, err
		}
		dst := a.Bytes()
		err = transfer.ParallelFrames(len(frames), runtime.GOMAXPROCS(0), func(i int) error {
			lo, hi := transfer.FrameBounds(i, info.NBytes, fs)
			return transfer.DecompressFrame(dst[lo:hi], frames[i])
		})
		if err != nil {
			return nil, fmt.Errorf("client: server's compressed download: %w", err)
		}
		return a, nil
	}
	return framesInto(info, into, frames, rep.Result, place)
}

// framesInto checks a download reply's payload frames against its
// description and copies them into a new array, or a prefix of into; or,
// where the lane read every byte straight into place's buffer, returns
// that.
func framesInto(info ArrayInfo, into []byte, frames [][]byte, res map[string]any, place *transfer.LanePlace) (*pdarray.Array, error) {
	if info.NBytes != info.Size*info.DType.Size() {
		return nil, fmt.Errorf("client: server described %d %v elements as %d bytes", info.Size, info.DType, info.NBytes)
	}
	sizes := make([]int, len(frames))
	for i, f := range frames {
		sizes[i] = len(f)
	}
	if err := transfer.CheckFrames(sizes, info.NBytes, int(asInt(res["frame_size"])), fmt.Sprintf("%d %v elements", info.Size, info.DType)); err != nil {
		return nil, fmt.Errorf("client: server's reply to download: %w", err)
	}
	if place != nil && place.Placed == info.NBytes && len(place.Buf) == info.NBytes {
		laneDirectDownloads.Add(1)
		return pdarray.Wrap(info.DType, place.Buf)
	}
	a, err := result(info, into)
	if err != nil {
		return nil, err
	}
	dst, off := a.Bytes(), 0
	for _, f := range frames {
		off += copy(dst[off:], f)
	}
	return a, nil
}

// placeDownload returns where a lane reads a download reply's payload
// frames: the array's own memory (into's prefix, or a pooled or new
// buffer), chosen from the reply's header; nil where the reply is an error,
// describes bytes sent elsewhere or compressed, or its array is not want
// (into is left as it was) or does not fit into.
func placeDownload(into []byte, want pdarray.DType) *transfer.LanePlace {
	return &transfer.LanePlace{For: func(hdr []byte) []byte {
		rep, err := transfer.DecodeReply(hdr)
		if err != nil || rep.Err() != nil || asString(rep.Result["compression"]) != "" {
			return nil
		}
		if inline, ok := rep.Result["inline"].(bool); ok && !inline {
			return nil
		}
		info, err := parseInfo(rep.Result)
		if err != nil || info.NBytes <= 0 || info.NBytes != info.Size*info.DType.Size() || wrongDType(info.Name, info, want) != nil {
			return nil
		}
		if into != nil {
			if len(into) < info.NBytes {
				return nil
			}
			return into[:info.NBytes]
		}
		a, err := result(info, nil)
		if err != nil {
			return nil
		}
		return a.Bytes()
	}}
}

var laneDirectDownloads atomic.Uint64

// LaneDirectDownloads returns how many downloads over a request lane read
// the array's bytes from the socket straight into the result (tests check
// the path).
func LaneDirectDownloads() uint64 { return laneDirectDownloads.Load() }

// wrongDType refuses a download of array name (info) as a slice of want:
// nil when want is Invalid (any dtype) or the array's own.
func wrongDType(name string, info ArrayInfo, want pdarray.DType) error {
	if want == pdarray.Invalid || info.DType == want {
		return nil
	}
	return fmt.Errorf("client: array '%s' is %v, not %v; ask for []%v", name, info.DType, want, info.DType)
}

// zmqCall sends a download request on ZeroMQ and returns its reply and
// payload frames, which alias libzmq's message until done.
func (c *Client) zmqCall(ctx context.Context, args map[string]any) (*transfer.Reply, [][]byte, func(), error) {
	if _, streamed := args["stream"]; !streamed {
		// Frames the link carries well within a heartbeat (lost.go).
		if fs := c.linkFrameSize(); fs < c.config.MaxFrameSize {
			args["frame_size"] = fs
		} else {
			delete(args, "frame_size")
		}
	}
	start := time.Now()
	rep, m, err := c.callLocked(ctx, "download", args, nil, nil)
	if err != nil {
		if errors.Is(err, ErrConnectionLost) {
			c.linkRate = 0 // the link may have slowed: start from assumedLinkRate again
		}
		return nil, nil, func() {}, err
	}
	frames := make([][]byte, m.Len()-1)
	n := 0
	for i := range frames {
		frames[i] = m.Frame(i + 1)
		n += len(frames[i])
	}
	c.measureLink(n, time.Since(start))
	return rep, frames, func() { m.Close() }, nil
}

// downloadCall sends a download request whose reply's size the client
// does not know: over the request lane, with inline_max, where the server
// takes it (get_config's download_inline) and the lane could carry the
// bytes (no compression, TransportAuto); else on ZeroMQ. Arrays under
// downloadMax then come back inline in the lane's reply, skipping
// libzmq (and the stream, if args name one); larger ones go on the stream
// args name, or, without one, the reply only describes them ("inline":
// false); a successful reply without a bool "inline" is a protocol error.
// The frames stay valid until done.
func (c *Client) downloadCall(ctx context.Context, args map[string]any, place *transfer.LanePlace) (*transfer.Reply, [][]byte, func(), error) {
	// At most MaxLaneFrames-1 frames of the server's size fit a lane reply.
	inlineMax := min(c.downloadMax()-1, (transfer.MaxLaneFrames-1)*c.config.MaxFrameSize)
	if c.config.DownloadInline && c.config.LanePayload && c.compression == "" && c.transport == TransportAuto && inlineMax > 0 {
		if l := c.laneFor(ctx, "download"); l != nil {
			args["inline_max"] = inlineMax
			rep, frames, err := c.callLane(ctx, l, "download", args, nil, nil, place)
			if err == nil && rep.Err() == nil {
				if _, ok := rep.Result["inline"].(bool); !ok {
					err = fmt.Errorf("client: server's reply to download with inline_max lacks 'inline' (got %v)", rep.Result["inline"])
				} else {
					laneDownloads.Add(1)
				}
			}
			return rep, frames, func() {}, err
		}
	}
	return c.zmqCall(ctx, args)
}

// laneForStream returns the lane for an upload whose bytes go on stream st
// or in a lent segment (st not nil), or nil: no lane, or a server that does
// not take uploads there (c.mu held).
func (c *Client) laneForStream(ctx context.Context, st *bulkStream) *reqLane {
	if st == nil || !c.config.LanePayload {
		return nil
	}
	return c.laneFor(ctx, "upload")
}

var laneStreamUploads atomic.Uint64

// LaneStreamUploads returns how many uploads over a stream or a lent
// segment this process asked for over a request lane and the server
// answered with success (tests check the path).
func LaneStreamUploads() uint64 { return laneStreamUploads.Load() }

var laneDownloads atomic.Uint64

// LaneDownloads returns how many downloads of an array of unknown size
// this process asked for over a request lane and the server answered with
// success (the bytes inline, or the array described; tests check the path).
func LaneDownloads() uint64 { return laneDownloads.Load() }

// downloadLane downloads a small range of an array, or an array into a
// small destination, over the request lane, in frames (ok false: neither,
// or no lane for it; then nothing was sent). A whole array's size is not
// known before the reply, so other downloads do not take the lane.
func (c *Client) downloadLane(ctx context.Context, name string, args map[string]any, want pdarray.DType, into []byte) (a *pdarray.Array, ok bool, err error) {
	isz := 16 // the widest dtype, when the caller does not say
	if want != pdarray.Invalid {
		isz = want.Size()
	}
	start, ok1 := args["start"].(int)
	stop, ok2 := args["stop"].(int)
	var bound int
	switch {
	case ok1 && ok2 && stop >= start:
		bound = (stop - start) * isz
	case !ok1 && !ok2 && into != nil:
		bound = len(into) // a larger array does not fit it anyway
	default:
		return nil, false, nil
	}
	fs := c.config.MaxFrameSize
	l := c.laneForPayload(ctx, "download", bound, fs)
	if l == nil {
		return nil, false, nil
	}
	place := placeDownload(into, want)
	rep, frames, err := c.callLane(ctx, l, "download", args, nil, nil, place)
	if err != nil {
		return nil, true, err
	}
	if err := rep.Err(); err != nil {
		return nil, true, err
	}
	info, err := parseInfo(rep.Result)
	if err != nil {
		return nil, true, err
	}
	if err := wrongDType(name, info, want); err != nil {
		return nil, true, err
	}
	a, err = framesInto(info, into, frames, rep.Result, place)
	return a, true, err
}

// result is the array a download writes into: a new one, or a prefix of into.
func result(info ArrayInfo, into []byte) (*pdarray.Array, error) {
	if into == nil {
		nb, err := info.DType.NBytes(uint64(info.Size))
		if err != nil || info.Size < 0 {
			return pdarray.AllocUninit(info.DType, info.Size) // its error names what was wrong
		}
		// Every byte is written: a pooled buffer, or new memory unzeroed.
		return pdarray.Wrap(info.DType, downloadPool.get(nb))
	}
	if len(into) < info.NBytes {
		return nil, fmt.Errorf("client: array '%s' holds %d elements, more than the %d the destination holds", info.Name, info.Size, len(into)/max(info.DType.Size(), 1))
	}
	return pdarray.Wrap(info.DType, into[:info.NBytes])
}

// View holds an array's elements read-only. When Shared, Data is mapped
// straight onto the server's shared-memory segment of the array (no copy on
// either side once the array is in one); otherwise it is a private copy.
// Data never changes: a later write to the array on the server copies it
// first, and deleting the array leaves the view valid. Close unmaps it; Data
// must not be used afterwards (the garbage collector does not own the
// mapping, so a View that is never closed keeps its memory until the
// process ends).
type View[T pdarray.Element] struct {
	Data    []T // read-only when Shared: a write faults
	mem     []byte
	c       *Client
	segment uint64 // the server's name for a lent segment, released by Close
}

// Shared reports whether Data maps the server's segment (zero copy).
func (v *View[T]) Shared() bool { return v.mem != nil }

// Close unmaps a shared view, and tells the server (shm_release), so that
// the segment can be lent again once its array is deleted; it does nothing
// for a copy or a second time.
func (v *View[T]) Close() error {
	m := v.mem
	v.mem, v.Data = nil, nil
	if m == nil {
		return nil
	}
	err := unix.Munmap(m)
	if v.segment != 0 && err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = v.c.call(ctx, "shm_release", map[string]any{"segments": []any{v.segment}})
		v.segment = 0
	}
	return err
}

// DownloadView returns the array stored under name as a read-only view. With
// the server on this host (a unix bulk stream) the view maps the server's
// shared-memory segment: the first view of an array made by an operation
// costs the server one copy into a segment, later ones and views of arrays
// uploaded through shared memory cost none. Otherwise (a remote server,
// WithSharedMemory(false), frames or compression) it falls back to an
// ordinary download, and Shared is false.
func DownloadView[T pdarray.Element](ctx context.Context, c *Client, name string) (*View[T], error) {
	want := pdarray.DTypeOf[T]()
	mem, info, segment, ok, err := c.downloadShm(ctx, name, want)
	if err != nil {
		return nil, err
	}
	if !ok {
		xs, err := Download[T](ctx, c, name)
		if err != nil {
			return nil, err
		}
		return &View[T]{Data: xs}, nil
	}
	if len(mem) == 0 {
		return &View[T]{Data: []T{}}, nil
	}
	if segment == copiedNotMapped {
		return &View[T]{Data: pdarray.BytesAs[T](mem)}, nil
	}
	return &View[T]{Data: pdarray.BytesAs[T](mem[:info.NBytes]), mem: mem, c: c, segment: segment}, nil
}

// copiedNotMapped is downloadShm's segment when the server sent the bytes
// over the stream (it could make no segment): mem is then an ordinary copy.
const copiedNotMapped = ^uint64(0)

// downloadShm downloads name as a mapping of the server's segment; ok is
// false when shared memory does not apply here (nothing was asked).
func (c *Client) downloadShm(ctx context.Context, name string, want pdarray.DType) (mem []byte, info ArrayInfo, segment uint64, ok bool, err error) {
	err = c.lockedAfterRestore(ctx, func() error {
		mem, info, segment, ok = nil, ArrayInfo{}, 0, false
		if c.noShm || c.compression != "" || c.transport == TransportFrames {
			return nil
		}
		st, err := c.useStream(ctx, StreamThreshold)
		if err != nil || st == nil || st.network != "unix" {
			return err
		}
		mem, info, segment, ok, err = c.downloadShmLocked(ctx, st, name, want, 0, nil, false, nil)
		return err
	})
	return mem, info, segment, ok, err
}

// downloadShmLocked is downloadShm on the unix stream st (c.mu held): an
// array of fewer than shmMin bytes comes over the stream instead, into into
// when not nil (segment copiedNotMapped). With copyOut the segment is not
// mapped but read (pread) into into or new memory, and released at once:
// mem is then that copy, and segment copiedNotMapped.
func (c *Client) downloadShmLocked(ctx context.Context, st *bulkStream, name string, want pdarray.DType, shmMin int, into []byte, copyOut bool, extra map[string]any) (mem []byte, info ArrayInfo, segment uint64, ok bool, err error) {
	args := map[string]any{"name": name, "stream": st.id, "shm": true}
	for k, v := range extra { // the caller's own ("block" on a coordinator)
		if _, set := args[k]; !set {
			args[k] = v
		}
	}
	call := c.zmqCall // a view: the bytes come in a segment (or on the stream)
	var place *transfer.LanePlace
	if shmMin > 0 {
		args["shm_min"] = shmMin
		// A private copy of an array of unknown size: a small one may come
		// inline over the lane.
		place = placeDownload(into, want)
		call = func(ctx context.Context, args map[string]any) (*transfer.Reply, [][]byte, func(), error) {
			return c.downloadCall(ctx, args, place)
		}
	}
	rep, frames, done, err := call(ctx, args)
	if err != nil {
		c.closeStream() // abandoned: the descriptor may still come
		return nil, info, 0, false, err
	}
	defer done()
	if err := rep.Err(); err != nil {
		c.closeStreamIfInternal(err)
		return nil, info, 0, false, err
	}
	if info, err = parseInfo(rep.Result); err != nil {
		c.closeStream()
		return nil, info, 0, false, err
	}
	if inline, _ := rep.Result["inline"].(bool); inline {
		if err := wrongDType(name, info, want); err != nil {
			return nil, info, 0, false, err
		}
		a, err := framesInto(info, into, frames, rep.Result, place)
		if err != nil {
			return nil, info, 0, false, err
		}
		return a.Bytes(), info, copiedNotMapped, true, nil
	}
	st.deadline(ctx)
	if shm, _ := rep.Result["shm"].(bool); !shm {
		// The server could make no segment (or the array is under shmMin):
		// the bytes came over the stream.
		if err := wrongDType(name, info, want); err != nil {
			c.closeStream() // not read into the caller's slice of another dtype
			return nil, info, 0, false, err
		}
		a, err := result(info, into)
		if err == nil {
			_, err = io.ReadFull(st.conn, a.Bytes())
		}
		if err != nil {
			c.closeStream()
			return nil, info, 0, false, fmt.Errorf("client: download stream: %w", err)
		}
		return a.Bytes(), info, copiedNotMapped, true, nil
	}
	fd, err := st.recvFD()
	if err != nil {
		c.closeStream()
		return nil, info, 0, false, fmt.Errorf("client: shared-memory view of '%s': %w", name, err)
	}
	defer unix.Close(fd) // the mapping keeps the segment
	segment = uint64(asInt(rep.Result["segment"]))
	fail := func(err error) ([]byte, ArrayInfo, uint64, bool, error) {
		c.releaseSegmentLocked(ctx, segment) // nothing maps it
		return nil, info, 0, false, err
	}
	if err := wrongDType(name, info, want); err != nil {
		return fail(err)
	}
	if info.NBytes == 0 {
		c.releaseSegmentLocked(ctx, segment)
		return nil, info, 0, true, nil
	}
	if info.NBytes != info.Size*info.DType.Size() {
		return fail(fmt.Errorf("client: server described %d %v elements as %d bytes", info.Size, info.DType, info.NBytes))
	}
	if copyOut {
		a, err := result(info, into)
		if err == nil {
			err = transfer.ReadSegment(fd, a.Bytes(), runtime.GOMAXPROCS(0))
		}
		c.releaseSegmentLocked(ctx, segment) // nothing maps it
		if err != nil {
			return nil, info, 0, false, fmt.Errorf("client: copy '%s' out of its shared-memory segment: %w", name, err)
		}
		shmCopies.Add(1)
		return a.Bytes(), info, copiedNotMapped, true, nil
	}
	mem, err = mapSegment(fd, 0, info.NBytes, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fail(fmt.Errorf("client: map the shared-memory view of '%s' (%d bytes): %w: %w", name, info.NBytes, errMapFailed, err))
	}
	return mem, info, segment, true, nil
}

// mapSegment maps a received segment (tests refuse it: mapping fails
// where a process holds vm.max_map_count mappings).
var mapSegment = unix.Mmap

// errMapFailed marks a segment this process could not map.
var errMapFailed = errors.New("the segment could not be mapped here")

// releaseSegmentLocked tells the server (shm_release) that this client no
// longer maps the lent segment it named in a download's reply (0: none), so
// that it can be lent again once its array is deleted; c.mu is held. It
// runs even when ctx is done (the download has its bytes by then), within a
// few seconds; a failure only keeps the segment from being lent again.
func (c *Client) releaseSegmentLocked(ctx context.Context, segment uint64) {
	if segment == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, m, err := c.callLocked(rctx, "shm_release", map[string]any{"segments": []any{segment}}, nil, nil); err == nil {
		m.Close()
	}
}
