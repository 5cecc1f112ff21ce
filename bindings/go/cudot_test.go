package cudot_test

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"cudot.example/cudot"
)

// TestExactIntegers runs every one of the 36 (x, y) pairs on small integers, which every type holds
// and whose every partial sum is exact, so the result must be the integer sum exactly.
func TestExactIntegers(t *testing.T) {
	for _, p := range allPairs() {
		for _, n := range []int{0, 1, 1000, 8193, 1<<20 + 3} {
			t.Run(fmt.Sprintf("%v/n=%d", p, n), func(t *testing.T) {
				ctx := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y})
				if ctx.Capacity() != n || ctx.DType() != p.x || ctx.YDType() != p.y {
					t.Fatalf("Capacity %d DType %v YDType %v, want %d %v", ctx.Capacity(), ctx.DType(), ctx.YDType(), n, p)
				}
				xs, ys, prefix := intDataFor(n, p)
				fill(t, ctx, xs, ys)
				r, err := ctx.Dot()
				if err != nil || r != float64(prefix[n]) {
					t.Fatalf("Dot = %v, %v; want %d", r, err, prefix[n])
				}
				if n == 0 && math.Signbit(r) {
					t.Fatalf("empty Dot = -0, want +0")
				}
				for _, k := range []int{0, 1, n / 2, n - 1, n} {
					if k < 0 || k > n {
						continue
					}
					r, err := ctx.DotN(k)
					if err != nil || r != float64(prefix[k]) {
						t.Fatalf("DotN(%d) = %v, %v; want %d", k, r, err, prefix[k])
					}
				}
			})
		}
	}
}

// gamma is the classic bound k*u/(1-k*u) on the relative error of summing k+1 terms in float64.
func gamma(k int) float64 {
	const u = 0x1p-53
	return float64(k) * u / (1 - float64(k)*u)
}

// TestRandomAgainstReference checks every pair on random values of its types (Float16 and BFloat16
// included) against the exact dot product, within the bound of the pair's arithmetic.
func TestRandomAgainstReference(t *testing.T) {
	for _, p := range allPairs() {
		for _, n := range []int{1000, 100003} {
			t.Run(fmt.Sprintf("%v/n=%d", p, n), func(t *testing.T) {
				ctx := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y})
				xs, ys := randomPair(n, p, int64(n)+int64(p.x)*7+int64(p.y)*49)
				fill(t, ctx, xs, ys)
				r, err := ctx.Dot()
				if err != nil {
					t.Fatal(err)
				}
				exact, absSum := exactDot(xs, ys)
				// No Float64 side: products are exact in float64, so only the float64 sum errs (any
				// order). A Float64 side: Dot2 is as accurate as twice the working precision, rounded
				// once. Both integer: exact.
				bound := gamma(n) * absSum
				switch {
				case p.x == cudot.Float64 || p.y == cudot.Float64:
					bound = 0x1p-53*math.Abs(exact) + gamma(n)*gamma(n)*absSum
				case isInt(p.x) && isInt(p.y):
					bound = 0
				}
				if err := math.Abs(r - exact); !(err <= bound*1.01) {
					t.Fatalf("Dot = %.17g, exact %.17g: error %.3g exceeds bound %.3g", r, exact, err, bound)
				}
			})
		}
	}
}

// somePairs: the same-type pairs of 1.0 and a few mixed ones, for the slower tests.
var somePairs = []pair{{cudot.Float32, cudot.Float32}, {cudot.Float64, cudot.Float64},
	{cudot.Float32, cudot.Uint8}, {cudot.Float16, cudot.BFloat16}, {cudot.Int8, cudot.Uint8},
	{cudot.Float64, cudot.Float16}, {cudot.BFloat16, cudot.Int8}}

