package cudot_test

import (
	"errors"
	"fmt"

	"cudot.example/cudot"
)

func Example() {
	ctx, err := cudot.New(4, cudot.Options{DType: cudot.Float32, Memory: cudot.Auto})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close() // also keeps ctx, and so x and y, alive until here
	x, y := ctx.Float32Inputs()
	copy(x, []float32{1, 2, 3, 4})
	copy(y, []float32{10, 20, 30, 40})
	r, err := ctx.Dot()
	fmt.Println(r, err)
	r, err = ctx.DotN(2)
	fmt.Println(r, err)
	// Output:
	// 300 <nil>
	// 50 <nil>
}

func ExampleContext_Float64Inputs() {
	ctx, err := cudot.New(3, cudot.Options{DType: cudot.Float64, Memory: cudot.Host})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	x, y := ctx.Float64Inputs()
	copy(x, []float64{0.5, -2, 1e10})
	copy(y, []float64{4, 3, 1e-10})
	r, _ := ctx.Dot()
	fmt.Println(r, ctx.Memory(), ctx.Device() == cudot.DeviceNone)
	// Output: -3 host true
}

func Example_errors() {
	_, err := cudot.New(10, cudot.Options{Memory: cudot.Memory(42)})
	var e *cudot.Error
	fmt.Println(errors.Is(err, cudot.ErrInvalidArgument), errors.As(err, &e) && e.Message != "")
	fmt.Println(e.Status)
	// Output:
	// true true
	// CUDOT_ERROR_INVALID_ARGUMENT
}

// A float32 vector times a 0/1 mask: y is Uint8, written through its []bool view.
func ExampleContext_YBool() {
	ctx, err := cudot.New(5, cudot.Options{DType: cudot.Float32, YDType: cudot.Uint8, Memory: cudot.Host})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	x, mask := ctx.XFloat32(), ctx.YBool()
	copy(x, []float32{1.5, 2, 4, 8, 16})
	copy(mask, []bool{true, false, true, false, true})
	r, _ := ctx.Dot()
	fmt.Println(r, ctx.DType(), ctx.YDType(), ctx.YUint8())
	// Output: 21.5 float32 uint8 [1 0 1 0 1]
}

// Float16 times BFloat16: both buffers hold 16-bit patterns, converted from float32 with rounding.
func ExampleContext_XFloat16() {
	ctx, err := cudot.New(3, cudot.Options{DType: cudot.Float16, YDType: cudot.BFloat16, Memory: cudot.Host})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	x, y := ctx.XFloat16(), ctx.YBFloat16()
	for i, v := range []float32{0.5, 1000, -3} {
		x[i] = cudot.Float16bits(v)
	}
	for i, v := range []float32{2, 0.25, 3.14159} {
		y[i] = cudot.BFloat16bits(v) // 3.14159 becomes 3.140625, the nearest bfloat16
	}
	r, _ := ctx.Dot()
	fmt.Println(r, cudot.BFloat16frombits(y[2]))
	// Output: 241.578125 3.140625
}

// Integer pairs are summed exactly in 64-bit integers.
func ExampleContext_XInt8() {
	ctx, err := cudot.New(3, cudot.Options{DType: cudot.Int8, YDType: cudot.Uint8, Memory: cudot.Host})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	copy(ctx.XInt8(), []int8{-128, 127, 5})
	copy(ctx.YUint8(), []uint8{255, 255, 2})
	r, _ := ctx.Dot()
	fmt.Println(r)
	// Output: -245
}

// An accessor of a type the context does not hold panics at the call, naming the mismatch; check
// DType and YDType first when the types are not known in advance.
func ExampleErrElementType() {
	ctx, err := cudot.New(3, cudot.Options{DType: cudot.Int8, YDType: cudot.Uint8, Memory: cudot.Host})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	defer func() {
		err, _ := recover().(error)
		fmt.Println(errors.Is(err, cudot.ErrElementType))
		fmt.Println(err)
	}()
	ctx.Float32Inputs()
	// Output:
	// true
	// cudot: wrong element type: Float32Inputs on a context of int8*uint8: it needs x and y both float32; use XInt8 and YUint8
}

