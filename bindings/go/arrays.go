package cudot

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Dots on the caller's own memory (library 1.7): Go slices, and CUDA device, managed or page-locked
// memory named by its address. No Context, and nothing is copied: the library reads the caller's
// elements in place, during the call (Dot, DotOn, TilePartials) or in stream order (DotAsync). The
// result is the same bits as Dot on a Host Context holding the same values.

// Array is one operand of a dot on the caller's own memory: n elements of one DType, element i at
// index first + i*stride of the memory it was made from. Make one with Float32Slice ... BoolSlice (a
// Go slice: all its elements, stride 1) or DeviceArray (a CUDA address), and view part of it with
// Strided. An Array made from a slice keeps the slice reachable; it holds no copy of it, so changes to
// the slice are seen by the next dot. The zero Array is not usable (ErrInvalidArgument).
type Array struct {
	base   unsafe.Pointer // a Go slice's element 0 (nil for device memory or an empty slice)
	addr   uintptr        // device memory: the address given to DeviceArray
	length int            // the Go slice's length; -1 for device memory, whose extent CUDA knows
	dtype  DType
	first  int // index of the view's element 0 in the memory
	n      int
	stride int // in elements: 1 contiguous, -1 backwards, 0 one element repeated
}

// hostArray is the Array of all n elements of a Go slice whose element 0 is at p (nil when n is 0).
func hostArray(p unsafe.Pointer, n int, dtype DType) Array {
	return Array{base: p, length: n, dtype: dtype, n: n, stride: 1}
}

// first0 is the address of s[0], or nil for an empty slice.
func first0[E any](s []E) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// Float32Slice is the Array of all elements of x.
func Float32Slice(x []float32) Array { return hostArray(first0(x), len(x), Float32) }

// Float64Slice is the Array of all elements of x.
func Float64Slice(x []float64) Array { return hostArray(first0(x), len(x), Float64) }

// Float16Slice is the Array of all elements of bits, IEEE 754 binary16 bit patterns (Float16bits).
func Float16Slice(bits []uint16) Array { return hostArray(first0(bits), len(bits), Float16) }

// BFloat16Slice is the Array of all elements of bits, bfloat16 bit patterns (BFloat16bits).
func BFloat16Slice(bits []uint16) Array { return hostArray(first0(bits), len(bits), BFloat16) }

// Int8Slice is the Array of all elements of x.
func Int8Slice(x []int8) Array { return hostArray(first0(x), len(x), Int8) }

// Uint8Slice is the Array of all elements of x.
func Uint8Slice(x []uint8) Array { return hostArray(first0(x), len(x), Uint8) }

// BoolSlice is the Array of all elements of x, as Uint8 0/1 data (a mask).
func BoolSlice(x []bool) Array { return hostArray(first0(x), len(x), Uint8) }

// DeviceArray is the Array of n elements of dtype at addr, stride 1: memory that CUDA allocated
// (cudaMalloc, cudaMallocAsync, cudaMallocManaged, cudaMallocHost/cudaHostAlloc), given as its address
// (a CUdeviceptr, or a pointer turned into a uintptr). The library finds out where it lives and
// refuses an operand that runs past its allocation. Go does not check anything here but n >= 0.
func DeviceArray(addr uintptr, dtype DType, n int) Array {
	return Array{addr: addr, length: -1, dtype: dtype, n: n, stride: 1}
}

// Strided is the view of n elements of the memory a was made from, element i at index first +
// i*stride of it (in elements, not bytes): stride 1 is contiguous, -1 runs backwards (first is then
// the last index in memory: Strided(len(s)-1, len(s), -1) reverses s, like BLAS with incx < 0), 0
// repeats element first n times, and 3 takes every third. first and stride are relative to the
// memory a was made from, not to a's own view. For a slice, every element of the view must lie in it
// (checked by the dot, ErrInvalidArgument otherwise, so the library never reads outside the slice);
// for device memory the library checks the allocation.
func (a Array) Strided(first, n, stride int) Array {
	a.first, a.n, a.stride = first, n, stride
	return a
}

// Len is the number of elements of the view.
func (a Array) Len() int { return a.n }

// DType is the element type.
func (a Array) DType() DType { return a.dtype }

