package cudot

import (
	"fmt"
	"unsafe"
)

// Input accessors. Each returns a slice of Capacity elements aliasing one of the library's buffers
// (no copy: write the inputs into it in place). The X... methods give x, whose type is DType; the
// Y... methods give y, whose type is YDType. The ...Inputs methods give both at once for a context
// whose x and y share one type. All slices are valid until Close; see the package documentation.
//
// An accessor of another element type than its buffer's panics, with an error that matches
// ErrElementType and names the method, the context's types and the accessor that fits. The element
// types are fixed by the caller's own Options, so a mismatch is a bug at the call site, like a failed
// type assertion; see the package documentation for why this is a panic and not an error result.
// After Close, an accessor of the right type returns nil.
//
// Go has no float16 or bfloat16, so XFloat16, YFloat16, XBFloat16 and YBFloat16 return []uint16 bit
// patterns: convert with Float16bits/Float16frombits and BFloat16bits/BFloat16frombits.

// The bool views assume Go's one-byte bool.
var _ = [1]struct{}{}[unsafe.Sizeof(false)-1]

// accessorSuffix is the part of the accessor names that names a type: XFloat32, Float32Inputs, ...
var accessorSuffix = [...]string{Float32: "Float32", Float64: "Float64", Float16: "Float16",
	BFloat16: "BFloat16", Int8: "Int8", Uint8: "Uint8"}

// fitting names the accessors that do fit this context, for the panic message.
func (c *Context) fitting() string {
	known := func(d DType) bool { return d > 0 && int(d) < len(accessorSuffix) }
	switch {
	case !known(c.dtype) || !known(c.ydtype): // a type from a newer library: no accessor serves it yet
		return "a binding that knows these types"
	case c.dtype == c.ydtype:
		return accessorSuffix[c.dtype] + "Inputs"
	}
	return "X" + accessorSuffix[c.dtype] + " and Y" + accessorSuffix[c.ydtype]
}

// wrongType is the panic value of an accessor called on a context of other element types.
func (c *Context) wrongType(method, detail string) error {
	return fmt.Errorf("%w: %s on a context of %v*%v: %s; use %s", ErrElementType, method, c.dtype, c.ydtype,
		detail, c.fitting())
}

// buffer returns x (y when isY) for the accessor named method, which serves want: it panics when that
// buffer holds another type, and returns nil once the context is closed. The types never change after
// New, so they are checked before taking the lock (and the panic never happens while holding it).
func (c *Context) buffer(method string, isY bool, want DType) unsafe.Pointer {
	side, have := "x", c.dtype
	if isY {
		side, have = "y", c.ydtype
	}
	if have != want {
		panic(c.wrongType(method, fmt.Sprintf("%s holds %v, not %v", side, have, want)))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return nil
	}
	if isY {
		return c.y
	}
	return c.x
}

// pair returns x and y for the ...Inputs accessor named method, which needs both to hold want: it
// panics otherwise, and returns nils once the context is closed.
func (c *Context) pair(method string, want DType) (x, y unsafe.Pointer) {
	if c.dtype != want || c.ydtype != want {
		panic(c.wrongType(method, fmt.Sprintf("it needs x and y both %v", want)))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return nil, nil
	}
	return c.x, c.y
}

// side is the slice of buffer(method, isY, want): what the per-side accessors return.
func side[T any](c *Context, method string, isY bool, want DType) []T {
	return view[T](c.buffer(method, isY, want), c.n)
}

// view is the slice of n Ts at p, or nil when p is nil. With n == 0 and a non-nil p it is empty and
// non-nil.
func view[T any](p unsafe.Pointer, n int) []T {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p), n)
}

// Float32Inputs returns x and y of a context whose x and y are both Float32; it panics otherwise.
func (c *Context) Float32Inputs() (x, y []float32) {
	px, py := c.pair("Float32Inputs", Float32)
	return view[float32](px, c.n), view[float32](py, c.n)
}

// Float64Inputs returns x and y of a context whose x and y are both Float64; it panics otherwise.
func (c *Context) Float64Inputs() (x, y []float64) {
	px, py := c.pair("Float64Inputs", Float64)
	return view[float64](px, c.n), view[float64](py, c.n)
}

