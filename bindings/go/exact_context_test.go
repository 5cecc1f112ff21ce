package cudot_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"strings"
	"testing"

	"cudot.example/cudot"
)

// The exact mode of contexts and exact partials (cudot 1.13): Options.Mode, Context.Mode, TilePartials of
// an exact Context, TilePartialsExact and JoinExactPartials. The results are checked against DotExact on
// the same values and against math/big's exact sum, rounded once.

// exactPairs: same-type pairs and mixed ones, the mixed ones with an integer and a half-precision side.
var exactPairs = []pair{{cudot.Float32, cudot.Float32}, {cudot.Float64, cudot.Float64},
	{cudot.Float32, cudot.Float64}, {cudot.Int8, cudot.BFloat16}}

// exactStrategies: HOST, and AUTO (HOST without a GPU); the GPU strategies skip where the library
// reports no device, unless CUDOT_TEST_GPU=1.
var exactStrategies = []cudot.Memory{cudot.Host, cudot.Auto, cudot.Pinned, cudot.Mapped, cudot.Managed}

// newExactContext is newContext in ModeExact, skipping a GPU strategy the library has no device for.
func newExactContext(t *testing.T, n int, opts cudot.Options) *cudot.Context {
	t.Helper()
	opts.Mode = cudot.ModeExact
	ctx, err := cudot.New(n, opts)
	if errors.Is(err, cudot.ErrNoDevice) && !gpuRequired {
		t.Skipf("%v: %v", opts.Memory, err)
	}
	if err != nil {
		t.Fatalf("New(%d, %+v): %v", n, opts, err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if ctx.Mode() != cudot.ModeExact {
		t.Fatalf("Mode() = %v, want ModeExact", ctx.Mode())
	}
	return ctx
}

// wideValue is a random value of dtype over a wide range of magnitudes (so that sums cancel and round),
// exactly representable in dtype.
func wideValue(rng *rand.Rand, dtype cudot.DType) float64 {
	sign := float64(1 - 2*rng.Intn(2))
	switch dtype {
	case cudot.Float32:
		return float64(float32(math.Ldexp(1+rng.Float64(), rng.Intn(120)-60) * sign))
	case cudot.Float64:
		return math.Ldexp(1+rng.Float64(), rng.Intn(600)-300) * sign
	}
	return randomValue(rng, dtype)
}

func wideData(n int, p pair, seed int64) (xs, ys []float64) {
	rng := rand.New(rand.NewSource(seed))
	xs, ys = make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i], ys[i] = wideValue(rng, p.x), wideValue(rng, p.y)
	}
	return xs, ys
}

// arrayOf is a new Go slice of dtype holding vals (exactly representable in it), as an Array.
func arrayOf(d cudot.DType, vals []float64) cudot.Array {
	switch d {
	case cudot.Float32:
		s := make([]float32, len(vals))
		for i, v := range vals {
			s[i] = float32(v)
		}
		return cudot.Float32Slice(s)
	case cudot.Float64:
		return cudot.Float64Slice(append([]float64(nil), vals...))
	case cudot.BFloat16:
		s := make([]uint16, len(vals))
		for i, v := range vals {
			s[i] = cudot.BFloat16bits(float32(v))
		}
		return cudot.BFloat16Slice(s)
	case cudot.Int8:
		s := make([]int8, len(vals))
		for i, v := range vals {
			s[i] = int8(v)
		}
		return cudot.Int8Slice(s)
	}
	panic("arrayOf: no case for " + d.String())
}

// ratDot is the exact dot of xs and ys (finite values) in big.Rat, rounded once to the nearest float64,
// ties to even (Rat.Float64).
func ratDot(xs, ys []float64) float64 {
	sum, p, q := new(big.Rat), new(big.Rat), new(big.Rat)
	for i := range xs {
		p.SetFloat64(xs[i])
		q.SetFloat64(ys[i])
		sum.Add(sum, p.Mul(p, q))
	}
	f, _ := sum.Float64()
	return f
}

func bitsString(f float64) string { return fmt.Sprintf("%v (%#016x)", f, math.Float64bits(f)) }

