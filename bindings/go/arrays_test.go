package cudot_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"cudot.example/cudot"
)

// Dots of the caller's own arrays (cudot 1.7): every result is compared bit for bit with Dot of a
// Host Context holding the same values, the library's contract for these calls.

var (
	arrayLengths = []int{0, 1, 8191, 8193, 100000}
	arrayStrides = []int{1, -1, 0, 3}
)

// layout places a view of n elements with stride in a slice: element i at first + i*stride, with one
// element of padding before the lowest index and after the highest, which the view must never read.
type layout struct{ first, n, stride, length int }

func layoutFor(n, stride int) layout {
	span := 0 // indices the view covers
	switch {
	case n > 0 && stride == 0:
		span = 1
	case n > 0:
		span = (n-1)*abs(stride) + 1
	}
	first := 1
	if stride < 0 {
		first = span
	}
	return layout{first: first, n: n, stride: stride, length: span + 2}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// poison is the padding: a value that changes the dot wherever it is read (NaN, or the type's largest
// integer).
func poison(d cudot.DType) float64 {
	switch d {
	case cudot.Int8:
		return 127
	case cudot.Uint8:
		return 255
	}
	return math.NaN()
}

// place writes the logical values vals of a view with layout l into a fresh memory image of l.length
// values, the rest poison. With stride 0 every element of the view is the one at first: vals must
// repeat one value.
func place(l layout, d cudot.DType, vals []float64) []float64 {
	mem := make([]float64, l.length)
	for i := range mem {
		mem[i] = poison(d)
	}
	for i, v := range vals {
		mem[l.first+i*l.stride] = v
	}
	return mem
}

// makeSlice turns mem into a Go slice of d's element type and returns its Array (all of it) and its
// bytes (for copies to a device).
func makeSlice(d cudot.DType, mem []float64) (cudot.Array, []byte) {
	switch d {
	case cudot.Float32:
		s := convert(mem, func(v float64) float32 { return float32(v) })
		return cudot.Float32Slice(s), rawBytes(s)
	case cudot.Float64:
		s := convert(mem, func(v float64) float64 { return v })
		return cudot.Float64Slice(s), rawBytes(s)
	case cudot.Float16:
		s := convert(mem, func(v float64) uint16 { return cudot.Float16bits(float32(v)) })
		return cudot.Float16Slice(s), rawBytes(s)
	case cudot.BFloat16:
		s := convert(mem, func(v float64) uint16 { return cudot.BFloat16bits(float32(v)) })
		return cudot.BFloat16Slice(s), rawBytes(s)
	case cudot.Int8:
		s := convert(mem, func(v float64) int8 { return int8(v) })
		return cudot.Int8Slice(s), rawBytes(s)
	case cudot.Uint8:
		s := convert(mem, func(v float64) uint8 { return uint8(v) })
		return cudot.Uint8Slice(s), rawBytes(s)
	}
	panic("unknown dtype " + d.String())
}

func convert[T any](vals []float64, to func(float64) T) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = to(v)
	}
	return out
}

// rawBytes is the memory of s, aliased.
func rawBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// viewOf is the Array of the values vals (logical order) of type d laid out as l in a fresh Go slice,
// and the slice's bytes.
func viewOf(l layout, d cudot.DType, vals []float64) (cudot.Array, []byte) {
	a, raw := makeSlice(d, place(l, d, vals))
	return a.Strided(l.first, l.n, l.stride), raw
}

// repeatFirst makes vals a stride-0 view's values: its first value n times.
func repeatFirst(vals []float64) []float64 {
	out := make([]float64, len(vals))
	for i := range out {
		out[i] = vals[0]
	}
	return out
}

