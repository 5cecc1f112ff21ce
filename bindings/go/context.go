package cudot

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// bindingMajor is the major version of cudot.h this binding was written for.
const bindingMajor = 1

var (
	loadOnce sync.Once
	loadErr  error
)

// Load finds and loads the library now, once per process; New calls it for you. Use it to report a
// missing library early. Later calls return the first result.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

func load() error {
	candidates := libraryNames
	path := os.Getenv("CUDOT_LIBRARY")
	if path != "" {
		candidates = []string{path} // an explicit choice: no silent fallback to another copy
	}
	var firstErr error
	for _, name := range candidates {
		err := openLibrary(name)
		if err == nil {
			return checkVersion(libVersion())
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	// The first candidate's reason, the other names tried, and what to do about it (loadHint, per
	// platform). The error still wraps ErrLoad.
	also := ""
	if len(candidates) > 1 {
		also = " (also tried " + strings.Join(candidates[1:], ", ") + ")"
	}
	if hint := loadHint(path != ""); hint != "" {
		return fmt.Errorf("%w%s; %s", firstErr, also, hint)
	}
	return fmt.Errorf("%w%s", firstErr, also)
}

func checkVersion(v uint32) error {
	if v/10000 != bindingMajor {
		return &versionError{got: v}
	}
	return nil
}

// LibraryVersion is the loaded library's cudot_version(): major*10000 + minor*100 + patch.
func LibraryVersion() (uint32, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	return libVersion(), nil
}

// Context owns a cudot context: two input buffers of Capacity elements, x of DType and y of YDType,
// and what computes on them. With Options.Rows, each buffer holds Rows rows of n elements, row-major.
type Context struct {
	mu     sync.Mutex
	h      unsafe.Pointer // the cudot_ctx; nil once closed
	x, y   unsafe.Pointer // the library's input buffers
	n      int            // the capacity: rows * rowLen
	rows   int            // rows of the buffers (1 without Options.Rows)
	rowLen int            // elements of each row: New's n
	dtype  DType          // of x
	ydtype DType          // of y
	memory Memory
	device int
	mode   Mode // Options.Mode, as cudot_get_mode reports it
}

// config mirrors cudot_config as of 1.13 (40 bytes, reserved last); scripts/check_bindings_abi.py
// compares it with cudot.h. It goes to the library as is: through Proc.Call on Windows, and as the
// cd_config of the cgo preamble elsewhere (lib_unix.go checks at compile time that the two agree). A
// library older than a field accepts it while the field is zero: y_dtype for 1.0, wait_ms before 1.5,
// rows before 1.10, mode before 1.13. rows sits at offset 24, a multiple of 8, so 32-bit platforms lay
// it out alike, and the two int32s after it end the struct on a multiple of 8 (no tail padding).
type config struct {
	size                          uint32
	dtype, memory, device, ydtype int32
	waitMS                        uint32
	rows                          uint64
	mode                          int32
	reserved                      int32
}

const configSize = 40

// Compile-time checks that config is exactly configSize bytes.
var (
	_ [configSize - unsafe.Sizeof(config{})]struct{}
	_ [unsafe.Sizeof(config{}) - configSize]struct{}
)

// live counts contexts created and not yet destroyed (tests).
var live atomic.Int64

// leaked counts Contexts the garbage collector found unreachable while still open.
var leaked atomic.Int64

// leakHandler is the function SetLeakHandler installed, if any.
var leakHandler atomic.Pointer[func(LeakInfo)]

// LeakInfo describes a Context that became unreachable without Close.
type LeakInfo struct {
	Capacity      int
	DType, YDType DType
	Memory        Memory
}

// Leaked reports how many Contexts this process let become unreachable without calling Close. Such a
// Context is not freed: a slice from its input accessors may still be in use, and the garbage
// collector cannot see that (the slices alias C memory). Its buffers stay allocated until the process
// exits. A non-zero count means a missing Close.
func Leaked() int64 { return leaked.Load() }

// SetLeakHandler installs f to be called, on the runtime's finalizer goroutine, for each Context that
// becomes unreachable without Close (nil removes it). f must not block.
func SetLeakHandler(f func(LeakInfo)) {
	if f == nil {
		leakHandler.Store(nil)
		return
	}
	leakHandler.Store(&f)
}

// reportLeak is the finalizer of an open Context: it counts and reports it, and frees nothing.
func reportLeak(c *Context) {
	leaked.Add(1)
	if f := leakHandler.Load(); f != nil {
		(*f)(LeakInfo{Capacity: c.n, DType: c.dtype, YDType: c.ydtype, Memory: c.memory})
	}
}

// New creates a context with input buffers for n elements (n may be 0), or, with Options.Rows, for
// Rows rows of n elements each (Rows*n elements). Load failures are reported here too (they wrap
// ErrLoad).
func New(n int, opts Options) (*Context, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, &Error{Op: "New", Status: StatusInvalidArgument, Message: "negative capacity"}
	}
	if opts.Device < math.MinInt32 || opts.Device > math.MaxInt32 {
		return nil, &Error{Op: "New", Status: StatusInvalidArgument, Message: "device ordinal out of range"}
	}
	rows := 1
	switch {
	case opts.Rows < 0:
		return nil, &Error{Op: "New", Status: StatusInvalidArgument, Message: fmt.Sprintf("negative rows %d", opts.Rows)}
	case opts.Rows > 1:
		rows = opts.Rows
		if n > 0 && rows > math.MaxInt/n {
			return nil, &Error{Op: "New", Status: StatusInvalidArgument,
				Message: fmt.Sprintf("%d rows of %d elements overflow an int", rows, n)}
		}
	}
	// A library older than 1.13 would refuse a non-zero mode only as "bytes it does not know"; say what
	// is missing instead.
	if opts.Mode != ModeCanonical && !libHasExact() {
		v := libVersion()
		return nil, &Error{Op: "New", Status: StatusUnsupported, Message: fmt.Sprintf(
			"the loaded library, %d.%d.%d, has no exact mode for contexts (cudot_get_mode): Options.Mode %d needs 1.13",
			v/10000, v/100%100, v%100, int32(opts.Mode))}
	}
	cfg := config{size: configSize, dtype: int32(opts.DType), memory: int32(opts.Memory), device: int32(opts.Device),
		ydtype: int32(opts.YDType), waitMS: opts.WaitMS, mode: int32(opts.Mode)}
	if rows > 1 {
		cfg.rows = uint64(rows) // one row goes as 0, which a library older than 1.10 accepts
	}
	h, st, msg := libInit(uint64(n), cfg)
	if st != StatusOK {
		return nil, statusError("New", st, msg)
	}
	live.Add(1)
	c := &Context{h: h, n: rows * n, rows: rows, rowLen: n}
	var mem, dev, xt, yt int32
	if st, msg = libGetMemory(h, &mem, &dev); st == StatusOK {
		c.x, c.y, st, msg = libGetInputs(h)
	}
	if st == StatusOK {
		var r, l uint64
		var ok bool
		// A library older than 1.10 has no cudot_get_rows; it made one row of n (it refuses more).
		if st, ok, msg = libGetRows(h, &r, &l); ok && st == StatusOK && (r != uint64(rows) || l != uint64(n)) {
			st, msg = StatusInternal, fmt.Sprintf("cudot_get_rows reports %d rows of %d elements; New asked for %d of %d",
				r, l, rows, n)
		}
	}
	if st == StatusOK {
		var md int32
		var ok bool
		// A library older than 1.13 has no cudot_get_mode; it made a canonical context (the check above
		// sent it mode 0).
		if st, ok, msg = libGetMode(h, &md); ok && st == StatusOK {
			c.mode = Mode(md)
			if c.mode != opts.Mode {
				st, msg = StatusInternal, fmt.Sprintf("cudot_get_mode reports mode %d; New asked for %d", md, int32(opts.Mode))
			}
		}
	}
	if st == StatusOK {
		var ok bool
		if st, ok, msg = libGetDTypes(h, &xt, &yt); !ok {
			// A 1.0 library has no cudot_get_dtypes; it accepted the options, so they are what it uses.
			xt, yt, st = int32(opts.DType), int32(opts.YDType), StatusOK
			if xt == 0 {
				xt = int32(Float32)
			}
			if yt == 0 {
				yt = xt
			}
		}
	}
	if st != StatusOK {
		err := statusError("New", st, msg)
		c.destroy()
		return nil, err
	}
	c.memory, c.device = Memory(mem), int(dev)
	c.dtype, c.ydtype = DType(xt), DType(yt)
	// Only Close frees: slices from the accessors alias the buffers and do not keep c reachable, so a
	// finalizer that freed them could pull memory from under live slices. It reports instead.
	runtime.SetFinalizer(c, reportLeak)
	return c, nil
}

// destroy frees the C context, returning cudot_deinit's status and message; the caller holds c.mu or
// owns c exclusively.
func (c *Context) destroy() (Status, string) {
	if c.h == nil {
		return StatusOK, ""
	}
	st, msg := libDeinit(c.h)
	c.h, c.x, c.y = nil, nil, nil
	live.Add(-1)
	return st, msg
}

// Close destroys the context and frees its buffers: slices from the input accessors become invalid.
// It waits for a Dot running in another goroutine. Calling it again does nothing and returns nil.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return nil
	}
	runtime.SetFinalizer(c, nil)
	st, msg := c.destroy()
	if msg == "" {
		msg = "cudot_deinit failed; the context is destroyed anyway"
	}
	return statusError("Close", st, msg)
}