// TestExactContextEqualsDotExact: Dot and DotN of a Context in ModeExact have the bits of DotExact on
// Go slices of the same values, for each pair and length, on HOST and AUTO (and the GPU strategies
// where there is a GPU); its exact partial of everything joins to the same bits.
func TestExactContextEqualsDotExact(t *testing.T) {
	for _, m := range exactStrategies {
		m := m
		t.Run(m.String(), func(t *testing.T) {
			newExactContext(t, 1, cudot.Options{Memory: m}) // skips the strategy without a device
			testExactContextEqualsDotExact(t, m)
		})
	}
}

// testExactContextEqualsDotExact runs TestExactContextEqualsDotExact's checks on strategy m.
func testExactContextEqualsDotExact(t *testing.T, m cudot.Memory) {
	for _, p := range exactPairs {
		for _, n := range []int{0, 1, 7, 5000, 100003} {
			p, n := p, n
			t.Run(fmt.Sprintf("%v/%d", p, n), func(t *testing.T) {
				ctx := newExactContext(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: m})
				xs, ys := wideData(n, p, int64(n)*7+int64(p.x)*3+int64(p.y))
				fill(t, ctx, xs, ys)
				want, err := cudot.DotExact(arrayOf(p.x, xs), arrayOf(p.y, ys))
				if err != nil {
					t.Fatal(err)
				}
				if got, err := ctx.Dot(); err != nil || !bitsEqual(got, want) {
					t.Fatalf("Dot = %v, %v; DotExact %s", bitsString(got), err, bitsString(want))
				}
				half := n / 2
				wantHalf, err := cudot.DotExact(arrayOf(p.x, xs[:half]), arrayOf(p.y, ys[:half]))
				if err != nil {
					t.Fatal(err)
				}
				if got, err := ctx.DotN(half); err != nil || !bitsEqual(got, wantHalf) {
					t.Fatalf("DotN(%d) = %v, %v; DotExact %s", half, bitsString(got), err, bitsString(wantHalf))
				}
				part, err := ctx.TilePartials(0, n)
				if err != nil || len(part) != cudot.ExactPartialBytes {
					t.Fatalf("TilePartials(0, %d): %d bytes, %v; want one exact partial", n, len(part), err)
				}
				if got, err := cudot.JoinExactPartials(part); err != nil || !bitsEqual(got, want) {
					t.Fatalf("JoinExactPartials = %v, %v; DotExact %s", bitsString(got), err, bitsString(want))
				}
			})
		}
	}
}

// TestExactContextKnownAnswers: the C library's known answers, through contexts: cancellation that the
// canonical order loses, a sum that overflows, and an exact zero of huge products.
func TestExactContextKnownAnswers(t *testing.T) {
	big32 := float64(float32(1e16)) // the float32 nearest 1e16, as 1e16f in C
	x32 := make([]float64, 0, 301)
	for i := 0; i < 100; i++ {
		x32 = append(x32, big32, 1, -big32)
	}
	x32 = append(x32, 3)
	ones := make([]float64, len(x32))
	for i := range ones {
		ones[i] = 1
	}
	cases := []struct {
		name   string
		dtype  cudot.DType
		x, y   []float64
		want   float64
		wantOK func(float64) bool
	}{
		{"f32 cancellation", cudot.Float32, x32, ones, 103, nil},
		{"f64 overflow", cudot.Float64, []float64{1e300, 1e300, -1e300}, []float64{1e10, 1e10, 1e10}, math.Inf(1), nil},
		// +0, not -0: an exact zero is +0 in the exact mode.
		{"f64 exact zero", cudot.Float64, []float64{1e308, 1e308}, []float64{10, -10}, 0,
			func(r float64) bool { return !math.Signbit(r) }},
	}
	for _, m := range []cudot.Memory{cudot.Host, cudot.Auto} {
		for _, c := range cases {
			ctx := newExactContext(t, len(c.x), cudot.Options{DType: c.dtype, Memory: m})
			fill(t, ctx, c.x, c.y)
			got, err := ctx.Dot()
			if err != nil || got != c.want || (c.wantOK != nil && !c.wantOK(got)) {
				t.Errorf("%v %s: Dot = %s, %v; want %s", m, c.name, bitsString(got), err, bitsString(c.want))
			}
			part, err := ctx.TilePartials(0, len(c.x))
			if err != nil {
				t.Fatalf("%v %s: TilePartials: %v", m, c.name, err)
			}
			if got, err := cudot.JoinExactPartials(part); err != nil || !bitsEqual(got, c.want) {
				t.Errorf("%v %s: JoinExactPartials = %s, %v; want %s", m, c.name, bitsString(got), err, bitsString(c.want))
			}
		}
	}
	// The option reaches the library: a canonical Context of the same values loses the 100 ones.
	canonical := newContext(t, len(x32), cudot.Options{DType: cudot.Float32, Memory: cudot.Host})
	fill(t, canonical, x32, ones)
	if got, err := canonical.Dot(); err != nil || got == 103 || canonical.Mode() != cudot.ModeCanonical {
		t.Errorf("canonical Context: Dot = %v, %v, Mode %v; want another value than the exact 103, ModeCanonical",
			got, err, canonical.Mode())
	}
}

