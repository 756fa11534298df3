package csvio

import (
	"bytes"
	"reflect"
	"testing"
)

// fuzzHeaders are typing headers put before the fuzzer's bytes (hdr picks
// one; 0 none), so that the number parsers and the header see them.
var fuzzHeaders = []string{"",
	"**HEADER**\nint64,str,float64\n*/HEADER/*\n",
	"**HEADER**\nbool,uint64\n*/HEADER/*\n",
	"**HEADER**\nstr\n*/HEADER/*\n",
	"**HEADER**\nfloat64,float64,int64\n*/HEADER/*\na,b,c\n",
}

// FuzzRead: Read of any bytes does not panic; what it returns holds
// columns of one length with valid offsets and UTF-8, the same on 1 and
// 3 workers with spans of a byte (the same error too), and what it read
// it writes and reads back the same.
func FuzzRead(f *testing.F) {
	f.Add([]byte("a,b,c\n1,x,0.5\n2,y,nan\n"), uint8(0), uint8(0))
	f.Add([]byte("a,b,c\n1,\"x,\"\"y\"\"\n\",\n-3,,inf\r\n"), uint8(1), uint8(0))
	f.Add([]byte("p,q\nTrue,18446744073709551615\n0,+1\n"), uint8(2), uint8(0))
	f.Add([]byte("s\n\n\xc3\n\xa9\n"), uint8(3), uint8(0))
	f.Add([]byte("1,2,3\n4.5,1e400,9\n,,\n"), uint8(4), uint8(';'))
	f.Add([]byte("**HEADER**\nint64\n*/HEADER/*\nx\n1\n"), uint8(0), uint8('\t'))
	f.Fuzz(func(t *testing.T, data []byte, hdr, delim uint8) {
		file := append([]byte(fuzzHeaders[int(hdr)%len(fuzzHeaders)]), data...)
		if checkDelim(delim) != nil {
			delim = ','
		}
		files := []File{{Name: "f", Data: file}}
		one, err1 := Read(files, ReadOptions{Delim: delim, Workers: 1})
		three, err3 := Read(files, ReadOptions{Delim: delim, Workers: 3, minSpan: 1})
		if (err1 == nil) != (err3 == nil) || (err1 != nil && err1.Error() != err3.Error()) {
			t.Fatalf("1 worker: %v; 3 workers: %v", err1, err3)
		}
		if err1 != nil {
			if _, ok := err1.(*Error); !ok {
				t.Fatalf("error %T %v", err1, err1)
			}
			return
		}
		checkColumns(t, one)
		sameColumns(t, three, one)
		// Write, then read back: the same columns (unless Write refuses
		// their names).
		var buf bytes.Buffer
		if err := Write(&buf, one, WriteOptions{Delim: delim, Header: true, Workers: 2}); err != nil {
			if e, ok := err.(*Error); !ok || e.Kind != ErrValue {
				t.Fatalf("Write: %v", err)
			}
			return
		}
		back, err := Read([]File{{Name: "back", Data: buf.Bytes()}}, ReadOptions{Delim: delim, Workers: 2, minSpan: 1})
		if err != nil {
			t.Fatalf("reading back %q: %v", buf.Bytes(), err)
		}
		if len(back) != len(one) {
			t.Fatalf("%d columns back, want %d", len(back), len(one))
		}
		for i := range back {
			if g, w := values(back[i]), values(one[i]); !reflect.DeepEqual(g, w) {
				t.Fatalf("column %d back from %q:\n got %v\nwant %v", i, buf.Bytes(), g, w)
			}
		}
	})
}
