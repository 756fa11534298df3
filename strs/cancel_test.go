package strs

import (
	"fmt"
	"testing"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/ops"
)

// TestCancelledStringKernel: a string kernel whose request was cancelled
// unwinds with *par.Canceled before its pass (ops.Env.Stop).
func TestCancelledStringKernel(t *testing.T) {
	ss := make([]string, 1<<17)
	for i := range ss {
		ss[i] = fmt.Sprintf("host-%d.example.org", i)
	}
	s := fromGo(ss)
	env := ops.PlainEnv(2)
	env.Stop = &par.Stop{}
	out := make([]bool, s.Len())
	if err := Search(env, s, Contains, `\d+7\.`, true, out); err != nil {
		t.Fatal(err) // an armed Stop changes nothing
	}
	env.Stop.Cancel("test")
	defer func() {
		if _, ok := par.AsCanceled(recover()); !ok {
			t.Fatal("a cancelled search did not unwind with *par.Canceled")
		}
	}()
	Search(env, s, Contains, `\d+7\.`, true, out)
	t.Fatal("a cancelled search ran")
}
