// Command go-classic drives libcudot_classic through the four functions of the classic tutorial ABI
// (init, getInputs, dot, deinit; float32 only), loading it at run time the way the tutorial's Go client
// does: LoadLib, then FindProc for each name. It checks two dot products whose exact value it knows.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"unsafe"
)

func main() {
	path := flag.String("lib", os.Getenv("CUDOT_CLASSIC_LIBRARY"), "path of libcudot_classic (default $CUDOT_CLASSIC_LIBRARY)")
	flag.Parse()
	if *path == "" {
		fmt.Fprintln(os.Stderr, "go-classic: give -lib or set CUDOT_CLASSIC_LIBRARY")
		os.Exit(2)
	}
	lib, err := LoadLib(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-classic: LoadLib:", err)
		os.Exit(1)
	}
	var procs [4]*Proc
	for i, name := range []string{"init", "getInputs", "dot", "deinit"} {
		if procs[i], err = lib.FindProc(name); err != nil {
			fmt.Fprintln(os.Stderr, "go-classic: FindProc:", err)
			os.Exit(1)
		}
	}
	initP, getInputsP, dotP, deinitP := procs[0], procs[1], procs[2], procs[3]

	ok := true
	// Each case: x and y as functions of i. Exact sums stay below 2^24, so even the float32 result
	// that the classic dot returns is exact.
	for _, c := range []struct {
		n    int
		x, y func(i int) int64
	}{
		{1000, func(i int) int64 { return int64(i % 10) }, func(int) int64 { return 2 }},
		{1<<20 + 3, func(int) int64 { return 1 }, func(i int) int64 { return int64(i%4) - 1 }},
	} {
		ctx := callInit(initP, c.n)
		if ctx == nil {
			fmt.Printf("n = %d: init failed (no context; check CUDOT_MEMORY)\n", c.n)
			ok = false
			continue
		}
		px, py := callGetInputs(getInputsP, ctx)
		x, y := unsafe.Slice(px, c.n), unsafe.Slice(py, c.n)
		var want int64
		for i := 0; i < c.n; i++ {
			x[i], y[i] = float32(c.x(i)), float32(c.y(i))
			want += c.x(i) * c.y(i)
		}
		got := callDot(dotP, ctx)
		callDeinit(deinitP, ctx)
		match := got == float32(want)
		fmt.Printf("n = %d: dot = %v, exact = %d, match = %v\n", c.n, got, want, match)
		ok = ok && match
	}
	// The classic ABI has no error codes: dot on a NULL context reports failure as NaN.
	nan := callDot(dotP, nil)
	fmt.Printf("dot(NULL) = %v, NaN as documented = %v\n", nan, math.IsNaN(float64(nan)))
	ok = ok && math.IsNaN(float64(nan))
	if !ok {
		fmt.Println("MISMATCH")
		os.Exit(1)
	}
	fmt.Println("all results exact")
}