// TestExactContextAgainstBig: wide-range float64 data (products from 2^-600 to 2^600, both signs), on
// HOST and AUTO contexts, whole and in a prefix: the bits of big.Rat's exact sum rounded once.
func TestExactContextAgainstBig(t *testing.T) {
	const n = 20011
	p := pair{cudot.Float64, cudot.Float64}
	xs, ys := wideData(n, p, 11)
	for _, m := range []cudot.Memory{cudot.Host, cudot.Auto} {
		ctx := newExactContext(t, n, cudot.Options{DType: cudot.Float64, Memory: m})
		fill(t, ctx, xs, ys)
		for _, k := range []int{n, 1234} {
			want := ratDot(xs[:k], ys[:k])
			if got, err := ctx.DotN(k); err != nil || !bitsEqual(got, want) {
				t.Errorf("%v: DotN(%d) = %s, %v; math/big %s", m, k, bitsString(got), err, bitsString(want))
			}
		}
		// Cancellation: x followed by -x, then one small product that is all that is left.
		both := newExactContext(t, 2*n+1, cudot.Options{DType: cudot.Float64, Memory: m})
		x2, y2 := append(append([]float64(nil), xs...), xs...), append(append([]float64(nil), ys...), ys...)
		for i := n; i < 2*n; i++ {
			x2[i] = -x2[i]
		}
		x2, y2 = append(x2, 0x1p-1000), append(y2, 3)
		fill(t, both, x2, y2)
		if got, err := both.Dot(); err != nil || got != 3*0x1p-1000 || got != ratDot(x2, y2) {
			t.Errorf("%v: x then -x then 2^-1000*3: Dot = %s, %v; want %v", m, bitsString(got), err, 3*0x1p-1000)
		}
	}
}

// TestExactPartialsJoin: a vector cut at random places into pieces, each piece's exact partial taken by
// an exact Context of its own (HOST or AUTO, of a side type that holds its values), by a range of an
// exact Context holding the whole vector, or by TilePartialsExact on Go slices, joins in any order to
// the bits of DotExact over the whole vector and of math/big.
func TestExactPartialsJoin(t *testing.T) {
	const n = 30011
	rng := rand.New(rand.NewSource(3))
	// x float64 of wide range; y float32 values, so that a piece may hold y as float32 or float64.
	xs, ys := wideData(n, pair{cudot.Float64, cudot.Float32}, 17)
	whole := newExactContext(t, n, cudot.Options{DType: cudot.Float64, Memory: cudot.Host})
	fill(t, whole, xs, ys)
	want, err := cudot.DotExact(cudot.Float64Slice(xs), arrayOf(cudot.Float32, ys))
	if err != nil {
		t.Fatal(err)
	}
	if big := ratDot(xs, ys); !bitsEqual(want, big) {
		t.Fatalf("DotExact %s, math/big %s", bitsString(want), bitsString(big))
	}
	for round := 0; round < 8; round++ {
		// 1 to 9 cuts anywhere (not on tile boundaries), an empty piece where two cuts meet.
		cuts := []int{0, n}
		for k := rng.Intn(9) + 1; k > 0; k-- {
			cuts = append(cuts, rng.Intn(n+1))
		}
		if round == 0 {
			cuts = append(cuts, 77, 77)
		}
		sortInts(cuts)
		var parts [][]byte
		for i := 0; i+1 < len(cuts); i++ {
			a, b := cuts[i], cuts[i+1]
			var part []byte
			var err error
			switch (round + i) % 4 {
			case 0: // a range of the whole Context, starting anywhere
				part, err = whole.TilePartials(a, b-a)
			case 1, 2: // an exact Context of the piece alone, y as float32 or float64
				yt := []cudot.DType{cudot.Float32, cudot.Float64}[i%2]
				m := []cudot.Memory{cudot.Host, cudot.Auto}[(round/2)%2]
				ctx := newExactContext(t, b-a, cudot.Options{DType: cudot.Float64, YDType: yt, Memory: m})
				fill(t, ctx, xs[a:b], ys[a:b])
				part, err = ctx.TilePartials(0, b-a)
			case 3: // Go slices
				part, err = cudot.TilePartialsExact(cudot.Float64Slice(xs[a:b]), arrayOf(cudot.Float32, ys[a:b]))
			}
			if err != nil || len(part) != cudot.ExactPartialBytes {
				t.Fatalf("round %d, piece [%d, %d): %d bytes, %v; want one exact partial", round, a, b, len(part), err)
			}
			parts = append(parts, part)
		}
		rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		var all []byte
		for _, p := range parts {
			all = append(all, p...)
		}
		if got, err := cudot.JoinExactPartials(all); err != nil || !bitsEqual(got, want) {
			t.Fatalf("round %d, cuts %v: JoinExactPartials = %s, %v; DotExact %s", round, cuts, bitsString(got), err,
				bitsString(want))
		}
	}
	// No partials: +0.
	if got, err := cudot.JoinExactPartials(nil); err != nil || !bitsEqual(got, 0) {
		t.Errorf("JoinExactPartials(nil) = %s, %v; want +0", bitsString(got), err)
	}
}

