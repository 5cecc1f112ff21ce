// Command consumer is the smallest program of a separate module that uses the binding: test.sh copies
// it into a temporary directory outside the repository, gives it its own go.mod (module
// example.com/consumer, with a replace directive pointing at bindings/go), builds it offline and
// checks what it prints. It is the README's "first dot", kept compiling.
package main

import (
	"fmt"
	"os"

	"cudot.example/cudot"
)

func main() {
	const n = 1000
	ctx, err := cudot.New(n, cudot.Options{}) // float32 x and y, Auto: the GPU if usable, else the CPU
	if err != nil {
		fail(err)
	}
	x, y := ctx.Float32Inputs() // the library's buffers: fill them in place
	for i := range x {
		x[i], y[i] = float32(i), float32(i)
	}
	r, err := ctx.Dot()
	if err != nil {
		fail(err)
	}
	if err := ctx.Close(); err != nil {
		fail(err)
	}
	version, _ := cudot.LibraryVersion()
	fmt.Printf("binding %s, library %d, memory %v\n", cudot.BindingVersion, version, ctx.Memory())
	fmt.Printf("dot = %.17g\n", r) // every digit: the sum of i*i for i < 1000: 332833500
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "consumer:", err)
	os.Exit(1)
}
