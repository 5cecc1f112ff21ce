package cudot_test

import (
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cudot.example/cudot"
)

// Reliability of a Context's lifetime: close twice, use after close, and release by the finalizer
// alone. The binding tracks closed contexts itself: it must never hand the library a freed pointer,
// whether or not the library would notice (cudot.h says it cannot promise to).

// TestCloseTwice: a second Close (and a third, from many goroutines at once) returns nil and frees
// nothing more. LiveContexts drops once per cudot_deinit, so a double free would take it below
// where it started.
func TestCloseTwice(t *testing.T) {
	before := cudot.LiveContexts()
	for _, p := range []pair{{cudot.Float32, cudot.Float32}, {cudot.BFloat16, cudot.Uint8}} {
		ctx, err := cudot.New(1000, cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := ctx.Close(); err != nil {
				t.Fatalf("%v: Close number %d: %v", p, i+1, err)
			}
			if got := cudot.LiveContexts(); got != before {
				t.Fatalf("%v: after Close number %d, live contexts %d, want %d", p, i+1, got, before)
			}
		}
	}

	// Many goroutines close the same context at once: one of them frees it, the others do nothing.
	ctx, err := cudot.New(1<<16, cudot.Options{Memory: cudot.Host})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	start := make(chan struct{})
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- ctx.Close()
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Close: %v", err)
		}
	}
	if got := cudot.LiveContexts(); got != before {
		t.Fatalf("after 16 concurrent Close calls, live contexts %d, want %d", got, before)
	}
	if cudot.NativeHandle(ctx) != nil {
		t.Fatal("a closed Context still holds its native pointer")
	}
}

// TestUseAfterClose: on every pair, every method of a closed Context either returns ErrClosed (Dot,
// DotN) or nil slices (every input accessor of the context's types; the others panic as before Close),
// or keeps describing it (Capacity, DType, YDType, Memory,
// Device: values kept in Go, no native call). The context no longer holds its native pointer, so
// none of these can pass the freed one to the library.
func TestUseAfterClose(t *testing.T) {
	for _, p := range allPairs() {
		t.Run(p.String(), func(t *testing.T) {
			ctx, err := cudot.New(7, cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host})
			if err != nil {
				t.Fatal(err)
			}
			xs, ys, prefix := intDataFor(7, p)
			fill(t, ctx, xs, ys)
			if r, err := ctx.Dot(); err != nil || r != float64(prefix[7]) {
				t.Fatalf("Dot before Close = %v, %v", r, err)
			}
			if err := ctx.Close(); err != nil {
				t.Fatal(err)
			}
			if cudot.NativeHandle(ctx) != nil {
				t.Fatal("a closed Context still holds its native pointer")
			}
			if _, err := ctx.Dot(); !errors.Is(err, cudot.ErrClosed) {
				t.Errorf("Dot after Close: %v, want ErrClosed", err)
			}
			for _, n := range []int{0, 1, 7, 8} { // 8 is beyond the capacity: closed still comes first
				if _, err := ctx.DotN(n); !errors.Is(err, cudot.ErrClosed) {
					t.Errorf("DotN(%d) after Close: %v, want ErrClosed", n, err)
				}
			}
			// The types outlive Close: an accessor of the wrong type still panics, the right one gives nil.
			for name, a := range accessors(ctx) {
				if fits := (!a.isY && a.dtype == p.x) || (a.isY && a.dtype == p.y); !fits {
					checkWrongType(t, a.panicked, name, p, a.dtype)
				} else if a.ptr != nil || a.n != 0 || a.panicked != nil {
					t.Errorf("%s after Close: a slice of %d elements (panic %v), want nil", name, a.n, a.panicked)
				}
			}
			for _, d := range allDTypes {
				x, y, panicked := pairInputs(ctx, d)
				if p.x != d || p.y != d {
					checkWrongType(t, panicked, pairMethod[d], p, d)
				} else if x != nil || y != nil || panicked != nil {
					t.Errorf("%s after Close: %p %p (panic %v), want nil slices", pairMethod[d], x, y, panicked)
				}
			}
			if ctx.Capacity() != 7 || ctx.DType() != p.x || ctx.YDType() != p.y || ctx.Memory() != cudot.Host ||
				ctx.Device() != cudot.DeviceNone {
				t.Errorf("after Close: Capacity %d DType %v YDType %v Memory %v Device %d", ctx.Capacity(),
					ctx.DType(), ctx.YDType(), ctx.Memory(), ctx.Device())
			}
			if err := ctx.Close(); err != nil {
				t.Errorf("Close after use after Close: %v", err)
			}
		})
	}
}

// residentBytes is the process's resident set, from /proc/self/statm.
func residentBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("needs Linux /proc/self/statm: %v", err)
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		t.Fatalf("unexpected /proc/self/statm: %q", b)
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// Sizes for TestForgottenContextsStayAllocated. Each buffer is above glibc's largest dynamic mmap
// threshold (32 MiB on 64-bit, see mallopt(3)), so malloc always maps it on its own and free always
// unmaps it: the resident set then shows exactly which buffers are still allocated, whatever the
// state of malloc's arenas (cgo calls and finalizers run on many threads, each with its own arena).
// Only every 32nd page is written, which keeps the test fast and still makes 2.5 MiB per context
// resident.
const (
	forgetN      = 5 << 20 // float64 elements: 40 MiB per buffer
	forgetStride = 32 * 4096 / 8
)

// forgetContexts makes count float64 contexts of forgetN elements, writes every forgetStride-th
// element of both buffers (so that those pages are resident), calls whileAlive with all of them still
// reachable, and drops them without Close. A separate function, so that no variable of the caller
// keeps one reachable.
//
//go:noinline
func forgetContexts(t *testing.T, count int, whileAlive func()) {
	contexts := make([]*cudot.Context, 0, count)
	for i := 0; i < count; i++ {
		ctx, err := cudot.New(forgetN, cudot.Options{DType: cudot.Float64, Memory: cudot.Host})
		if err != nil {
			t.Fatal(err)
		}
		x, y := ctx.Float64Inputs()
		for j := 0; j < len(x); j += forgetStride {
			x[j], y[j] = 1, 2
		}
		contexts = append(contexts, ctx)
	}
	whileAlive()
	runtime.KeepAlive(contexts)
}

// TestForgottenContextsStayAllocated: contexts never closed, dropped, and found by the garbage
// collector are counted by Leaked and keep their buffers: the resident set does not fall by the pages
// written into them (a finalizer that freed them, as before issue 16, made it fall by all of them).
func TestForgottenContextsStayAllocated(t *testing.T) {
	const count = 5
	const written = int64(count) * 2 * (forgetN / forgetStride) * 4096
	leakedBefore := cudot.Leaked()
	debug.FreeOSMemory()
	var withThem int64
	forgetContexts(t, count, func() { withThem = residentBytes(t) })
	for deadline := time.Now().Add(20 * time.Second); cudot.Leaked()-leakedBefore < count && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if got := cudot.Leaked() - leakedBefore; got < count {
		t.Fatalf("Leaked grew by %d, want %d: the finalizers did not run, the test proves nothing", got, count)
	}
	debug.FreeOSMemory()
	if fell := withThem - residentBytes(t); fell > written/2 {
		t.Fatalf("the resident set fell by %d MiB once the finalizers ran: forgotten contexts were freed", fell>>20)
	}
}
