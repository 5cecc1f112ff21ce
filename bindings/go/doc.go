// Package cudot is the Go binding of cudot, a C library that computes dot products on the CPU or on a
// CUDA GPU with results that are bitwise identical everywhere.
//
// The library is loaded at run time (dlopen on Linux, LoadLibrary on Windows), so programs build
// without it. The first New (or Load) looks for it: the full path in the CUDOT_LIBRARY environment
// variable if set, otherwise "libcudot.so.1" then "libcudot.so" through the normal dlopen search
// ("cudot.dll" on Windows). A library of another major version is refused.
//
//	ctx, err := cudot.New(n, cudot.Options{DType: cudot.Float32, Memory: cudot.Auto})
//	if err != nil { ... }
//	defer ctx.Close()
//	x, y := ctx.Float32Inputs() // fill in place: no copies
//	r, err := ctx.Dot()
//
// # Lifetime
//
// The slices returned by Float32Inputs and Float64Inputs alias memory owned by the library. They are
// valid until Close, and Close (explicit, or the finalizer of a forgotten Context) frees that memory.
// A slice does not keep its Context alive: keep the Context reachable for as long as you use the
// slices, for example with defer ctx.Close() or runtime.KeepAlive(ctx). Never use them after Close.
// Do not write into them while a Dot on the same Context runs in another goroutine.
//
// A Context is safe for concurrent use: calls are serialized, and Close waits for a running Dot.
// Close is idempotent. After Close, Dot and DotN return ErrClosed, the input accessors return nil
// slices, and Capacity, DType, Memory and Device keep describing the closed context.
package cudot
