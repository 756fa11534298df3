package client

import (
	"context"
	"fmt"
)

// Columnar files and checkpoints on the server (docs/io.md). Paths are on
// the server, relative to its --data-dir; paths that leave it are refused.

// ReadOptions tune ReadParquet and ReadArrow.
type ReadOptions struct {
	Columns []string // nil: every column
	// Nulls is "auto" (default: NaN in float columns, an error elsewhere),
	// "fill" (FillValue into null slots), "mask" (also a bool array
	// "<column>_mask", true where null) or "error".
	Nulls     string
	FillValue any // bool, an integer type or float64; nil for none
	// NullString, when not nil, is the string a string column's nulls are
	// read as (one more category); nil refuses a string column with nulls.
	NullString *string
}

// ReadResult is what a read stored: one array per column (masks as
// "<column>_mask"), in column order, and the nulls filled per column.
type ReadResult struct {
	Columns []string
	Arrays  map[string]ArrayInfo
	// Strings are the string columns, by name (not in Columns): each as
	// its codes and sorted distinct strings, Python's Categorical.
	Strings map[string]StringColumn
	Nulls   map[string]int64
	Rows    int
	Seconds float64 // server-side time
}

// StringColumn is a string column a read stored as three arrays, all the
// caller's: Codes (int8, int16 or int32: each row's place among the sorted
// distinct strings), Categories (uint8: those strings' UTF-8 bytes, one
// after another) and CategoryLengths (int64: each string's length).
// Categories reads the strings back.
type StringColumn struct {
	Codes, Categories, CategoryLengths ArrayInfo
}

// Categories downloads a StringColumn's sorted distinct strings.
func Categories(ctx context.Context, c *Client, col StringColumn) ([]string, error) {
	data, err := Download[uint8](ctx, c, col.Categories.Name)
	if err != nil {
		return nil, err
	}
	lens, err := Download[int64](ctx, c, col.CategoryLengths.Name)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(lens))
	at := int64(0)
	for i, n := range lens {
		if n < 0 || at+n > int64(len(data)) {
			return nil, fmt.Errorf("client: %s and %s do not fit together", col.Categories.Name, col.CategoryLengths.Name)
		}
		out[i] = string(data[at : at+n])
		at += n
	}
	return out, nil
}

func (o ReadOptions) args(args map[string]any) map[string]any {
	if o.Columns != nil {
		list := make([]any, len(o.Columns))
		for i, c := range o.Columns {
			list[i] = c
		}
		args["columns"] = list
	}
	if o.Nulls != "" {
		args["nulls"] = o.Nulls
	}
	if o.FillValue != nil {
		args["fill_value"] = o.FillValue
	}
	if o.NullString != nil {
		args["null_string"] = *o.NullString
	}
	return args
}

func (c *Client) readColumns(ctx context.Context, cmd string, args map[string]any) (*ReadResult, error) {
	res, err := c.call(ctx, cmd, args)
	if err != nil {
		return nil, err
	}
	out := &ReadResult{Arrays: map[string]ArrayInfo{}, Nulls: map[string]int64{}, Rows: int(asInt(res["rows"]))}
	out.Seconds, _ = res["seconds"].(float64)
	raw, _ := res["arrays"].([]any)
	for _, r := range raw {
		m, _ := r.(map[string]any)
		info, err := parseInfo(m)
		if err != nil {
			return nil, err
		}
		col := asString(m["column"])
		out.Columns = append(out.Columns, col)
		out.Arrays[col] = info
	}
	strs, _ := res["strings"].([]any)
	for _, r := range strs {
		m, _ := r.(map[string]any)
		var sc StringColumn
		for key, dst := range map[string]*ArrayInfo{"codes": &sc.Codes, "categories": &sc.Categories, "category_lengths": &sc.CategoryLengths} {
			part, _ := m[key].(map[string]any)
			info, err := parseInfo(part)
			if err != nil {
				return nil, err
			}
			*dst = info
		}
		if out.Strings == nil {
			out.Strings = map[string]StringColumn{}
		}
		out.Strings[asString(m["column"])] = sc
	}
	nulls, _ := res["nulls"].(map[string]any)
	for k, v := range nulls {
		out.Nulls[k] = asInt(v)
	}
	return out, nil
}

// ReadParquet reads Parquet files (paths or glob patterns, read in sorted
// order one after another) into new arrays, one per column.
func (c *Client) ReadParquet(ctx context.Context, paths []string, o ReadOptions) (*ReadResult, error) {
	list := make([]any, len(paths))
	for i, p := range paths {
		list[i] = p
	}
	return c.readColumns(ctx, "read_parquet", o.args(map[string]any{"paths": list}))
}

