package csvio

import "fmt"

// ErrKind classifies a csvio error so that the server can map it to its
// error registry (as it does arrowio's).
type ErrKind uint8

const (
	// ErrValue: a bad argument (an option, a Columns or DTypes entry that
	// names no column, columns of different lengths, a column name Write
	// cannot write).
	ErrValue ErrKind = iota + 1
	// ErrData: a file that is not valid CSV in Arkouda's format, or holds
	// a value its column's type cannot read.
	ErrData
	// ErrIO: the writer failed.
	ErrIO
	// ErrMemory: the caller's Alloc refused a column's memory.
	ErrMemory
)

// Error is a csvio failure with a user-facing message. Err is the error
// it wraps (the writer's or Alloc's), nil when csvio found the fault.
type Error struct {
	Kind ErrKind
	Msg  string
	Err  error
}

func (e *Error) Error() string { return "csvio: " + e.Msg }

// Unwrap returns the wrapped error, so errors.Is and errors.As see the
// writer's or the accountant's own error.
func (e *Error) Unwrap() error { return e.Err }

func errorf(kind ErrKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// maxQuote is how many bytes of a bad value a message quotes: enough to
// recognise it, not a whole runaway field.
const maxQuote = 40

// quote is b for a message: Go-quoted, cut at maxQuote bytes.
func quote(b []byte) string {
	if len(b) > maxQuote {
		return fmt.Sprintf("%q...", b[:maxQuote])
	}
	return fmt.Sprintf("%q", b)
}