func TestRepeatIsBitwiseEqual(t *testing.T) {
	const n = 50001
	for _, p := range somePairs {
		t.Run(p.String(), func(t *testing.T) {
			opts := cudot.Options{DType: p.x, YDType: p.y}
			ctx := newContext(t, n, opts)
			xs, ys := randomPair(n, p, 7)
			fill(t, ctx, xs, ys)
			first, err := ctx.Dot()
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 5; i++ {
				if r, err := ctx.Dot(); err != nil || !bitsEqual(r, first) {
					t.Fatalf("call %d: %v, %v; first call gave %v", i, r, err, first)
				}
			}
			if r, err := ctx.DotN(n); err != nil || !bitsEqual(r, first) {
				t.Fatalf("DotN(capacity) = %v, %v; Dot gave %v", r, err, first)
			}
			// DotN(k) must equal a context of capacity k holding the same values.
			for _, k := range []int{1, 777, 32768} {
				small := newContext(t, k, opts)
				fill(t, small, xs[:k], ys[:k])
				want, err1 := small.Dot()
				got, err2 := ctx.DotN(k)
				if err1 != nil || err2 != nil || !bitsEqual(got, want) {
					t.Fatalf("DotN(%d) = %v (%v), capacity-%d context gives %v (%v)", k, got, err2, k, want, err1)
				}
			}
		})
	}
}

func TestInputsAliasLibraryMemory(t *testing.T) {
	ctx := newContext(t, 3, cudot.Options{DType: cudot.Float64})
	x, y := ctx.Float64Inputs()
	x2, _ := ctx.Float64Inputs()
	if len(x) != 3 || len(y) != 3 || cap(x) != 3 || unsafe.Pointer(&x[0]) != unsafe.Pointer(&x2[0]) {
		t.Fatalf("slices should be 3 long and share one buffer: len %d cap %d", len(x), cap(x))
	}
	copy(x, []float64{1, 2, 3})
	copy(y, []float64{1, 1, 1})
	if r, _ := ctx.Dot(); r != 6 {
		t.Fatalf("Dot = %v, want 6", r)
	}
	x[2] = 30 // written in place, seen by the next call without any copy
	if r, _ := ctx.Dot(); r != 33 {
		t.Fatalf("Dot after in-place write = %v, want 33", r)
	}
	ctx0 := newContext(t, 0, cudot.Options{})
	if x, y := ctx0.Float32Inputs(); x == nil || y == nil || len(x) != 0 {
		t.Fatalf("capacity 0 should give empty, non-nil slices: %v %v", x, y)
	}
}

func TestGPUStrategies(t *testing.T) {
	const n = 1<<20 + 3
	for _, memory := range []cudot.Memory{cudot.Pinned, cudot.Mapped, cudot.Managed} {
		for _, p := range somePairs {
			t.Run(fmt.Sprintf("%v/%v", memory, p), func(t *testing.T) {
				ctx := newGPUContextOrSkip(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: memory})
				defer ctx.Close()
				if ctx.Memory() != memory || ctx.Device() != 0 || ctx.DType() != p.x || ctx.YDType() != p.y {
					t.Fatalf("Memory %v Device %d DTypes %v*%v, want %v 0 %v", ctx.Memory(), ctx.Device(),
						ctx.DType(), ctx.YDType(), memory, p)
				}
				host := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host})
				xs, ys := randomPair(n, p, 99)
				fill(t, ctx, xs, ys)
				fill(t, host, xs, ys)
				for _, k := range []int{n, 0, 1, 1000, n / 3} {
					got, err1 := ctx.DotN(k)
					want, err2 := host.DotN(k)
					if err1 != nil || err2 != nil || !bitsEqual(got, want) {
						t.Fatalf("DotN(%d): %v gives %v (%v), host %v (%v)", k, memory, got, err1, want, err2)
					}
				}
				got, err1 := ctx.Dot()
				want, _ := host.Dot()
				if err1 != nil || !bitsEqual(got, want) {
					t.Fatalf("Dot: %v gives %v (%v), host %v", memory, got, err1, want)
				}
			})
		}
	}
}

