package cudot_test

import (
	"fmt"
	"math"
	"math/rand"
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

// accessor is what one per-side accessor returned.
type accessor struct {
	dtype cudot.DType // the type it serves
	isY   bool
	ptr   unsafe.Pointer // nil for a nil slice
	n     int
}

// accessors calls every per-side accessor, by name.
func accessors(ctx *cudot.Context) map[string]accessor {
	m := map[string]accessor{}
	add := func(name string, d cudot.DType, isY bool, p unsafe.Pointer, n int) { m[name] = accessor{d, isY, p, n} }
	f32x, f32y := ctx.XFloat32(), ctx.YFloat32()
	add("XFloat32", cudot.Float32, false, addr(f32x), len(f32x))
	add("YFloat32", cudot.Float32, true, addr(f32y), len(f32y))
	f64x, f64y := ctx.XFloat64(), ctx.YFloat64()
	add("XFloat64", cudot.Float64, false, addr(f64x), len(f64x))
	add("YFloat64", cudot.Float64, true, addr(f64y), len(f64y))
	f16x, f16y := ctx.XFloat16(), ctx.YFloat16()
	add("XFloat16", cudot.Float16, false, addr(f16x), len(f16x))
	add("YFloat16", cudot.Float16, true, addr(f16y), len(f16y))
	bf16x, bf16y := ctx.XBFloat16(), ctx.YBFloat16()
	add("XBFloat16", cudot.BFloat16, false, addr(bf16x), len(bf16x))
	add("YBFloat16", cudot.BFloat16, true, addr(bf16y), len(bf16y))
	i8x, i8y := ctx.XInt8(), ctx.YInt8()
	add("XInt8", cudot.Int8, false, addr(i8x), len(i8x))
	add("YInt8", cudot.Int8, true, addr(i8y), len(i8y))
	u8x, u8y := ctx.XUint8(), ctx.YUint8()
	add("XUint8", cudot.Uint8, false, addr(u8x), len(u8x))
	add("YUint8", cudot.Uint8, true, addr(u8y), len(u8y))
	bx, by := ctx.XBool(), ctx.YBool()
	add("XBool", cudot.Uint8, false, addr(bx), len(bx))
	add("YBool", cudot.Uint8, true, addr(by), len(by))
	return m
}

// pairInputs calls the same-type pair accessor of dtype d and returns the two buffers' addresses.
func pairInputs(ctx *cudot.Context, d cudot.DType) (x, y unsafe.Pointer) {
	switch d {
	case cudot.Float32:
		a, b := ctx.Float32Inputs()
		return addr(a), addr(b)
	case cudot.Float64:
		a, b := ctx.Float64Inputs()
		return addr(a), addr(b)
	case cudot.Float16:
		a, b := ctx.Float16Inputs()
		return addr(a), addr(b)
	case cudot.BFloat16:
		a, b := ctx.BFloat16Inputs()
		return addr(a), addr(b)
	case cudot.Int8:
		a, b := ctx.Int8Inputs()
		return addr(a), addr(b)
	case cudot.Uint8:
		a, b := ctx.Uint8Inputs()
		return addr(a), addr(b)
	}
	panic("unknown dtype")
}

// TestAccessorsMatchTypes: in every pair, exactly the accessors of x's and y's types give slices
// (Capacity long, on two distinct buffers), every other accessor gives nil, and the same-type pair
// accessors give slices only when x and y share their type.
func TestAccessorsMatchTypes(t *testing.T) {
	for _, p := range allPairs() {
		for _, n := range []int{0, 5} {
			t.Run(fmt.Sprintf("%v/n=%d", p, n), func(t *testing.T) {
				ctx := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host})
				var xp, yp unsafe.Pointer
				for name, a := range accessors(ctx) {
					want := (!a.isY && a.dtype == p.x) || (a.isY && a.dtype == p.y)
					if (a.ptr != nil) != want {
						t.Errorf("%s: non-nil %v, want %v", name, a.ptr != nil, want)
						continue
					}
					if !want {
						continue
					}
					if a.n != n {
						t.Errorf("%s: length %d, want %d", name, a.n, n)
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
					px, py := pairInputs(ctx, d)
					if same := p.x == d && p.y == d; same != (px != nil && py != nil) || (!same && (px != nil || py != nil)) {
						t.Errorf("%vInputs gives %p %p on a %v context", d, px, py, p)
					} else if same && (px != xp || py != yp) {
						t.Errorf("%vInputs gives other buffers than the per-side accessors", d)
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
			x := ctx.XFloat16()
			if tc.p.x == cudot.BFloat16 {
				x = ctx.XBFloat16()
			}
			y := ctx.YFloat16()
			if tc.p.y == cudot.BFloat16 {
				y = ctx.YBFloat16()
			}
			copy(x, tc.xs)
			copy(y, tc.ys)
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
