// Package ops holds Arktos' array kernels: elementwise arithmetic with numpy's
// type promotion, reductions, scans, creation, indexing, sorting and sets.
//
// Conventions (see ../../shared/STYLE.md and docs/operations.md):
//   - One generic loop per operation over a type set; the instantiation is
//     picked once per request by a switch on the dtype, never per element.
//   - bool arrays are viewed as []uint8 holding 0 or 1; operations whose
//     meaning differs for bool (add is or, multiply is and, invert is not)
//     pick bool-specific loops at resolution time.
//   - Work is split over Env.Workers goroutines in contiguous blocks; each
//     worker keeps its own accumulator, merged in block order at the end, so
//     every result (float sums included) is independent of the worker count.
//   - Kernels never allocate arrays themselves: outputs and scratch come from
//     Env.Alloc (the server reserves the bytes first) and scratch goes back
//     with Env.Free. Per-worker chunk buffers (a few KiB) are the only other
//     memory they use.
//
// ops imports only pdarray.
package ops
