package transfer

import (
	"bytes"
	"encoding/hex"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// libDecode is the generic path decodeValue must agree with.
func libDecode(b []byte) (any, int, error) {
	n, err := scanMsgpack(b, 0)
	if err != nil {
		return nil, 0, err
	}
	v, err := msgpack.NewDecoder(bytes.NewReader(b[:n])).DecodeInterface()
	return v, n, err
}

func libEncode(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := newEncoder(&buf).Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkCodec asserts the fast codec matches the library on b: the same
// value and length when the fast path takes it, and the same bytes when
// that value is encoded again.
func checkCodec(t *testing.T, b []byte) {
	t.Helper()
	v, n, ok := decodeValue(b, 0)
	if !ok {
		return
	}
	lv, ln, err := libDecode(b)
	if err != nil {
		t.Fatalf("fast path decoded %x, the library refuses it: %v", b, err)
	}
	if n != ln || !reflect.DeepEqual(v, lv) {
		t.Fatalf("decode %x: fast %#v (%d bytes), library %#v (%d bytes)", b, v, n, lv, ln)
	}
	got, err := appendValue(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if want := libEncode(t, v); !bytes.Equal(got, want) {
		t.Fatalf("encode %#v: fast %x, library %x", v, got, want)
	}
}

// TestCodecMatchesLibrary encodes values of every type a header holds with
// both codecs, and decodes the bytes with both.
func TestCodecMatchesLibrary(t *testing.T) {
	long := string(bytes.Repeat([]byte("x"), 70000))
	values := []any{
		nil, true, false, "", "a", string(bytes.Repeat([]byte("y"), 31)), string(bytes.Repeat([]byte("y"), 32)),
		string(bytes.Repeat([]byte("y"), 255)), string(bytes.Repeat([]byte("y"), 256)), long,
		[]byte(nil), []byte{}, []byte{1, 2}, bytes.Repeat([]byte{9}, 300), bytes.Repeat([]byte{9}, 70000),
		0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, -1, -32, -33, -128, -129,
		-32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64, math.MaxInt64,
		int8(-5), int16(300), int32(-70000), int64(1 << 40), uint(7), uint8(200), uint16(60000), uint32(1 << 31), uint64(math.MaxUint64),
		0.5, math.Inf(-1), float32(1.5), math.NaN(),
		[]any(nil), []any{}, []any{1, "a", nil, []any{true}}, make([]any, 20),
		[]string(nil), []string{"int64", "bool"}, make([]string, 17),
		map[string]any(nil), map[string]any{}, map[string]any{"b": 1, "a": map[string]any{"z": []any{}, "y": nil}, "": "e"},
		map[string]string{"k": "v", "a": "b"}, []int64{1, -1}, time.Second,
		struct{ A int }{3},
	}
	big := map[string]any{}
	for i := range 40 {
		big[string(rune('A'+i))] = i
	}
	values = append(values, big)
	for _, v := range values {
		got, err := appendValue(nil, v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		if want := libEncode(t, v); !bytes.Equal(got, want) {
			t.Errorf("encode %#v: fast %x, library %x", v, got, want)
			continue
		}
		if f, isFloat := v.(float64); isFloat && math.IsNaN(f) {
			continue // NaN != NaN for DeepEqual
		}
		checkCodec(t, got)
	}
}

// FuzzHeaderCodec: on any bytes, the fast decoder either steps aside or
// agrees with the library, and re-encoding agrees too.
func FuzzHeaderCodec(f *testing.F) {
	for _, vec := range loadVectors(f) {
		b, _ := hex.DecodeString(vec.Hex)
		f.Add(b)
	}
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x81, 0xc4, 0x01, 'k', 0x01}) // bin key: the library's
	f.Add([]byte{0x92, 0xd4, 0x01, 0x02, 0xca, 0x3f, 0xc0, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, _, ok := decodeValue(b, 0); ok {
			if f, isFloat := v.(float64); isFloat && math.IsNaN(f) {
				return
			}
			if hasNaN(v) {
				return
			}
		}
		checkCodec(t, b)
	})
}

func hasNaN(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsNaN(x)
	case float32:
		return math.IsNaN(float64(x))
	case []any:
		for _, e := range x {
			if hasNaN(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasNaN(e) {
				return true
			}
		}
	}
	return false
}