// newGPUContextOrSkip opens a GPU context; where no GPU is usable it checks that the error is a
// well-formed NO_DEVICE and skips (fails, with CUDOT_TEST_GPU=1). Any other error fails.
func newGPUContextOrSkip(t *testing.T, n int, opts cudot.Options) *cudot.Context {
	t.Helper()
	ctx, err := cudot.New(n, opts)
	if errors.Is(err, cudot.ErrNoDevice) {
		var e *cudot.Error
		if !errors.As(err, &e) || e.Status != cudot.StatusNoDevice || e.Message == "" || e.Op != "New" {
			t.Fatalf("NO_DEVICE error should carry status, op and message: %#v", e)
		}
		if gpuRequired {
			t.Fatalf("CUDOT_TEST_GPU=1 but %v", err)
		}
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// TestDeviceAll: Device DeviceAll is one context over every visible GPU, reported as DeviceAll, with
// HOST's bits. Without a usable GPU it must be NO_DEVICE (a skip; a failure with CUDOT_TEST_GPU=1),
// never UNSUPPORTED (what libraries before 1.3 answered).
func TestDeviceAll(t *testing.T) {
	const n = 3*8192*40 + 5 // many tiles, so that several GPUs each get a run; the last tile short
	for _, memory := range []cudot.Memory{cudot.Pinned, cudot.Mapped, cudot.Managed} {
		for _, p := range []pair{{cudot.Float32, cudot.Float32}, {cudot.Float64, cudot.Float16}} {
			t.Run(fmt.Sprintf("%v/%v", memory, p), func(t *testing.T) {
				ctx := newGPUContextOrSkip(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: memory, Device: cudot.DeviceAll})
				defer ctx.Close()
				if ctx.Memory() != memory || ctx.Device() != cudot.DeviceAll {
					t.Fatalf("Memory %v Device %d, want %v %d (DeviceAll)", ctx.Memory(), ctx.Device(), memory, cudot.DeviceAll)
				}
				host := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host})
				xs, ys := randomPair(n, p, 17)
				fill(t, ctx, xs, ys)
				fill(t, host, xs, ys)
				for _, k := range []int{n, 0, 1, 8193, n / 3, n - 1} {
					got, err1 := ctx.DotN(k)
					want, err2 := host.DotN(k)
					if err1 != nil || err2 != nil || !bitsEqual(got, want) {
						t.Fatalf("DotN(%d): %v on DeviceAll gives %v (%v), host %v (%v)", k, memory, got, err1, want, err2)
					}
				}
				xs, ys = randomPair(n, p, 18) // fresh data after a dot must be seen
				fill(t, ctx, xs, ys)
				fill(t, host, xs, ys)
				got, err1 := ctx.Dot()
				want, _ := host.Dot()
				if err1 != nil || !bitsEqual(got, want) {
					t.Fatalf("Dot after refill: %v on DeviceAll gives %v (%v), host %v", memory, got, err1, want)
				}
			})
		}
	}
}

// TestDeviceBelowAll: a device below DeviceAll is INVALID_ARGUMENT for GPU strategies and Auto (the
// message names CUDOT_DEVICE_ALL); Host ignores the device.
func TestDeviceBelowAll(t *testing.T) {
	for _, o := range []cudot.Options{{Memory: cudot.Pinned, Device: -3}, {Memory: cudot.Mapped, Device: cudot.DeviceNone},
		{Memory: cudot.Auto, Device: math.MinInt32}} {
		_, err := cudot.New(8, o)
		var e *cudot.Error
		if !errors.As(err, &e) || !errors.Is(err, cudot.ErrInvalidArgument) || !strings.Contains(e.Message, "CUDOT_DEVICE_ALL") {
			t.Errorf("New(8, %+v): %v, want INVALID_ARGUMENT naming CUDOT_DEVICE_ALL", o, err)
		}
	}
	for _, d := range []int{cudot.DeviceAll, -3} {
		ctx := newContext(t, 8, cudot.Options{Memory: cudot.Host, Device: d})
		if ctx.Memory() != cudot.Host || ctx.Device() != cudot.DeviceNone {
			t.Errorf("Host with Device %d: %v %d", d, ctx.Memory(), ctx.Device())
		}
	}
}

