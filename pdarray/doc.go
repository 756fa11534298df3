// Package pdarray holds Arktos' typed 1-D arrays: the dtype table and arrays
// that own one aligned buffer.
//
// Invariants:
//   - An Array's bytes are little-endian elements of its DType, C order, and
//     exactly Len()*DType.Size() long (the backing allocation may be longer,
//     rounded up to 8 bytes).
//   - The buffer is allocated as []uint64, so its start is 8-byte aligned and
//     any typed view made with View is aligned for its element type.
//   - The Array owns the buffer; typed views alias it and keep the Go
//     allocation alive by themselves (unsafe.Slice over Go memory).
//   - Stored arrays are immutable once published by the server, unless an
//     operation is explicitly in place.
//
// pdarray is a leaf package: no I/O, no sockets, no server state.
package pdarray
