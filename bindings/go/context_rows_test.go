package cudot_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"cudot.example/cudot"
)

// Contexts with rows (cudot 1.10): Options.Rows, Rows, Row, DotEachRow and RowDots. Every result is bit for
// bit Dot of a copy of that row's first n elements (own arrays, computed on the CPU).

// rowArray is a copy of the first m elements of row r of x (y when isY) as an Array of the side's type.
func rowArray(t *testing.T, ctx *cudot.Context, isY bool, r, m int) cudot.Array {
	t.Helper()
	d := ctx.DType()
	if isY {
		d = ctx.YDType()
	}
	switch d {
	case cudot.Float32:
		return cudot.Float32Slice(append([]float32(nil), cudot.Row(ctx, either(isY, ctx.XFloat32, ctx.YFloat32), r)[:m]...))
	case cudot.Float64:
		return cudot.Float64Slice(append([]float64(nil), cudot.Row(ctx, either(isY, ctx.XFloat64, ctx.YFloat64), r)[:m]...))
	case cudot.Float16:
		return cudot.Float16Slice(append([]uint16(nil), cudot.Row(ctx, halfBits(ctx, isY), r)[:m]...))
	case cudot.BFloat16:
		return cudot.BFloat16Slice(append([]uint16(nil), cudot.Row(ctx, halfBits(ctx, isY), r)[:m]...))
	case cudot.Int8:
		return cudot.Int8Slice(append([]int8(nil), cudot.Row(ctx, either(isY, ctx.XInt8, ctx.YInt8), r)[:m]...))
	case cudot.Uint8:
		return cudot.Uint8Slice(append([]uint8(nil), cudot.Row(ctx, either(isY, ctx.XUint8, ctx.YUint8), r)[:m]...))
	}
	t.Fatalf("unknown dtype %v", d)
	return cudot.Array{}
}

// checkEachRow: results[i] has the bits of Dot on copies of the first m elements of row i.
func checkEachRow(t *testing.T, ctx *cudot.Context, results []float64, m int, what string) {
	t.Helper()
	for r, got := range results {
		want, err := cudot.Dot(rowArray(t, ctx, false, r, m), rowArray(t, ctx, true, r, m))
		if err != nil {
			t.Fatalf("%s: Dot of row %d alone: %v", what, r, err)
		}
		if !bitsEqual(got, want) {
			t.Fatalf("%s: row %d gives %v (%#x), its own dot %v (%#x)", what, r, got, math.Float64bits(got), want,
				math.Float64bits(want))
		}
	}
}

// checkRowsContext runs the checks of a context with rows on ctx (rows x n, filled by the caller).
func checkRowsContext(t *testing.T, ctx *cudot.Context, rows, n int) {
	t.Helper()
	if r, l := ctx.Rows(); r != rows || l != n || ctx.Capacity() != rows*n {
		t.Fatalf("Rows() = %d, %d and Capacity() = %d; want %d, %d and %d", r, l, ctx.Capacity(), rows, n, rows*n)
	}
	all, err := ctx.RowDots()
	if err != nil || len(all) != rows {
		t.Fatalf("RowDots: %d results, %v", len(all), err)
	}
	checkEachRow(t, ctx, all, n, "RowDots")
	// Prefixes: fewer rows, shorter rows, both; results past rows untouched.
	for _, k := range []int{rows, rows / 2, 1, 0} {
		for _, m := range []int{n, n / 3, 1, 0} {
			if m > n {
				continue
			}
			results := make([]float64, k+1)
			results[k] = 42
			if err := ctx.DotEachRow(k, m, results); err != nil {
				t.Fatalf("DotEachRow(%d, %d): %v", k, m, err)
			}
			if results[k] != 42 {
				t.Fatalf("DotEachRow(%d, %d) wrote past its rows", k, m)
			}
			checkEachRow(t, ctx, results[:k], m, fmt.Sprintf("DotEachRow(%d, %d)", k, m))
			if m == 0 {
				for i, v := range results[:k] {
					if math.Float64bits(v) != 0 {
						t.Fatalf("DotEachRow(%d, 0): result %d is %v, want +0", k, i, v)
					}
				}
			}
		}
	}
	// Beyond the context: refused by the library, with its message, and nothing written.
	for _, c := range []struct{ rows, n int }{{rows + 1, n}, {rows, n + 1}, {rows + 1, 0}} {
		results := make([]float64, c.rows)
		for i := range results {
			results[i] = 42
		}
		err := ctx.DotEachRow(c.rows, c.n, results)
		var e *cudot.Error
		if !errors.Is(err, cudot.ErrInvalidArgument) || !errors.As(err, &e) || !strings.Contains(e.Message, "exceed") ||
			e.Op != "DotEachRow" {
			t.Fatalf("DotEachRow(%d, %d) on %d rows of %d: %v, want the library's INVALID_ARGUMENT", c.rows, c.n, rows, n, err)
		}
		for i, v := range results {
			if v != 42 {
				t.Fatalf("DotEachRow(%d, %d) failed but wrote result %d", c.rows, c.n, i)
			}
		}
	}
}

