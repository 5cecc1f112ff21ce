// Command ownarrays computes dots of Go slices the program already has, with no Context and no copy:
// whole slices of two types, a strided view and a reversed one, and the tile partials of a vector held
// in two slices, joined. Each result is checked against the dot computed here in Go.
//
//	CUDOT_LIBRARY=/path/libcudot.so go run ./example/ownarrays
package main

import (
	"fmt"
	"os"

	"cudot.example/cudot"
)

func main() {
	const n = 100000
	// Small integers and halves, exact in every type used here, so every sum is exact and known.
	prices := make([]float32, n)
	counts := make([]uint8, n)
	for i := range prices {
		prices[i] = float32(i%40) * 0.5
		counts[i] = uint8(i % 7)
	}
	want := 0.0
	for i := range prices {
		want += float64(prices[i]) * float64(counts[i])
	}
	r, err := cudot.Dot(cudot.Float32Slice(prices), cudot.Uint8Slice(counts))
	check("float32 slice x uint8 slice", r, want, err)

	// Every third price against the first n/3 counts read backwards: views, not copies.
	m := n / 3
	want = 0
	for i := 0; i < m; i++ {
		want += float64(prices[3*i]) * float64(counts[m-1-i])
	}
	r, err = cudot.Dot(cudot.Float32Slice(prices).Strided(0, m, 3), cudot.Uint8Slice(counts).Strided(m-1, m, -1))
	check("stride 3 x stride -1", r, want, err)

	// A vector in two slices (the first a whole number of tiles): partials of each, joined in order,
	// give the dot of the whole vector, bit for bit.
	cut := 8 * cudot.TileElements
	a, err := cudot.TilePartials(cudot.Float32Slice(prices[:cut]), cudot.Uint8Slice(counts[:cut]))
	if err != nil {
		fail(err)
	}
	b, err := cudot.TilePartials(cudot.Float32Slice(prices[cut:]), cudot.Uint8Slice(counts[cut:]))
	if err != nil {
		fail(err)
	}
	whole, _ := cudot.Dot(cudot.Float32Slice(prices), cudot.Uint8Slice(counts))
	r, err = cudot.JoinPartials(cudot.Float32, cudot.Uint8, append(a, b...))
	check("partials of two slices, joined", r, whole, err)
}

func check(what string, got, want float64, err error) {
	if err != nil {
		fail(err)
	}
	fmt.Printf("%s: dot = %v, expected %v\n", what, got, want)
	if got != want {
		fail(fmt.Errorf("%s: result does not match", what))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ownarrays:", err)
	os.Exit(1)
}
