package cudot

import (
	"errors"
	"fmt"
)

// Status is a cudot_status value returned by the C library.
type Status int32

// The statuses of cudot.h. Their values are fixed by the C ABI.
const (
	StatusOK              Status = 0
	StatusInvalidArgument Status = 1
	StatusOutOfMemory     Status = 2
	StatusNoDevice        Status = 3
	StatusUnsupported     Status = 4
	StatusCUDA            Status = 5
	StatusInternal        Status = 6
)

var statusNames = [...]string{
	"CUDOT_OK",
	"CUDOT_ERROR_INVALID_ARGUMENT",
	"CUDOT_ERROR_OUT_OF_MEMORY",
	"CUDOT_ERROR_NO_DEVICE",
	"CUDOT_ERROR_UNSUPPORTED",
	"CUDOT_ERROR_CUDA",
	"CUDOT_ERROR_INTERNAL",
}

// String gives the same name as cudot_status_string, without needing the library loaded.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "CUDOT_ERROR_UNKNOWN"
}

// Error is a failure reported by the library (or refused by the binding before reaching it, with the
// status the library would have given). Use errors.As to read Status and Message.
type Error struct {
	Op      string // the Go method that failed, e.g. "New" or "DotN"
	Status  Status
	Message string // the library's text from cudot_last_error; may be empty
}

func (e *Error) Error() string {
	s := "cudot: "
	if e.Op != "" {
		s += e.Op + ": "
	}
	s += e.Status.String()
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is makes errors.Is(err, ErrNoDevice) and friends match any *Error of that status: a sentinel is an
// *Error with only a status, so a target with an Op or Message set must match exactly instead.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Message == "" && t.Status == e.Status
}

// Sentinels for errors.Is, one per failure status.
var (
	ErrInvalidArgument = &Error{Status: StatusInvalidArgument}
	ErrOutOfMemory     = &Error{Status: StatusOutOfMemory}
	ErrNoDevice        = &Error{Status: StatusNoDevice}
	ErrUnsupported     = &Error{Status: StatusUnsupported}
	ErrCUDA            = &Error{Status: StatusCUDA}
	ErrInternal        = &Error{Status: StatusInternal}
)

// Errors that come from the binding, not from a library status.
var (
	// ErrClosed is returned by methods of a Context after Close.
	ErrClosed = errors.New("cudot: context is closed")
	// ErrLoad wraps every failure to find or load the library (including a wrong major version).
	ErrLoad = errors.New("cudot: cannot load the library")
	// ErrVersion is also matched when the loaded library has another major version.
	ErrVersion = errors.New("cudot: library major version mismatch")
	// ErrElementType is matched by the value an input accessor panics with when it does not serve
	// its buffer's element type (e.g. XFloat64 of a Float32 context).
	ErrElementType = errors.New("cudot: wrong element type")
)

func statusError(op string, st Status, msg string) error {
	if st == StatusOK {
		return nil
	}
	return &Error{Op: op, Status: st, Message: msg}
}

// versionError wraps both ErrLoad and ErrVersion; Go 1.19 has no multi-%w, hence the small type.
type versionError struct{ got uint32 }

func (e *versionError) Error() string {
	return fmt.Sprintf("%v: library is version %d.%d.%d, this binding needs major version %d",
		ErrVersion, e.got/10000, e.got/100%100, e.got%100, bindingMajor)
}
func (e *versionError) Is(target error) bool { return target == ErrLoad || target == ErrVersion }
