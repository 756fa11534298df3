package transfer

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// Version is the protocol version this package speaks.
const Version = 1

// Request is a decoded request header.
type Request struct {
	V     int64
	ID    uint64
	Token string
	Cmd   string
	Args  map[string]any
}

// Reply is a reply header. Result is nil on error.
type Reply struct {
	V       int64
	ID      uint64
	Status  int64 // 0 ok, 1 error
	Code    Code
	Error   string
	Message string
	Result  map[string]any
}

// newEncoder returns an encoder writing the canonical encoding: smallest
// integers, sorted map keys (docs/protocol.md, "Canonical encoding").
func newEncoder(buf *bytes.Buffer) *msgpack.Encoder {
	enc := msgpack.NewEncoder(buf)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	return enc
}

// encodeHeader writes a map whose keys come in the given order.
func encodeHeader(keys []string, vals []any) ([]byte, error) {
	dst := make([]byte, 0, 256)
	dst = appendContainerLen(dst, len(keys), 0x80, 0xde)
	var err error
	for i, k := range keys {
		dst = appendStr(dst, k)
		if dst, err = appendValue(dst, vals[i]); err != nil {
			return nil, fmt.Errorf("transfer: encode %s: %w", k, err)
		}
	}
	return dst, nil
}

var requestKeys = []string{"v", "id", "token", "cmd", "args"}
var replyKeys = []string{"v", "id", "status", "code", "error", "message", "result"}

// AppendRequest encodes r canonically.
func EncodeRequest(r *Request) ([]byte, error) {
	args := r.Args
	if args == nil {
		args = map[string]any{}
	}
	return encodeHeader(requestKeys, []any{r.V, r.ID, r.Token, r.Cmd, args})
}

// EncodeReply encodes r canonically.
func EncodeReply(r *Reply) ([]byte, error) {
	var result any
	if r.Result != nil {
		result = r.Result
	}
	msg := r.Message
	if !utf8.ValidString(msg) {
		// A message may quote a request's bytes (a dtype or command name sent
		// as an invalid msgpack str); replies' strings are UTF-8.
		msg = strings.ToValidUTF8(msg, "\uFFFD")
	}
	return encodeHeader(replyKeys, []any{r.V, r.ID, r.Status, int64(r.Code), r.Error, msg, result})
}

// decodeMap decodes b as exactly one msgpack map with string keys.
func decodeMap(b []byte, what string) (map[string]any, error) {
	if v, n, ok := decodeValue(b, 0); ok && n == len(b) {
		if m, isMap := v.(map[string]any); isMap {
			return m, nil
		}
	}
	// Off the fast path (codec.go): the library says what is wrong.
	n, err := scanMsgpack(b, 0)
	if err != nil {
		return nil, fmt.Errorf("the %s frame (%d bytes) is not valid msgpack: %v", what, len(b), err)
	}
	if n != len(b) {
		return nil, fmt.Errorf("the %s frame has %d bytes after its msgpack map", what, len(b)-n)
	}
	rd := bytes.NewReader(b)
	dec := msgpack.NewDecoder(rd)
	v, err := dec.DecodeInterface()
	if err != nil {
		return nil, fmt.Errorf("the %s frame (%d bytes) is not valid msgpack: %v", what, len(b), err)
	}
	if rd.Len() != 0 {
		return nil, fmt.Errorf("the %s frame has %d bytes after its msgpack map", what, rd.Len())
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the %s frame must be a msgpack map with string keys, got %s", what, typeName(v))
	}
	return m, nil
}