func sortInts(v []int) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// TestExactPartialsRefused: bytes that are not exact partials are refused with the library's message
// (naming the partial), a length that is not a multiple of ExactPartialBytes by the binding.
func TestExactPartialsRefused(t *testing.T) {
	ctx := newExactContext(t, 10, cudot.Options{DType: cudot.Float64, Memory: cudot.Host})
	fill(t, ctx, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	var good []byte
	for _, r := range [][2]int{{0, 3}, {3, 4}, {7, 3}} {
		p, err := ctx.TilePartials(r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		good = append(good, p...)
	}
	if got, err := cudot.JoinExactPartials(good); err != nil || got != 55 {
		t.Fatalf("JoinExactPartials of the good partials = %v, %v; want 55", got, err)
	}
	// Partial 1 corrupted: its tag (first byte), or its reserved word (bytes 8 to 15).
	for _, at := range []int{0, 8, 15} {
		bad := append([]byte(nil), good...)
		bad[cudot.ExactPartialBytes+at] ^= 0x40
		got, err := cudot.JoinExactPartials(bad)
		checkError(t, fmt.Sprintf("byte %d of partial 1 changed (result %v)", at, got), err, "JoinExactPartials",
			cudot.ErrInvalidArgument, "partial 1 ")
	}
	// Canonical tile partials (70 tiles: 1120 bytes) are not an exact partial.
	canonical := newContext(t, 70*cudot.TileElements, cudot.Options{DType: cudot.Float32, Memory: cudot.Host})
	x, y := canonical.Float32Inputs()
	for i := range x {
		x[i], y[i] = 1, 2
	}
	tiles, err := canonical.TilePartials(0, canonical.Capacity())
	if err != nil || len(tiles) != cudot.ExactPartialBytes {
		t.Fatalf("canonical TilePartials: %d bytes, %v", len(tiles), err)
	}
	_, err = cudot.JoinExactPartials(tiles)
	checkError(t, "canonical partials", err, "JoinExactPartials", cudot.ErrInvalidArgument, "partial 0 ")
	// Lengths that are not a multiple of ExactPartialBytes.
	for _, l := range []int{1, cudot.ExactPartialBytes - 1, cudot.ExactPartialBytes + cudot.PartialBytes} {
		_, err := cudot.JoinExactPartials(make([]byte, l))
		checkError(t, fmt.Sprintf("%d bytes", l), err, "JoinExactPartials", cudot.ErrInvalidArgument,
			"not a multiple of ExactPartialBytes")
	}
	// All zeros has no tag either.
	_, err = cudot.JoinExactPartials(make([]byte, 2*cudot.ExactPartialBytes))
	checkError(t, "zero bytes", err, "JoinExactPartials", cudot.ErrInvalidArgument, "partial 0 ")
}

// TestExactContextLimits: what an exact Context refuses, and what it answers with n = 0 or a range at
// the end of its capacity.
func TestExactContextLimits(t *testing.T) {
	for _, m := range []cudot.Memory{cudot.Host, cudot.Auto} {
		// Rows in the exact mode (library 1.14): each row its exact dot, 0+1+2+3, 4+...+7 and 8+...+11
		// (TestExactContextDotEachRow compares them with DotExact on wide-range data).
		ctx := newExactContext(t, 4, cudot.Options{DType: cudot.Float32, Memory: m, Rows: 3})
		x, y := ctx.Float32Inputs()
		for i := range x {
			x[i], y[i] = float32(i), 1
		}
		results := []float64{-1, -1, -1}
		if err := ctx.DotEachRow(3, 4, results); err != nil || results[0] != 6 || results[1] != 22 || results[2] != 38 {
			t.Errorf("%v: DotEachRow of an exact Context: %v, %v; want [6 22 38]", m, results, err)
		}
		if r, err := ctx.RowDots(); err != nil || len(r) != 3 || r[2] != 38 {
			t.Errorf("%v: RowDots on an exact Context: %v, %v; want [6 22 38]", m, r, err)
		}
		// Beyond the Context's rows: still the library's refusal, nothing written.
		results = []float64{-1, -1, -1, -1}
		err := ctx.DotEachRow(4, 4, results)
		checkError(t, fmt.Sprintf("%v DotEachRow of 4 rows", m), err, "DotEachRow", cudot.ErrInvalidArgument, "")
		if results[0] != -1 {
			t.Errorf("%v: a refused DotEachRow wrote results %v", m, results)
		}
		// Dot still sees the 12 elements as one vector: 0 + 1 + ... + 11.
		if r, err := ctx.Dot(); err != nil || r != 66 {
			t.Errorf("%v: Dot of an exact Context with rows = %v, %v; want 66", m, r, err)
		}
		// One exact partial for any range, the empty one included; out-of-range still refused.
		for _, r := range [][2]int{{0, 0}, {12, 0}, {5, 7}, {11, 1}} {
			part, err := ctx.TilePartials(r[0], r[1])
			if err != nil || len(part) != cudot.ExactPartialBytes {
				t.Fatalf("%v: TilePartials(%d, %d): %d bytes, %v", m, r[0], r[1], len(part), err)
			}
			want := float64((r[0] + r[0] + r[1] - 1) * r[1] / 2)
			if got, err := cudot.JoinExactPartials(part); err != nil || !bitsEqual(got, want) {
				t.Errorf("%v: TilePartials(%d, %d) joins to %v, %v; want %v", m, r[0], r[1], got, err, want)
			}
		}
		_, err = ctx.TilePartials(10, 3)
		checkError(t, fmt.Sprintf("%v TilePartials past the end", m), err, "TilePartials", cudot.ErrInvalidArgument,
			"not within the capacity")
	}
	// A mode the library does not know: its own refusal, with its message.
	_, err := cudot.New(4, cudot.Options{Memory: cudot.Host, Mode: 7})
	checkError(t, "Mode 7", err, "New", cudot.ErrInvalidArgument, "not a cudot_mode")
	// After Close.
	ctx, err := cudot.New(4, cudot.Options{Memory: cudot.Host, Mode: cudot.ModeExact})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ctx.TilePartials(0, 4); err != cudot.ErrClosed || ctx.Mode() != cudot.ModeExact {
		t.Errorf("after Close: TilePartials: %v, Mode %v; want ErrClosed, ModeExact", err, ctx.Mode())
	}
	// Empty Go slices: the exact partial of an empty sum, which joins to +0.
	part, err := cudot.TilePartialsExact(cudot.Float32Slice(nil), cudot.Int8Slice(nil))
	if err != nil || len(part) != cudot.ExactPartialBytes {
		t.Fatalf("TilePartialsExact of empty slices: %d bytes, %v", len(part), err)
	}
	if got, err := cudot.JoinExactPartials(part); err != nil || !bitsEqual(got, 0) {
		t.Errorf("the empty exact partial joins to %s, %v; want +0", bitsString(got), err)
	}
	_, err = cudot.TilePartialsExact(cudot.Float32Slice(make([]float32, 3)), cudot.Float32Slice(make([]float32, 2)))
	checkError(t, "lengths differ", err, "TilePartialsExact", cudot.ErrInvalidArgument, "x has 3 elements and y 2")
	if !strings.Contains(fmt.Sprint(err), "TilePartialsExact") {
		t.Errorf("error %v does not name TilePartialsExact", err)
	}
}
