package csvio

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// benchColumns is n rows of an int64, a float64 and a short string
// column ("w" and up to 4 hex digits), as a to_csv of a frame writes.
func benchColumns(n int) []Column {
	rng := rand.New(rand.NewPCG(1, 1))
	i64, f64, ss := make([]int64, n), make([]float64, n), make([]string, n)
	for i := range n {
		i64[i] = rng.Int64N(1<<40) - 1<<39
		f64[i] = rng.NormFloat64() * 1e3
		ss[i] = fmt.Sprintf("w%x", rng.IntN(1<<16))
	}
	return []Column{{Name: "id", Array: pdarray.FromSlice(i64)}, {Name: "x", Array: pdarray.FromSlice(f64)}, strCol("name", ss)}
}

var sinkCols []Column

// BenchmarkRead: 10^6 rows (int64, float64, short str; about 38 MB) on
// 1 and 2 workers; "quoted" is the same file with one field quoted, which
// is parsed on one worker.
func BenchmarkRead(b *testing.B) {
	data := write(b, benchColumns(1e6), WriteOptions{Header: true})
	quoted := append(append([]byte{}, data...), "1,2.5,\"q\"\n"...)
	for _, c := range []struct {
		name    string
		data    []byte
		workers int
	}{{"workers=1", data, 1}, {"workers=2", data, 2}, {"quoted/workers=2", quoted, 2}} {
		b.Run("rows=1e6/"+c.name, func(b *testing.B) {
			files := []File{{Name: "bench.csv", Data: c.data}}
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				cols, err := Read(files, ReadOptions{Workers: c.workers})
				if err != nil {
					b.Fatal(err)
				}
				sinkCols = cols
			}
		})
	}
}

var sinkN int

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkWrite: the same columns written, on 1 and 2 workers; MB/s of
// the file made.
func BenchmarkWrite(b *testing.B) {
	cols := benchColumns(1e6)
	size := len(write(b, cols, WriteOptions{Header: true}))
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("rows=1e6/workers=%d", w), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				cw := &countWriter{}
				if err := Write(cw, cols, WriteOptions{Header: true, Workers: w}); err != nil {
					b.Fatal(err)
				}
				sinkN = cw.n
			}
		})
	}
}
