//go:build windows || !cgo

package cudatest

// Without cgo (and on Windows, where the binding's tests run without it) there is no CUDA here: every
// call fails with ErrUnavailable and the GPU tests skip.

func Open() error                          { return ErrUnavailable }
func Malloc(int) (uintptr, error)          { return 0, ErrUnavailable }
func Free(uintptr) error                   { return ErrUnavailable }
func CopyToDevice(uintptr, []byte) error   { return ErrUnavailable }
func CopyFromDevice([]byte, uintptr) error { return ErrUnavailable }
func NewStream() (uintptr, error)          { return 0, ErrUnavailable }
func DestroyStream(uintptr) error          { return ErrUnavailable }
func Synchronize(uintptr) error            { return ErrUnavailable }
