package strs

import (
	"testing"

	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
)

// TestEmpty: every kernel takes no strings and no indices (blocks then
// runs no block).
func TestEmpty(t *testing.T) {
	env := ops.PlainEnv(2)
	s, none := fromGo([]string{"a", "b"}), fromGo(nil)
	if out, err := Take(env, s, nil); err != nil || out.Strs().Len() != 0 {
		t.Fatalf("take: %v", err)
	}
	if err := Check(env, none); err != nil {
		t.Fatal(err)
	}
	f, _ := pdarray.Alloc(pdarray.Float64, 0)
	if err := Parse(env, none, f); err != nil {
		t.Fatal(err)
	}
	if _, err := Encode(env, none, "ascii", false); err != nil {
		t.Fatal(err)
	}
	if _, err := Factorize(env, none, nil); err != nil {
		t.Fatal(err)
	}
	out, _ := pdarray.Alloc(pdarray.Int64, 0)
	if err := Argsort(env, none, out); err != nil {
		t.Fatal(err)
	}
	if _, err := Split(env, none, "_", false, 0, make([]int64, 1)); err != nil {
		t.Fatal(err)
	}
}
