//go:build !windows && !cgo

package cudot

import (
	"fmt"
	"unsafe"
)

// Without cgo there is no dlopen: the package still builds, and New reports why it cannot work.

var libraryNames = []string{"libcudot.so.1"}

func openLibrary(string) error {
	return fmt.Errorf("%w: this program was built with CGO_ENABLED=0; the Linux binding needs cgo", ErrLoad)
}

// loadHint: none, as openLibrary's error already says what is missing (cgo).
func loadHint(bool) string { return "" }

func libVersion() uint32 { return 0 }
func libInit(uint64, config) (unsafe.Pointer, Status, string) {
	return nil, StatusInternal, "not loaded"
}
func libGetInputs(unsafe.Pointer) (x, y unsafe.Pointer, st Status, msg string) {
	return nil, nil, StatusInternal, ""
}
func libDot(unsafe.Pointer, uint64, bool) (float64, Status, string) { return 0, StatusInternal, "" }
func libDeinit(unsafe.Pointer) (Status, string)                     { return StatusInternal, "" }
func libGetMemory(unsafe.Pointer, *int32, *int32) (Status, string)  { return StatusInternal, "" }
func libGetDTypes(unsafe.Pointer, *int32, *int32) (Status, bool, string) {
	return StatusInternal, true, ""
}
func libStatusString(Status) string { return "" }

func libHasPartials() bool { return false }
func libTilePartials(unsafe.Pointer, uint64, uint64, []byte) (Status, string) {
	return StatusInternal, ""
}
func libJoinPartials(DType, DType, []byte) (float64, Status, string) {
	return 0, StatusInternal, "not loaded"
}

func libHasArrays() bool                                            { return false }
func libHasRows() bool                                              { return false }
func libDotRows(*rowsCall, []float64) (Status, string)              { return StatusInternal, "" }
func libDotArrays(*arraysCall) (float64, Status, string)            { return 0, StatusInternal, "" }
func libDotArraysAsync(*arraysCall, uintptr) (Status, string)       { return StatusInternal, "" }
func libTilePartialsArrays(*arraysCall, []byte) (Status, string)    { return StatusInternal, "" }
func libHostRange(hostOp, unsafe.Pointer, uintptr) (Status, string) { return StatusInternal, "" }

func libHasContextRows() bool { return false }
func libGetRows(unsafe.Pointer, *uint64, *uint64) (Status, bool, string) {
	return StatusOK, false, ""
}
func libDotEachRow(unsafe.Pointer, uint64, uint64, []float64) (Status, string) {
	return StatusInternal, ""
}

func libHasExact() bool                                        { return false }
func libGetMode(unsafe.Pointer, *int32) (Status, bool, string) { return StatusOK, false, "" }
func libJoinExactPartials([]byte) (float64, Status, string)    { return 0, StatusInternal, "not loaded" }