func ExampleFloat16bits() {
	fmt.Printf("%#04x %#04x %#04x\n", cudot.Float16bits(1), cudot.Float16bits(-2.5), cudot.Float16bits(1e5))
	fmt.Println(cudot.Float16frombits(0x3555), cudot.Float16frombits(0x0001))
	fmt.Printf("%#04x %v\n", cudot.BFloat16bits(1e6), cudot.BFloat16frombits(cudot.BFloat16bits(1e6)))
	// Output:
	// 0x3c00 0xc100 0x7c00
	// 0.33325195 5.9604645e-08
	// 0x4974 999424
}

// A dot of two Go slices of different types: nothing is copied and no Context is needed.
func ExampleDot() {
	x := []float32{1.5, 2, 4, 8}
	mask := []bool{true, false, true, true}
	r, err := cudot.Dot(cudot.Float32Slice(x), cudot.BoolSlice(mask))
	fmt.Println(r, err)
	// Output: 13.5 <nil>
}

// Views with a stride: every second element, the slice backwards (stride -1 starts at the last index),
// and one element repeated (stride 0).
func ExampleArray_Strided() {
	x := []float64{1, 10, 2, 20, 3, 30}
	y := []int8{1, 2, 3}
	every2nd := cudot.Float64Slice(x).Strided(0, 3, 2) // 1, 2, 3
	backwards := cudot.Int8Slice(y).Strided(2, 3, -1)  // 3, 2, 1
	repeated := cudot.Int8Slice(y).Strided(1, 3, 0)    // 2, 2, 2
	r1, _ := cudot.Dot(every2nd, backwards)
	r2, _ := cudot.Dot(every2nd, repeated)
	fmt.Println(r1, r2)
	// Output: 10 12
}

func ExampleContext_DotEachRow() {
	// Three rows of four elements; y holds the same query in every row.
	ctx, err := cudot.New(4, cudot.Options{DType: cudot.Float32, Memory: cudot.Host, Rows: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	x, y := ctx.Float32Inputs() // 12 elements each
	table := [][]float32{{1, 2, 3, 4}, {0, 1, 0, 1}, {5, 5, 5, 5}}
	for r := range table {
		copy(cudot.Row(ctx, x, r), table[r])
		copy(cudot.Row(ctx, y, r), []float32{1, 10, 100, 1000})
	}
	scores, err := ctx.RowDots()
	fmt.Println(scores, err)
	first := make([]float64, 2)
	err = ctx.DotEachRow(2, 2, first) // the first two rows, their first two elements
	fmt.Println(first, err)
	rows, n := ctx.Rows()
	fmt.Println(rows, n, ctx.Capacity())
	// Output:
	// [4321 1010 5555] <nil>
	// [21 10] <nil>
	// 3 4 12
}

// A vector in two pieces, each reduced where it lives to one exact partial (an exact Context's, and
// one of Go slices), joined in any order to the correctly rounded dot of the whole vector. The
// canonical order gives 4 here (see DotExact).
func ExampleJoinExactPartials() {
	x := make([]float32, 0, 301)
	for i := 0; i < 100; i++ {
		x = append(x, 1e16, 1, -1e16)
	}
	x = append(x, 3)
	ones := make([]float32, len(x))
	for i := range ones {
		ones[i] = 1
	}
	// The first 200 elements in an exact Context (the cut falls inside a triple: any cut works).
	ctx, err := cudot.New(200, cudot.Options{DType: cudot.Float32, Memory: cudot.Host, Mode: cudot.ModeExact})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	cx, cy := ctx.Float32Inputs()
	copy(cx, x[:200])
	copy(cy, ones[:200])
	p1, err1 := ctx.TilePartials(0, 200)
	// The other 101 as Go slices.
	p2, err2 := cudot.TilePartialsExact(cudot.Float32Slice(x[200:]), cudot.Float32Slice(ones[200:]))
	r, err := cudot.JoinExactPartials(append(p2, p1...))
	fmt.Println(ctx.Mode() == cudot.ModeExact, len(p1), len(p2), err1, err2)
	fmt.Println(r, err)
	// Output:
	// true 1120 1120 <nil> <nil>
	// 103 <nil>
}
