package arrowio

import (
	"os"
	"strconv"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// BenchmarkReadParquetFile reads the file named by ARKTOS_BENCH_PARQUET
// (skipped when unset) with ARKTOS_BENCH_WORKERS workers (default 1):
//
//	ARKTOS_BENCH_PARQUET=/tmp/one_zstd.parquet go test -run - -bench ReadParquetFile -cpuprofile cpu.out ./arrowio/
func BenchmarkReadParquetFile(b *testing.B) {
	path := os.Getenv("ARKTOS_BENCH_PARQUET")
	if path == "" {
		b.Skip("ARKTOS_BENCH_PARQUET is not set")
	}
	workers, _ := strconv.Atoi(os.Getenv("ARKTOS_BENCH_WORKERS"))
	workers = max(1, workers)
	// ARKTOS_BENCH_ARROWGO=1: arrow-go's reader only (A/B against the direct reader).
	disableFast = os.Getenv("ARKTOS_BENCH_ARROWGO") == "1"
	defer func() { disableFast = false }()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var dst []*pdarray.Array
	b.ReportAllocs()
	for b.Loop() {
		p, err := OpenParquet([]ParquetSource{{Name: path, R: f}}, nil, NullPolicy{})
		if err != nil {
			b.Fatal(err)
		}
		if dst == nil {
			n := 0
			for _, c := range p.Columns {
				a, err := pdarray.Alloc(c.DType, c.Rows)
				if err != nil {
					b.Fatal(err)
				}
				dst = append(dst, a)
				n += len(a.Bytes())
			}
			b.SetBytes(int64(n))
		}
		if _, err := p.Read(dst, make([]*pdarray.Array, len(dst)), workers); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}
