// Package cudot is the Go binding of cudot, a C library that computes dot products on the CPU or on a
// CUDA GPU with results that are bitwise identical everywhere.
//
// The library is loaded at run time (dlopen on Linux, LoadLibrary on Windows), so programs build
// without it. The first New (or Load) looks for it: the full path in the CUDOT_LIBRARY environment
// variable if set, otherwise "libcudot.so.1" then "libcudot.so" through the normal dlopen search
// ("cudot.dll" on Windows, looked for beside the program and in System32, never in the current folder
// or on PATH). A library of another major version is refused.
//
//	ctx, err := cudot.New(n, cudot.Options{DType: cudot.Float32, Memory: cudot.Auto})
//	if err != nil { ... }
//	defer ctx.Close()
//	x, y := ctx.Float32Inputs() // fill in place: no copies
//	r, err := ctx.Dot()
//
// # Element types and pairs
//
// x has Options.DType and y has Options.YDType (zero: the same as DType); all 36 pairs of Float32,
// Float64, Float16, BFloat16, Int8 and Uint8 work (all but float32*float32 and float64*float64 need
// library 1.1; a 1.0 library refuses them in New). Each side is
// reached through the accessor of its type: XFloat32/YFloat32 give []float32, XFloat64/YFloat64
// []float64, XInt8/YInt8 []int8, XUint8/YUint8 []uint8, and XBool/YBool the same Uint8 buffer as
// []bool for 0/1 data (a mask). Float32Inputs, Float64Inputs, Float16Inputs, BFloat16Inputs,
// Int8Inputs and Uint8Inputs return both sides of a context whose x and y share that type.
//
// Go has no float16 or bfloat16 type, so XFloat16/YFloat16 and XBFloat16/YBFloat16 return []uint16
// holding the bit patterns (IEEE 754 binary16, and bfloat16: the top 16 bits of a float32), with
// nothing copied or converted. Float16bits, Float16frombits, BFloat16bits and BFloat16frombits
// convert between float32 and those patterns (rounding to nearest even in the float32 direction).
//
//	ctx, err := cudot.New(n, cudot.Options{DType: cudot.Float32, YDType: cudot.Uint8})
//	x, mask := ctx.XFloat32(), ctx.YBool() // the sum of x[i] where mask[i]
//
// The accuracy depends on the pair: with a Float64 side the dot is compensated (as if computed in
// twice float64's precision, rounded once); with two integer sides it is the exact integer sum
// (exact up to 2^53, correctly rounded beyond); otherwise every product is exact in float64 and the
// sums are float64 sums.
//
// # Accessors of the wrong type panic
//
// An accessor called on a context whose buffer holds another type panics at the call, with an error
// that matches ErrElementType and names the method, the context's types and the accessors that fit:
//
//	cudot: wrong element type: XFloat64 on a context of float32*uint8: x holds float32, not float64; use XFloat32 and YUint8
//
// The types are fixed by the Options the caller passed to New, so such a call is a bug in the calling
// code, not a condition to handle at run time: Go treats the same kind of mistake the same way (a
// single-value type assertion x.(T), reflect.Value.Float on an int). An error result would put an
// error that cannot happen in correct code into all 20 accessors' signatures (every caller would
// have to check it, and every existing caller would stop compiling); returning nil, as the binding did
// before, let the mistake surface later as an index out of range, far from its cause. Code that does
// not know the types in advance (reading them from flags or a file, say) switches on DType and YDType
// first, as example/main.go does. The types outlive Close: after it, an accessor of the right type
// returns nil and one of the wrong type still panics.
//
// # Distributed dots
//
// The result follows a canonical order: tiles of TileElements elements, one partial sum per tile,
// joined in tile order. TilePartials returns the partials of a range of a Context's elements (as
// opaque bytes, PartialBytes per tile) and JoinPartials joins the partials of a whole vector, so
// pieces of a vector held by different processes, each starting at a multiple of TileElements,
// give the same bits as one Context holding all of it. Any transport carries the bytes (MPI, RPC,
// files); the README shows how. Needs library 1.2.
//
// # Dots on your own arrays
//
// Dot, DotOn, DotAsync and TilePartials (library 1.7) compute on memory the program already has, with
// no Context and no copy: an Array made from a Go slice (Float32Slice, Float64Slice, Float16Slice,
// BFloat16Slice, Int8Slice, Uint8Slice, BoolSlice) or from CUDA memory named by its address
// (DeviceArray), of any element type on either side. Strided gives a view with a stride in elements
// (1, -1 backwards, 0 one element repeated, or any other), checked against the slice so that the
// library never reads outside it. The result is the same bits as Dot on a Host Context holding the
// same values, whoever computes: the CPU for Go memory, the operands' GPU for device memory, on the
// CUDA stream given in Streams.
//
//	r, err := cudot.Dot(cudot.Float32Slice(x), cudot.BoolSlice(mask))
//	r, err = cudot.Dot(cudot.Float64Slice(x).Strided(len(x)-1, len(x), -1), cudot.Float64Slice(y)) // x reversed
//	err = cudot.DotAsync(cudot.Streams{Stream: s}, cudot.DeviceArray(dx, cudot.Float16, n),
//		cudot.DeviceArray(dy, cudot.Float16, n), dResult) // the result lands in device memory, in stream order
//
// RegisterHost page-locks a slice's memory for GPUs to read it fast; UnregisterHost must release it
// before the slice is dropped.
//
// # Contexts with rows
//
// Options.Rows makes buffers of Rows rows of n elements each, row-major (library 1.10). DotEachRow
// and RowDots dot them row by row, each result with the bits of that row's own Dot; Row gives row r of
// an accessor's slice:
//
//	ctx, err := cudot.New(n, cudot.Options{DType: cudot.Float32, Rows: k})
//	x, y := ctx.Float32Inputs() // k*n elements each
//	copy(cudot.Row(ctx, x, 2), rowTwo)
//	scores, err := ctx.RowDots() // k results
//
// # Exact contexts and exact partials
//
// Options.Mode ModeExact (library 1.13) makes a Context whose Dot and DotN return the correctly rounded
// dot, the bits DotExact gives for the same values. Its TilePartials returns one exact partial of
// ExactPartialBytes whatever the range, TilePartialsExact gives one for two Arrays, and
// JoinExactPartials joins any number of them, from pieces cut anywhere and joined in any order, to the
// correctly rounded dot of all their elements:
//
//	ctx, err := cudot.New(n, cudot.Options{DType: cudot.Float64, Mode: cudot.ModeExact})
//	part, err := ctx.TilePartials(0, n) // ExactPartialBytes, whatever n
//	r, err := cudot.JoinExactPartials(append(part, otherParts...))
//
// An exact Context's DotEachRow and RowDots give each row its exact dot, and DotRowsExact and
// DotSegmentsExact do so for rows of Go slices (library 1.14):
//
//	err := cudot.DotRowsExact(cudot.Float32Slice(query), cudot.Float32Slice(table).Strided(0, n, 1), k, 0, n, scores)
//
// # Versions
//
// BindingVersion is the library version this binding was written for (the cudot.h whose API it
// covers); LibraryVersion is the loaded library's. Any library of the same major version loads; an
// older one refuses what it lacks with an error from the call that needs it.
//
// # Lifetime
//
// The slices returned by the input accessors alias memory owned by the library. They are valid until
// Close, and only Close frees that memory. A Context that becomes unreachable without Close is not
// freed, because a slice of it may still be in use (slices of C memory do not keep their Context
// alive): it is counted by Leaked and reported to the function given to SetLeakHandler, and its
// buffers stay allocated until the process exits. So always Close, for example with
// defer ctx.Close(). Never use the slices after Close.
// Do not write into them while a Dot on the same Context runs in another goroutine.
//
// A Context is safe for concurrent use: calls are serialized, and Close waits for a running Dot.
// Close is idempotent. After Close, Dot and DotN return ErrClosed, the input accessors of the
// context's types return nil slices, and Capacity, DType, YDType, Memory and Device keep describing
// the closed context.
package cudot
