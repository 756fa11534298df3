package transfer

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

type vector struct {
	Name   string         `json:"name"`
	Kind   string         `json:"kind"`
	Fields map[string]any `json:"fields"`
	Hex    string         `json:"hex"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	raw, err := os.ReadFile("../testdata/wire/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var file struct{ Vectors []vector }
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	return file.Vectors
}

// fromJSON turns JSON numbers into the Go values an encoder sees: int64,
// uint64 or float64.
func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := x.String()
		if strings.ContainsAny(s, ".eE") {
			f, _ := x.Float64()
			return f
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
		u, _ := strconv.ParseUint(s, 10, 64)
		return u
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = fromJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromJSON(e)
		}
		return out
	}
	return v
}

// normal maps every integer to its decimal string so values decoded from
// msgpack (int8, uint16, ...) compare equal to values read from JSON.
func normal(v any) any {
	if i, ok := AsInt(v); ok {
		return strconv.FormatInt(i, 10)
	}
	if u, ok := AsUint(v); ok {
		return strconv.FormatUint(u, 10)
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normal(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normal(e)
		}
		return out
	}
	return v
}

func TestGoldenVectors(t *testing.T) {
	for _, vec := range loadVectors(t) {
		t.Run(vec.Name, func(t *testing.T) {
			f := fromJSON(vec.Fields).(map[string]any)
			want, _ := hex.DecodeString(vec.Hex)
			var got []byte
			var err error
			var back map[string]any
			switch vec.Kind {
			case "request":
				req := &Request{V: f["v"].(int64), ID: toU(f["id"]), Token: f["token"].(string), Cmd: f["cmd"].(string), Args: f["args"].(map[string]any)}
				got, err = EncodeRequest(req)
				if err == nil {
					dec, derr := DecodeRequest(want)
					if derr != nil {
						t.Fatal(derr)
					}
					back = map[string]any{"v": dec.V, "id": dec.ID, "token": dec.Token, "cmd": dec.Cmd, "args": dec.Args}
				}
			case "reply":
				rep := &Reply{V: f["v"].(int64), ID: toU(f["id"]), Status: f["status"].(int64), Code: Code(f["code"].(int64)),
					Error: f["error"].(string), Message: f["message"].(string)}
				if r, ok := f["result"].(map[string]any); ok {
					rep.Result = r
				}
				got, err = EncodeReply(rep)
				if err == nil {
					dec, derr := DecodeReply(want)
					if derr != nil {
						t.Fatal(derr)
					}
					var res any
					if dec.Result != nil {
						res = dec.Result
					}
					back = map[string]any{"v": dec.V, "id": dec.ID, "status": dec.Status, "code": int64(dec.Code), "error": dec.Error, "message": dec.Message, "result": res}
				}
			default:
				t.Fatalf("unknown kind %q", vec.Kind)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encoding differs\n got %x\nwant %x", got, want)
			}
			if !reflect.DeepEqual(normal(back), normal(f)) {
				t.Errorf("decoding differs\n got %#v\nwant %#v", normal(back), normal(f))
			}
		})
	}
}

func toU(v any) uint64 {
	if i, ok := v.(int64); ok {
		return uint64(i)
	}
	return v.(uint64)
}

// TestErrorRegistry keeps the Go table equal to testdata/errors.json.
func TestErrorRegistry(t *testing.T) {
	raw, err := os.ReadFile("../testdata/errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		Errors []struct {
			Code int
			Name string
		}
	}
	if err := json.Unmarshal(raw, &reg); err != nil {
		t.Fatal(err)
	}
	if len(reg.Errors) != len(codeNames)-1 { // codeNames also holds OK
		t.Fatalf("registry has %d codes, Go has %d", len(reg.Errors), len(codeNames)-1)
	}
	for _, e := range reg.Errors {
		if got := Code(e.Code).String(); got != e.Name {
			t.Errorf("code %d: Go says %s, registry says %s", e.Code, got, e.Name)
		}
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	enc := func(v any) []byte {
		var buf bytes.Buffer
		if err := newEncoder(&buf).Encode(v); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	cases := []struct {
		name string
		in   []byte
		want string
		id   uint64
	}{
		{"empty", nil, "not valid msgpack", 0},
		{"garbage", []byte{0xc1, 0xff}, "not valid msgpack", 0},
		{"not a map", enc([]int{1, 2}), "must be a msgpack map", 0},
		{"trailing", append(enc(map[string]any{"v": 1, "id": 1, "cmd": "x"}), 0x00), "bytes after", 0},
		{"no id", enc(map[string]any{"v": 1, "cmd": "x"}), "no 'id'", 0},
		{"neg id", enc(map[string]any{"v": 1, "id": -1, "cmd": "x"}), "'id' must be an unsigned integer", 0},
		{"no cmd", enc(map[string]any{"v": 1, "id": 9}), "no 'cmd'", 9},
		{"cmd int", enc(map[string]any{"v": 1, "id": 9, "cmd": 3}), "'cmd' must be a string", 9},
		{"args list", enc(map[string]any{"v": 1, "id": 9, "cmd": "x", "args": []int{}}), "'args' must be a map", 9},
		{"extra key", enc(map[string]any{"v": 1, "id": 9, "cmd": "x", "zz": 1}), "unknown key \"zz\"", 9},
		{"token int", enc(map[string]any{"v": 1, "id": 9, "cmd": "x", "token": 5}), "'token' must be a string", 9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := DecodeRequest(c.in)
			e, ok := err.(*Error)
			if !ok || e.Code != MalformedRequest || !strings.Contains(e.Message, c.want) {
				t.Fatalf("got %v, want MALFORMED_REQUEST containing %q", err, c.want)
			}
			if r != nil && r.ID != c.id {
				t.Fatalf("id %d, want %d", r.ID, c.id)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	a := NewArgs("upload", map[string]any{"dtype": "int64", "size": int8(-1)})
	a.String("dtype")
	a.Uint("size")
	if e := a.Done().(*Error); e.Code != ArgumentValue || !strings.Contains(e.Message, "'size'") {
		t.Fatal(e)
	}
	a = NewArgs("upload", map[string]any{"dtype": 5})
	a.String("dtype")
	a.Uint("size")
	if e := a.Done().(*Error); e.Code != ArgumentType || !strings.Contains(e.Message, "must be a string, got int") {
		t.Fatal(e)
	}
	a = NewArgs("upload", map[string]any{"dtype": "int64"})
	a.String("dtype")
	a.Uint("size")
	if e := a.Done().(*Error); e.Code != MissingArgument || !strings.Contains(e.Message, "'size'") {
		t.Fatal(e)
	}
	a = NewArgs("info", map[string]any{"name": "x", "nmae": "y"})
	a.String("name")
	if e := a.Done().(*Error); e.Code != ArgumentValue || !strings.Contains(e.Message, "no argument 'nmae'") {
		t.Fatal(e)
	}
	a = NewArgs("delete", map[string]any{"names": []any{"a", 3}})
	a.StringList("names")
	if e := a.Done().(*Error); e.Code != ArgumentType || !strings.Contains(e.Message, "names[1]") {
		t.Fatal(e)
	}
}

func TestCheckFrames(t *testing.T) {
	cases := []struct {
		sizes  []int
		nbytes int
		code   Code
	}{
		{[]int{4, 4, 2}, 10, OK},
		{nil, 0, OK},
		{[]int{4, 4, 3}, 10, PayloadLength},
		{[]int{4, 4}, 10, PayloadLength},
		{[]int{4, 4, 2, 0}, 10, FrameCount},
		{[]int{4, 4, 1, 1}, 10, FrameCount},
		{[]int{2, 4, 4}, 10, PayloadLength},
		{[]int{5, 5}, 10, FrameTooLarge},
		{[]int{0}, 0, FrameCount},
	}
	for _, c := range cases {
		err := CheckFrames(c.sizes, c.nbytes, 4, "x")
		got := OK
		if err != nil {
			got = err.(*Error).Code
		}
		if got != c.code {
			t.Errorf("CheckFrames(%v, %d) = %v, want %v", c.sizes, c.nbytes, err, c.code)
		}
	}
}

// FuzzDecodeRequest: the decoder never panics, and whatever it accepts
// re-encodes to a header it accepts again with the same fields.
func FuzzDecodeRequest(f *testing.F) {
	for _, vec := range loadVectors(f) {
		b, _ := hex.DecodeString(vec.Hex)
		f.Add(b)
	}
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff}) // map32 declaring 4G entries
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}) // array32 declaring 4G entries
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRequest(b)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not an *Error", err)
			}
			return
		}
		again, err := EncodeRequest(r)
		if err != nil {
			return // e.g. args holding values our encoder cannot re-encode
		}
		r2, err := DecodeRequest(again)
		if err != nil || r2.Cmd != r.Cmd || r2.ID != r.ID || r2.Token != r.Token || r2.V != r.V {
			t.Fatalf("round trip changed the request: %v", err)
		}
	})
}

func TestZstdFrames(t *testing.T) {
	src := bytes.Repeat([]byte("arktos "), 100000)
	z, err := CompressFrameAppend(nil, src)
	if err != nil || len(z) >= len(src)/10 {
		t.Fatalf("compressed %d → %d: %v", len(src), len(z), err)
	}
	dst := make([]byte, len(src))
	if err := DecompressFrame(dst, z); err != nil || !bytes.Equal(dst, src) {
		t.Fatal(err)
	}
	if err := DecompressFrame(make([]byte, len(src)-1), z); err == nil || !strings.Contains(err.Error(), "declares 700000 bytes") {
		t.Fatalf("a frame larger than its destination: %v", err)
	}
	if err := DecompressFrame(dst, []byte("not zstd at all")); err == nil {
		t.Fatal("garbage accepted")
	}
	empty, _ := CompressFrameAppend(nil, nil)
	if err := DecompressFrame([]byte{}, empty); err != nil {
		t.Fatal(err)
	}
	// every size declares itself, under 256 bytes too (an array whose last
	// frame was that short could not be sent compressed)
	for n := 1; n <= 2100; n += 1 + n/16 {
		small := bytes.Repeat([]byte{byte(n), 7, 7, 7}, n)[:n]
		z, err := CompressFrameAppend(nil, small)
		got := make([]byte, n)
		if err != nil || DecompressFrame(got, z) != nil || !bytes.Equal(got, small) {
			t.Fatalf("%d bytes: %v, %v", n, err, DecompressFrame(got, z))
		}
	}
}

// FuzzDecompressFrame: hostile frames never panic or write past dst.
func FuzzDecompressFrame(f *testing.F) {
	z, _ := CompressFrameAppend(nil, bytes.Repeat([]byte{1, 2, 3}, 1000))
	f.Add(z, 3000)
	f.Fuzz(func(t *testing.T, src []byte, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		buf := make([]byte, n+16)
		for i := range buf {
			buf[i] = 0xEE
		}
		DecompressFrame(buf[:n], src)
		for _, b := range buf[n:] {
			if b != 0xEE {
				t.Fatal("wrote past the destination")
			}
		}
	})
}

// TestReplyMessageIsUTF8 checks that an error message quoting a request's
// invalid UTF-8 bytes goes out as valid UTF-8 (clients decode replies'
// strings as UTF-8 and could not read the error).
func TestReplyMessageIsUTF8(t *testing.T) {
	b, err := EncodeReply(&Reply{V: 1, ID: 1, Status: 1, Code: 3, Error: "UNSUPPORTED_DTYPE", Message: "dtype 'a\xff\xfeb' is not supported"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeReply(b)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.ValidString(r.Message) || r.Message != "dtype 'a\uFFFDb' is not supported" {
		t.Fatalf("message %q", r.Message)
	}
}
