package arrowio

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// rawRead reads string column 0 with ReadStringsRaw into Go strings.
func rawRead(t testing.TB, p *ParquetPlan, workers int) ([]string, error) {
	off := make([]int64, p.Strings[0].Rows+1)
	var reserved int64
	data, err := p.ReadStringsRaw(0, off, func(n int) ([]byte, error) { return make([]byte, n), nil },
		func(n int64) error { reserved += n; return nil }, workers)
	if err != nil {
		return nil, err
	}
	if reserved != int64(len(data)) || off[len(off)-1] != int64(len(data)) {
		t.Fatalf("reserved %d, bytes %d, last offset %d", reserved, len(data), off[len(off)-1])
	}
	out := make([]string, len(off)-1)
	for i := range out {
		out[i] = string(data[off[i]:off[i+1]])
	}
	return out, nil
}

// TestReadStringsRaw: a string column read as it is (offsets and bytes)
// equals what was written: dictionary and plain pages, one or several row
// groups and files, 1 and 3 workers; nulls refused, or read as the null
// string; zstd pages decoded by libzstd where it is loadable.
func TestReadStringsRaw(t *testing.T) {
	vals := stringVals()
	for _, c := range stringLayouts {
		t.Run(c.name, func(t *testing.T) {
			srcs := stringSources(t, vals, c.rg, c.dict, c.files)
			p, err := OpenParquet(srcs, []string{"s"}, NullPolicy{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for _, workers := range []int{1, 3} {
				native := Stats.NativeZstdPages.Load()
				got, err := rawRead(t, p, workers)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, vals) {
					t.Fatalf("workers %d: strings differ", workers)
				}
				if nativeZstdOK() && Stats.NativeZstdPages.Load() == native {
					t.Errorf("no zstd page was decoded by libzstd")
				}
			}
		})
	}
	nullAt := func(i int) bool { return i%5 == 1 }
	raw := stringFile(t, vals[:500], 200, true, nullAt)
	p, err := OpenParquet([]ParquetSource{{Name: "n", R: bytes.NewReader(raw)}}, []string{"s"}, NullPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rawRead(t, p, 2); err == nil || !strings.Contains(err.Error(), "null") {
		t.Fatalf("nulls: %v", err)
	}
	p.Close()
	na := "N/A"
	p, err = OpenParquet([]ParquetSource{{Name: "n", R: bytes.NewReader(raw)}}, []string{"s"}, NullPolicy{NullString: &na})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got, err := rawRead(t, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if want := map[bool]string{true: na, false: vals[i]}[nullAt(i)]; g != want {
			t.Fatalf("row %d: %q, want %q", i, g, want)
		}
	}
}
