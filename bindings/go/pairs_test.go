package cudot_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"unsafe"

	"cudot.example/cudot"
)

// addr is the address of a slice's first element, or nil for a nil slice (also for a non-nil empty
// one, whose data pointer is the library's buffer). unsafe.SliceData would do, but needs Go 1.20.
func addr[T any](s []T) unsafe.Pointer {
	if s == nil {
		return nil
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(&s))
}

// accessor is what one per-side accessor did: returned a slice (ptr, n) or panicked.
type accessor struct {
	dtype    cudot.DType // the type it serves
	isY      bool
	ptr      unsafe.Pointer // nil for a nil slice
	n        int
	panicked any // what it panicked with, or nil
}

// call runs one accessor and reports its slice, or the value it panicked with.
func call[T any](f func() []T) (p unsafe.Pointer, n int, panicked any) {
	defer func() { panicked = recover() }()
	s := f()
	return addr(s), len(s), nil
}

// side calls the accessor f of x (y when isY), which serves dtype d.
func side[T any](d cudot.DType, isY bool, f func() []T) accessor {
	a := accessor{dtype: d, isY: isY}
	a.ptr, a.n, a.panicked = call(f)
	return a
}

// accessors calls every per-side accessor, by name.
func accessors(ctx *cudot.Context) map[string]accessor {
	return map[string]accessor{
		"XFloat32": side(cudot.Float32, false, ctx.XFloat32), "YFloat32": side(cudot.Float32, true, ctx.YFloat32),
		"XFloat64": side(cudot.Float64, false, ctx.XFloat64), "YFloat64": side(cudot.Float64, true, ctx.YFloat64),
		"XFloat16": side(cudot.Float16, false, ctx.XFloat16), "YFloat16": side(cudot.Float16, true, ctx.YFloat16),
		"XBFloat16": side(cudot.BFloat16, false, ctx.XBFloat16), "YBFloat16": side(cudot.BFloat16, true, ctx.YBFloat16),
		"XInt8": side(cudot.Int8, false, ctx.XInt8), "YInt8": side(cudot.Int8, true, ctx.YInt8),
		"XUint8": side(cudot.Uint8, false, ctx.XUint8), "YUint8": side(cudot.Uint8, true, ctx.YUint8),
		"XBool": side(cudot.Uint8, false, ctx.XBool), "YBool": side(cudot.Uint8, true, ctx.YBool),
	}
}

// both adapts a two-slice accessor to call, which wants one slice: it returns x and keeps y in *y.
func both[T any](f func() (x, y []T), y *unsafe.Pointer) func() []T {
	return func() []T {
		a, b := f()
		*y = addr(b)
		return a
	}
}

// pairMethod names the same-type pair accessor of each type.
var pairMethod = map[cudot.DType]string{cudot.Float32: "Float32Inputs", cudot.Float64: "Float64Inputs",
	cudot.Float16: "Float16Inputs", cudot.BFloat16: "BFloat16Inputs", cudot.Int8: "Int8Inputs",
	cudot.Uint8: "Uint8Inputs"}

// pairInputs calls the same-type pair accessor of dtype d and returns the two buffers' addresses, or
// what it panicked with.
func pairInputs(ctx *cudot.Context, d cudot.DType) (x, y unsafe.Pointer, panicked any) {
	switch d {
	case cudot.Float32:
		x, _, panicked = call(both(ctx.Float32Inputs, &y))
	case cudot.Float64:
		x, _, panicked = call(both(ctx.Float64Inputs, &y))
	case cudot.Float16:
		x, _, panicked = call(both(ctx.Float16Inputs, &y))
	case cudot.BFloat16:
		x, _, panicked = call(both(ctx.BFloat16Inputs, &y))
	case cudot.Int8:
		x, _, panicked = call(both(ctx.Int8Inputs, &y))
	case cudot.Uint8:
		x, _, panicked = call(both(ctx.Uint8Inputs, &y))
	default:
		panic("unknown dtype")
	}
	return x, y, panicked
}

// checkWrongType reports unless panicked is an error that matches ErrElementType and whose message
// names the accessor, the context's pair and the type the accessor serves.
func checkWrongType(t *testing.T, panicked any, method string, p pair, want cudot.DType) {
	t.Helper()
	err, ok := panicked.(error)
	if !ok || !errors.Is(err, cudot.ErrElementType) {
		t.Errorf("%s on a %v context: panicked with %#v, want an error matching ErrElementType", method, p, panicked)
		return
	}
	for _, part := range []string{method + " on a context of " + p.String() + ":", want.String()} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("%s on a %v context: message %q lacks %q", method, p, err, part)
		}
	}
}

