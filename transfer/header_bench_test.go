package transfer

import "testing"

var sinkBytes []byte
var sinkReq *Request
var sinkReply *Reply

func configResult() map[string]any {
	return map[string]any{
		"protocol_version": Version, "server_version": "0.1.0", "max_frame_size": 16 << 20,
		"max_memory": int64(8 << 30), "workers": 2, "auth": false,
		"dtypes": []string{"bool", "float32", "float64", "int16", "int32", "int64", "int8", "uint16", "uint32", "uint64", "uint8"},
	}
}

// BenchmarkHeader times the header codec of one small request (get_config
// and a reduction) and its reply, each side's share of a round trip.
func BenchmarkHeader(b *testing.B) {
	req := &Request{V: Version, ID: 12345, Token: "", Cmd: "reduce", Args: map[string]any{"name": "arr_17", "op": "sum"}}
	reqBytes, _ := EncodeRequest(req)
	rep := &Reply{V: Version, ID: 12345, Result: configResult()}
	repBytes, _ := EncodeReply(rep)
	b.Run("encode-request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkBytes, _ = EncodeRequest(req)
		}
	})
	b.Run("decode-request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkReq, _ = DecodeRequest(reqBytes)
		}
	})
	b.Run("encode-reply", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkBytes, _ = EncodeReply(rep)
		}
	})
	b.Run("decode-reply", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkReply, _ = DecodeReply(repBytes)
		}
	})
}