func TestAutoResolves(t *testing.T) {
	ctx := newContext(t, 10, cudot.Options{})
	switch m := ctx.Memory(); {
	case m == cudot.Auto:
		t.Fatal("Memory() must report what Auto chose, not Auto")
	case m == cudot.Host && gpuRequired:
		t.Fatal("CUDOT_TEST_GPU=1 but Auto chose Host")
	case m == cudot.Host && ctx.Device() != cudot.DeviceNone:
		t.Fatalf("Host context reports device %d, want DeviceNone", ctx.Device())
	case m != cudot.Host && ctx.Device() < 0:
		t.Fatalf("%v context reports device %d", m, ctx.Device())
	}
	if ctx.DType() != cudot.Float32 {
		t.Fatalf("default DType %v, want float32", ctx.DType())
	}
	host := newContext(t, 10, cudot.Options{Memory: cudot.Host})
	if host.Memory() != cudot.Host || host.Device() != cudot.DeviceNone {
		t.Fatalf("Host context: %v %d", host.Memory(), host.Device())
	}
}

func TestErrors(t *testing.T) {
	ctx := newContext(t, 100, cudot.Options{Memory: cudot.Host})
	dotN := func(n int) func() error { return func() error { _, err := ctx.DotN(n); return err } }
	newWith := func(n int, o cudot.Options) func() error {
		return func() error {
			c, err := cudot.New(n, o)
			if c != nil {
				c.Close()
			}
			return err
		}
	}
	for _, tc := range []struct {
		name       string
		call       func() error
		is         error
		status     cudot.Status
		op         string
		libMessage bool // the message comes from the library, so it must not be empty
	}{
		{"bad memory", newWith(10, cudot.Options{Memory: 99}), cudot.ErrInvalidArgument, cudot.StatusInvalidArgument, "New", true},
		{"bad dtype", newWith(10, cudot.Options{DType: 7}), cudot.ErrInvalidArgument, cudot.StatusInvalidArgument, "New", true},
		{"bad y dtype", newWith(10, cudot.Options{YDType: 7}), cudot.ErrInvalidArgument, cudot.StatusInvalidArgument, "New", true},
		{"negative y dtype", newWith(10, cudot.Options{DType: cudot.Int8, YDType: -1}), cudot.ErrInvalidArgument, cudot.StatusInvalidArgument, "New", true},
		{"negative n", newWith(-1, cudot.Options{}), cudot.ErrInvalidArgument, cudot.StatusInvalidArgument, "New", false},
		{"huge n", newWith(math.MaxInt, cudot.Options{Memory: cudot.Host}), nil, 0, "New", true},
		{"dot_n beyond capacity", dotN(101), cudot.ErrInvalidArgument, cudot.StatusInvalidArgument, "DotN", true},
		{"negative dot_n", dotN(-1), cudot.ErrInvalidArgument, cudot.StatusInvalidArgument, "DotN", false},
		{"device below DeviceAll", newWith(10, cudot.Options{Memory: cudot.Pinned, Device: -3}), cudot.ErrInvalidArgument, cudot.StatusInvalidArgument, "New", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var e *cudot.Error
			if !errors.As(err, &e) {
				t.Fatalf("want a *cudot.Error, got %v", err)
			}
			if tc.is != nil && (!errors.Is(err, tc.is) || e.Status != tc.status) {
				t.Fatalf("got %v (status %v), want %v", err, e.Status, tc.is)
			}
			if tc.is == nil && e.Status != cudot.StatusInvalidArgument && e.Status != cudot.StatusOutOfMemory {
				t.Fatalf("got %v, want INVALID_ARGUMENT or OUT_OF_MEMORY", err)
			}
			if e.Op != tc.op || (tc.libMessage && e.Message == "") {
				t.Fatalf("op %q message %q", e.Op, e.Message)
			}
			if errors.Is(err, cudot.ErrNoDevice) || errors.Is(err, cudot.ErrClosed) || errors.Is(err, cudot.ErrLoad) {
				t.Fatalf("%v matches an unrelated sentinel", err)
			}
			if errors.Is(err, &cudot.Error{Status: e.Status, Message: "some other text"}) {
				t.Fatal("a target with a message must match exactly, not by status")
			}
		})
	}
	// A failing call leaves the context usable.
	if r, err := ctx.DotN(0); err != nil || r != 0 {
		t.Fatalf("DotN(0) after failures: %v, %v", r, err)
	}
}

