package client_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// header encodes a request header canonically, for hand-made bad requests.
func header(t *testing.T, id uint64, cmd string, args map[string]any) []byte {
	t.Helper()
	b, err := transfer.EncodeRequest(&transfer.Request{V: transfer.Version, ID: id, Cmd: cmd, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBadInput sends each kind of bad request, checks the error's code and
// message, then checks a stored array still downloads unchanged.
func TestBadInput(t *testing.T) {
	srv := testserver.Start(t, "--frame-size", "1KiB", "--max-memory", "1MiB")
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	keep := randomArray(pdarray.Int32, 5000, 42)
	if _, err := client.UploadArray(ctx, c, keep, client.WithName("keep")); err != nil {
		t.Fatal(err)
	}
	u8 := func(n int) []byte { return bytes.Repeat([]byte{1}, n) }
	up := func(size, fs int) map[string]any {
		return map[string]any{"dtype": "int64", "size": size, "frame_size": fs}
	}
	cases := []struct {
		name   string
		frames [][]byte // raw frames; nil means use cmd/args/payload
		cmd    string
		args   map[string]any
		pl     [][]byte
		code   transfer.Code
		substr string
	}{
		{name: "garbage header", frames: [][]byte{{0xc1, 0x00}}, code: transfer.MalformedRequest, substr: "not valid msgpack"},
		{name: "header is a list", frames: [][]byte{{0x92, 0x01, 0x02}}, code: transfer.MalformedRequest, substr: "must be a msgpack map"},
		{name: "lying map32", frames: [][]byte{{0xdf, 0xff, 0xff, 0xff, 0xff}}, code: transfer.MalformedRequest, substr: "declares 4294967295 entries"},
		{name: "empty header frame", frames: [][]byte{{}}, code: transfer.MalformedRequest, substr: "not valid msgpack"},
		{name: "wrong version", frames: [][]byte{[]byte("\x85\xa1v\x07\xa2id\x05\xa5token\xa0\xa3cmd\xa4list\xa4args\x80")}, code: transfer.UnsupportedVersion, substr: "version 7"},
		{name: "unknown command", cmd: "explode", code: transfer.UnknownCommand, substr: "unknown command 'explode'; commands are: "},
		{name: "missing argument", cmd: "info", args: map[string]any{}, code: transfer.MissingArgument, substr: "needs argument 'name'"},
		{name: "mistyped argument", cmd: "info", args: map[string]any{"name": 12}, code: transfer.ArgumentType, substr: "'name' of 'info' must be a string, got int"},
		{name: "unknown argument", cmd: "list", args: map[string]any{"verbose": true}, code: transfer.ArgumentValue, substr: "no argument 'verbose'"},
		{name: "unknown array", cmd: "download", args: map[string]any{"name": "nope"}, code: transfer.UnknownArray, substr: "no array named 'nope'"},
		{name: "bad dtype", cmd: "upload", args: map[string]any{"dtype": "complex128", "size": 1, "frame_size": 16}, pl: [][]byte{u8(16)}, code: transfer.UnsupportedDType, substr: "'complex128' is not supported; supported dtypes: int8"},
		{name: "negative size", cmd: "upload", args: map[string]any{"dtype": "int8", "size": -3, "frame_size": 16}, code: transfer.ArgumentValue, substr: "must be >= 0, got -3"},
		{name: "payload too short", cmd: "upload", args: up(10, 1024), pl: [][]byte{u8(72)}, code: transfer.PayloadLength, substr: "payload is 72 bytes but 10 int64 elements take 80 bytes"},
		{name: "payload too long", cmd: "upload", args: up(10, 1024), pl: [][]byte{u8(88)}, code: transfer.PayloadLength, substr: "payload is 88 bytes"},
		{name: "too many frames", cmd: "upload", args: up(10, 1024), pl: [][]byte{u8(40), u8(40)}, code: transfer.FrameCount, substr: "too many payload frames: 80 bytes at frame_size 1024 travel in 1 frames, got 2"},
		{name: "too few frames", cmd: "upload", args: up(10, 40), pl: [][]byte{u8(80)}, code: transfer.FrameTooLarge, substr: "payload frame 0 is 80 bytes, more than frame_size 40"},
		{name: "frames for no-payload command", cmd: "list", pl: [][]byte{u8(3)}, code: transfer.FrameCount, substr: "takes no payload frames, got 1"},
		{name: "frame size above server max", cmd: "upload", args: up(1000, 4096), pl: [][]byte{u8(4096), u8(3904)}, code: transfer.ArgumentValue, substr: "max_frame_size 1024"},
		{name: "oversized frame", cmd: "upload", args: up(200, 1024), pl: [][]byte{u8(1600)}, code: transfer.FrameTooLarge, substr: "1600 bytes, more than frame_size 1024"},
		{name: "bad bool bytes", cmd: "upload", args: map[string]any{"dtype": "bool", "size": 3, "frame_size": 1024}, pl: [][]byte{{0, 1, 2}}, code: transfer.InvalidData, substr: "bool element 2 is byte 2"},
		{name: "bad name", cmd: "upload", args: map[string]any{"dtype": "int8", "size": 0, "frame_size": 8, "name": "a b"}, code: transfer.ArgumentValue, substr: "printable ASCII without spaces"},
		{name: "no payload at all", cmd: "upload", args: map[string]any{"dtype": "int8", "size": 2 << 20, "frame_size": 1024}, code: transfer.PayloadLength, substr: "payload is 0 bytes but 2097152 int8 elements take 2097152 bytes"},
		{name: "range reversed", cmd: "download", args: map[string]any{"name": "keep", "start": 10, "stop": 5}, code: transfer.IndexOutOfRange, substr: "range [10, 5)"},
		{name: "shm without a stream", cmd: "download", args: map[string]any{"name": "keep", "shm": true}, code: transfer.MissingArgument, substr: "needs the unix 'stream'"},
		{name: "negative shm_min", cmd: "download", args: map[string]any{"name": "keep", "shm_min": -1}, code: transfer.ArgumentValue, substr: "argument 'shm_min' of 'download' must be >= 0, got -1"},
		{name: "mistyped shm_min", cmd: "download", args: map[string]any{"name": "keep", "shm_min": "16MiB"}, code: transfer.ArgumentType, substr: "argument 'shm_min' of 'download' must be a non-negative integer, got str"},
		{name: "compression with a stream", cmd: "download", args: map[string]any{"name": "keep", "stream": 5, "compression": "zstd"}, code: transfer.ArgumentValue, substr: "compression applies to frames, not to a bulk stream"},
		{name: "negative inline_max", cmd: "download", args: map[string]any{"name": "keep", "inline_max": -1}, code: transfer.ArgumentValue, substr: "argument 'inline_max' of 'download' must be >= 0, got -1"},
		{name: "mistyped inline_max", cmd: "download", args: map[string]any{"name": "keep", "inline_max": true}, code: transfer.ArgumentType, substr: "argument 'inline_max' of 'download' must be a non-negative integer, got bool"},
		{name: "delete non-list", cmd: "delete", args: map[string]any{"names": "keep"}, code: transfer.ArgumentType, substr: "must be a list of strings, got str"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rep *transfer.Reply
			var err error
			if tc.frames != nil {
				rep, err = c.SendRaw(ctx, tc.frames)
			} else {
				rep, err = c.SendRaw(ctx, append([][]byte{header(t, uint64(1000+i), tc.cmd, tc.args)}, tc.pl...))
			}
			if err != nil {
				t.Fatal(err)
			}
			wantCode(t, rep.Err(), tc.code, tc.substr)
			back, err := client.DownloadArray(ctx, c, "keep")
			if err != nil || !bytes.Equal(back.Bytes(), keep.Bytes()) {
				t.Fatalf("stored array changed or lost after bad input: %v", err)
			}
		})
	}
}

// TestOutOfMemory: an upload over --max-memory fails with how much was
// needed and how much is free, and everything stored stays.
func TestOutOfMemory(t *testing.T) {
	srv := testserver.Start(t, "--max-memory", "1MiB")
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	keep := randomArray(pdarray.Float64, 100_000, 3) // 800,000 bytes
	if _, err := client.UploadArray(ctx, c, keep, client.WithName("keep")); err != nil {
		t.Fatal(err)
	}
	_, err := client.Upload(ctx, c, make([]int64, 40_000), client.WithName("big"))
	wantCode(t, err, transfer.OutOfMemory, "upload of 'big' (40000 int64 elements) needs 312.5 KiB (320000 bytes) but the server's limit of 1.0 MiB leaves 242.8 KiB (248576 bytes) free, with 781.2 KiB held by 1 arrays")
	if !strings.Contains(err.Error(), "raise --max-memory or delete arrays") {
		t.Fatalf("no remedy in %v", err)
	}
	mem, _ := c.MemUsed(ctx)
	if mem.Used != 800_000 || mem.Arrays != 1 {
		t.Fatalf("memory after a refused upload: %+v", mem)
	}
	back, err := client.DownloadArray(ctx, c, "keep")
	if err != nil || !bytes.Equal(back.Bytes(), keep.Bytes()) {
		t.Fatal("stored array lost after a refused upload")
	}
	if err := c.Delete(ctx, "keep"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Upload(ctx, c, make([]int64, 40_000)); err != nil {
		t.Fatal("the freed memory is not available again:", err)
	}
}

func TestAuth(t *testing.T) {
	srv := testserver.Start(t, "--auth", "--token", "s3cret")
	ctx := ctxT(t)
	t.Setenv("HOME", t.TempDir()) // no ~/.arktos/token to fall back on
	t.Setenv("ARKTOS_TOKEN", "")
	_, err := client.Dial(ctx, srv.URL)
	wantCode(t, err, transfer.AuthFailed, "carried no token")
	_, err = client.Dial(ctx, srv.URL, client.WithToken("wrong"))
	wantCode(t, err, transfer.AuthFailed, "carried a wrong token")
	c := dial(t, srv.URL, client.WithToken("s3cret"))
	if !c.Config().Auth {
		t.Fatal("config does not report auth")
	}
	dial(t, srv.URL+"?token=s3cret")
	t.Setenv("ARKTOS_TOKEN", "s3cret")
	dial(t, srv.URL)
}

// TestGeneratedToken: --auth without --token writes a random token to the
// token file, mode 0600, and a client finds it through ARKTOS_TOKEN_FILE.
func TestGeneratedToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tok")
	srv := testserver.Start(t, "--auth", "--token-file", file)
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v", st.Mode().Perm())
	}
	tok, _ := os.ReadFile(file)
	if len(strings.TrimSpace(string(tok))) != 64 {
		t.Fatalf("token %q is not 32 random bytes in hex", tok)
	}
	t.Setenv("ARKTOS_TOKEN", "")
	t.Setenv("ARKTOS_TOKEN_FILE", file)
	dial(t, srv.URL)
}

func TestShutdownCommand(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	if err := c.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	err, exited := srv.Wait(10 * time.Second)
	if !exited || err != nil {
		t.Fatalf("server did not exit cleanly after shutdown: exited=%v err=%v", exited, err)
	}
}

func TestSignalShutdown(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		srv := testserver.Start(t)
		srv.Cmd.Process.Signal(sig)
		err, exited := srv.Wait(10 * time.Second)
		if !exited || err != nil {
			t.Fatalf("%v: exited=%v err=%v\n%s", sig, exited, err, srv.Log)
		}
	}
}

