package cudot

import "unsafe"

// Internal hooks for the black-box tests in package cudot_test.

func LiveContexts() int64 { return live.Load() }

// NativeHandle is the cudot_ctx pointer the Context still holds: nil once it was closed or
// finalized, so no later call can pass the freed pointer to the library.
func NativeHandle(c *Context) unsafe.Pointer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

var (
	LibStatusString = libStatusString
	CheckVersion    = checkVersion
	// The rows calls with any mode, so that the tests can send one the library does not know.
	DotRowsIn     = dotRowsIn
	DotSegmentsIn = dotSegmentsIn
)