func TestErrorText(t *testing.T) {
	err := error(&cudot.Error{Op: "Dot", Status: cudot.StatusCUDA, Message: "cudaMemcpy failed"})
	if got := err.Error(); got != "cudot: Dot: CUDOT_ERROR_CUDA: cudaMemcpy failed" {
		t.Fatalf("Error() = %q", got)
	}
	if !errors.Is(fmt.Errorf("wrapped: %w", err), cudot.ErrCUDA) {
		t.Fatal("errors.Is must see through wrapping")
	}
}

func TestStatusStringsMatchLibrary(t *testing.T) {
	for s := cudot.Status(-1); s <= 8; s++ {
		if got, want := s.String(), cudot.LibStatusString(s); got != want {
			t.Errorf("Status(%d).String() = %q, library says %q", s, got, want)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for v, ok := range map[uint32]bool{10000: true, 10203: true, 19999: true, 9999: false, 20000: false, 0: false} {
		err := cudot.CheckVersion(v)
		if (err == nil) != ok || (!ok && !(errors.Is(err, cudot.ErrVersion) && errors.Is(err, cudot.ErrLoad))) {
			t.Errorf("CheckVersion(%d) = %v", v, err)
		}
	}
	if v, err := cudot.LibraryVersion(); err != nil || v/10000 != 1 {
		t.Errorf("LibraryVersion() = %d, %v", v, err)
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	before := cudot.LiveContexts()
	ctx, err := cudot.New(16, cudot.Options{Memory: cudot.Host})
	if err != nil {
		t.Fatal(err)
	}
	if cudot.LiveContexts() != before+1 {
		t.Fatalf("live contexts %d, want %d", cudot.LiveContexts(), before+1)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if cudot.LiveContexts() != before {
		t.Fatalf("live contexts %d after Close, want %d", cudot.LiveContexts(), before)
	}
	if _, err := ctx.Dot(); !errors.Is(err, cudot.ErrClosed) {
		t.Fatalf("Dot after Close: %v", err)
	}
	if _, err := ctx.DotN(1); !errors.Is(err, cudot.ErrClosed) {
		t.Fatalf("DotN after Close: %v", err)
	}
	if x, y := ctx.Float32Inputs(); x != nil || y != nil {
		t.Fatal("Float32Inputs after Close should be nil")
	}
	if x, y := ctx.XFloat32(), ctx.YFloat32(); x != nil || y != nil {
		t.Fatal("XFloat32/YFloat32 after Close should be nil")
	}
	mixed, err := cudot.New(4, cudot.Options{DType: cudot.Int8, YDType: cudot.Uint8, Memory: cudot.Host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mixed.Close() }) // in case a check below fails first; Close is idempotent
	if mixed.XInt8() == nil || mixed.YBool() == nil {
		t.Fatal("XInt8/YBool of an open int8*uint8 context should not be nil")
	}
	if err := mixed.Close(); err != nil {
		t.Fatal(err)
	}
	if mixed.XInt8() != nil || mixed.YUint8() != nil || mixed.YBool() != nil {
		t.Fatal("accessors after Close should be nil")
	}
	if mixed.DType() != cudot.Int8 || mixed.YDType() != cudot.Uint8 {
		t.Fatalf("DType/YDType after Close: %v %v", mixed.DType(), mixed.YDType())
	}
	if ctx.Capacity() != 16 || ctx.Memory() != cudot.Host {
		t.Fatal("accessors should keep describing the closed context")
	}
}

// panicOf runs f and returns what it panicked with (nil when it returned).
func panicOf(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// TestWrongElementType: an accessor of another type than its side's panics at the call, with an error
// matching ErrElementType that names the accessor, the context's types and the accessors that fit (it
// used to return nil, which failed later as an index out of range far from the mistake). The context
// stays usable. TestAccessorsMatchTypes checks every accessor on all 36 pairs.
func TestWrongElementType(t *testing.T) {
	f32 := newContext(t, 8, cudot.Options{DType: cudot.Float32})
	mixed := newContext(t, 8, cudot.Options{DType: cudot.Float16, YDType: cudot.Int8, Memory: cudot.Host})
	cases := []struct {
		call func()
		want string
	}{
		{func() { f32.Float64Inputs() }, "Float64Inputs on a context of float32*float32: it needs x and y both float64; use Float32Inputs"},
		{func() { f32.YInt8() }, "YInt8 on a context of float32*float32: y holds float32, not int8; use Float32Inputs"},
		{func() { mixed.Float16Inputs() }, "Float16Inputs on a context of float16*int8: it needs x and y both float16; use XFloat16 and YInt8"},
		{func() { mixed.XInt8() }, "XInt8 on a context of float16*int8: x holds float16, not int8; use XFloat16 and YInt8"},
		{func() { mixed.YBool() }, "YBool on a context of float16*int8: y holds int8, not uint8; use XFloat16 and YInt8"},
	}
	for _, c := range cases {
		v := panicOf(c.call)
		err, ok := v.(error)
		if !ok || !errors.Is(err, cudot.ErrElementType) || err.Error() != "cudot: wrong element type: "+c.want {
			t.Errorf("panicked with %#v, want an ErrElementType error %q", v, c.want)
		}
	}
	// The panics left no lock held: both contexts still work through the accessors that fit.
	x, y := mixed.XFloat16(), mixed.YInt8()
	if len(x) != 8 || len(y) != 8 {
		t.Fatalf("XFloat16 and YInt8 should have 8 elements: %d %d", len(x), len(y))
	}
	for i := range x {
		x[i], y[i] = cudot.Float16bits(1.5), -2
	}
	if r, err := mixed.Dot(); err != nil || r != -24 {
		t.Fatalf("Dot after the refused accessors = %v, %v; want -24", r, err)
	}
	if fx, fy := f32.Float32Inputs(); len(fx) != 8 || len(fy) != 8 {
		t.Fatalf("Float32Inputs on a float32 context: %d %d elements, want 8", len(fx), len(fy))
	}
}

// TestForgottenContextsAreReportedNotFreed: contexts dropped without Close are counted by Leaked and
// passed to the leak handler once the garbage collector finds them, and stay allocated.
func TestForgottenContextsAreReportedNotFreed(t *testing.T) {
	var reported atomic.Int64
	cudot.SetLeakHandler(func(info cudot.LeakInfo) {
		if info.Capacity == 1<<12 && info.DType == cudot.Float32 {
			reported.Add(1)
		}
	})
	defer cudot.SetLeakHandler(nil)
	before, leakedBefore := cudot.LiveContexts(), cudot.Leaked()
	func() {
		for i := 0; i < 20; i++ {
			if _, err := cudot.New(1<<12, cudot.Options{Memory: cudot.Host}); err != nil {
				t.Fatal(err)
			}
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); reported.Load() < 20 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := reported.Load(); got != 20 {
		t.Fatalf("the leak handler saw %d of 20 forgotten contexts", got)
	}
	if got := cudot.Leaked() - leakedBefore; got < 20 {
		t.Fatalf("Leaked grew by %d, want at least 20", got)
	}
	if got := cudot.LiveContexts() - before; got != 20 {
		t.Fatalf("%d of the 20 forgotten contexts are still allocated, want all 20 (only Close frees)", got)
	}
}

// TestSliceOutlivesForgottenContext: the scenario of issue 16. A slice from Float64Inputs outlives its
// Context, which nothing references any more; after garbage collections have run its finalizer, the
// slice must still be writable (a finalizer that freed the buffers made this a SIGSEGV: each buffer
// is larger than malloc's mmap threshold, so freeing it unmaps it).
func TestSliceOutlivesForgottenContext(t *testing.T) {
	leakedBefore := cudot.Leaked()
	x := func() []float64 {
		ctx, err := cudot.New(5<<20, cudot.Options{DType: cudot.Float64, Memory: cudot.Host})
		if err != nil {
			t.Fatal(err)
		}
		x, _ := ctx.Float64Inputs()
		return x
	}()
	for deadline := time.Now().Add(10 * time.Second); cudot.Leaked() == leakedBefore && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if cudot.Leaked() == leakedBefore {
		t.Fatal("the forgotten context's finalizer never ran: the test proves nothing")
	}
	for i := 0; i < len(x); i += 512 {
		x[i] = float64(i)
	}
	if x[0] != 0 || x[512] != 512 || x[len(x)-len(x)%512-512] != float64(len(x)-len(x)%512-512) {
		t.Fatal("the slice of a forgotten context does not hold what was written")
	}
}

func TestCloseWaitsForConcurrentDots(t *testing.T) {
	const n = 1 << 20
	ctx, err := cudot.New(n, cudot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	xs, ys, prefix := intData(n)
	fill(t, ctx, xs, ys)
	var wg sync.WaitGroup
	var mu sync.Mutex
	results, closed := 0, 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				r, err := ctx.Dot()
				mu.Lock()
				switch {
				case errors.Is(err, cudot.ErrClosed):
					closed++
				case err != nil || r != float64(prefix[n]):
					t.Errorf("Dot = %v, %v; want %d", r, err, prefix[n])
				default:
					results++
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if results+closed != 8*50 {
		t.Fatalf("%d results + %d closed, want %d calls", results, closed, 8*50)
	}
	t.Logf("%d dots finished before Close, %d saw ErrClosed", results, closed)
}

func TestMemoryNames(t *testing.T) {
	for _, m := range []cudot.Memory{cudot.Auto, cudot.Pinned, cudot.Mapped, cudot.Managed, cudot.Host} {
		if got, err := cudot.ParseMemory(m.String()); err != nil || got != m {
			t.Errorf("ParseMemory(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := cudot.ParseMemory("gpu"); err == nil {
		t.Error(`ParseMemory("gpu") should fail`)
	}
}

func TestDTypeNames(t *testing.T) {
	want := []string{"float32", "float64", "float16", "bfloat16", "int8", "uint8"}
	for i, d := range allDTypes {
		if int(d) != i+1 || d.String() != want[i] {
			t.Errorf("DType %d: value %d, String %q, want %d %q", i, int(d), d.String(), i+1, want[i])
		}
		if got, err := cudot.ParseDType(strings.ToUpper(d.String())); err != nil || got != d {
			t.Errorf("ParseDType(%q) = %v, %v", strings.ToUpper(d.String()), got, err)
		}
	}
	if cudot.DType(0).String() != "float32" || cudot.DType(7).String() != "DType(7)" {
		t.Errorf("DType(0) = %q, DType(7) = %q", cudot.DType(0).String(), cudot.DType(7).String())
	}
	for _, s := range []string{"", "bool", "float"} {
		if _, err := cudot.ParseDType(s); err == nil {
			t.Errorf("ParseDType(%q) should fail", s)
		}
	}
}
