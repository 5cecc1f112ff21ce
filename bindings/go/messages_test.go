package cudot_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"cudot.example/cudot"
)

// Goroutines failing on one context, each in its own way, each get their own call's message: the
// binding reads it in the same native call as the failing call, so a goroutine moving to another OS
// thread (whose message for this context is another goroutine's) cannot mix them up.
func TestConcurrentFailuresKeepTheirOwnMessages(t *testing.T) {
	const capacity, goroutines, rounds = 100, 16, 400
	ctx := newContext(t, capacity, cudot.Options{Memory: cudot.Host})
	var wg sync.WaitGroup
	wrong := make(chan string, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			want := fmt.Sprintf("n = %d exceeds the capacity %d", n, capacity)
			for i := 0; i < rounds; i++ {
				_, err := ctx.DotN(n)
				var e *cudot.Error
				if !errors.As(err, &e) || !strings.Contains(e.Message, want) {
					wrong <- fmt.Sprintf("DotN(%d): %v", n, err)
					return
				}
			}
		}(capacity + 1 + g)
	}
	wg.Wait()
	close(wrong)
	for w := range wrong {
		t.Error(w)
	}
}
