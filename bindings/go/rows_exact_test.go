package cudot_test

import (
	"fmt"
	"testing"

	"cudot.example/cudot"
)

// Exact rows (cudot 1.14): every result of DotRowsExact and DotSegmentsExact is bit for bit DotExact of
// that row's views alone, and an exact Context's DotEachRow gives each row its exact dot.

func exactAlone(t *testing.T, x, y cudot.Array) float64 {
	t.Helper()
	r, err := cudot.DotExact(x, y)
	if err != nil {
		t.Fatalf("DotExact: %v", err)
	}
	return r
}

func TestDotRowsExactGivesEachRowItsExactDot(t *testing.T) {
	const count = 23
	for _, p := range exactPairs {
		for _, n := range []int{1, 7, 33, 1000, 9000} {
			name := fmt.Sprintf("%v n=%d", p, n)
			// x's rows n + 2 apart, y's n apart, over wide-range data whose naive sums cancel and round.
			xs, _ := wideData(count*(n+2), p, int64(n)*7+int64(p.x))
			_, ys := wideData(count*n, p, int64(n)*11+int64(p.y))
			x, y := arrayOf(p.x, xs), arrayOf(p.y, ys)
			results := make([]float64, count+1)
			results[count] = -7
			if err := cudot.DotRowsExact(x.Strided(0, n, 1), y.Strided(0, n, 1), count, n+2, n, results); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i := 0; i < count; i++ {
				xr, yr := x.Strided(i*(n+2), n, 1), y.Strided(i*n, n, 1)
				if want := exactAlone(t, xr, yr); !bitsEqual(results[i], want) {
					t.Fatalf("%s row %d: %s, DotExact alone %s", name, i, bitsString(results[i]), bitsString(want))
				}
				if p.x == cudot.Float64 && p.y == cudot.Float64 {
					if want := ratDot(xs[i*(n+2):i*(n+2)+n], ys[i*n:i*n+n]); !bitsEqual(results[i], want) {
						t.Fatalf("%s row %d: %s, math/big %s", name, i, bitsString(results[i]), bitsString(want))
					}
				}
			}
			if results[count] != -7 {
				t.Fatalf("%s: a result was written past count", name)
			}
			// One query (row stride 0), read backwards, against every row of y: a table.
			q := x.Strided(n-1, n, -1)
			if err := cudot.DotRowsExact(q, y.Strided(0, n, 1), count, 0, n, results); err != nil {
				t.Fatalf("%s, one query: %v", name, err)
			}
			for i := 0; i < count; i++ {
				if want := exactAlone(t, q, y.Strided(i*n, n, 1)); !bitsEqual(results[i], want) {
					t.Fatalf("%s one query, row %d: %s, DotExact alone %s", name, i, bitsString(results[i]),
						bitsString(want))
				}
			}
		}
	}
}

