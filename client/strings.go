package client

import (
	"context"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
)

// UploadStrings stores values as a string column's three arrays, the parts
// of Python's Categorical: each value's code (int8, int16 or int32, the
// smallest that numbers them) into the sorted distinct strings, whose
// UTF-8 bytes (uint8) and lengths (int64) are the other two. The result
// goes to ToParquet and ToArrowFile as a NamedColumn's Array, Categories
// and CategoryLengths, and its codes group, sort and compare as the
// strings do. The three arrays are the caller's (Delete them); on an error
// none is left.
func UploadStrings(ctx context.Context, c *Client, values []string) (col StringColumn, err error) {
	ids := make(map[string]int32)
	var cats []string
	for i, v := range values {
		if _, ok := ids[v]; ok {
			continue
		}
		if !utf8.ValidString(v) {
			return col, fmt.Errorf("client: value %d (%.40q) is not UTF-8; string columns hold UTF-8", i, v)
		}
		if len(cats) == math.MaxInt32 {
			return col, fmt.Errorf("client: more than 2^31-1 distinct strings")
		}
		ids[v] = 0
		cats = append(cats, v)
	}
	slices.Sort(cats)
	var data []byte
	lens := make([]int64, len(cats))
	for k, s := range cats {
		ids[s] = int32(k)
		data = append(data, s...)
		lens[k] = int64(len(s))
	}
	var stored []string
	defer func() {
		if err != nil && len(stored) > 0 {
			_ = c.Delete(context.WithoutCancel(ctx), stored...)
		}
	}()
	up := func(info ArrayInfo, err error) (ArrayInfo, error) {
		if err == nil {
			stored = append(stored, info.Name)
		}
		return info, err
	}
	switch {
	case len(cats) <= math.MaxInt8+1:
		col.Codes, err = up(Upload(ctx, c, codesOf[int8](values, ids)))
	case len(cats) <= math.MaxInt16+1:
		col.Codes, err = up(Upload(ctx, c, codesOf[int16](values, ids)))
	default:
		col.Codes, err = up(Upload(ctx, c, codesOf[int32](values, ids)))
	}
	if err != nil {
		return col, err
	}
	if col.Categories, err = up(Upload(ctx, c, data)); err != nil {
		return col, err
	}
	col.CategoryLengths, err = up(Upload(ctx, c, lens))
	return col, err
}

func codesOf[T int8 | int16 | int32](values []string, ids map[string]int32) []T {
	out := make([]T, len(values))
	for i, v := range values {
		out[i] = T(ids[v])
	}
	return out
}
