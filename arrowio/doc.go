// Package arrowio reads and writes columnar files (Parquet, Arrow IPC) and
// checkpoints straight from and into pdarray buffers. It does file I/O only:
// the caller (the server) resolves paths, opens files, reserves memory and
// allocates the destination arrays; arrowio fills them.
//
// Reading Parquet (ReadParquet):
//   - OpenParquet reads every file's footer and plans the read: the output
//     of each column is sized from the metadata (the sum of the row counts of
//     its row groups), so nothing grows; nothing is decoded yet.
//   - Plan.Read splits the work into (file × row group × column) units and
//     runs them over a pool of workers. Flat numeric columns are read by
//     the direct page reader (parquet_fast.go, parquet_pages.go): it parses
//     page headers itself, reads each compressed chunk once into a reused
//     buffer, decompresses or reads PLAIN pages straight into the
//     destination, gathers dictionary pages while unpacking their indices,
//     decodes DELTA_BINARY_PACKED and BYTE_STREAM_SPLIT pages into the
//     destination (parquet_delta.go), and decodes zstd with the system's
//     libzstd when it loads
//     (zstd_native.go); 8- and 16-bit integers (stored as INT32) go
//     through a reused buffer to be narrowed. Other encodings (none left
//     for numbers), and any surprise go to the typed column readers of
//     arrow-go/parquet, straight into the destination too: no arrow.Array
//     is ever built. Counters (ReadStats) prove which path ran.
//   - Nulls (NullPolicy): "auto" (the default) fills nulls of float columns
//     with NaN and reports how many it filled; nulls in other columns are an
//     error that names the columns and the options. "fill" writes FillValue
//     (converted to the column's dtype) into every null slot; "mask" also
//     fills (with FillValue, or 0) and returns a bool array per nullable
//     column that is true where the value was null; "error" refuses any null.
//   - Column types that have no pdarray dtype (strings, decimals, timestamps,
//     nested types, ...) are named in the error together with the readable
//     columns.
//
// Writing Parquet (WriteParquet) uses arrow-go's low-level column writers
// (no arrow arrays either): required columns, a chosen codec and row-group
// size. (row group x column) units are encoded and compressed on the
// workers, with enough row groups queued behind the one being written out
// for two units per worker; writeRowGroups closes each chunk's page writer
// (offsets, bytes to the file) in file order: the same bytes as arrow-go's
// file writer, with no worker waiting at a row group's end. Small-range
// integer columns get their dictionary from a dense table
// (writeDenseDict); zstd pages are compressed by libzstd when it loads.
//
// Arrow IPC files (WriteArrowIPC, ReadArrowIPC): the writer wraps the arrays'
// own buffers as Arrow buffers without copying (bool is bit-packed); the
// reader copies each record batch's values into the destination arrays.
//
// Checkpoints (checkpoint.go): one raw little-endian file per array plus a
// manifest.json recording name, dtype, size and an xxh3 block checksum.
package arrowio