// Float16Inputs returns x and y, as binary16 bit patterns, of a context whose x and y are both
// Float16; it panics otherwise.
func (c *Context) Float16Inputs() (x, y []uint16) {
	px, py := c.pair("Float16Inputs", Float16)
	return view[uint16](px, c.n), view[uint16](py, c.n)
}

// BFloat16Inputs returns x and y, as bfloat16 bit patterns, of a context whose x and y are both
// BFloat16; it panics otherwise.
func (c *Context) BFloat16Inputs() (x, y []uint16) {
	px, py := c.pair("BFloat16Inputs", BFloat16)
	return view[uint16](px, c.n), view[uint16](py, c.n)
}

// Int8Inputs returns x and y of a context whose x and y are both Int8; it panics otherwise.
func (c *Context) Int8Inputs() (x, y []int8) {
	px, py := c.pair("Int8Inputs", Int8)
	return view[int8](px, c.n), view[int8](py, c.n)
}

// Uint8Inputs returns x and y of a context whose x and y are both Uint8; it panics otherwise.
func (c *Context) Uint8Inputs() (x, y []uint8) {
	px, py := c.pair("Uint8Inputs", Uint8)
	return view[uint8](px, c.n), view[uint8](py, c.n)
}

// XFloat32 returns x; it panics unless DType is Float32.
func (c *Context) XFloat32() []float32 { return side[float32](c, "XFloat32", false, Float32) }

// YFloat32 returns y; it panics unless YDType is Float32.
func (c *Context) YFloat32() []float32 { return side[float32](c, "YFloat32", true, Float32) }

// XFloat64 returns x; it panics unless DType is Float64.
func (c *Context) XFloat64() []float64 { return side[float64](c, "XFloat64", false, Float64) }

// YFloat64 returns y; it panics unless YDType is Float64.
func (c *Context) YFloat64() []float64 { return side[float64](c, "YFloat64", true, Float64) }

// XFloat16 returns x as binary16 bit patterns; it panics unless DType is Float16.
func (c *Context) XFloat16() []uint16 { return side[uint16](c, "XFloat16", false, Float16) }

// YFloat16 returns y as binary16 bit patterns; it panics unless YDType is Float16.
func (c *Context) YFloat16() []uint16 { return side[uint16](c, "YFloat16", true, Float16) }

// XBFloat16 returns x as bfloat16 bit patterns; it panics unless DType is BFloat16.
func (c *Context) XBFloat16() []uint16 { return side[uint16](c, "XBFloat16", false, BFloat16) }

// YBFloat16 returns y as bfloat16 bit patterns; it panics unless YDType is BFloat16.
func (c *Context) YBFloat16() []uint16 { return side[uint16](c, "YBFloat16", true, BFloat16) }

// XInt8 returns x; it panics unless DType is Int8.
func (c *Context) XInt8() []int8 { return side[int8](c, "XInt8", false, Int8) }

// YInt8 returns y; it panics unless YDType is Int8.
func (c *Context) YInt8() []int8 { return side[int8](c, "YInt8", true, Int8) }

// XUint8 returns x; it panics unless DType is Uint8.
func (c *Context) XUint8() []uint8 { return side[uint8](c, "XUint8", false, Uint8) }

// YUint8 returns y; it panics unless YDType is Uint8.
func (c *Context) YUint8() []uint8 { return side[uint8](c, "YUint8", true, Uint8) }

// XBool returns x as []bool; it panics unless DType is Uint8. It is the same memory as XUint8, for 0/1
// data. Every byte read through it must be 0 or 1 (Go gives any other byte no meaning as a bool): fill
// the buffer before reading it (its contents after New are unspecified), and write only 0 or 1 through
// the []uint8 view of the same buffer.
func (c *Context) XBool() []bool { return side[bool](c, "XBool", false, Uint8) }

// YBool returns y as []bool; it panics unless YDType is Uint8. The rules of XBool apply. DType Float32
// with YDType Uint8 and YBool gives a float vector times a mask.
func (c *Context) YBool() []bool { return side[bool](c, "YBool", true, Uint8) }
