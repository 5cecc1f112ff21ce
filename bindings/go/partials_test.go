package cudot_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"cudot.example/cudot"
)

// partialPairs: same-type pairs of each family and mixed pairs, for the partials tests.
var partialPairs = []pair{{cudot.Float32, cudot.Float32}, {cudot.Float64, cudot.Float64},
	{cudot.Float16, cudot.BFloat16}, {cudot.Float32, cudot.Uint8}, {cudot.Int8, cudot.Uint8},
	{cudot.BFloat16, cudot.Float64}}

// pieces cuts [0, n) as a distributed job would: every piece but the last a whole number of tiles
// (here 2, 1, 3, ... tiles), the last whatever remains, possibly short of a tile.
func pieces(n int) [][2]int {
	var ps [][2]int
	for first, i := 0, 0; first < n; i++ {
		size := (i%3 + 1) * cudot.TileElements
		if first+size > n {
			size = n - first
		}
		ps = append(ps, [2]int{first, size})
		first += size
	}
	return ps
}

// TestPartialsSplitMatchesWhole: a vector split over several contexts, one per piece (a tile-aligned
// start, the last piece short), each computing the partials of its own elements, joins to the same
// bits as Dot on one context holding the whole vector; so do the same ranges taken from that one
// context, whose partial bytes must equal the pieces' own, and the pieces streamed through one
// smaller context, one after the other.
func TestPartialsSplitMatchesWhole(t *testing.T) {
	for _, p := range partialPairs {
		for _, n := range []int{6*cudot.TileElements + 1234, 3 * cudot.TileElements, 100} {
			t.Run(fmt.Sprintf("%v/n=%d", p, n), func(t *testing.T) {
				opts := cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host}
				xs, ys := randomPair(n, p, int64(n)+int64(p.x)*7+int64(p.y)*49)
				whole := newContext(t, n, opts)
				fill(t, whole, xs, ys)
				want, err := whole.Dot()
				if err != nil {
					t.Fatal(err)
				}
				var joined, sliced, streamed []byte
				stream := newContext(t, 3*cudot.TileElements, opts) // one context that each piece passes through
				for _, pc := range pieces(n) {
					first, size := pc[0], pc[1]
					part := newContext(t, size, opts) // what one process of the job holds
					fill(t, part, xs[first:first+size], ys[first:first+size])
					own, err1 := part.TilePartials(0, size)
					fromWhole, err2 := whole.TilePartials(first, size)
					if err1 != nil || err2 != nil {
						t.Fatalf("TilePartials of [%d, +%d): %v, %v", first, size, err1, err2)
					}
					if tiles := (size + cudot.TileElements - 1) / cudot.TileElements; len(own) != tiles*cudot.PartialBytes {
						t.Fatalf("piece of %d elements: %d bytes of partials, want %d tiles", size, len(own), tiles)
					}
					if !bytes.Equal(own, fromWhole) {
						t.Fatalf("[%d, +%d): the piece's own partials differ from the whole context's", first, size)
					}
					fill(t, stream, xs[first:first+size], ys[first:first+size])
					chunk, err := stream.TilePartials(0, size)
					if err != nil {
						t.Fatal(err)
					}
					joined = append(joined, own...)
					sliced = append(sliced, fromWhole...)
					streamed = append(streamed, chunk...)
				}
				for name, parts := range map[string][]byte{"pieces": joined, "one context": sliced, "stream": streamed} {
					if got, err := cudot.JoinPartials(p.x, p.y, parts); err != nil || !bitsEqual(got, want) {
						t.Fatalf("JoinPartials of the %s = %v (%v), Dot of the whole vector %v", name, got, err, want)
					}
				}
				if p.y == p.x { // zero for yType: the same as xType
					if got, err := cudot.JoinPartials(p.x, 0, joined); err != nil || !bitsEqual(got, want) {
						t.Fatalf("JoinPartials(%v, 0) = %v (%v), want %v", p.x, got, err, want)
					}
				}
			})
		}
	}
}

