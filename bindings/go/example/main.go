// Command example fills two vectors in place and prints their dot product, falling back to the CPU
// when the requested GPU strategy has no device. Run: CUDOT_LIBRARY=/path/libcudot.so go run ./example
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
	flag.Parse()
	memory, err := cudot.ParseMemory(*memoryName)
	if err != nil {
		fail(err)
	}

	ctx, err := cudot.New(*n, cudot.Options{DType: cudot.Float32, Memory: memory})
	if errors.Is(err, cudot.ErrNoDevice) {
		fmt.Printf("%v: no usable GPU (%v); using the CPU\n", memory, err)
		ctx, err = cudot.New(*n, cudot.Options{DType: cudot.Float32, Memory: cudot.Host})
	}
	if err != nil {
		fail(err)
	}
	defer ctx.Close()

	// Small multiples of 1/4: every product and partial sum is exact, so we know the answer.
	x, y := ctx.Float32Inputs()
	want := 0.0
	for i := range x {
		x[i] = float32(i%7 - 3)
		y[i] = float32(i%5) * 0.25
		want += float64(x[i]) * float64(y[i])
	}
	got, err := ctx.Dot()
	if err != nil {
		fail(err)
	}
	version, _ := cudot.LibraryVersion()
	fmt.Printf("cudot %d.%d.%d, n = %d, memory %v (device %d): dot = %v, expected %v\n",
		version/10000, version/100%100, version%100, ctx.Capacity(), ctx.Memory(), ctx.Device(), got, want)
	if got != want {
		fail(errors.New("result does not match"))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "example:", err)
	os.Exit(1)
}
