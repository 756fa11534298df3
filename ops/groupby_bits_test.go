package ops

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arktos-dev/arktos/pdarray"
)

// randomIDs returns n group ids in [0, ng) with about a tenth dropped (-1).
func randomIDs(r *rand.Rand, n, ng int) *pdarray.Array {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(ng))
		if r.IntN(10) == 0 {
			ids[i] = -1
		}
	}
	ids[0] = int32(ng - 1) // every group but the last may be empty; the last is not
	return pdarray.FromSlice(ids)
}

// TestGroupBits checks or, and and xor of every integer dtype and bool
// against a loop over the rows, at 1, 2 and 8 workers, with few groups
// (rows split into blocks) and many (group ranges).
func TestGroupBits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 70000
	raw := make([]int64, n)
	for i := range raw {
		raw[i] = int64(r.Uint64())
	}
	for _, ng := range []int{7, 50000} {
		ids := randomIDs(r, n, ng)
		gid := pdarray.View[int32](ids)
		for _, d := range []pdarray.DType{dI8, dI16, dI32, dI64, dU8, dU16, dU32, dU64, dBool} {
			env1 := PlainEnv(1)
			vals, _ := pdarray.Alloc(d, n)
			if d == dBool {
				bv := pdarray.BytesAs[uint8](vals.Bytes())
				for i, x := range raw {
					bv[i] = uint8(x & 1)
				}
			} else {
				AsType(env1, pdarray.FromSlice(raw), vals)
			}
			wide, _ := pdarray.Alloc(dI64, n) // the values sign- or zero-extended
			AsType(env1, vals, wide)
			wv := pdarray.View[int64](wide)
			size := d.Size()
			for _, op := range []string{"or", "and", "xor"} {
				want := make([]int64, ng)
				seen := make([]bool, ng)
				for i, g := range gid {
					if g < 0 {
						continue
					}
					x := wv[i]
					switch {
					case !seen[g]:
						want[g] = x
					case op == "or":
						want[g] |= x
					case op == "and":
						want[g] &= x
					default:
						want[g] ^= x
					}
					seen[g] = true
				}
				wantD, _ := pdarray.Alloc(d, ng) // the 64-bit fold in d's width
				AsType(env1, pdarray.FromSlice(want), wantD)
				wb := wantD.Bytes()
				for _, w := range []int{1, 2, 8} {
					out, err := GroupAgg(PlainEnv(w), ids, ng, op, vals, 0)
					if err != nil {
						t.Fatal(err)
					}
					if out.DType() != d {
						t.Fatalf("%s of %v gave %v", op, d, out.DType())
					}
					ob := out.Bytes()
					for g := range ng {
						if seen[g] && !slices.Equal(ob[g*size:(g+1)*size], wb[g*size:(g+1)*size]) {
							t.Fatalf("%s of %v, %d groups, %d workers: group %d is % x, want % x", op, d, ng, w, g, ob[g*size:(g+1)*size], wb[g*size:(g+1)*size])
						}
					}
				}
			}
		}
	}
}

func TestGroupBitsRefusesFloats(t *testing.T) {
	ids := pdarray.FromSlice([]int32{0, 1, 0})
	for _, d := range []pdarray.DType{dF32, dF64} {
		vals, _ := pdarray.Alloc(d, 3)
		_, err := GroupAgg(PlainEnv(1), ids, 2, "xor", vals, 0)
		var oe *Error
		if err == nil || !errors.As(err, &oe) || oe.Kind != ErrType {
			t.Fatalf("xor of %v: %v, want a type error", d, err)
		}
	}
}

// TestGroupHeadTail checks head and tail against the first and last n of
// each group of a stable sort of the kept rows by group, at 1, 2 and 8
// workers (row blocks, and group ranges with many groups).
func TestGroupHeadTail(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const n = 60000
	for _, ng := range []int{1, 5, 40000} {
		ids := randomIDs(r, n, ng)
		gid := pdarray.View[int32](ids)
		per := make([][]int64, ng)
		for i, g := range gid {
			if g >= 0 {
				per[g] = append(per[g], int64(i))
			}
		}
		for _, k := range []int{0, 1, 3, n + 1} {
			for _, tail := range []bool{false, true} {
				var want []int64
				for _, rows := range per {
					m := min(k, len(rows))
					if tail {
						want = append(want, rows[len(rows)-m:]...)
					} else {
						want = append(want, rows[:m]...)
					}
				}
				for _, w := range []int{1, 2, 8} {
					out, err := GroupHeadTail(PlainEnv(w), ids, ng, k, tail)
					if err != nil {
						t.Fatal(err)
					}
					if got := pdarray.View[int64](out); !slices.Equal(got, want) {
						t.Fatalf("%d groups, n %d, tail %v, %d workers: %d rows, want %d", ng, k, tail, w, len(got), len(want))
					}
				}
			}
		}
	}
	if _, err := GroupHeadTail(PlainEnv(1), ids1(), 1, -1, false); err == nil {
		t.Fatal("n -1 accepted")
	}
}

func ids1() *pdarray.Array { return pdarray.FromSlice([]int32{0}) }

// TestGroupBitsEmptyGroups: ids a client made may leave a group without
// rows; it gets 0 for or, and and xor alike (and's all-ones start never
// shows: a bool would read 0xFF), at 1 and 2 workers.
func TestGroupBitsEmptyGroups(t *testing.T) {
	n := 1 << 16
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(2 * (i % 2)) // groups 0 and 2; 1 is empty
	}
	for _, d := range []pdarray.DType{dI8, dU64, dBool} {
		vals, _ := pdarray.Alloc(d, n)
		b := vals.Bytes()
		for i := range b {
			b[i] = 1 // every value 1 (or 0x0101... for wider ints)
		}
		for _, w := range []int{1, 2} {
			for _, op := range []string{"or", "and", "xor"} {
				out, err := GroupAgg(PlainEnv(w), pdarray.FromSlice(ids), 3, op, vals, 0)
				if err != nil {
					t.Fatal(err)
				}
				size := d.Size()
				if mid := out.Bytes()[size : 2*size]; slices.ContainsFunc(mid, func(c byte) bool { return c != 0 }) {
					t.Fatalf("%s of %v, %d workers: the empty group is % x", op, d, w, mid)
				}
				if op != "xor" && out.Bytes()[0] != 1 {
					t.Fatalf("%s of %v, %d workers: group 0 is % x", op, d, w, out.Bytes()[:size])
				}
			}
		}
	}
}

// BenchmarkGroupHeadTail: each group's first (or last) 5 rows of 10^7
// rows in 10^5 groups, ids made once (the server's groupby_head).
func BenchmarkGroupHeadTail(b *testing.B) {
	const n, ng = 10_000_000, 100_000
	ids := randomIDs(rand.New(rand.NewPCG(5, 6)), n, ng)
	for _, w := range []int{1, 2} {
		for _, tail := range []bool{false, true} {
			b.Run(fmt.Sprintf("tail=%v/w=%d", tail, w), func(b *testing.B) {
				env := poolEnv(w)
				b.SetBytes(n * 4)
				for b.Loop() {
					out, err := GroupHeadTail(env, ids, ng, 5, tail)
					if err != nil {
						b.Fatal(err)
					}
					env.Free(out)
				}
			})
		}
	}
}
