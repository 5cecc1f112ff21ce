package cudot_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"cudot.example/cudot"
	"cudot.example/cudot/internal/cudatest"
)

// Dots of device memory. The tests make their own device memory and streams through the CUDA driver
// (internal/cudatest, libcuda.so.1) and skip where there is none, or where the library answers a
// device operand with ErrNoDevice (a build without CUDA); with CUDOT_TEST_GPU=1 both are failures.

// needGPU skips t (fails it with CUDOT_TEST_GPU=1) unless CUDA works here and the library computes on
// device memory.
func needGPU(t *testing.T) {
	t.Helper()
	skip := func(why string) {
		t.Helper()
		if gpuRequired {
			t.Fatalf("CUDOT_TEST_GPU=1 but %s", why)
		}
		t.Skipf("no GPU: %s", why)
	}
	if err := cudatest.Open(); err != nil {
		skip(err.Error())
	}
	one := cudot.DeviceArray(deviceBytes(t, make([]byte, 4)), cudot.Float32, 1)
	if _, err := cudot.Dot(one, one); errors.Is(err, cudot.ErrNoDevice) {
		skip("the library answers a device operand with " + err.Error())
	} else if err != nil {
		t.Fatalf("Dot of a device float32: %v", err)
	}
}

// deviceBytes copies b into fresh device memory (at least one byte), freed when t ends.
func deviceBytes(t testing.TB, b []byte) uintptr {
	t.Helper()
	size := len(b)
	if size == 0 {
		size = 1
	}
	addr, err := cudatest.Malloc(size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cudatest.Free(addr); err != nil {
			t.Error(err)
		}
	})
	if err := cudatest.CopyToDevice(addr, b); err != nil {
		t.Fatal(err)
	}
	return addr
}

func newStream(t testing.TB) uintptr {
	t.Helper()
	s, err := cudatest.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cudatest.DestroyStream(s); err != nil {
			t.Error(err)
		}
	})
	return s
}

// deviceView is the view of layout l of vals (type d) in fresh device memory.
func deviceView(t testing.TB, l layout, d cudot.DType, vals []float64) cudot.Array {
	_, raw := viewOf(l, d, vals)
	return cudot.DeviceArray(deviceBytes(t, raw), d, l.length).Strided(l.first, l.n, l.stride)
}

// readResult copies the double at addr to the host once stream s has written it.
func readResult(t testing.TB, s, addr uintptr) float64 {
	t.Helper()
	if err := cudatest.Synchronize(s); err != nil {
		t.Fatal(err)
	}
	var b [8]byte
	if err := cudatest.CopyFromDevice(b[:], addr); err != nil {
		t.Fatal(err)
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
}

// TestDeviceArraysMatchHostContext: device operands, every pair, strides 1, -1, 0 and 3, blocking on
// the legacy default stream, the per-thread stream and a stream of the test's own (waiting on ready
// streams too), asynchronously into device memory, and as tile partials, are all the bits of a Host
// Context holding the same values.
func TestDeviceArraysMatchHostContext(t *testing.T) {
	needGPU(t)
	stream := newStream(t)
	result := deviceBytes(t, make([]byte, 8))
	for _, p := range allPairs() {
		for _, n := range []int{1, 8191, 8193, 100000} {
			for k, sx := range arrayStrides {
				sy := arrayStrides[(k+1)%len(arrayStrides)]
				t.Run(fmt.Sprintf("%v/n=%d/stride=%d,%d", p, n, sx, sy), func(t *testing.T) {
					c := newStrideCase(p, n, sx, sy, int64(n)*17+int64(p.x)*5+int64(p.y)*3+int64(k))
					want := hostDot(t, p, c.xs, c.ys)
					x, y := deviceView(t, c.lx, p.x, c.xs), deviceView(t, c.ly, p.y, c.ys)
					for _, s := range []cudot.Streams{{}, {Stream: cudot.StreamPerThread},
						{Stream: stream, XReady: cudot.StreamLegacy, YReady: stream}} {
						got, err := cudot.DotOn(s, x, y)
						if err != nil || !bitsEqual(got, want) {
							t.Errorf("DotOn(%+v) = %v, %v; Host context %v", s, got, err, want)
						}
					}
					if err := cudot.DotAsync(cudot.Streams{Stream: stream}, x, y, result); err != nil {
						t.Fatalf("DotAsync: %v", err)
					}
					if got := readResult(t, stream, result); !bitsEqual(got, want) {
						t.Errorf("DotAsync wrote %v; Host context %v", got, want)
					}
					parts, err := cudot.TilePartialsOn(cudot.Streams{Stream: stream}, x, y)
					if err != nil {
						t.Fatalf("TilePartials: %v", err)
					}
					if got, err := cudot.JoinPartials(p.x, p.y, parts); err != nil || !bitsEqual(got, want) {
						t.Errorf("joined partials %v, %v; Host context %v", got, err, want)
					}
				})
			}
		}
	}
}

// TestDeviceArraysMixed: a device operand with a registered Go slice (which the GPU reads in place),
// blocking, and the empty dot queued by DotAsync, which writes +0.
func TestDeviceArraysMixed(t *testing.T) {
	needGPU(t)
	const n = 1<<20 + 5
	p := pair{cudot.Float16, cudot.Float64}
	xs, ys := randomPair(n, p, 21)
	x := deviceView(t, layoutFor(n, 1), p.x, xs)
	y := convert(ys, func(v float64) float64 { return v })
	if err := cudot.RegisterHost(y); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cudot.UnregisterHost(y); err != nil {
			t.Error(err)
		}
	}()
	if got, want := mustDot(t, x, cudot.Float64Slice(y)), hostDot(t, p, xs, ys); !bitsEqual(got, want) {
		t.Errorf("device float16 times registered float64: %v; Host context %v", got, want)
	}
	stream := newStream(t)
	result := deviceBytes(t, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	empty := cudot.DeviceArray(0, cudot.Int8, 0)
	if err := cudot.DotAsync(cudot.Streams{Stream: stream}, empty, empty, result); err != nil {
		t.Fatal(err)
	}
	if got := readResult(t, stream, result); math.Float64bits(got) != 0 {
		t.Errorf("empty DotAsync wrote %v (%#x), want +0", got, math.Float64bits(got))
	}
}

// TestDeviceArraysBadInput: a device operand running past its allocation, and a result address that
// is no memory the GPU can write, are refused by the library (ErrInvalidArgument, with its message).
func TestDeviceArraysBadInput(t *testing.T) {
	needGPU(t)
	mem := deviceBytes(t, make([]byte, 4096))
	past := cudot.DeviceArray(mem, cudot.Float32, 1025)
	_, err := cudot.Dot(past, past)
	checkError(t, "past the allocation", err, "Dot", cudot.ErrInvalidArgument, "")
	fits := cudot.DeviceArray(mem, cudot.Float32, 1024)
	err = cudot.DotAsync(cudot.Streams{}, fits, fits, 0)
	checkError(t, "DotAsync to address 0", err, "DotAsync", cudot.ErrInvalidArgument, "")
	for _, err := range []error{err} {
		if e := (*cudot.Error)(nil); errors.As(err, &e) && e.Message == "" {
			t.Errorf("no message from the library: %v", err)
		}
	}
}
