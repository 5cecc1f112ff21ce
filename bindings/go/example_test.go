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
