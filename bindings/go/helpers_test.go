package cudot_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"cudot.example/cudot"
)

// loadHelperEnv makes the test binary, re-executed by TestLoadFailures, only try to load the library
// and report what happened: loading happens once per process, so each case needs its own process.
const loadHelperEnv = "CUDOT_GO_LOAD_HELPER"

// runHelperExe runs exe (this test binary or a copy of it) as the load helper (see TestMain) in
// folder dir ("" for ours), with our environment minus CUDOT_LIBRARY, plus env (which replaces
// variables of the same name; Windows compares names without case, so there Path and PATH are one).
func runHelperExe(t *testing.T, exe, dir string, env ...string) string {
	t.Helper()
	key := func(kv string) string {
		k := strings.SplitN(kv, "=", 2)[0]
		if runtime.GOOS == "windows" {
			k = strings.ToUpper(k)
		}
		return k
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Dir = dir
	drop := map[string]bool{"CUDOT_LIBRARY": true}
	for _, kv := range env {
		drop[key(kv)] = true
	}
	for _, kv := range os.Environ() {
		if !drop[key(kv)] {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{loadHelperEnv + "=1"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	return string(out)
}

// helperSameTypeEnv makes the helper's first context int8*int8 instead of int8*float16.
const helperSameTypeEnv = "CUDOT_GO_LOAD_HELPER_SAME_TYPE"

// helperWaitMSEnv sets the WaitMS of the helper's first context (decimal; unset: zero).
const helperWaitMSEnv = "CUDOT_GO_LOAD_HELPER_WAIT_MS"

// helperRowsEnv sets the Rows of the helper's first context (decimal; unset: zero).
const helperRowsEnv = "CUDOT_GO_LOAD_HELPER_ROWS"

// helperExactEnv makes the helper's first context one in ModeExact.
const helperExactEnv = "CUDOT_GO_LOAD_HELPER_EXACT"

func TestMain(m *testing.M) {
	if os.Getenv(loadHelperEnv) == "1" {
		opts := cudot.Options{DType: cudot.Int8, YDType: cudot.Float16, Memory: cudot.Host}
		if os.Getenv(helperSameTypeEnv) == "1" {
			opts.YDType = 0
		}
		if w := os.Getenv(helperWaitMSEnv); w != "" {
			v, err := strconv.ParseUint(w, 10, 32)
			if err != nil {
				fmt.Printf("helper: bad %s: %v\n", helperWaitMSEnv, err)
				os.Exit(1)
			}
			opts.WaitMS = uint32(v)
		}
		if r := os.Getenv(helperRowsEnv); r != "" {
			v, err := strconv.Atoi(r)
			if err != nil {
				fmt.Printf("helper: bad %s: %v\n", helperRowsEnv, err)
				os.Exit(1)
			}
			opts.Rows = v
		}
		if os.Getenv(helperExactEnv) == "1" {
			opts.Mode = cudot.ModeExact
		}
		ctx, err1 := cudot.New(1, opts)
		_, err2 := cudot.New(1, cudot.Options{Memory: cudot.Host})
		dtypes := "none"
		if err1 == nil {
			dtypes = ctx.DType().String() + "*" + ctx.YDType().String()
		}
		// Partials (since 1.2) are optional symbols: "unsupported" on an older library, not a load failure.
		partials := "ok"
		if _, err := cudot.JoinPartials(cudot.Float32, 0, nil); errors.Is(err, cudot.ErrUnsupported) {
			partials = "unsupported"
		} else if err != nil {
			partials = "failed"
		}
		// So are exact partials (since 1.13).
		exact := "ok"
		if _, err := cudot.JoinExactPartials(nil); errors.Is(err, cudot.ErrUnsupported) {
			exact = "unsupported"
		} else if err != nil {
			exact = "failed"
		}
		mode := "none"
		if err1 == nil {
			mode = strconv.Itoa(int(ctx.Mode()))
		}
		_, errArrays := cudot.TilePartialsExact(cudot.Float32Slice(nil), cudot.Float32Slice(nil))
		// Rows (since 1.9) of one element, canonical and exact (cudot_rows.mode, since 1.14).
		one, res := []float32{2}, make([]float64, 1)
		errRows := cudot.DotRows(cudot.Float32Slice(one), cudot.Float32Slice(one), 1, 0, 0, res)
		errExactRows := cudot.DotRowsExact(cudot.Float32Slice(one), cudot.Float32Slice(one), 1, 0, 0, res)
		fmt.Printf("load=%v version=%v same=%v dtypes=%s err=%v partials=%s exact=%s mode=%s exact arrays: %v "+
			"rows: %v exact rows: %v\n",
			errors.Is(err1, cudot.ErrLoad), errors.Is(err1, cudot.ErrVersion), err1 == err2, dtypes, err1, partials, exact,
			mode, errArrays, errRows, errExactRows)
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

// dtypes are the types the original same-type tests cover; allDTypes is every element type.
var (
	dtypes    = []cudot.DType{cudot.Float32, cudot.Float64}
	allDTypes = []cudot.DType{cudot.Float32, cudot.Float64, cudot.Float16, cudot.BFloat16, cudot.Int8, cudot.Uint8}
)

// pair is an (x, y) element type pair; its String is e.g. "float32*uint8".
type pair struct{ x, y cudot.DType }

func (p pair) String() string { return p.x.String() + "*" + p.y.String() }

// allPairs lists the 36 (x, y) pairs.
func allPairs() []pair {
	var ps []pair
	for _, x := range allDTypes {
		for _, y := range allDTypes {
			ps = append(ps, pair{x, y})
		}
	}
	return ps
}

func isInt(d cudot.DType) bool { return d == cudot.Int8 || d == cudot.Uint8 }

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

// fill writes xs into x and ys into y, whatever their element types.
func fill(t testing.TB, ctx *cudot.Context, xs, ys []float64) {
	t.Helper()
	setSide(t, ctx, false, xs)
	setSide(t, ctx, true, ys)
}

// setSide writes vals into x (y when isY) through the accessor of that side's type, converting each
// value; a value the type cannot hold exactly fails the test, so test data never gets rounded silently.
func setSide(t testing.TB, ctx *cudot.Context, isY bool, vals []float64) {
	t.Helper()
	dt := ctx.DType()
	if isY {
		dt = ctx.YDType()
	}
	var ok bool
	switch dt {
	case cudot.Float32:
		ok = put(either(isY, ctx.XFloat32, ctx.YFloat32), vals,
			func(v float64) float32 { return float32(v) }, func(v float32) float64 { return float64(v) })
	case cudot.Float64:
		ok = put(either(isY, ctx.XFloat64, ctx.YFloat64), vals,
			func(v float64) float64 { return v }, func(v float64) float64 { return v })
	case cudot.Float16:
		ok = put(either(isY, ctx.XFloat16, ctx.YFloat16), vals,
			func(v float64) uint16 { return cudot.Float16bits(float32(v)) },
			func(b uint16) float64 { return float64(cudot.Float16frombits(b)) })
	case cudot.BFloat16:
		ok = put(either(isY, ctx.XBFloat16, ctx.YBFloat16), vals,
			func(v float64) uint16 { return cudot.BFloat16bits(float32(v)) },
			func(b uint16) float64 { return float64(cudot.BFloat16frombits(b)) })
	case cudot.Int8:
		ok = put(either(isY, ctx.XInt8, ctx.YInt8), vals,
			func(v float64) int8 { return int8(v) }, func(v int8) float64 { return float64(v) })
	case cudot.Uint8:
		ok = put(either(isY, ctx.XUint8, ctx.YUint8), vals,
			func(v float64) uint8 { return uint8(v) }, func(v uint8) float64 { return float64(v) })
	default:
		t.Fatalf("unknown dtype %v", dt)
	}
	if !ok {
		t.Fatalf("test data does not fit %v exactly (or the %v accessor is wrong)", dt, dt)
	}
}

// halfBits is x (y when isY) of a side that holds Float16 or BFloat16: its 16-bit patterns.
func halfBits(ctx *cudot.Context, isY bool) []uint16 {
	d := ctx.DType()
	if isY {
		d = ctx.YDType()
	}
	if d == cudot.BFloat16 {
		return either(isY, ctx.XBFloat16, ctx.YBFloat16)
	}
	return either(isY, ctx.XFloat16, ctx.YFloat16)
}

func either[T any](isY bool, x, y func() []T) []T {
	if isY {
		return y()
	}
	return x()
}

// put converts vals into dst and reports whether every value survived the round trip exactly and dst
// has room for them.
func put[T any](dst []T, vals []float64, to func(float64) T, back func(T) float64) bool {
	if len(dst) < len(vals) {
		return false
	}
	for i, v := range vals {
		dst[i] = to(v)
		if got := back(dst[i]); got != v && !(v != v && got != got) {
			return false
		}
	}
	return true
}

// intData gives small integers, so every product and every partial sum is exact in float64.
func intData(n int) (xs, ys []float64, prefix []int64) {
	return intDataFor(n, pair{cudot.Float32, cudot.Float32})
}

// intDataFor is intData for any pair: x in -8..8, y in -6..6, each shifted to be non-negative on a
// Uint8 side. Every type holds these values exactly.
func intDataFor(n int, p pair) (xs, ys []float64, prefix []int64) {
	xoff, yoff := int64(8), int64(6)
	if p.x == cudot.Uint8 {
		xoff = 0
	}
	if p.y == cudot.Uint8 {
		yoff = 0
	}
	xs, ys, prefix = make([]float64, n), make([]float64, n), make([]int64, n+1)
	for i := 0; i < n; i++ {
		xi, yi := int64(i%17)-xoff, int64(i%13)-yoff
		xs[i], ys[i] = float64(xi), float64(yi)
		prefix[i+1] = prefix[i] + xi*yi
	}
	return xs, ys, prefix
}

// randomData spreads magnitudes over 2^-20..2^20 with both signs, so the sum cancels; float32 data
// is rounded to float32 so the reference sees exactly what the library sees.
func randomData(n int, dtype cudot.DType, seed int64) (xs, ys []float64) {
	return randomPair(n, pair{dtype, dtype}, seed)
}

// randomPair is randomData for any pair: each side gets values of its own type (randomValue).
func randomPair(n int, p pair, seed int64) (xs, ys []float64) {
	rng := rand.New(rand.NewSource(seed))
	xs, ys = make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i], ys[i] = randomValue(rng, p.x), randomValue(rng, p.y)
	}
	return xs, ys
}

// randomValue is a random value that dtype holds exactly: both signs (but for Uint8) and magnitudes
// spread over the type's range, so that sums cancel: 2^-20..2^20 for Float32 and Float64, 2^-26..2^15
// for Float16 (subnormals included), 2^-30..2^30 for BFloat16, every value for the integers.
func randomValue(rng *rand.Rand, dtype cudot.DType) float64 {
	signed := func(lo, hi int) float64 { return (rng.Float64()*2 - 1) * math.Ldexp(1, lo+rng.Intn(hi-lo+1)) }
	switch dtype {
	case cudot.Float64:
		return signed(-20, 20)
	case cudot.Float32:
		return float64(float32(signed(-20, 20)))
	case cudot.Float16:
		return float64(cudot.Float16frombits(cudot.Float16bits(float32(signed(-26, 15)))))
	case cudot.BFloat16:
		return float64(cudot.BFloat16frombits(cudot.BFloat16bits(float32(signed(-30, 30)))))
	case cudot.Int8:
		return float64(rng.Intn(256) - 128)
	case cudot.Uint8:
		return float64(rng.Intn(256))
	}
	panic("unknown dtype " + dtype.String())
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