// ReadArrow reads an Arrow IPC file into new arrays, one per column.
func (c *Client) ReadArrow(ctx context.Context, path string, o ReadOptions) (*ReadResult, error) {
	return c.readColumns(ctx, "read_arrow", o.args(map[string]any{"path": path}))
}

// NamedColumn names a stored array as a column of a file.
type NamedColumn struct {
	Column string // name in the file
	Array  string // stored array (a string column's codes)
	// A string column (ToParquet, ToArrowFile): the stored arrays of its distinct
	// strings' UTF-8 bytes (uint8) and lengths (int64), sorted bytewise, as
	// ReadResult.Strings gives them; Array holds each row's code into them.
	Categories, CategoryLengths string
}

// WriteOptions tune ToParquet and ToArrowFile.
type WriteOptions struct {
	// Compression: Parquet "zstd" (default), "snappy", "gzip", "lz4",
	// "brotli", "none"; Arrow IPC "none" (default), "zstd", "lz4".
	Compression string
	// CompressionLevel (Parquet zstd 1..22, gzip 1..9, brotli 1..11; 0:
	// the codec's default, zstd's 3).
	CompressionLevel int
	RowGroupSize     int    // Parquet rows per row group (0: 1 Mi)
	Dictionary       string // Parquet: "auto" (default), "on", "off"
	// NullString, when not nil: a string column's rows of this string are
	// written as nulls (ReadOptions.NullString reads them back).
	NullString *string
}

func writeArgs(cols []NamedColumn, path string) (map[string]any, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("client: nothing to write: give at least one column")
	}
	names, columns := make([]any, len(cols)), make([]any, len(cols))
	cats, lens := make([]any, len(cols)), make([]any, len(cols))
	strs := false
	for i, c := range cols {
		names[i], columns[i] = c.Array, c.Column
		cats[i], lens[i] = c.Categories, c.CategoryLengths
		strs = strs || c.Categories != "" || c.CategoryLengths != ""
	}
	args := map[string]any{"path": path, "names": names, "columns": columns}
	if strs {
		args["categories"], args["category_lengths"] = cats, lens
	}
	return args, nil
}

// ToParquet writes stored arrays as one Parquet file on the server,
// atomically (a temporary file renamed into place). It returns the
// server's result (path, rows, bytes, file_bytes, seconds).
func (c *Client) ToParquet(ctx context.Context, cols []NamedColumn, path string, o WriteOptions) (map[string]any, error) {
	args, err := writeArgs(cols, path)
	if err != nil {
		return nil, err
	}
	if o.Compression != "" {
		args["compression"] = o.Compression
	}
	if o.CompressionLevel != 0 {
		args["compression_level"] = int64(o.CompressionLevel)
	}
	if o.RowGroupSize > 0 {
		args["row_group_size"] = uint64(o.RowGroupSize)
	}
	if o.Dictionary != "" {
		args["dictionary"] = o.Dictionary
	}
	if o.NullString != nil {
		args["null_string"] = *o.NullString
	}
	return c.call(ctx, "to_parquet", args)
}

// ToArrowFile writes stored arrays as an Arrow IPC file on the server, atomically.
func (c *Client) ToArrowFile(ctx context.Context, cols []NamedColumn, path string, o WriteOptions) (map[string]any, error) {
	args, err := writeArgs(cols, path)
	if err != nil {
		return nil, err
	}
	if o.Compression != "" {
		args["compression"] = o.Compression
	}
	if o.NullString != nil {
		args["null_string"] = *o.NullString
	}
	return c.call(ctx, "to_arrow_file", args)
}

// SaveAll saves every stored array to the checkpoint directory path. An
// existing checkpoint there is replaced once the new one is complete; a
// path that holds anything else (a file, a folder of other files) is
// refused with ARGUMENT_VALUE and left as it was.
func (c *Client) SaveAll(ctx context.Context, path string) (map[string]any, error) {
	return c.call(ctx, "save_all", map[string]any{"path": path})
}

// Checkpoint saves every array to the server's --checkpoint directory now
// (force: even when nothing changed since the last one). The result says
// "skipped" or how many arrays were saved, "written" (bytes) and "linked"
// (arrays unchanged since the last checkpoint, not written again). A
// server without --checkpoint refuses it.
func (c *Client) Checkpoint(ctx context.Context, force bool) (map[string]any, error) {
	args := map[string]any{}
	if force {
		args["force"] = true
	}
	return c.call(ctx, "checkpoint", args)
}

// LoadAll loads a checkpoint (all arrays under their saved names, every
// checksum verified first; a failure loads nothing).
func (c *Client) LoadAll(ctx context.Context, path string) ([]ArrayInfo, error) {
	res, err := c.call(ctx, "load_all", map[string]any{"path": path})
	if err != nil {
		return nil, err
	}
	return parseInfos(res["arrays"])
}