// TestDeadline: with a port that accepts connections but never answers
// (not a server, or one too busy to), Dial gives up when its context does,
// and says what to do.
func TestDeadline(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	url := "tcp://" + l.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = client.Dial(ctx, url)
	if err == nil || !strings.Contains(err.Error(), "make serve") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Dial took %v past a 300ms deadline", d)
	}
}

// TestAbandonedRequest: a call cancelled before its reply leaves the
// connection usable; the late reply is dropped by id.
func TestAbandonedRequest(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	if _, err := client.Upload(ctx, c, make([]float64, 4_000_000), client.WithName("big")); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Microsecond)
	_, err := client.Download[float64](short, c, "big")
	cancel()
	if err == nil {
		t.Skip("the download beat a 1µs deadline")
	}
	info, err := c.Info(ctx, "big")
	if err != nil || info.Size != 4_000_000 {
		t.Fatalf("connection unusable after an abandoned request: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestTooManyFrames: a download whose frame_size would split the array
// into more frames than a reply may have is refused, naming the smallest
// frame_size that works; the array is unharmed.
func TestTooManyFrames(t *testing.T) {
	srv := testserver.Start(t, "--max-memory", "64MiB")
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	big := randomArray(pdarray.Int8, 3<<20, 5)
	if _, err := client.UploadArray(ctx, c, big, client.WithName("big")); err != nil {
		t.Fatal(err)
	}
	rep, err := c.SendRaw(ctx, [][]byte{header(t, 77, "download", map[string]any{"name": "big", "frame_size": 2})})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, rep.Err(), transfer.ArgumentValue, "frame_size 2 would send these 3145728 bytes in 1572864 frames, more than the 1048576 a reply may have; use a frame_size of at least 3")
	back, err := client.DownloadArray(ctx, c, "big")
	if err != nil || !bytes.Equal(back.Bytes(), big.Bytes()) {
		t.Fatalf("array changed or lost: %v", err)
	}
}
