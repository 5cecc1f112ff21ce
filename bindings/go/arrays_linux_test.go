package cudot_test

import (
	"errors"
	"syscall"
	"testing"
	"unsafe"

	"cudot.example/cudot"
)

// TestArraysFreedMemory: an address of memory that is gone (a page unmapped again), given as a
// DeviceArray, is answered with ErrInvalidArgument and the library's message, not a crash: without a
// GPU it is taken for host memory, whose first and last elements the library checks it can read.
func TestArraysFreedMemory(t *testing.T) {
	page, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	addr := uintptr(unsafe.Pointer(&page[0]))
	if err := syscall.Munmap(page); err != nil {
		t.Fatal(err)
	}
	gone := cudot.DeviceArray(addr, cudot.Float64, 16)
	_, err = cudot.Dot(gone, gone)
	var e *cudot.Error
	if !errors.Is(err, cudot.ErrInvalidArgument) || !errors.As(err, &e) || e.Message == "" {
		t.Errorf("Dot of unmapped memory: %v; want ErrInvalidArgument with the library's message", err)
	}
}