// hostDot is the reference: Dot of a Host Context of the pair holding xs and ys.
func hostDot(t testing.TB, p pair, xs, ys []float64) float64 {
	t.Helper()
	ctx, err := cudot.New(len(xs), cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	fill(t, ctx, xs, ys)
	r, err := ctx.Dot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// strideCase is the logical values of x and y and their layouts for one subtest.
type strideCase struct {
	xs, ys []float64
	lx, ly layout
}

func newStrideCase(p pair, n, sx, sy int, seed int64) strideCase {
	xs, ys := randomPair(n, p, seed)
	if sx == 0 && n > 0 {
		xs = repeatFirst(xs)
	}
	if sy == 0 && n > 0 {
		ys = repeatFirst(ys)
	}
	return strideCase{xs: xs, ys: ys, lx: layoutFor(n, sx), ly: layoutFor(n, sy)}
}

// TestArraysMatchHostContext: Dot of two Go slices, every pair, the lengths of arrayLengths and
// every combination of x and y strides of arrayStrides (the same stride on both sides, and the next
// one on y), is the bits of a Host Context holding the views' values; the padding around the views
// (NaN, or the largest integer) is never read.
func TestArraysMatchHostContext(t *testing.T) {
	for _, p := range allPairs() {
		for _, n := range arrayLengths {
			for k, sx := range arrayStrides {
				for _, sy := range []int{sx, arrayStrides[(k+1)%len(arrayStrides)]} {
					name := fmt.Sprintf("%v/n=%d/stride=%d,%d", p, n, sx, sy)
					c := newStrideCase(p, n, sx, sy, int64(n)*131+int64(p.x)*7+int64(p.y)*49+int64(k))
					want := hostDot(t, p, c.xs, c.ys)
					x, _ := viewOf(c.lx, p.x, c.xs)
					y, _ := viewOf(c.ly, p.y, c.ys)
					got, err := cudot.Dot(x, y)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !bitsEqual(got, want) {
						t.Errorf("%s: Dot = %v (%#x), Host context %v (%#x)", name, got, math.Float64bits(got),
							want, math.Float64bits(want))
					}
				}
			}
		}
	}
}

// TestArraysWholeSlices: the plain constructors (all of a slice, stride 1) of every type, bool
// included, against a Host Context; x and y may be the same slice.
func TestArraysWholeSlices(t *testing.T) {
	const n = 8193
	for _, p := range allPairs() {
		xs, ys := randomPair(n, p, int64(p.x)*11+int64(p.y))
		x, _ := makeSlice(p.x, xs)
		y, _ := makeSlice(p.y, ys)
		if got, want := mustDot(t, x, y), hostDot(t, p, xs, ys); !bitsEqual(got, want) {
			t.Errorf("%v: Dot = %v, Host context %v", p, got, want)
		}
		if got, want := mustDot(t, x, x), hostDot(t, pair{p.x, p.x}, xs, xs); !bitsEqual(got, want) {
			t.Errorf("%v: Dot(x, x) = %v, Host context %v", p, got, want)
		}
	}
	mask := make([]bool, n)
	vals := make([]float32, n)
	ms, vs := make([]float64, n), make([]float64, n)
	for i := range mask {
		mask[i] = i%3 == 0
		vals[i] = float32(i) * 0.5
		vs[i] = float64(vals[i])
		if mask[i] {
			ms[i] = 1
		}
	}
	got := mustDot(t, cudot.Float32Slice(vals), cudot.BoolSlice(mask))
	if want := hostDot(t, pair{cudot.Float32, cudot.Uint8}, vs, ms); !bitsEqual(got, want) {
		t.Errorf("float32 times a []bool mask: Dot = %v, Host context %v", got, want)
	}
}

func mustDot(t testing.TB, x, y cudot.Array) float64 {
	t.Helper()
	r, err := cudot.Dot(x, y)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestArraysNonFinite: Inf and NaN in the operands give the Host Context's bits (a lone infinity,
// Inf*0 = NaN, Inf-Inf = NaN, a NaN), for every pair with a floating side, contiguous and reversed.
func TestArraysNonFinite(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name string
		at   map[int][2]float64 // index: x, y values set there (a side that is an integer type keeps 1)
	}{
		{"+Inf", map[int][2]float64{10: {inf, 1}}},
		{"-Inf", map[int][2]float64{9000: {-inf, 1}}},
		{"Inf*0", map[int][2]float64{77: {inf, 0}}},
		{"Inf-Inf", map[int][2]float64{3: {inf, 1}, 19999: {-inf, 1}}},
		{"NaN", map[int][2]float64{12345: {math.NaN(), 1}}},
	}
	const n = 20000
	for _, p := range allPairs() {
		if isInt(p.x) && isInt(p.y) {
			continue
		}
		for _, c := range cases {
			for _, stride := range []int{1, -1} {
				xs, ys := randomPair(n, p, int64(p.x)+int64(p.y)*6)
				for i, v := range c.at {
					// The special value goes to a floating side; the other side gets the partner value.
					if isInt(p.x) {
						xs[i], ys[i] = v[1], v[0]
					} else {
						xs[i], ys[i] = v[0], v[1]
					}
				}
				x, _ := viewOf(layoutFor(n, stride), p.x, xs)
				y, _ := viewOf(layoutFor(n, stride), p.y, ys)
				got, want := mustDot(t, x, y), hostDot(t, p, xs, ys)
				if !bitsEqual(got, want) {
					t.Errorf("%v/%s/stride %d: Dot = %v (%#x), Host context %v (%#x)", p, c.name, stride, got,
						math.Float64bits(got), want, math.Float64bits(want))
				}
			}
		}
	}
}

// TestArraysEmpty: empty operands give +0 and read nothing: nil slices, empty views of a slice, and
// an empty view at an index past the end.
func TestArraysEmpty(t *testing.T) {
	s := []float64{math.NaN(), 1}
	for _, c := range []struct {
		name string
		x, y cudot.Array
	}{
		{"nil slices", cudot.Float32Slice(nil), cudot.Uint8Slice(nil)},
		{"empty views", cudot.Float64Slice(s).Strided(0, 0, 1), cudot.BoolSlice([]bool{true}).Strided(0, 0, -1)},
		{"past the end", cudot.Float64Slice(s).Strided(5, 0, 0), cudot.Int8Slice(nil).Strided(3, 0, 3)},
		{"nil device address", cudot.DeviceArray(0, cudot.BFloat16, 0), cudot.Float16Slice(nil)},
	} {
		r, err := cudot.Dot(c.x, c.y)
		if err != nil || math.Float64bits(r) != 0 {
			t.Errorf("%s: Dot = %v (%#x), %v; want +0", c.name, r, math.Float64bits(r), err)
		}
		parts, err := cudot.TilePartials(c.x, c.y)
		if err != nil || len(parts) != 0 {
			t.Errorf("%s: TilePartials = %d bytes, %v; want none", c.name, len(parts), err)
		}
	}
}

// TestArraysBadInput: what the binding refuses before the library is called (so that the library never
// reads outside a slice), with ErrInvalidArgument and a message saying why.
func TestArraysBadInput(t *testing.T) {
	s := make([]float32, 10)
	whole := cudot.Float32Slice(s)
	cases := []struct {
		name, want string
		x, y       cudot.Array
	}{
		{"lengths differ", "x has 10 elements and y 9", whole, whole.Strided(1, 9, 1)},
		{"past the end", "leave its slice of 10", whole.Strided(1, 10, 1), whole.Strided(0, 10, 1)},
		{"stride 3 too long", "stride 3", whole.Strided(0, 5, 3), whole.Strided(0, 5, 1)},
		{"stride -1 before the start", "stride -1", whole.Strided(8, 10, -1), whole},
		{"stride 0 past the end", "from index 10", whole.Strided(10, 2, 0), whole.Strided(0, 2, 1)},
		{"negative first", "negative index", whole, whole.Strided(-1, 10, 1)},
		{"negative n", "negative length", whole.Strided(0, -1, 1), whole.Strided(0, -1, 1)},
		{"zero Array", "x is the zero Array", cudot.Array{}, cudot.Array{}},
		{"unknown type", "unknown element type 9", cudot.DeviceArray(64, 9, 1), whole.Strided(0, 1, 1)},
	}
	for _, c := range cases {
		_, err := cudot.Dot(c.x, c.y)
		checkError(t, c.name+" (Dot)", err, "Dot", cudot.ErrInvalidArgument, c.want)
		_, err = cudot.TilePartials(c.x, c.y)
		checkError(t, c.name+" (TilePartials)", err, "TilePartials", cudot.ErrInvalidArgument, c.want)
	}
	// DotAsync takes device memory only: a Go slice could be read after it returned.
	err := cudot.DotAsync(cudot.Streams{}, whole, whole, 0)
	checkError(t, "DotAsync of a slice", err, "DotAsync", cudot.ErrUnsupported, "Go slice")
	runtime.KeepAlive(s)
}

// checkError checks that err is an *cudot.Error of op matching sentinel whose message contains want.
func checkError(t *testing.T, name string, err error, op string, sentinel error, want string) {
	t.Helper()
	var e *cudot.Error
	if !errors.As(err, &e) || !errors.Is(err, sentinel) || e.Op != op || !strings.Contains(e.Message, want) {
		t.Errorf("%s: got %v; want %v from %s saying %q", name, err, sentinel, op, want)
	}
}

// TestArraysPartials: the tile partials of a vector held in pieces, each its own Go slice (a view
// with a stride), join to the bits of a Host Context holding the whole vector, and are the same bytes
// as that context's partials of the same ranges.
func TestArraysPartials(t *testing.T) {
	const n = 5*cudot.TileElements + 321
	for _, p := range partialPairs {
		for _, stride := range []int{1, -1, 3} {
			xs, ys := randomPair(n, p, int64(p.x)*3+int64(p.y)+int64(stride))
			whole := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host})
			fill(t, whole, xs, ys)
			want, err := whole.Dot()
			if err != nil {
				t.Fatal(err)
			}
			var joined []byte
			for _, pc := range pieces(n) {
				first, size := pc[0], pc[1]
				x, _ := viewOf(layoutFor(size, stride), p.x, xs[first:first+size])
				y, _ := viewOf(layoutFor(size, stride), p.y, ys[first:first+size])
				own, err1 := cudot.TilePartials(x, y)
				fromCtx, err2 := whole.TilePartials(first, size)
				if err1 != nil || err2 != nil {
					t.Fatalf("%v/stride %d: TilePartials of [%d, +%d): %v, %v", p, stride, first, size, err1, err2)
				}
				if !bytes.Equal(own, fromCtx) {
					t.Errorf("%v/stride %d: partials of [%d, +%d) differ from the context's", p, stride, first, size)
				}
				joined = append(joined, own...)
			}
			got, err := cudot.JoinPartials(p.x, p.y, joined)
			if err != nil || !bitsEqual(got, want) {
				t.Errorf("%v/stride %d: joined %v, %v; Host context %v", p, stride, got, err, want)
			}
		}
	}
}