// TestPartialsEmptyAndDefaults: no elements give no partials and a +0 join; zero types mean Float32.
func TestPartialsEmptyAndDefaults(t *testing.T) {
	ctx := newContext(t, 10, cudot.Options{Memory: cudot.Host})
	if got, err := ctx.TilePartials(10, 0); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("TilePartials(10, 0) = %v, %v; want an empty slice", got, err)
	}
	if r, err := cudot.JoinPartials(cudot.Float64, 0, nil); err != nil || !bitsEqual(r, 0) {
		t.Fatalf("JoinPartials of nothing = %v, %v; want +0", r, err)
	}
	x, y := ctx.Float32Inputs()
	for i := range x {
		x[i], y[i] = float32(i), 0.5
	}
	parts, err := ctx.TilePartials(0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := cudot.JoinPartials(0, 0, parts); err != nil || r != 22.5 {
		t.Fatalf("JoinPartials(0, 0) of a float32 context = %v, %v; want 22.5", r, err)
	}
}

// TestPartialsErrors: ranges beyond the capacity, partials whose length is not whole partials, unknown
// types and a closed context are refused with the status and a message, and nothing crashes.
func TestPartialsErrors(t *testing.T) {
	ctx := newContext(t, 3*cudot.TileElements, cudot.Options{DType: cudot.Float64, Memory: cudot.Host})
	invalid := func(what string, err error, msgPart string) {
		t.Helper()
		var e *cudot.Error
		if !errors.Is(err, cudot.ErrInvalidArgument) || !errors.As(err, &e) || !strings.Contains(e.Message, msgPart) {
			t.Errorf("%s: %v; want ErrInvalidArgument with %q in the message", what, err, msgPart)
		}
	}
	c := ctx.Capacity()
	for _, r := range [][2]int{{0, c + 1}, {c, 1}, {c + 1, 0}, {1, c}, {-1, 5}, {0, -1}, {c - 1, math.MaxInt}} {
		parts, err := ctx.TilePartials(r[0], r[1])
		if parts != nil {
			t.Errorf("TilePartials(%d, %d) returned %d bytes with its error", r[0], r[1], len(parts))
		}
		invalid(fmt.Sprintf("TilePartials(%d, %d)", r[0], r[1]), err, "capacity")
	}
	good, err := ctx.TilePartials(0, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, cudot.PartialBytes - 1, cudot.PartialBytes + 1, len(good) - 1} {
		_, err := cudot.JoinPartials(cudot.Float64, cudot.Float64, good[:cut])
		invalid(fmt.Sprintf("JoinPartials of %d bytes", cut), err, "multiple of PartialBytes")
	}
	_, err = cudot.JoinPartials(cudot.DType(9), cudot.Float64, good)
	invalid("JoinPartials with DType(9)", err, "element types") // the library's own message
	_, err = cudot.JoinPartials(cudot.Float64, cudot.DType(-3), good)
	invalid("JoinPartials with DType(-3)", err, "element types")

	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int{{0, 1}, {0, 0}, {c + 1, 0}} { // closed comes first, as in DotN
		if parts, err := ctx.TilePartials(r[0], r[1]); parts != nil || !errors.Is(err, cudot.ErrClosed) {
			t.Errorf("TilePartials(%d, %d) after Close = %d bytes, %v; want ErrClosed", r[0], r[1], len(parts), err)
		}
	}
}

// TestPartialsGPU: a GPU context's partials are the bytes a Host context gives for the same values, at
// a tile-aligned and an unaligned first element (MAPPED and MANAGED then stage the elements).
func TestPartialsGPU(t *testing.T) {
	const n = 5*cudot.TileElements + 77
	for _, memory := range []cudot.Memory{cudot.Pinned, cudot.Mapped, cudot.Managed} {
		for _, p := range []pair{{cudot.Float32, cudot.Float32}, {cudot.Float16, cudot.Int8}, {cudot.Float64, cudot.Uint8}} {
			t.Run(fmt.Sprintf("%v/%v", memory, p), func(t *testing.T) {
				gpu := newGPUContextOrSkip(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: memory})
				defer gpu.Close()
				host := newContext(t, n, cudot.Options{DType: p.x, YDType: p.y, Memory: cudot.Host})
				xs, ys := randomPair(n, p, 5)
				fill(t, gpu, xs, ys)
				fill(t, host, xs, ys)
				for _, r := range [][2]int{{0, n}, {cudot.TileElements, 2 * cudot.TileElements}, {3, n - 3}} {
					got, err1 := gpu.TilePartials(r[0], r[1])
					want, err2 := host.TilePartials(r[0], r[1])
					if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
						t.Fatalf("TilePartials(%d, %d): %v gives other bytes than host (%v, %v)", r[0], r[1], memory, err1, err2)
					}
				}
			})
		}
	}
}
