package cudot_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"cudot.example/cudot"
)

// TestWaitMSComputesAsWithout: a Context with a bound on GPU waits is accepted by the library and gives
// the bits of a Host context holding the same values, on every strategy. On a GPU, 2000 ms leaves a dot
// of 2^15 + 3 elements ample time (Auto measures the GPU at this size); the GPU strategies skip without
// a usable GPU (fail with CUDOT_TEST_GPU=1). Where WaitMS lands in the config is
// TestWaitMSReachesTheLibrary's concern.
func TestWaitMSComputesAsWithout(t *testing.T) {
	const n = 1<<15 + 3
	rng := rand.New(rand.NewSource(5))
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i], ys[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	for _, tc := range []struct {
		memory cudot.Memory
		wait   uint32
	}{{cudot.Host, 1}, {cudot.Host, math.MaxUint32}, {cudot.Auto, 2000}, {cudot.Auto, math.MaxUint32},
		{cudot.Pinned, 2000}, {cudot.Mapped, cudot.DefaultWaitMS}, {cudot.Managed, math.MaxUint32}} {
		t.Run(fmt.Sprintf("%v/%d", tc.memory, tc.wait), func(t *testing.T) {
			opts := cudot.Options{DType: cudot.Float64, Memory: tc.memory, WaitMS: tc.wait}
			var bounded *cudot.Context
			if tc.memory == cudot.Host || tc.memory == cudot.Auto {
				bounded = newContext(t, n, opts)
			} else {
				bounded = newGPUContextOrSkip(t, n, opts)
				defer bounded.Close()
			}
			if tc.memory != cudot.Auto && bounded.Memory() != tc.memory {
				t.Errorf("Memory() = %v, asked for %v", bounded.Memory(), tc.memory)
			}
			host := newContext(t, n, cudot.Options{DType: cudot.Float64, Memory: cudot.Host})
			fill(t, host, xs, ys)
			fill(t, bounded, xs, ys)
			for _, k := range []int{n, n / 3, 1} {
				for round := 0; round < 3; round++ { // Auto times the CPU and the GPU on the first dots of a size
					want, err1 := host.DotN(k)
					got, err2 := bounded.DotN(k)
					if err1 != nil || err2 != nil {
						t.Fatalf("DotN(%d): %v, %v", k, err1, err2)
					}
					if math.Float64bits(got) != math.Float64bits(want) {
						t.Errorf("DotN(%d) = %v on %v with WaitMS %d, %v on Host", k, got, bounded.Memory(), tc.wait, want)
					}
				}
			}
		})
	}
}