// TestRegisterHost: a registered slice gives the same bits (on a GPU from 2^20 elements, where there
// is one; on the CPU otherwise); a second registration of the same memory, and unregistering memory
// that is not registered, are refused with the library's message; an empty slice with the binding's.
func TestRegisterHost(t *testing.T) {
	const n = 1<<20 + 3
	p := pair{cudot.Float32, cudot.BFloat16}
	xs, ys := randomPair(n, p, 5)
	x := convert(xs, func(v float64) float32 { return float32(v) })
	y := convert(ys, func(v float64) uint16 { return cudot.BFloat16bits(float32(v)) })
	if err := cudot.RegisterHost(x); err != nil {
		t.Fatal(err)
	}
	if err := cudot.RegisterHost(y); err != nil {
		t.Fatal(err)
	}
	want := hostDot(t, p, xs, ys)
	got := mustDot(t, cudot.Float32Slice(x), cudot.BFloat16Slice(y))
	if !bitsEqual(got, want) {
		t.Errorf("registered slices: Dot = %v, Host context %v", got, want)
	}
	// A view of part of a registered slice, reversed, below the GPU's threshold: the CPU reads it.
	got = mustDot(t, cudot.Float32Slice(x).Strided(999, 1000, -1), cudot.BFloat16Slice(y).Strided(999, 1000, -1))
	if want := hostDot(t, p, reverse(xs[:1000]), reverse(ys[:1000])); !bitsEqual(got, want) {
		t.Errorf("registered slices, reversed view: Dot = %v, Host context %v", got, want)
	}
	err := cudot.RegisterHost(x[10:20])
	checkError(t, "overlapping registration", err, "RegisterHost", cudot.ErrInvalidArgument, "")
	if e := (*cudot.Error)(nil); errors.As(err, &e) && e.Message == "" {
		t.Errorf("overlapping registration: no message from the library")
	}
	if err := cudot.UnregisterHost(x); err != nil {
		t.Errorf("UnregisterHost(x): %v", err)
	}
	if err := cudot.UnregisterHost(y); err != nil {
		t.Errorf("UnregisterHost(y): %v", err)
	}
	err = cudot.UnregisterHost(x)
	checkError(t, "unregistering twice", err, "UnregisterHost", cudot.ErrInvalidArgument, "")
	if e := (*cudot.Error)(nil); errors.As(err, &e) && e.Message == "" {
		t.Errorf("unregistering twice: no message from the library")
	}
	checkError(t, "empty", cudot.RegisterHost([]int8{}), "RegisterHost", cudot.ErrInvalidArgument, "empty slice has no memory")
	checkError(t, "empty", cudot.UnregisterHost([]bool(nil)), "UnregisterHost", cudot.ErrInvalidArgument, "empty slice has no memory")
	// Still the same bits after unregistering.
	if got := mustDot(t, cudot.Float32Slice(x), cudot.BFloat16Slice(y)); !bitsEqual(got, want) {
		t.Errorf("after UnregisterHost: Dot = %v, Host context %v", got, want)
	}
}