// elementSize is the size in bytes of one element of d, or 0 for an unknown type.
func elementSize(d DType) int {
	switch d {
	case Float32:
		return 4
	case Float64:
		return 8
	case Float16, BFloat16:
		return 2
	case Int8, Uint8:
		return 1
	}
	return 0
}

// operand is an Array resolved for the C call: element 0 of the view as a Go pointer (p) or as a
// device address (addr), never both.
type operand struct {
	p      unsafe.Pointer
	addr   uintptr
	dtype  DType
	stride int64
}

// resolve checks a's view and returns its element 0; name ("x" or "y") goes into the message.
func (a Array) resolve(name string) (operand, error) {
	size := elementSize(a.dtype)
	switch {
	case a.dtype == 0:
		return operand{}, fmt.Errorf("%s is the zero Array (make Arrays with Float32Slice ... DeviceArray)", name)
	case size == 0:
		return operand{}, fmt.Errorf("%s has the unknown element type %d", name, int32(a.dtype))
	case a.n < 0:
		return operand{}, fmt.Errorf("%s has a negative length %d", name, a.n)
	case a.first < 0:
		return operand{}, fmt.Errorf("%s starts at a negative index %d", name, a.first)
	}
	op := operand{dtype: a.dtype, stride: int64(a.stride)}
	if a.n == 0 {
		return op, nil // nothing is read: data stays NULL
	}
	if a.length < 0 {
		op.addr = a.addr + uintptr(a.first)*uintptr(size)
		return op, nil
	}
	if !a.fits() {
		return operand{}, fmt.Errorf("%s: %d elements from index %d, stride %d, leave its slice of %d elements",
			name, a.n, a.first, a.stride, a.length)
	}
	op.p = unsafe.Add(a.base, a.first*size)
	return op, nil
}

// fits reports whether indices first and first + (n-1)*stride (and so all between) lie in the slice;
// n > 0. Written with divisions so that no product can overflow.
func (a Array) fits() bool {
	if a.first >= a.length {
		return false
	}
	switch {
	case a.stride > 0:
		return a.n-1 <= (a.length-1-a.first)/a.stride
	case a.stride < 0:
		return a.n-1 <= a.first/-a.stride
	}
	return true
}

// Streams names the CUDA streams of a dot, by their handle values (a cudaStream_t or CUstream as a
// uintptr). The zero value queues on the legacy default stream and waits for nothing else. They
// matter only where a GPU computes (device or managed operands, and page-locked host memory from
// 2^20 elements); the CPU ignores them.
type Streams struct {
	// Stream is the stream of the operands' GPU the dot is queued on, after everything queued there
	// before the call: 0 the legacy default stream, StreamLegacy and StreamPerThread those streams.
	Stream uintptr
	// XReady and YReady, if not 0, are streams on which x and y were written (a producer's stream):
	// the dot waits for the work queued on them so far. StreamLegacy and StreamPerThread name those.
	XReady, YReady uintptr
}

// CUDA's own handle values of its special streams (cudaStreamLegacy, cudaStreamPerThread).
const (
	StreamLegacy    uintptr = 1
	StreamPerThread uintptr = 2
)

// arraysCall is one dot of two resolved operands, what the lib_* functions pass on to the library.
type arraysCall struct {
	n       uint64
	x, y    operand
	streams Streams
	mode    Mode
}

// errNoArrays answers a call of this file on a library older than 1.7.
func errNoArrays(op string) error {
	return &Error{Op: op, Status: StatusUnsupported,
		Message: "the loaded library has no cudot_dot_arrays (dots of own arrays need 1.7)"}
}

// prepare loads the library and checks x and y for op.
func prepare(op string, x, y Array, s Streams) (*arraysCall, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	if x.n != y.n {
		return nil, &Error{Op: op, Status: StatusInvalidArgument,
			Message: fmt.Sprintf("x has %d elements and y %d", x.n, y.n)}
	}
	ox, err := x.resolve("x")
	if err == nil {
		var oy operand
		if oy, err = y.resolve("y"); err == nil {
			if !libHasArrays() {
				return nil, errNoArrays(op)
			}
			return &arraysCall{n: uint64(x.n), x: ox, y: oy, streams: s}, nil
		}
	}
	return nil, &Error{Op: op, Status: StatusInvalidArgument, Message: err.Error()}
}