func TestContextRowsHaveTheBitsOfEachRowsOwnDot(t *testing.T) {
	for _, p := range []pair{{cudot.Float32, cudot.Float32}, {cudot.Float64, cudot.Float64}, {cudot.Float16, cudot.Int8},
		{cudot.BFloat16, cudot.Float32}, {cudot.Uint8, cudot.Int8}} {
		for _, shape := range []struct{ rows, n int }{{11, 37}, {3, 8192 + 5}, {1, 100}, {4, 0}} {
			t.Run(fmt.Sprintf("%v/%dx%d", p, shape.rows, shape.n), func(t *testing.T) {
				ctx := newContext(t, shape.n, cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host, Rows: shape.rows})
				xs, ys := randomPair(shape.rows*shape.n, p, int64(shape.rows*1000+shape.n))
				fill(t, ctx, xs, ys)
				checkRowsContext(t, ctx, shape.rows, shape.n)
				// Dot still sees one vector of rows * n elements.
				whole, err1 := ctx.Dot()
				want, err2 := cudot.Dot(rowArrayAll(t, ctx, false), rowArrayAll(t, ctx, true))
				if err1 != nil || err2 != nil || !bitsEqual(whole, want) {
					t.Fatalf("Dot %v (%v), own arrays %v (%v)", whole, err1, want, err2)
				}
			})
		}
	}
}

// rowArrayAll is a copy of all of x (y when isY) as one Array: a context of one row of Capacity elements
// would hold it.
func rowArrayAll(t *testing.T, ctx *cudot.Context, isY bool) cudot.Array {
	t.Helper()
	whole := newContext(t, ctx.Capacity(), cudot.Options{DType: ctx.DType(), YDType: ctx.YDType(), Memory: cudot.Host})
	for _, side := range []bool{false, true} {
		copySide(ctx, whole, side)
	}
	return rowArray(t, whole, isY, 0, ctx.Capacity())
}

// copySide copies x (y when isY) of from into to, which has the same types and capacity.
func copySide(from, to *cudot.Context, isY bool) {
	d := from.DType()
	if isY {
		d = from.YDType()
	}
	switch d {
	case cudot.Float32:
		copy(either(isY, to.XFloat32, to.YFloat32), either(isY, from.XFloat32, from.YFloat32))
	case cudot.Float64:
		copy(either(isY, to.XFloat64, to.YFloat64), either(isY, from.XFloat64, from.YFloat64))
	case cudot.Float16, cudot.BFloat16:
		copy(halfBits(to, isY), halfBits(from, isY))
	case cudot.Int8:
		copy(either(isY, to.XInt8, to.YInt8), either(isY, from.XInt8, from.YInt8))
	case cudot.Uint8:
		copy(either(isY, to.XUint8, to.YUint8), either(isY, from.XUint8, from.YUint8))
	}
}

func TestContextRowsViewsAndRow(t *testing.T) {
	ctx := newContext(t, 5, cudot.Options{DType: cudot.Float64, Memory: cudot.Host, Rows: 3})
	x, y := ctx.Float64Inputs()
	if len(x) != 15 || len(y) != 15 {
		t.Fatalf("the views cover %d and %d elements, want rows*n = 15", len(x), len(y))
	}
	for i := range x {
		x[i], y[i] = 0, 1
	}
	row1 := cudot.Row(ctx, x, 1)
	if len(row1) != 5 || cap(row1) != 5 || &row1[0] != &x[5] {
		t.Fatalf("Row(1) has length %d, capacity %d, and starts at another element than x[5]", len(row1), cap(row1))
	}
	row1[2] = 7 // element 7 of the buffer
	if d, _ := ctx.Dot(); d != 7 {
		t.Fatalf("Dot = %v, want 7", d)
	}
	if d, _ := ctx.DotN(7); d != 0 {
		t.Fatalf("DotN(7) = %v, want 0", d)
	}
	if got, err := ctx.RowDots(); err != nil || len(got) != 3 || got[0] != 0 || got[1] != 7 || got[2] != 0 {
		t.Fatalf("RowDots = %v, %v; want [0 7 0]", got, err)
	}
	for _, r := range []int{-1, 3} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Row(%d) of 3 rows did not panic", r)
				}
			}()
			cudot.Row(ctx, x, r)
		}()
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Row of a slice shorter than the buffers did not panic")
			}
		}()
		cudot.Row(ctx, x[:14], 0)
	}()
}