// DecodeRequest parses a request header frame. Every failure is an *Error
// with code MalformedRequest; the request's id is returned when it could be
// read, so the reply can carry it.
func DecodeRequest(b []byte) (*Request, error) {
	m, err := decodeMap(b, "request header")
	if err != nil {
		return nil, Errorf(MalformedRequest, "%v; see docs/protocol.md", err)
	}
	r := &Request{}
	if id, ok := m["id"]; ok {
		if u, ok := AsUint(id); ok {
			r.ID = u
		} else {
			return r, Errorf(MalformedRequest, "request header key 'id' must be an unsigned integer, got %s", typeName(id))
		}
	} else {
		return r, Errorf(MalformedRequest, "request header has no 'id'; it needs v, id, token, cmd and args")
	}
	for k := range m {
		switch k {
		case "v", "id", "token", "cmd", "args":
		default:
			return r, Errorf(MalformedRequest, "request header has unknown key %q; it takes v, id, token, cmd and args", k)
		}
	}
	v, ok := m["v"]
	if !ok {
		return r, Errorf(MalformedRequest, "request header has no 'v' (protocol version, %d)", Version)
	}
	if r.V, ok = AsInt(v); !ok {
		return r, Errorf(MalformedRequest, "request header key 'v' must be an integer, got %s", typeName(v))
	}
	if tok, ok := m["token"]; ok {
		if r.Token, ok = tok.(string); !ok {
			return r, Errorf(MalformedRequest, "request header key 'token' must be a string, got %s", typeName(tok))
		}
	}
	cmd, ok := m["cmd"]
	if !ok {
		return r, Errorf(MalformedRequest, "request header has no 'cmd'")
	}
	if r.Cmd, ok = cmd.(string); !ok {
		return r, Errorf(MalformedRequest, "request header key 'cmd' must be a string, got %s", typeName(cmd))
	}
	switch a := m["args"].(type) {
	case nil:
		r.Args = map[string]any{}
	case map[string]any:
		r.Args = a
	default:
		return r, Errorf(MalformedRequest, "request header key 'args' must be a map, got %s", typeName(a))
	}
	return r, nil
}

// DecodeReply parses a reply header frame.
func DecodeReply(b []byte) (*Reply, error) {
	m, err := decodeMap(b, "reply header")
	if err != nil {
		return nil, fmt.Errorf("transfer: %v", err)
	}
	r := &Reply{}
	var ok bool
	if r.V, ok = AsInt(m["v"]); !ok {
		return nil, fmt.Errorf("transfer: reply header 'v' is %s, want an integer", typeName(m["v"]))
	}
	if r.ID, ok = AsUint(m["id"]); !ok {
		return nil, fmt.Errorf("transfer: reply header 'id' is %s, want an unsigned integer", typeName(m["id"]))
	}
	if r.Status, ok = AsInt(m["status"]); !ok {
		return nil, fmt.Errorf("transfer: reply header 'status' is %s, want an integer", typeName(m["status"]))
	}
	code, ok := AsUint(m["code"])
	if !ok || code > 0xffff {
		return nil, fmt.Errorf("transfer: reply header 'code' is %s, want a small unsigned integer", typeName(m["code"]))
	}
	r.Code = Code(code)
	r.Error, _ = m["error"].(string)
	r.Message, _ = m["message"].(string)
	switch res := m["result"].(type) {
	case nil:
	case map[string]any:
		r.Result = res
	default:
		return nil, fmt.Errorf("transfer: reply header 'result' is %s, want a map or nil", typeName(res))
	}
	return r, nil
}

// Err returns the reply's error, or nil when it succeeded.
func (r *Reply) Err() error {
	if r.Status == 0 {
		return nil
	}
	return &Error{Code: r.Code, Message: r.Message}
}

// AsInt converts any msgpack integer (the decoder picks the narrowest type)
// to int64; false for anything else and for uint64 values above MaxInt64.
func AsInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= 1<<63-1 {
			return int64(x), true
		}
	}
	return 0, false
}

// AsUint converts any non-negative msgpack integer to uint64.
func AsUint(v any) (uint64, bool) {
	if x, ok := v.(uint64); ok {
		return x, true
	}
	if i, ok := AsInt(v); ok && i >= 0 {
		return uint64(i), true
	}
	return 0, false
}

// typeName names a decoded msgpack value's type the way a user wrote it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "bool"
	case string:
		return "str"
	case []byte:
		return "bin"
	case float32, float64:
		return "float"
	case []any:
		return "array"
	case map[string]any, map[any]any:
		return "map"
	}
	if _, ok := AsInt(v); ok {
		return "int"
	}
	if _, ok := AsUint(v); ok {
		return "int"
	}
	return fmt.Sprintf("%T", v)
}

// SortedKeys returns m's keys in order, for messages.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