// Dot returns the dot product of x and y, which must have the same length: bit for bit what Dot on a
// Host Context holding the same values returns, whoever computes (see DotOn). It blocks until the
// result is there. Empty operands give +0 and nothing is read. x and y may be the same memory.
func Dot(x, y Array) (float64, error) { return DotOn(Streams{}, x, y) }

// DotOn is Dot with the CUDA streams of s, for device or managed operands (and page-locked host
// memory that a GPU reads): it is queued on s.Stream and waits for its result. Who computes: the
// operands' GPU for device and managed memory (both operands on one GPU), the CPU for ordinary Go
// memory, and for page-locked memory (RegisterHost) the GPU from 2^20 elements on. Errors are *Error
// with the library's message: ErrInvalidArgument (lengths differ, a view outside its slice, a device
// operand past its allocation or, without a GPU, device memory the CPU cannot read), ErrNoDevice (a
// device or managed operand with no usable GPU), ErrUnsupported (operands on two GPUs, a stream being
// captured, a library older than 1.7), ErrCUDA.
func DotOn(s Streams, x, y Array) (float64, error) { return dotIn("Dot", s, x, y, ModeCanonical) }

// DotExact returns the correctly rounded dot product of x and y (library 1.11, cudot_mode's
// CUDOT_MODE_EXACT): the exact sum of the exact products, rounded once to the nearest float64, ties to
// even, whatever the order of the elements. Products beyond the float64 range count with their exact
// value; a sum that rounds past the largest float64 is an infinity, an exact zero +0. Special values
// follow IEEE as if the sum were exact (NaN for a NaN product, Inf*0, or infinite products of both
// signs). The CPU computes Go slices, the GPU device and managed memory (library 1.12; 1.11 returns
// ErrUnsupported for them, older libraries for every operand). Otherwise as Dot.
func DotExact(x, y Array) (float64, error) { return DotExactOn(Streams{}, x, y) }

// DotExactOn is DotExact with the CUDA streams of s (see DotOn).
func DotExactOn(s Streams, x, y Array) (float64, error) { return dotIn("DotExact", s, x, y, ModeExact) }

func dotIn(op string, s Streams, x, y Array, mode Mode) (float64, error) {
	c, err := prepare(op, x, y, s)
	if err != nil {
		return 0, err
	}
	c.mode = mode
	r, st, msg := libDotArrays(c)
	keepAlive(x, y)
	if st != StatusOK {
		return 0, statusError(op, st, msg)
	}
	return r, nil
}

// DotAsync queues the dot of x and y on s.Stream and returns without waiting: the result, one
// float64, is written in stream order to result, the address of 8-byte aligned device, managed or
// mapped page-locked memory that the operands' GPU can write. The operands must be ones a GPU computes
// (device, managed, page-locked). Ordinary Go memory is refused (ErrUnsupported): a GPU would read it
// after DotAsync returned, when Go may have moved on. An error means nothing was queued.
func DotAsync(s Streams, x, y Array, result uintptr) error {
	const op = "DotAsync"
	c, err := prepare(op, x, y, s)
	if err != nil {
		return err
	}
	if c.x.p != nil || c.y.p != nil {
		return &Error{Op: op, Status: StatusUnsupported,
			Message: "an operand is a Go slice, which the GPU could read after DotAsync returned; use Dot or DotOn"}
	}
	st, msg := libDotArraysAsync(c, result)
	return statusError(op, st, msg)
}

// TilePartials returns the partial sums of the tiles of x and y (element 0 of the views starting a
// tile), as Context.TilePartials gives them for a context: ceil(n / TileElements) partials of
// PartialBytes each, for JoinPartials with the DTypes of x and y. It blocks. Pieces of a vector held
// in separate slices, every piece but the last a multiple of TileElements long, join to the bits of
// one Dot over the whole vector.
func TilePartials(x, y Array) ([]byte, error) { return TilePartialsOn(Streams{}, x, y) }

