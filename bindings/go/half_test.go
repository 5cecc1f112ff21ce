package cudot_test

import (
	"math"
	"math/rand"
	"sort"
	"testing"

	"cudot.example/cudot"
)

// f16Value decodes a binary16 pattern from its definition, in float64: (-1)^s * 2^(e-15) * 1.f, or
// 2^-14 * 0.f for e == 0. Independent of the code under test; NaN and Inf patterns are not asked for.
func f16Value(b uint16) float64 {
	e, f := int(b>>10)&0x1f, float64(b&0x3ff)/1024
	v := math.Ldexp(1+f, e-15)
	if e == 0 {
		v = math.Ldexp(f, -14)
	}
	if b&0x8000 != 0 {
		v = -v
	}
	return v
}

func isF16NaN(b uint16) bool  { return b&0x7c00 == 0x7c00 && b&0x3ff != 0 }
func isBF16NaN(b uint16) bool { return b&0x7f80 == 0x7f80 && b&0x7f != 0 }

func TestFloat16frombits(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		b := uint16(i)
		got := cudot.Float16frombits(b)
		switch {
		case isF16NaN(b):
			if !math.IsNaN(float64(got)) || math.Signbit(float64(got)) != (b&0x8000 != 0) {
				t.Fatalf("Float16frombits(%#04x) = %v, want a NaN of the same sign", b, got)
			}
		case b&0x7fff == 0x7c00:
			if !math.IsInf(float64(got), map[bool]int{false: 1, true: -1}[b&0x8000 != 0]) {
				t.Fatalf("Float16frombits(%#04x) = %v, want an infinity", b, got)
			}
		default:
			if want := f16Value(b); float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
				t.Fatalf("Float16frombits(%#04x) = %v, want %v", b, got, want)
			}
		}
	}
}

func TestBFloat16frombits(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		b := uint16(i)
		if got, want := math.Float32bits(cudot.BFloat16frombits(b)), uint32(b)<<16; got != want {
			t.Fatalf("BFloat16frombits(%#04x) has bits %#08x, want %#08x", b, got, want)
		}
	}
	if cudot.BFloat16frombits(0x3f80) != 1 || cudot.BFloat16frombits(0xc040) != -3 {
		t.Fatal("BFloat16frombits(1.0 or -3.0) is wrong")
	}
}

// TestHalfBitsRoundTrip: converting every non-NaN pattern to float32 and back gives the same pattern;
// a NaN comes back as a quiet NaN of the same sign.
func TestHalfBitsRoundTrip(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		b := uint16(i)
		got := cudot.Float16bits(cudot.Float16frombits(b))
		if isF16NaN(b) {
			if !isF16NaN(got) || got&0x0200 == 0 || got&0x8000 != b&0x8000 {
				t.Fatalf("Float16 NaN %#04x came back as %#04x", b, got)
			}
		} else if got != b {
			t.Fatalf("Float16bits(Float16frombits(%#04x)) = %#04x", b, got)
		}
		got = cudot.BFloat16bits(cudot.BFloat16frombits(b))
		if isBF16NaN(b) {
			if !isBF16NaN(got) || got&0x0040 == 0 || got&0x8000 != b&0x8000 {
				t.Fatalf("BFloat16 NaN %#04x came back as %#04x", b, got)
			}
		} else if got != b {
			t.Fatalf("BFloat16bits(BFloat16frombits(%#04x)) = %#04x", b, got)
		}
	}
	// A signaling float32 NaN becomes a NaN, not an infinity, even when its payload is all low bits.
	sNaN := math.Float32frombits(0x7f800001)
	if b := cudot.Float16bits(sNaN); !isF16NaN(b) {
		t.Errorf("Float16bits(signaling NaN) = %#04x", b)
	}
	if b := cudot.BFloat16bits(sNaN); !isBF16NaN(b) {
		t.Errorf("BFloat16bits(signaling NaN) = %#04x", b)
	}
}

// nextUp and nextDown step one float32 away from f.
func nextUp(f float32) float32   { return math.Nextafter32(f, float32(math.Inf(1))) }
func nextDown(f float32) float32 { return math.Nextafter32(f, float32(math.Inf(-1))) }

