package cudot

import "unsafe"

// Input accessors. Each returns a slice of Capacity elements aliasing one of the library's buffers
// (no copy: write the inputs into it in place), or nil when the context is closed or that buffer has
// another element type. The X... methods give x, whose type is DType; the Y... methods give y, whose
// type is YDType. The ...Inputs methods give both at once for a context whose x and y share one type,
// and nil slices for any other. All slices are valid until Close; see the package documentation.
//
// Go has no float16 or bfloat16, so XFloat16, YFloat16, XBFloat16 and YBFloat16 return []uint16 bit
// patterns: convert with Float16bits/Float16frombits and BFloat16bits/BFloat16frombits.

// The bool views assume Go's one-byte bool.
var _ = [1]struct{}{}[unsafe.Sizeof(false)-1]

// buffer returns x (y when isY) if the context is open and that buffer holds want, else nil.
func (c *Context) buffer(isY bool, want DType) unsafe.Pointer {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.h == nil:
		return nil
	case isY && c.ydtype == want:
		return c.y
	case !isY && c.dtype == want:
		return c.x
	}
	return nil
}

// pair returns x and y if the context is open and both hold want, else nils.
func (c *Context) pair(want DType) (x, y unsafe.Pointer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil || c.dtype != want || c.ydtype != want {
		return nil, nil
	}
	return c.x, c.y
}

// view is the slice of n Ts at p, or nil when p is nil. With n == 0 and a non-nil p it is empty and
// non-nil.
func view[T any](p unsafe.Pointer, n int) []T {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p), n)
}

// Float32Inputs returns x and y of a context whose x and y are both Float32; nil slices otherwise.
func (c *Context) Float32Inputs() (x, y []float32) {
	px, py := c.pair(Float32)
	return view[float32](px, c.n), view[float32](py, c.n)
}

// Float64Inputs returns x and y of a context whose x and y are both Float64; nil slices otherwise.
func (c *Context) Float64Inputs() (x, y []float64) {
	px, py := c.pair(Float64)
	return view[float64](px, c.n), view[float64](py, c.n)
}

// Float16Inputs returns x and y, as binary16 bit patterns, of a context whose x and y are both
// Float16; nil slices otherwise.
func (c *Context) Float16Inputs() (x, y []uint16) {
	px, py := c.pair(Float16)
	return view[uint16](px, c.n), view[uint16](py, c.n)
}

// BFloat16Inputs returns x and y, as bfloat16 bit patterns, of a context whose x and y are both
// BFloat16; nil slices otherwise.
func (c *Context) BFloat16Inputs() (x, y []uint16) {
	px, py := c.pair(BFloat16)
	return view[uint16](px, c.n), view[uint16](py, c.n)
}

// Int8Inputs returns x and y of a context whose x and y are both Int8; nil slices otherwise.
func (c *Context) Int8Inputs() (x, y []int8) {
	px, py := c.pair(Int8)
	return view[int8](px, c.n), view[int8](py, c.n)
}

// Uint8Inputs returns x and y of a context whose x and y are both Uint8; nil slices otherwise.
func (c *Context) Uint8Inputs() (x, y []uint8) {
	px, py := c.pair(Uint8)
	return view[uint8](px, c.n), view[uint8](py, c.n)
}

// XFloat32 returns x if DType is Float32, else nil.
func (c *Context) XFloat32() []float32 { return view[float32](c.buffer(false, Float32), c.n) }

// YFloat32 returns y if YDType is Float32, else nil.
func (c *Context) YFloat32() []float32 { return view[float32](c.buffer(true, Float32), c.n) }

// XFloat64 returns x if DType is Float64, else nil.
func (c *Context) XFloat64() []float64 { return view[float64](c.buffer(false, Float64), c.n) }

// YFloat64 returns y if YDType is Float64, else nil.
func (c *Context) YFloat64() []float64 { return view[float64](c.buffer(true, Float64), c.n) }

// XFloat16 returns x as binary16 bit patterns if DType is Float16, else nil.
func (c *Context) XFloat16() []uint16 { return view[uint16](c.buffer(false, Float16), c.n) }

// YFloat16 returns y as binary16 bit patterns if YDType is Float16, else nil.
func (c *Context) YFloat16() []uint16 { return view[uint16](c.buffer(true, Float16), c.n) }

// XBFloat16 returns x as bfloat16 bit patterns if DType is BFloat16, else nil.
func (c *Context) XBFloat16() []uint16 { return view[uint16](c.buffer(false, BFloat16), c.n) }

// YBFloat16 returns y as bfloat16 bit patterns if YDType is BFloat16, else nil.
func (c *Context) YBFloat16() []uint16 { return view[uint16](c.buffer(true, BFloat16), c.n) }

// XInt8 returns x if DType is Int8, else nil.
func (c *Context) XInt8() []int8 { return view[int8](c.buffer(false, Int8), c.n) }

// YInt8 returns y if YDType is Int8, else nil.
func (c *Context) YInt8() []int8 { return view[int8](c.buffer(true, Int8), c.n) }

// XUint8 returns x if DType is Uint8, else nil.
func (c *Context) XUint8() []uint8 { return view[uint8](c.buffer(false, Uint8), c.n) }

// YUint8 returns y if YDType is Uint8, else nil.
func (c *Context) YUint8() []uint8 { return view[uint8](c.buffer(true, Uint8), c.n) }

// XBool returns x as []bool if DType is Uint8, else nil: the same memory as XUint8, for 0/1 data.
// Every byte read through it must be 0 or 1 (Go gives any other byte no meaning as a bool): fill the
// buffer before reading it (its contents after New are unspecified), and write only 0 or 1 through
// the []uint8 view of the same buffer.
func (c *Context) XBool() []bool { return view[bool](c.buffer(false, Uint8), c.n) }

// YBool returns y as []bool if YDType is Uint8, else nil; the rules of XBool apply. DType Float32
// with YDType Uint8 and YBool gives a float vector times a mask.
func (c *Context) YBool() []bool { return view[bool](c.buffer(true, Uint8), c.n) }