// TestAccessorsMatchTypes: in every pair, exactly the accessors of x's and y's types give slices
// (Capacity long, on two distinct buffers), every other accessor panics with an ErrElementType that
// names the mismatch, and the same-type pair accessors give slices only when x and y share their type.
func TestAccessorsMatchTypes(t *testing.T) {
	for _, p := range allPairs() {
		for _, n := range []int{0, 5} {
			t.Run(fmt.Sprintf("%v/n=%d", p, n), func(t *testing.T) {
				ctx := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host})
				var xp, yp unsafe.Pointer
				for name, a := range accessors(ctx) {
					if want := (!a.isY && a.dtype == p.x) || (a.isY && a.dtype == p.y); !want {
						checkWrongType(t, a.panicked, name, p, a.dtype)
						continue
					}
					if a.panicked != nil || a.ptr == nil || a.n != n {
						t.Errorf("%s: %p, length %d, panic %v; want a slice of %d", name, a.ptr, a.n, a.panicked, n)
						continue
					}
					if dst := map[bool]*unsafe.Pointer{false: &xp, true: &yp}[a.isY]; *dst == nil {
						*dst = a.ptr
					} else if *dst != a.ptr {
						t.Errorf("%s: a different buffer than the other accessor of that side", name)
					}
				}
				if xp == nil || yp == nil || xp == yp {
					t.Fatalf("x %p and y %p should be two distinct buffers", xp, yp)
				}
				for _, d := range allDTypes {
					px, py, panicked := pairInputs(ctx, d)
					switch {
					case p.x != d || p.y != d:
						checkWrongType(t, panicked, pairMethod[d], p, d)
					case panicked != nil || px != xp || py != yp:
						t.Errorf("%s gives %p %p (panic %v), the per-side accessors %p %p", pairMethod[d], px, py,
							panicked, xp, yp)
					}
				}
			})
		}
	}
}

// TestFloat32TimesMask: float32 x times a 0/1 uint8 y written through YBool, checked against the exact
// masked sum and bit for bit against a float32*float32 context holding the mask as 0.0/1.0 (the same
// arithmetic in the same order on the same values).
func TestFloat32TimesMask(t *testing.T) {
	const n = 100003
	ctx := newContext(t, n, cudot.Options{DType: cudot.Float32, YDType: cudot.Uint8})
	ref := newContext(t, n, cudot.Options{DType: cudot.Float32})
	xs, _ := randomData(n, cudot.Float32, 5)
	rng := rand.New(rand.NewSource(6))
	x, mask := ctx.XFloat32(), ctx.YBool()
	rx, ry := ref.Float32Inputs()
	masked := make([]float64, n)
	for i := range xs {
		x[i], rx[i] = float32(xs[i]), float32(xs[i])
		mask[i] = rng.Intn(3) == 0
		ry[i] = 0
		if mask[i] {
			ry[i], masked[i] = 1, 1
		}
	}
	// The []bool view and the []uint8 view are the same bytes: 1 where true, 0 where false.
	bytes := ctx.YUint8()
	for i := range bytes {
		if want := map[bool]uint8{false: 0, true: 1}[mask[i]]; bytes[i] != want {
			t.Fatalf("YUint8()[%d] = %d, YBool()[%d] = %v", i, bytes[i], i, mask[i])
		}
	}
	check := func(what string) {
		t.Helper()
		got, err1 := ctx.Dot()
		want, err2 := ref.Dot()
		if err1 != nil || err2 != nil || !bitsEqual(got, want) {
			t.Fatalf("%s: float32*uint8 gives %v (%v), float32*float32 gives %v (%v)", what, got, err1, want, err2)
		}
		exact, absSum := exactDot(xs, masked)
		if err := math.Abs(got - exact); !(err <= gamma(n)*absSum*1.01) || got == 0 {
			t.Fatalf("%s: Dot = %.17g, exact %.17g", what, got, exact)
		}
	}
	check("random mask")
	// Rewriting the mask through the uint8 view (all ones) is seen by the next dot.
	for i := range bytes {
		bytes[i], ry[i], masked[i] = 1, 1, 1
	}
	check("all ones")
}

// TestIntegerPairsExact: the four integer pairs over their full range, with sums far beyond 2^32 (a
// 32-bit or float32 accumulator would be wrong), must equal the int64 sum exactly, for Dot and DotN.
func TestIntegerPairsExact(t *testing.T) {
	const n = 1<<20 + 3
	for _, p := range []pair{{cudot.Int8, cudot.Int8}, {cudot.Int8, cudot.Uint8}, {cudot.Uint8, cudot.Int8}, {cudot.Uint8, cudot.Uint8}} {
		t.Run(p.String(), func(t *testing.T) {
			ctx := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y})
			extreme := func(d cudot.DType) float64 {
				if d == cudot.Int8 {
					return -128
				}
				return 255
			}
			// All extremes: every product has the largest magnitude the pair allows.
			xs, ys := make([]float64, n), make([]float64, n)
			for i := range xs {
				xs[i], ys[i] = extreme(p.x), extreme(p.y)
			}
			fill(t, ctx, xs, ys)
			prod := int64(extreme(p.x)) * int64(extreme(p.y))
			for _, k := range []int{n, 1, 77777, 1 << 20} {
				if r, err := ctx.DotN(k); err != nil || r != float64(prod*int64(k)) {
					t.Fatalf("extremes: DotN(%d) = %v, %v; want %d", k, r, err, prod*int64(k))
				}
			}
			// Random values over the whole range.
			xs, ys = randomPair(n, p, 11)
			fill(t, ctx, xs, ys)
			var sum int64
			for i := range xs {
				sum += int64(xs[i]) * int64(ys[i])
			}
			if r, err := ctx.Dot(); err != nil || r != float64(sum) {
				t.Fatalf("random: Dot = %v, %v; want %d", r, err, sum)
			}
		})
	}
}

