package cudot_test

import (
	"testing"

	"cudot.example/cudot"
)

// TestSliceAfterClose: a slice of a HOST context's buffer used after Close (Go cannot stop a program from
// keeping one) reads zeros and its writes reach no other context, at 1000 and 2^22 elements. The library
// (1.8 and later) maps fresh zero pages over a destroyed context's buffers and keeps the range; before
// that, the writes landed in freed memory, and at 2^22 killed the process (SIGSEGV).
func TestSliceAfterClose(t *testing.T) {
	if v, err := cudot.LibraryVersion(); err != nil || v < 10800 {
		t.Skipf("library %d (%v): stale views are harmless from 1.8", v, err)
	}
	for _, n := range []int{1000, 1 << 22} {
		ctx, err := cudot.New(n, cudot.Options{DType: cudot.Float32, Memory: cudot.Host})
		if err != nil {
			t.Fatal(err)
		}
		staleX, staleY := ctx.Float32Inputs()
		for i := range staleX {
			staleX[i], staleY[i] = 3, 3
		}
		if err := ctx.Close(); err != nil {
			t.Fatal(err)
		}
		if staleX[0] != 0 || staleX[n-1] != 0 || staleY[n/2] != 0 {
			t.Errorf("n=%d: a slice read after Close gives %v %v %v, want zeros", n, staleX[0], staleX[n-1], staleY[n/2])
		}

		live, err := cudot.New(n, cudot.Options{DType: cudot.Float32, Memory: cudot.Host})
		if err != nil {
			t.Fatal(err)
		}
		x, y := live.Float32Inputs()
		for i := range x {
			x[i], y[i] = 0.5, 2
		}
		for i := range staleX { // no crash, and the live context does not see them
			staleX[i], staleY[i] = 99, 99
		}
		if got, err := live.Dot(); err != nil || got != float64(n) {
			t.Errorf("n=%d: the live context's dot after writes through stale slices = %v, %v; want %d", n, got, err, n)
		}
		if x[n-1] != 0.5 {
			t.Errorf("n=%d: the live context's x[n-1] = %v, want 0.5", n, x[n-1])
		}
		live.Close()
	}
}