func reverse(v []float64) []float64 {
	out := make([]float64, len(v))
	for i := range v {
		out[len(v)-1-i] = v[i]
	}
	return out
}

func TestDotExact(t *testing.T) {
	// The known answers of the C library's tests: cancellation, and products beyond the float64 range.
	x32 := make([]float32, 0, 301)
	for i := 0; i < 100; i++ {
		x32 = append(x32, 1e16, 1, -1e16)
	}
	x32 = append(x32, 3)
	ones := make([]float32, len(x32))
	for i := range ones {
		ones[i] = 1
	}
	if r, err := cudot.DotExact(cudot.Float32Slice(x32), cudot.Float32Slice(ones)); err != nil || r != 103 {
		t.Fatalf("DotExact: %v, %v; want 103", r, err)
	}
	for _, c := range []struct{ x, y []float64 }{
		{[]float64{1e200, -1e200, 1}, []float64{1e200, 1e200, 1}},
		{[]float64{1e308, 1e308}, []float64{10, -10}},
		{[]float64{1e300, 1e300, -1e300}, []float64{1e10, 1e10, 1e10}},
	} {
		r, err := cudot.DotExact(cudot.Float64Slice(c.x), cudot.Float64Slice(c.y))
		if want, _ := exactDot(c.x, c.y); err != nil || math.Float64bits(r) != math.Float64bits(want) {
			t.Errorf("DotExact(%v, %v) = %v, %v; want %v", c.x, c.y, r, err, want)
		}
	}
	// Wide random values, and any permutation of them: the bits of math/big's exact sum.
	rng := rand.New(rand.NewSource(5))
	n := 20000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = math.Ldexp(1+rng.Float64(), rng.Intn(600)-300) * float64(1-2*rng.Intn(2))
		y[i] = math.Ldexp(1+rng.Float64(), rng.Intn(600)-300)
	}
	want, _ := exactDot(x, y)
	for round := 0; round < 3; round++ {
		r, err := cudot.DotExact(cudot.Float64Slice(x), cudot.Float64Slice(y))
		if err != nil || math.Float64bits(r) != math.Float64bits(want) {
			t.Fatalf("round %d: DotExact = %v, %v; want %v", round, r, err, want)
		}
		rng.Shuffle(n, func(i, j int) { x[i], x[j] = x[j], x[i]; y[i], y[j] = y[j], y[i] })
	}
	// Reversed, through a negative stride.
	r, err := cudot.DotExact(cudot.Float64Slice(x).Strided(n-1, n, -1), cudot.Float64Slice(y).Strided(n-1, n, -1))
	if err != nil || math.Float64bits(r) != math.Float64bits(want) {
		t.Fatalf("reversed: DotExact = %v, %v; want %v", r, err, want)
	}
}
