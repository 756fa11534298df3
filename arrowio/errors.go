package arrowio

import "fmt"

// ErrKind classifies an arrowio error so that the server can map it to its
// error registry.
type ErrKind uint8

const (
	// ErrValue: a bad argument (unknown column, bad option, lengths differ).
	ErrValue ErrKind = iota + 1
	// ErrType: a column type with no pdarray dtype.
	ErrType
	// ErrData: a file that is corrupt, inconsistent, or holds nulls the
	// null policy refuses.
	ErrData
	// ErrIO: the operating system failed a read or write.
	ErrIO
	// ErrMemory: the read would take more memory than the room it was given.
	ErrMemory
)

// Error is an arrowio failure with a user-facing message.
type Error struct {
	Kind ErrKind
	Msg  string
}

func (e *Error) Error() string { return "arrowio: " + e.Msg }

func errorf(kind ErrKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
