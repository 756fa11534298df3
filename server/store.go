package server

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// store is the name → array table and the memory accountant. Every byte an
// array holds is reserved before it is allocated and released when the array
// is deleted, so used never exceeds limit.
type store struct {
	mu       sync.Mutex
	arrays   map[string]*pdarray.Array
	used     int64 // bytes reserved: stored arrays plus in-flight allocations
	limit    int64
	nextName uint64
}

func newStore(limit int64) *store {
	return &store{arrays: map[string]*pdarray.Array{}, limit: limit}
}

// reserve accounts n bytes before the caller allocates them; what names the
// allocation in the error. The caller must release on failure, or hand the
// bytes over to an array with put.
func (s *store) reserve(n int64, what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > s.limit-s.used {
		return transfer.Errorf(transfer.OutOfMemory,
			"%s needs %s (%d bytes) but the server's limit of %s leaves %s (%d bytes) free, with %s held by %d arrays; raise --max-memory or delete arrays",
			what, transfer.FormatBytes(n), n, transfer.FormatBytes(s.limit), transfer.FormatBytes(s.limit-s.used), s.limit-s.used,
			transfer.FormatBytes(s.used), len(s.arrays))
	}
	s.used += n
	return nil
}

func (s *store) release(n int64) {
	s.mu.Lock()
	s.used -= n
	s.mu.Unlock()
}

// put stores a (whose bytes are already reserved) under name, or under a
// fresh name when name is "". On NAME_IN_USE the reservation stays with the
// caller.
func (s *store) put(name string, a *pdarray.Array) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == "" {
		for {
			s.nextName++
			name = fmt.Sprintf("arr_%d", s.nextName)
			if _, taken := s.arrays[name]; !taken {
				break
			}
		}
	} else if _, taken := s.arrays[name]; taken {
		return "", errNameInUse(name)
	}
	s.arrays[name] = a
	return name, nil
}

func errNameInUse(name string) error {
	return transfer.Errorf(transfer.NameInUse, "an array named '%s' already exists; delete it first or choose another name", name)
}

func (s *store) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.arrays[name]
	return ok
}

// get returns the array stored under name. Stored arrays are immutable, so
// the caller may read it without the lock, even after a concurrent delete.
func (s *store) get(name string) (*pdarray.Array, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.arrays[name]
	if !ok {
		return nil, transfer.Errorf(transfer.UnknownArray, "no array named '%s' is stored; list_arrays() shows the %d that are", name, len(s.arrays))
	}
	return a, nil
}

// delete removes every name, or none: with missingOK false, one unknown name
// fails the whole request.
func (s *store) delete(names []string, missingOK bool) (deleted int, freed int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !missingOK {
		for _, n := range names {
			if _, ok := s.arrays[n]; !ok {
				return 0, 0, transfer.Errorf(transfer.UnknownArray, "no array named '%s' is stored; nothing was deleted (pass missing_ok=true to skip unknown names)", n)
			}
		}
	}
	for _, n := range names {
		if a, ok := s.arrays[n]; ok {
			delete(s.arrays, n)
			deleted++
			freed += int64(a.NBytes())
		}
	}
	s.used -= freed
	if freed >= gcNudgeBytes {
		// Collect now, so the next large allocation reuses these pages
		// (already faulted in) instead of faulting in fresh ones: without it
		// the next upload's allocation usually triggers the GC that frees
		// these, too late to reuse them.
		go runtime.GC()
	}
	return deleted, freed, nil
}

// gcNudgeBytes is how much a delete must free to trigger a collection.
const gcNudgeBytes = 64 << 20

type arrayInfo struct {
	name string
	a    *pdarray.Array
}

func (s *store) list() []arrayInfo {
	s.mu.Lock()
	out := make([]arrayInfo, 0, len(s.arrays))
	for n, a := range s.arrays {
		out = append(out, arrayInfo{n, a})
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (s *store) usage() (used, limit int64, count int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used, s.limit, len(s.arrays)
}