func TestContextWithoutRowsHasOneRow(t *testing.T) {
	for _, rows := range []int{0, 1} {
		ctx := newContext(t, 9, cudot.Options{Memory: cudot.Host, Rows: rows})
		if r, n := ctx.Rows(); r != 1 || n != 9 || ctx.Capacity() != 9 {
			t.Fatalf("Rows: %d: Rows() = %d, %d, Capacity %d; want 1, 9, 9", rows, r, n, ctx.Capacity())
		}
		x, y := ctx.Float32Inputs()
		for i := range x {
			x[i], y[i] = float32(i), 2
		}
		got, err := ctx.RowDots()
		d, _ := ctx.Dot()
		if err != nil || len(got) != 1 || got[0] != d || d != 72 {
			t.Fatalf("RowDots = %v, %v; Dot = %v; want [72]", got, err, d)
		}
	}
}

func TestContextRowsErrors(t *testing.T) {
	for _, rows := range []int{-1, math.MinInt} {
		if _, err := cudot.New(4, cudot.Options{Memory: cudot.Host, Rows: rows}); !errors.Is(err, cudot.ErrInvalidArgument) {
			t.Errorf("Rows %d: %v, want ErrInvalidArgument", rows, err)
		}
	}
	if _, err := cudot.New(1<<40, cudot.Options{Memory: cudot.Host, Rows: 1 << 40}); err == nil {
		t.Error("2^40 rows of 2^40 elements: no error")
	}
	ctx := newContext(t, 8, cudot.Options{Memory: cudot.Host, Rows: 3})
	for _, c := range []struct{ rows, n, room int }{{-1, 8, 3}, {3, -1, 3}, {3, 8, 2}} {
		results := make([]float64, c.room)
		if err := ctx.DotEachRow(c.rows, c.n, results); !errors.Is(err, cudot.ErrInvalidArgument) {
			t.Errorf("DotEachRow(%d, %d) into %d: %v, want ErrInvalidArgument", c.rows, c.n, c.room, err)
		}
	}
	if err := ctx.DotEachRow(0, 8, nil); err != nil { // no rows: nothing written, nothing needed
		t.Errorf("DotEachRow(0, 8, nil): %v", err)
	}
	closed, err := cudot.New(8, cudot.Options{Memory: cudot.Host, Rows: 2})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	if err := closed.DotEachRow(1, 1, make([]float64, 1)); !errors.Is(err, cudot.ErrClosed) {
		t.Errorf("DotEachRow after Close: %v, want ErrClosed", err)
	}
	if _, err := closed.RowDots(); !errors.Is(err, cudot.ErrClosed) {
		t.Errorf("RowDots after Close: %v, want ErrClosed", err)
	}
}

// TestContextRowsOnGPUs: the same checks on Pinned, Mapped, Managed and Auto contexts, on one GPU and on
// every visible one. Skipped without a usable GPU (and Auto where it resolves to Host); with
// CUDOT_TEST_GPU=1 those are failures.
func TestContextRowsOnGPUs(t *testing.T) {
	for _, memory := range []cudot.Memory{cudot.Pinned, cudot.Mapped, cudot.Managed, cudot.Auto} {
		for _, device := range []int{0, cudot.DeviceAll} {
			for _, p := range []pair{{cudot.Float32, cudot.Float32}, {cudot.Float64, cudot.Float64}, {cudot.Float16, cudot.BFloat16}} {
				for _, shape := range []struct{ rows, n int }{{64, 3000}, {5, 1<<15 + 3}, {300, 17}} {
					name := fmt.Sprintf("%v/device%d/%v/%dx%d", memory, device, p, shape.rows, shape.n)
					t.Run(name, func(t *testing.T) {
						opts := cudot.Options{DType: p.x, YDType: p.y, Memory: memory, Device: device, Rows: shape.rows}
						ctx := newGPUContextOrSkip(t, shape.n, opts)
						defer ctx.Close()
						if memory == cudot.Auto && ctx.Memory() == cudot.Host {
							if gpuRequired {
								t.Fatal("CUDOT_TEST_GPU=1 but Auto resolved to Host")
							}
							t.Skip("no GPU: Auto resolved to Host")
						}
						xs, ys := randomPair(shape.rows*shape.n, p, int64(shape.rows+shape.n))
						fill(t, ctx, xs, ys)
						for i := 0; i < 3; i++ { // Auto measures the CPU and the GPUs on the first calls
							got, err := ctx.RowDots()
							if err != nil {
								t.Fatal(err)
							}
							checkEachRow(t, ctx, got, shape.n, "RowDots")
						}
						checkRowsContext(t, ctx, shape.rows, shape.n)
						xs, ys = randomPair(shape.rows*shape.n, p, int64(shape.rows+shape.n+7)) // fresh data after a dot
						fill(t, ctx, xs, ys)
						got, err := ctx.RowDots()
						if err != nil {
							t.Fatal(err)
						}
						checkEachRow(t, ctx, got, shape.n, "RowDots after refill")
					})
				}
			}
		}
	}
}
