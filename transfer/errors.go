package transfer

import "fmt"

// Code is a stable error code that crosses the wire. The registry is
// testdata/errors.json; TestErrorRegistry keeps this table equal to it.
type Code uint16

// The registry. Never renumber; only append.
const (
	OK                 Code = 0
	Internal           Code = 1
	MalformedRequest   Code = 2
	UnsupportedVersion Code = 3
	AuthFailed         Code = 4
	UnknownCommand     Code = 5
	MissingArgument    Code = 6
	ArgumentType       Code = 7
	ArgumentValue      Code = 8
	UnknownArray       Code = 9
	UnsupportedDType   Code = 10
	PayloadLength      Code = 11
	FrameCount         Code = 12
	FrameTooLarge      Code = 13
	OutOfMemory        Code = 14
	NameInUse          Code = 15
	IndexOutOfRange    Code = 16
	InvalidData        Code = 17
	ShuttingDown       Code = 18
	Overflow           Code = 19
	Restoring          Code = 20
	TooManyStreams     Code = 21
	Canceled           Code = 22
	NotDistributed     Code = 23
	LocaleFailed       Code = 24
)

var codeNames = map[Code]string{
	OK:                 "OK",
	Internal:           "INTERNAL",
	MalformedRequest:   "MALFORMED_REQUEST",
	UnsupportedVersion: "UNSUPPORTED_VERSION",
	AuthFailed:         "AUTH_FAILED",
	UnknownCommand:     "UNKNOWN_COMMAND",
	MissingArgument:    "MISSING_ARGUMENT",
	ArgumentType:       "ARGUMENT_TYPE",
	ArgumentValue:      "ARGUMENT_VALUE",
	UnknownArray:       "UNKNOWN_ARRAY",
	UnsupportedDType:   "UNSUPPORTED_DTYPE",
	PayloadLength:      "PAYLOAD_LENGTH",
	FrameCount:         "FRAME_COUNT",
	FrameTooLarge:      "FRAME_TOO_LARGE",
	OutOfMemory:        "OUT_OF_MEMORY",
	NameInUse:          "NAME_IN_USE",
	IndexOutOfRange:    "INDEX_OUT_OF_RANGE",
	InvalidData:        "INVALID_DATA",
	ShuttingDown:       "SHUTTING_DOWN",
	Overflow:           "OVERFLOW",
	Restoring:          "RESTORING",
	TooManyStreams:     "TOO_MANY_STREAMS",
	Canceled:           "CANCELED",
	NotDistributed:     "NOT_DISTRIBUTED",
	LocaleFailed:       "LOCALE_FAILED",
}

// String returns the registry name of c ("UNKNOWN_ARRAY").
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("CODE_%d", uint16(c))
}

// Error is an error with a registry code; it is what a failed request
// replies with, and what the Go client returns for an error reply.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Code.String() + ": " + e.Message }

// Errorf makes an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