// Dot returns the dot product of all Capacity elements of x and y, as last written.
func (c *Context) Dot() (float64, error) { return c.dot("Dot", c.n, true) }

// DotN returns the dot product of the first n elements (0 <= n <= Capacity); it equals what a context
// of capacity n would return for the same values.
func (c *Context) DotN(n int) (float64, error) {
	if n < 0 {
		return 0, &Error{Op: "DotN", Status: StatusInvalidArgument, Message: "negative n"}
	}
	return c.dot("DotN", n, false)
}

// dot calls cudot_dot when all is set, else cudot_dot_n(n).
func (c *Context) dot(op string, n int, all bool) (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return 0, ErrClosed
	}
	r, st, msg := libDot(c.h, uint64(n), all)
	runtime.KeepAlive(c)
	if st != StatusOK {
		return 0, statusError(op, st, msg)
	}
	return r, nil
}

// Capacity is the number of elements of each buffer: the n given to New, times Options.Rows for a
// Context with rows.
func (c *Context) Capacity() int { return c.n }

// Rows returns the rows of the buffers and the elements of each (cudot_get_rows, as New read it): the
// Options.Rows and n given to New; a Context made without Rows has one row of n.
func (c *Context) Rows() (rows, n int) { return c.rows, c.rowLen }

// DType is the element type of x (Float32 when Options.DType was left zero).
func (c *Context) DType() DType { return c.dtype }

// YDType is the element type of y (the same as DType when Options.YDType was left zero).
func (c *Context) YDType() DType { return c.ydtype }

// Memory is the strategy in use: what Auto resolved to, never Auto.
func (c *Context) Memory() Memory { return c.memory }

// Mode is how Dot, DotN and TilePartials sum: Options.Mode (ModeCanonical when it was left zero), as the
// library reports it (cudot_get_mode).
func (c *Context) Mode() Mode { return c.mode }

// Device is the CUDA device ordinal in use, DeviceAll for a Context on every visible GPU, or
// DeviceNone for Host.
func (c *Context) Device() int { return c.device }
