package cudot_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"os"
	"testing"

	"cudot.example/cudot"
)

// loadHelperEnv makes the test binary, re-executed by TestLoadFailures, only try to load the library
// and report what happened: loading happens once per process, so each case needs its own process.
const loadHelperEnv = "CUDOT_GO_LOAD_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(loadHelperEnv) == "1" {
		_, err1 := cudot.New(1, cudot.Options{Memory: cudot.Host})
		_, err2 := cudot.New(1, cudot.Options{Memory: cudot.Host})
		fmt.Printf("load=%v version=%v same=%v err=%v\n", errors.Is(err1, cudot.ErrLoad),
			errors.Is(err1, cudot.ErrVersion), err1 == err2, err1)
		os.Exit(0)
	}
	if err := cudot.Load(); err != nil {
		fmt.Fprintf(os.Stderr, "these tests need the library: set CUDOT_LIBRARY to the full path of libcudot.so\n%v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// gpuRequired: on the GPU machine a missing device is a failure, not a reason to skip.
var gpuRequired = os.Getenv("CUDOT_TEST_GPU") == "1"

var dtypes = []cudot.DType{cudot.Float32, cudot.Float64}

func newContext(t *testing.T, n int, opts cudot.Options) *cudot.Context {
	t.Helper()
	ctx, err := cudot.New(n, opts)
	if err != nil {
		t.Fatalf("New(%d, %+v): %v", n, opts, err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return ctx
}

// fill writes xs and ys into the context's buffers, whatever its dtype (values must fit float32 for
// a Float32 context; the callers make sure they do).
func fill(t *testing.T, ctx *cudot.Context, xs, ys []float64) {
	t.Helper()
	if ctx.DType() == cudot.Float64 {
		x, y := ctx.Float64Inputs()
		copy(x, xs)
		copy(y, ys)
		return
	}
	x, y := ctx.Float32Inputs()
	for i := range xs {
		x[i], y[i] = float32(xs[i]), float32(ys[i])
	}
}

// intData gives small integers, so every product and every partial sum is exact in float64.
func intData(n int) (xs, ys []float64, prefix []int64) {
	xs, ys, prefix = make([]float64, n), make([]float64, n), make([]int64, n+1)
	for i := 0; i < n; i++ {
		xi, yi := int64(i%17)-8, int64(i%13)-6
		xs[i], ys[i] = float64(xi), float64(yi)
		prefix[i+1] = prefix[i] + xi*yi
	}
	return xs, ys, prefix
}

// randomData spreads magnitudes over 2^-20..2^20 with both signs, so the sum cancels; float32 data
// is rounded to float32 so the reference sees exactly what the library sees.
func randomData(n int, dtype cudot.DType, seed int64) (xs, ys []float64) {
	rng := rand.New(rand.NewSource(seed))
	value := func() float64 {
		v := (rng.Float64()*2 - 1) * math.Ldexp(1, rng.Intn(41)-20)
		if dtype == cudot.Float32 {
			v = float64(float32(v))
		}
		return v
	}
	xs, ys = make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i], ys[i] = value(), value()
	}
	return xs, ys
}

// exactDot is the exact dot product (big.Float at 4096 bits holds these sums without rounding) and
// the sum of |x*y| that scales the error bounds.
func exactDot(xs, ys []float64) (exact, absSum float64) {
	sum := new(big.Float).SetPrec(4096)
	p := new(big.Float).SetPrec(4096)
	for i := range xs {
		p.SetFloat64(xs[i])
		p.Mul(p, new(big.Float).SetFloat64(ys[i]))
		sum.Add(sum, p)
		absSum += math.Abs(xs[i] * ys[i])
	}
	exact, _ = sum.Float64()
	return exact, absSum
}

func bitsEqual(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
