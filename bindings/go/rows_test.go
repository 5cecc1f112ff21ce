package cudot_test

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"cudot.example/cudot"
)

// Many dots in one call (cudot 1.9): every row's result is bit for bit Dot of that row's views alone.

func dotAlone(t *testing.T, x, y cudot.Array) float64 {
	t.Helper()
	r, err := cudot.Dot(x, y)
	if err != nil {
		t.Fatalf("Dot: %v", err)
	}
	return r
}

func TestDotRowsGivesEachRowItsOwnBits(t *testing.T) {
	rng := rand.New(rand.NewSource(20261128))
	const count = 37
	for _, n := range []int{1, 33, 1000, 9000} {
		x := make([]float32, count*(n+2))
		y := make([]float64, count*n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		for i := range y {
			y[i] = rng.NormFloat64() * 1e3
		}
		results := make([]float64, count+1)
		results[count] = -7
		// x's rows n + 2 apart, y's n apart.
		if err := cudot.DotRows(cudot.Float32Slice(x).Strided(0, n, 1), cudot.Float64Slice(y).Strided(0, n, 1), count,
			n+2, n, results); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		for i := 0; i < count; i++ {
			want := dotAlone(t, cudot.Float32Slice(x).Strided(i*(n+2), n, 1), cudot.Float64Slice(y).Strided(i*n, n, 1))
			if math.Float64bits(results[i]) != math.Float64bits(want) {
				t.Fatalf("n=%d row %d: %v, alone %v", n, i, results[i], want)
			}
		}
		if results[count] != -7 {
			t.Fatalf("n=%d: a result was written past count", n)
		}
		// One query (row stride 0) against every row of y, read backwards.
		q := cudot.Float32Slice(x).Strided(n-1, n, -1)
		if err := cudot.DotRows(q, cudot.Float64Slice(y).Strided(0, n, 1), count, 0, n, results); err != nil {
			t.Fatalf("n=%d, one query: %v", n, err)
		}
		for i := 0; i < count; i++ {
			want := dotAlone(t, q, cudot.Float64Slice(y).Strided(i*n, n, 1))
			if math.Float64bits(results[i]) != math.Float64bits(want) {
				t.Fatalf("n=%d one query, row %d: %v, alone %v", n, i, results[i], want)
			}
		}
	}
}

func TestDotSegmentsGivesEachSegmentItsOwnBits(t *testing.T) {
	x := make([]float64, 30000)
	y := make([]int8, 30000)
	for i := range x {
		x[i] = math.Sin(float64(i)) * 1e5
		y[i] = int8(i%251 - 125)
	}
	offsets := []int64{0, 0, 1, 8193, 8193, 20000, 30000}
	results := make([]float64, len(offsets)-1)
	if err := cudot.DotSegments(cudot.Float64Slice(x), cudot.Int8Slice(y), offsets, results); err != nil {
		t.Fatal(err)
	}
	for i := range results {
		a, b := int(offsets[i]), int(offsets[i+1])
		want := 0.0
		if b > a {
			want = dotAlone(t, cudot.Float64Slice(x).Strided(a, b-a, 1), cudot.Int8Slice(y).Strided(a, b-a, 1))
		}
		if math.Float64bits(results[i]) != math.Float64bits(want) {
			t.Fatalf("segment %d [%d, %d): %v, alone %v", i, a, b, results[i], want)
		}
	}
}

func TestRowsRefuseWhatWouldReadOutsideTheirSlices(t *testing.T) {
	x := make([]float32, 100)
	y := make([]float32, 100)
	results := []float64{42, 42, 42, 42}
	untouched := func() {
		t.Helper()
		for _, r := range results {
			if r != 42 {
				t.Fatalf("a refused call wrote a result: %v", results)
			}
		}
	}
	cases := []struct {
		name string
		err  error
	}{
		{"rows past the slice", cudot.DotRows(cudot.Float32Slice(x).Strided(0, 30, 1), cudot.Float32Slice(y).Strided(0, 30, 1), 4, 30, 30, results)},
		{"results too short", cudot.DotRows(cudot.Float32Slice(x).Strided(0, 10, 1), cudot.Float32Slice(y).Strided(0, 10, 1), 5, 10, 10, results)},
		{"row stride overflowing", cudot.DotRows(cudot.Float32Slice(x).Strided(0, 10, 1), cudot.Float32Slice(y).Strided(0, 10, 1), 4, math.MaxInt/2, 10, results)},
		{"lengths differ", cudot.DotRows(cudot.Float32Slice(x).Strided(0, 10, 1), cudot.Float32Slice(y).Strided(0, 11, 1), 2, 10, 10, results)},
		{"offset past the end", cudot.DotSegments(cudot.Float32Slice(x), cudot.Float32Slice(y), []int64{0, 50, 101}, results)},
		{"offsets decreasing", cudot.DotSegments(cudot.Float32Slice(x), cudot.Float32Slice(y), []int64{0, 50, 40}, results)},
	}
	for _, c := range cases {
		if !errors.Is(c.err, cudot.ErrInvalidArgument) {
			t.Errorf("%s: got %v, want ErrInvalidArgument", c.name, c.err)
		}
		untouched()
	}
}