// TestHalfValuesAgainstReference: Float16 and BFloat16 edge values (the largest finite, subnormals,
// signed zeros, values whose products need more than float32's range or precision) against a float64
// reference built from the bit patterns with Float16frombits/BFloat16frombits, and infinities.
func TestHalfValuesAgainstReference(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      pair
		xs, ys []uint16
		want   float64 // NaN to expect NaN
	}{
		// 65504^2 and 2^-24 * 2^-24 = 2^-48 and -0 * 1: each term exact in float64.
		{"f16 max, subnormal, -0", pair{cudot.Float16, cudot.Float16},
			[]uint16{0x7bff, 0x0001, 0x8000, 0x3c01}, []uint16{0x7bff, 0x0001, 0x3c00, 0x3c01},
			65504.0*65504 + 0x1p-48 + 0 + (1+0x1p-10)*(1+0x1p-10)},
		// The largest bfloat16 squared is about 1.15e77: finite in float64, Inf in float32.
		{"bf16 max squared", pair{cudot.BFloat16, cudot.BFloat16},
			[]uint16{0x7f7f, 0x0001}, []uint16{0x7f7f, 0x0001},
			math.Pow(float64(cudot.BFloat16frombits(0x7f7f)), 2) + math.Ldexp(1, -266)},
		// f16 times bf16: 1.5 * 3 + 65504 * -(2^-133): both exact as float64 products.
		{"f16 times bf16", pair{cudot.Float16, cudot.BFloat16},
			[]uint16{0x3e00, 0x7bff}, []uint16{0x4040, 0x8001}, 4.5 - 65504*math.Ldexp(1, -133)},
		{"f16 +Inf alone", pair{cudot.Float16, cudot.Float16},
			[]uint16{0x7c00, 0x3c00}, []uint16{0x3c00, 0x3c00}, math.Inf(1)},
		{"bf16 -Inf times 0 is NaN", pair{cudot.BFloat16, cudot.BFloat16},
			[]uint16{0xff80, 0x3f80}, []uint16{0x0000, 0x3f80}, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.xs)
			ctx := newContext(t, n, cudot.Options{DType: tc.p.x, YDType: tc.p.y})
			toFloat := map[cudot.DType]func(uint16) float32{cudot.Float16: cudot.Float16frombits, cudot.BFloat16: cudot.BFloat16frombits}
			copy(halfBits(ctx, false), tc.xs)
			copy(halfBits(ctx, true), tc.ys)
			ref := 0.0
			for i := 0; i < n; i++ {
				ref += float64(toFloat[tc.p.x](tc.xs[i])) * float64(toFloat[tc.p.y](tc.ys[i]))
			}
			got, err := ctx.Dot()
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(tc.want) {
				if !math.IsNaN(got) || !math.IsNaN(ref) {
					t.Fatalf("Dot = %v, reference %v; want NaN", got, ref)
				}
				return
			}
			if got != tc.want || ref != tc.want || math.IsInf(got, 0) != math.IsInf(tc.want, 0) {
				t.Fatalf("Dot = %.17g, reference from the bit patterns %.17g, want %.17g", got, ref, tc.want)
			}
		})
	}
}

// TestSameValuesSameBits: the result depends on the values and the pair's arithmetic only, not on how
// the values are stored. Pairs without Float64 must match float32*float32 (every value of F16, BF16,
// I8 and U8 is a float32) and pairs with Float64 must match float64*float64, bit for bit.
func TestSameValuesSameBits(t *testing.T) {
	const n = 100003
	for _, p := range allPairs() {
		if isInt(p.x) && isInt(p.y) {
			continue // exact integer sums; TestIntegerPairsExact covers them
		}
		t.Run(p.String(), func(t *testing.T) {
			wide := cudot.Float32
			if p.x == cudot.Float64 || p.y == cudot.Float64 {
				wide = cudot.Float64
			}
			xs, ys := randomPair(n, p, 3)
			ctx := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y})
			ref := newContext(t, n, cudot.Options{DType: wide})
			fill(t, ctx, xs, ys)
			fill(t, ref, xs, ys)
			for _, k := range []int{n, 8193} {
				got, err1 := ctx.DotN(k)
				want, err2 := ref.DotN(k)
				if err1 != nil || err2 != nil || !bitsEqual(got, want) {
					t.Fatalf("DotN(%d) = %v (%v), %v*%v gives %v (%v)", k, got, err1, wide, wide, want, err2)
				}
			}
		})
	}
}