// TestDotRowsExactKnownAnswers: values whose naive sums are wrong. float32 [1e16, 1, -1e16] x 100 then
// [3] against ones is 103 exactly (4 in the canonical order); float64 [1e308, 1e308].[10, -10] is +0
// (its products overflow one by one); empty rows are +0.
func TestDotRowsExactKnownAnswers(t *testing.T) {
	var triples []float32
	for i := 0; i < 100; i++ {
		triples = append(triples, 1e16, 1, -1e16)
	}
	triples = append(triples, 3)
	n := len(triples)
	// A table of three rows: the triples, the triples reversed, and ones; the query is ones.
	table := make([]float32, 3*n)
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
		table[i], table[2*n-1-i], table[2*n+i] = triples[i], triples[i], 1
	}
	exact := make([]float64, 3)
	canonical := make([]float64, 3)
	query, rows := cudot.Float32Slice(ones), cudot.Float32Slice(table).Strided(0, n, 1)
	if err := cudot.DotRowsExact(query, rows, 3, 0, n, exact); err != nil {
		t.Fatal(err)
	}
	if err := cudot.DotRows(query, rows, 3, 0, n, canonical); err != nil {
		t.Fatal(err)
	}
	if exact[0] != 103 || exact[1] != 103 || exact[2] != float64(n) || canonical[0] != 4 {
		t.Errorf("exact rows %v, canonical %v; want [103 103 %d] and 4 first", exact, canonical[:1], n)
	}

	// float64: the same two products as a segmented batch, beside an empty segment and a one-element one.
	x := []float64{1e308, 1e308, 2}
	y := []float64{10, -10, 0.5}
	got := []float64{-1, -1, -1, -1}
	if err := cudot.DotSegmentsExact(cudot.Float64Slice(x), cudot.Float64Slice(y), []int64{0, 2, 2, 3, 3}, got); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0, 0, 1, 0} {
		if !bitsEqual(got[i], want) {
			t.Errorf("segment %d: %s, want %s", i, bitsString(got[i]), bitsString(want))
		}
	}
	// The same as strided rows of two elements, the query [10, -10] repeated.
	if err := cudot.DotRowsExact(cudot.Float64Slice(x).Strided(0, 2, 1), cudot.Float64Slice(y).Strided(0, 2, 1), 1, 0, 0,
		got); err != nil || !bitsEqual(got[0], 0) {
		t.Errorf("strided: %s, %v; want +0", bitsString(got[0]), err)
	}

	// Empty rows: +0 each, whatever the count.
	empty := []float64{-1, -1, -1}
	if err := cudot.DotRowsExact(cudot.Float32Slice(nil), cudot.Float64Slice(nil), 3, 0, 0, empty); err != nil {
		t.Fatal(err)
	}
	for i, r := range empty {
		if !bitsEqual(r, 0) {
			t.Errorf("empty row %d: %s, want +0", i, bitsString(r))
		}
	}
}

func TestDotSegmentsExactGivesEachSegmentItsExactDot(t *testing.T) {
	for _, p := range exactPairs {
		xs, ys := wideData(30000, p, int64(p.x)*13+int64(p.y))
		x, y := arrayOf(p.x, xs), arrayOf(p.y, ys)
		offsets := []int64{0, 0, 1, 8193, 8193, 20000, 30000}
		results := make([]float64, len(offsets)-1)
		if err := cudot.DotSegmentsExact(x, y, offsets, results); err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		for i := range results {
			a, b := int(offsets[i]), int(offsets[i+1])
			want := 0.0
			if b > a {
				want = exactAlone(t, x.Strided(a, b-a, 1), y.Strided(a, b-a, 1))
			}
			if !bitsEqual(results[i], want) {
				t.Fatalf("%v segment %d [%d, %d): %s, DotExact alone %s", p, i, a, b, bitsString(results[i]),
					bitsString(want))
			}
		}
	}
}

// TestRowsModeRefused: a mode the library does not know is its ErrInvalidArgument, whose message names
// the field, and nothing is written; the binding's own checks still come first for the exact calls.
func TestRowsModeRefused(t *testing.T) {
	x := []float32{1, 2, 3, 4}
	results := []float64{42, 42}
	err := cudot.DotRowsIn("DotRows", cudot.Mode(7), cudot.Float32Slice(x).Strided(0, 2, 1),
		cudot.Float32Slice(x).Strided(0, 2, 1), 2, 2, 2, results)
	checkError(t, "rows, mode 7", err, "DotRows", cudot.ErrInvalidArgument, "mode")
	err = cudot.DotSegmentsIn("DotSegments", cudot.Mode(-1), cudot.Float32Slice(x), cudot.Float32Slice(x),
		[]int64{0, 1, 4}, results)
	checkError(t, "segments, mode -1", err, "DotSegments", cudot.ErrInvalidArgument, "mode")
	if results[0] != 42 || results[1] != 42 {
		t.Errorf("a refused call wrote results %v", results)
	}
	err = cudot.DotRowsExact(cudot.Float32Slice(x).Strided(0, 3, 1), cudot.Float32Slice(x).Strided(0, 3, 1), 2, 3, 3,
		results)
	checkError(t, "exact rows past the slice", err, "DotRowsExact", cudot.ErrInvalidArgument, "leaves its slice")
	err = cudot.DotSegmentsExact(cudot.Float32Slice(x), cudot.Float32Slice(x), []int64{0, 5}, results)
	checkError(t, "exact offset past the end", err, "DotSegmentsExact", cudot.ErrInvalidArgument, "offsets[1]")
	if results[0] != 42 || results[1] != 42 {
		t.Errorf("a refused call wrote results %v", results)
	}
}