// TilePartialsOn is TilePartials with the CUDA streams of s (see DotOn).
func TilePartialsOn(s Streams, x, y Array) ([]byte, error) {
	return tilePartialsIn("TilePartials", s, x, y, ModeCanonical)
}

// TilePartialsExact returns the one exact partial of x and y (library 1.13): ExactPartialBytes bytes
// holding the exact sum of their products, unrounded, for JoinExactPartials. Exact partials of any
// pieces of a vector, cut anywhere and joined in any order (with those of Contexts in ModeExact too),
// give the bits of DotExact over the whole vector. Empty operands give the partial of an empty sum.
// The CPU computes Go slices, the GPU device and managed memory. Otherwise as TilePartials; a library
// older than 1.13 answers ErrUnsupported.
func TilePartialsExact(x, y Array) ([]byte, error) { return TilePartialsExactOn(Streams{}, x, y) }

// TilePartialsExactOn is TilePartialsExact with the CUDA streams of s (see DotOn).
func TilePartialsExactOn(s Streams, x, y Array) ([]byte, error) {
	return tilePartialsIn("TilePartialsExact", s, x, y, ModeExact)
}

func tilePartialsIn(op string, s Streams, x, y Array, mode Mode) ([]byte, error) {
	c, err := prepare(op, x, y, s)
	if err != nil {
		return nil, err
	}
	size := (x.n + TileElements - 1) / TileElements * PartialBytes
	if mode == ModeExact {
		// Checked here: out is sized for the exact partial, which a library before 1.13 does not write.
		if !libHasExact() {
			return nil, errNoExact(op)
		}
		size = ExactPartialBytes
	}
	c.mode = mode
	out := make([]byte, size)
	st, msg := libTilePartialsArrays(c, out)
	keepAlive(x, y)
	if st != StatusOK {
		return nil, statusError(op, st, msg)
	}
	return out, nil
}

// keepAlive keeps the slices of x and y reachable until here: the C call had only their addresses.
func keepAlive(x, y Array) {
	runtime.KeepAlive(x.base)
	runtime.KeepAlive(y.base)
}

// Element is a Go element type of the slices RegisterHost takes.
type Element interface {
	~float32 | ~float64 | ~uint16 | ~int8 | ~uint8 | ~bool
}

// RegisterHost page-locks the memory of s (all len(s) elements) and maps it for every GPU, once, so
// that dots on Arrays in it run on a GPU at the bus's speed (from 2^20 elements) and DotAsync may read
// it. Registering costs about as much as reading the memory several times: do it once for memory used
// by many dots, never per dot. Without a GPU it only records the range.
//
// The registration is of the memory, not of the slice: call UnregisterHost(s) before s is dropped or
// reused, and keep s reachable until then (runtime.KeepAlive(s) after the last use). Go's garbage
// collector does not move heap memory today, and a slice passed here lives on the heap, but memory the
// collector frees while still registered would stay page-locked, and a later registration of memory
// reusing it would fail. An empty slice, or memory overlapping a registered range, is
// ErrInvalidArgument.
func RegisterHost[E Element](s []E) error { return hostRange(hostRegister, s) }

// UnregisterHost releases the registration RegisterHost made of s (the same slice, or one starting
// at the same element). Wait for every dot that reads s (DotAsync's stream) first.
func UnregisterHost[E Element](s []E) error { return hostRange(hostUnregister, s) }

// hostOp says what hostRange does with a slice's memory.
type hostOp int

const (
	hostRegister   hostOp = 0 // cudot_register_host
	hostUnregister hostOp = 1 // cudot_unregister_host
)

var hostOpNames = [...]string{hostRegister: "RegisterHost", hostUnregister: "UnregisterHost"}

// hostRange registers or unregisters the memory of s.
func hostRange[E Element](op hostOp, s []E) error {
	name := hostOpNames[op]
	if err := Load(); err != nil {
		return err
	}
	if len(s) == 0 {
		return &Error{Op: name, Status: StatusInvalidArgument, Message: "an empty slice has no memory to register or unregister"}
	}
	if !libHasArrays() {
		return errNoArrays(name)
	}
	var e E
	st, msg := libHostRange(op, unsafe.Pointer(&s[0]), uintptr(len(s))*unsafe.Sizeof(e))
	return statusError(name, st, msg)
}
