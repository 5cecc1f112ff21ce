// Command example fills two vectors in place and prints their dot product, falling back to the CPU
// when the requested GPU strategy has no device. x and y may have any element types:
//
//	CUDOT_LIBRARY=/path/libcudot.so go run ./example -memory host -dtype float16 -ydtype uint8
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"cudot.example/cudot"
)

func main() {
	n := flag.Int("n", 1<<20, "number of elements")
	memoryName := flag.String("memory", "auto", "auto, pinned, mapped, managed or host")
	xName := flag.String("dtype", "float32", "element type of x: float32, float64, float16, bfloat16, int8 or uint8")
	yName := flag.String("ydtype", "", "element type of y (default: the same as -dtype)")
	flag.Parse()
	memory, err := cudot.ParseMemory(*memoryName)
	if err != nil {
		fail(err)
	}
	opts := cudot.Options{Memory: memory}
	if opts.DType, err = cudot.ParseDType(*xName); err != nil {
		fail(err)
	}
	if *yName != "" {
		if opts.YDType, err = cudot.ParseDType(*yName); err != nil {
			fail(err)
		}
	}

	ctx, err := cudot.New(*n, opts)
	if errors.Is(err, cudot.ErrNoDevice) {
		fmt.Printf("%v: no usable GPU (%v); using the CPU\n", memory, err)
		opts.Memory = cudot.Host
		ctx, err = cudot.New(*n, opts)
	}
	if err != nil {
		fail(err)
	}
	defer ctx.Close()

	// Small integers and quarters, which every type holds exactly (uint8 gets no negatives and no
	// fractions): every product and partial sum is exact, so we know the answer.
	want := 0.0
	xs := fill(ctx, false, func(i int, d cudot.DType) float64 {
		if d == cudot.Uint8 {
			return float64(i % 7)
		}
		return float64(i%7 - 3)
	})
	ys := fill(ctx, true, func(i int, d cudot.DType) float64 {
		if d == cudot.Int8 || d == cudot.Uint8 {
			return float64(i % 5)
		}
		return float64(i%5) * 0.25
	})
	for i := range xs {
		want += xs[i] * ys[i]
	}
	got, err := ctx.Dot()
	if err != nil {
		fail(err)
	}
	version, _ := cudot.LibraryVersion()
	fmt.Printf("cudot %d.%d.%d, n = %d, %v x %v, memory %v (device %d): dot = %v, expected %v\n",
		version/10000, version/100%100, version%100, ctx.Capacity(), ctx.DType(), ctx.YDType(),
		ctx.Memory(), ctx.Device(), got, want)
	if got != want {
		fail(errors.New("result does not match"))
	}
}

// fill writes value(i) into x (y when isY) in place, through the accessor of that side's element
// type, and returns the values written. The switch on the type comes first because the types come
// from flags: an accessor of another type than its buffer's would panic (cudot.ErrElementType).
func fill(ctx *cudot.Context, isY bool, value func(i int, d cudot.DType) float64) []float64 {
	d := ctx.DType()
	if isY {
		d = ctx.YDType()
	}
	vals := make([]float64, ctx.Capacity())
	for i := range vals {
		vals[i] = value(i, d)
	}
	switch d {
	case cudot.Float32:
		for i, s := 0, side(isY, ctx.XFloat32, ctx.YFloat32); i < len(s); i++ {
			s[i] = float32(vals[i])
		}
	case cudot.Float64:
		copy(side(isY, ctx.XFloat64, ctx.YFloat64), vals)
	case cudot.Float16: // Go has no float16: the buffer holds bit patterns
		for i, s := 0, side(isY, ctx.XFloat16, ctx.YFloat16); i < len(s); i++ {
			s[i] = cudot.Float16bits(float32(vals[i]))
		}
	case cudot.BFloat16:
		for i, s := 0, side(isY, ctx.XBFloat16, ctx.YBFloat16); i < len(s); i++ {
			s[i] = cudot.BFloat16bits(float32(vals[i]))
		}
	case cudot.Int8:
		for i, s := 0, side(isY, ctx.XInt8, ctx.YInt8); i < len(s); i++ {
			s[i] = int8(vals[i])
		}
	case cudot.Uint8:
		for i, s := 0, side(isY, ctx.XUint8, ctx.YUint8); i < len(s); i++ {
			s[i] = uint8(vals[i])
		}
	}
	return vals
}

// side calls the x accessor, or the y accessor when isY.
func side[T any](isY bool, x, y func() []T) []T {
	if isY {
		return y()
	}
	return x()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "example:", err)
	os.Exit(1)
}
