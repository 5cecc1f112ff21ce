// Package cudatest gives the binding's tests the few CUDA calls they need to make device memory and
// streams of their own: the driver API (libcuda.so.1, installed with every NVIDIA driver), opened at
// run time, so that the test binary builds and runs on machines without CUDA (Open then fails and the
// GPU tests skip). Every call runs in device 0's primary context, the one cudot uses, pushed and popped
// in the same C call (a goroutine may change OS threads between two calls). Not part of the API.
package cudatest

import "errors"

// ErrUnavailable is matched by Open's error where CUDA cannot be had (no driver, no device, Windows,
// a build without cgo).
var ErrUnavailable = errors.New("cudatest: no CUDA driver or device")