// TestExactContextDotEachRow: DotEachRow and RowDots of an exact Context give each row the bits of
// DotExact on a copy of it, the known answers included (a row of the triples is 103, not 4).
func TestExactContextDotEachRow(t *testing.T) {
	for _, m := range exactStrategies {
		m := m
		t.Run(m.String(), func(t *testing.T) {
			for _, p := range exactPairs {
				const rows, n = 5, 301
				ctx := newExactContext(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: m, Rows: rows})
				xs, ys := wideData(rows*n, p, int64(p.x)+17*int64(p.y))
				if p.x == cudot.Float32 && p.y == cudot.Float32 {
					big := float64(float32(1e16)) // as the float32 buffer holds it
					for i := 0; i < 300; i += 3 { // row 1: the triples against ones
						xs[n+i], xs[n+i+1], xs[n+i+2] = big, 1, -big
					}
					xs[n+300] = 3
					for i := 0; i < n; i++ {
						ys[n+i] = 1
					}
				}
				fill(t, ctx, xs, ys)
				results := make([]float64, rows)
				if err := ctx.DotEachRow(rows, n, results); err != nil {
					t.Fatalf("%v DotEachRow: %v", p, err)
				}
				all, err := ctx.RowDots()
				if err != nil {
					t.Fatalf("%v RowDots: %v", p, err)
				}
				for r := 0; r < rows; r++ {
					want := exactAlone(t, rowArray(t, ctx, false, r, n), rowArray(t, ctx, true, r, n))
					if !bitsEqual(results[r], want) || !bitsEqual(all[r], want) {
						t.Fatalf("%v row %d: DotEachRow %s, RowDots %s; DotExact alone %s", p, r,
							bitsString(results[r]), bitsString(all[r]), bitsString(want))
					}
				}
				if p.x == cudot.Float32 && p.y == cudot.Float32 && results[1] != 103 {
					t.Errorf("the triples' row: %v, want 103", results[1])
				}
				// The first 7 elements of the first 3 rows; n = 0 gives +0s.
				part := []float64{-1, -1, -1, -1}
				if err := ctx.DotEachRow(3, 7, part); err != nil {
					t.Fatal(err)
				}
				for r := 0; r < 3; r++ {
					want := exactAlone(t, rowArray(t, ctx, false, r, 7), rowArray(t, ctx, true, r, 7))
					if !bitsEqual(part[r], want) {
						t.Fatalf("%v row %d, 7 elements: %s, DotExact alone %s", p, r, bitsString(part[r]), bitsString(want))
					}
				}
				if part[3] != -1 {
					t.Fatalf("%v: DotEachRow(3, ...) wrote a fourth result", p)
				}
				if err := ctx.DotEachRow(3, 0, part); err != nil || !bitsEqual(part[0], 0) || !bitsEqual(part[2], 0) {
					t.Fatalf("%v: DotEachRow(3, 0): %v, %v; want +0s", p, part[:3], err)
				}
			}
		})
	}
}

func ExampleDotRowsExact() {
	// One query against a table of two rows; row 0's naive sum loses every 1.
	n := 301
	table := make([]float32, 2*n)
	for i := 0; i < 300; i += 3 {
		table[i], table[i+1], table[i+2] = 1e16, 1, -1e16
	}
	table[300] = 3
	for i := n; i < 2*n; i++ {
		table[i] = 0.5
	}
	query := make([]float32, n)
	for i := range query {
		query[i] = 1
	}
	exact, canonical := make([]float64, 2), make([]float64, 2)
	q, rows := cudot.Float32Slice(query), cudot.Float32Slice(table).Strided(0, n, 1)
	err1 := cudot.DotRowsExact(q, rows, 2, 0, n, exact)
	err2 := cudot.DotRows(q, rows, 2, 0, n, canonical)
	fmt.Println(exact, canonical, err1, err2)
	// Output: [103 150.5] [4 150.5] <nil> <nil>
}