// TestHalfBitsRounding: at each midpoint between two neighbouring positive values (and its mirror),
// the conversion rounds to the even one; one float32 above goes up, one below goes down. The value
// above the largest float16 is 65536 (its exponent would be Inf's), above the largest bfloat16 2^128.
func TestHalfBitsRounding(t *testing.T) {
	type conv struct {
		name string
		bits func(float32) uint16
		from func(uint16) float64
		last uint16 // the largest finite positive pattern
		top  float64
	}
	for _, c := range []conv{
		{"Float16", cudot.Float16bits, f16Value, 0x7bff, 65536},
		{"BFloat16", cudot.BFloat16bits, func(b uint16) float64 { return float64(cudot.BFloat16frombits(b)) }, 0x7f7f, math.Ldexp(1, 128)},
	} {
		for b := uint16(0); b <= c.last; b++ {
			lo, hi := c.from(b), c.top
			if b < c.last {
				hi = c.from(b + 1)
			}
			mid := float32((lo + hi) / 2) // a float32 exactly: one bit more than the 16-bit formats
			if float64(mid) != (lo+hi)/2 {
				t.Fatalf("%s: midpoint after %#04x is not a float32", c.name, b)
			}
			even := b
			if b&1 == 1 {
				even = b + 1
			}
			for _, sign := range []uint16{0, 0x8000} {
				m := mid
				if sign != 0 {
					m = -mid
				}
				below, above := nextDown(mid), nextUp(mid)
				if sign != 0 {
					below, above = -below, -above
				}
				if got := c.bits(m); got != even|sign {
					t.Fatalf("%s(%g) = %#04x, want %#04x (ties to even)", c.name, m, got, even|sign)
				}
				if got := c.bits(below); got != b|sign {
					t.Fatalf("%s(%g) = %#04x, want %#04x", c.name, below, got, b|sign)
				}
				if got := c.bits(above); got != (b+1)|sign {
					t.Fatalf("%s(%g) = %#04x, want %#04x", c.name, above, got, (b+1)|sign)
				}
			}
		}
	}
	for _, tc := range []struct {
		f    float32
		want uint16
	}{
		{65520, 0x7c00}, {-1e9, 0xfc00}, {float32(math.Inf(1)), 0x7c00}, {0x1p-25, 0}, {-0x1p-25, 0x8000},
		{math.Float32frombits(1), 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000},
	} {
		if got := cudot.Float16bits(tc.f); got != tc.want {
			t.Errorf("Float16bits(%g) = %#04x, want %#04x", tc.f, got, tc.want)
		}
	}
	if got := cudot.BFloat16bits(math.MaxFloat32); got != 0x7f80 {
		t.Errorf("BFloat16bits(MaxFloat32) = %#04x, want +Inf", got)
	}
}

// TestHalfBitsNearest: for random float32 values the result is the nearest value, found by search in
// the sorted table of every finite positive pattern (ties settled by TestHalfBitsRounding).
func TestHalfBitsNearest(t *testing.T) {
	for _, c := range []struct {
		name string
		bits func(float32) uint16
		from func(uint16) float64
		last uint16
		top  float64
	}{
		{"Float16", cudot.Float16bits, f16Value, 0x7bff, 65536},
		{"BFloat16", cudot.BFloat16bits, func(b uint16) float64 { return float64(cudot.BFloat16frombits(b)) }, 0x7f7f, math.Ldexp(1, 128)},
	} {
		table := make([]float64, int(c.last)+2) // table[b] = value of b, then the "next" value top
		for b := 0; b <= int(c.last); b++ {
			table[b] = c.from(uint16(b))
		}
		table[c.last+1] = c.top
		rng := rand.New(rand.NewSource(1))
		for i := 0; i < 200000; i++ {
			f := math.Float32frombits(rng.Uint32() & 0x7fffffff)
			if math.IsNaN(float64(f)) || float64(f) >= c.top {
				continue
			}
			v := float64(f)
			j := sort.SearchFloat64s(table, v) // table[j-1] < v <= table[j]
			want := uint16(j)
			if table[j] != v && v-table[j-1] < table[j]-v {
				want = uint16(j - 1)
			} else if table[j] != v && v-table[j-1] == table[j]-v && j%2 == 1 {
				want = uint16(j - 1)
			}
			if got := c.bits(f); got != want {
				t.Fatalf("%s(%g) = %#04x, want %#04x", c.name, f, got, want)
			}
		}
	}
}

// TestHalfDecodingMatchesLibrary: the library reads every Float16 and BFloat16 pattern as the same
// value that Float16frombits and BFloat16frombits give (x times 1.0, one pattern at a time).
func TestHalfDecodingMatchesLibrary(t *testing.T) {
	for _, tc := range []struct {
		d    cudot.DType
		from func(uint16) float32
	}{{cudot.Float16, cudot.Float16frombits}, {cudot.BFloat16, cudot.BFloat16frombits}} {
		t.Run(tc.d.String(), func(t *testing.T) {
			ctx := newContext(t, 1, cudot.Options{DType: tc.d, YDType: cudot.Float32, Memory: cudot.Host})
			x := halfBits(ctx, false)
			ctx.YFloat32()[0] = 1
			for i := 0; i < 1<<16; i++ {
				x[0] = uint16(i)
				got, err := ctx.Dot()
				want := float64(tc.from(uint16(i)))
				// == rather than bitsEqual: -0 * 1 added to the +0 that every sum starts from is +0.
				if err != nil || !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
					t.Fatalf("pattern %#04x: library gives %v (%v), %vfrombits %v", i, got, err, tc.d, want)
				}
			}
		})
	}
}
