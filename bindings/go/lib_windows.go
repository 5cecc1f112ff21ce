//go:build windows

package cudot

import (
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"
)

// On Windows the DLL is reached through syscall, without cgo. Every cudot function takes and returns
// integers or pointers, so Proc.Call is enough; doubles come back through out-parameters.

var libraryNames = []string{"cudot.dll"}

// Flags of LoadLibraryExW (libloaderapi.h). A bare name is looked for in the program's own folder, in
// folders the program added with AddDllDirectory, and in System32 only: never in the current directory
// or on PATH, where a planted cudot.dll could be picked up (DLL preloading). A full path (CUDOT_LIBRARY)
// loads that file, and its own dependencies are looked for beside it first.
const (
	loadLibrarySearchDLLLoadDir  = 0x00000100
	loadLibrarySearchDefaultDirs = 0x00001000
)

var loadLibraryExW = syscall.NewLazyDLL("kernel32.dll").NewProc("LoadLibraryExW")

// loadRestricted is syscall.LoadDLL with the search above instead of the default search order.
func loadRestricted(path string) (*syscall.DLL, error) {
	flags := uintptr(loadLibrarySearchDefaultDirs)
	if filepath.IsAbs(path) {
		flags |= loadLibrarySearchDLLLoadDir // only valid with a full path
	}
	name, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, _, callErr := loadLibraryExW.Call(uintptr(unsafe.Pointer(name)), 0, flags)
	if h == 0 {
		return nil, callErr
	}
	return &syscall.DLL{Name: path, Handle: syscall.Handle(h)}, nil
}

// loadHint ends the error of a failed load (see load): with CUDOT_LIBRARY set (explicit), what it must
// name; without, where a bare cudot.dll is looked for (not PATH, not the current folder: see
// loadRestricted) and how to point the binding at another place.
func loadHint(explicit bool) string {
	if explicit {
		return `CUDOT_LIBRARY must be the full path of a built cudot.dll (e.g. C:\path\to\build\cudot.dll)`
	}
	return `set CUDOT_LIBRARY to the library's full path (e.g. C:\path\to\build\cudot.dll), or put cudot.dll ` +
		"beside the program (PATH and the current folder are not searched)"
}

var procs struct {
	init, getInputs, dot, dotN, deinit, getMemory, statusString, lastError, version *syscall.Proc

	getDTypes *syscall.Proc // cudot_get_dtypes; nil with a 1.0 library

	tilePartials, joinPartials *syscall.Proc // since 1.2; nil with an older library

	// since 1.7; nil with an older library
	dotArrays, dotArraysAsync, tilePartialsArrays, registerHost, unregisterHost *syscall.Proc

	dotRows *syscall.Proc // since 1.9; nil with an older library

	getRows, dotEachRow *syscall.Proc // since 1.10; nil with an older library

	getMode, joinExactPartials *syscall.Proc // since 1.13; nil with an older library
}

func openLibrary(path string) error {
	dll, err := loadRestricted(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrLoad, path, err)
	}
	for _, p := range []struct {
		name string
		dst  **syscall.Proc
	}{
		{"cudot_init", &procs.init}, {"cudot_get_inputs", &procs.getInputs}, {"cudot_dot", &procs.dot},
		{"cudot_dot_n", &procs.dotN}, {"cudot_deinit", &procs.deinit}, {"cudot_get_memory", &procs.getMemory},
		{"cudot_status_string", &procs.statusString}, {"cudot_last_error", &procs.lastError},
		{"cudot_version", &procs.version},
	} {
		if *p.dst, err = dll.FindProc(p.name); err != nil {
			dll.Release()
			return fmt.Errorf("%w: %s: %v", ErrLoad, path, err)
		}
	}
	procs.getDTypes, _ = dll.FindProc("cudot_get_dtypes")       // optional: new in 1.1
	procs.tilePartials, _ = dll.FindProc("cudot_tile_partials") // optional: new in 1.2
	procs.joinPartials, _ = dll.FindProc("cudot_join_partials")
	procs.dotArrays, _ = dll.FindProc("cudot_dot_arrays") // optional: new in 1.7, like the next four
	procs.dotArraysAsync, _ = dll.FindProc("cudot_dot_arrays_async")
	procs.tilePartialsArrays, _ = dll.FindProc("cudot_tile_partials_arrays")
	procs.registerHost, _ = dll.FindProc("cudot_register_host")
	procs.unregisterHost, _ = dll.FindProc("cudot_unregister_host")
	procs.dotRows, _ = dll.FindProc("cudot_dot_rows") // optional: new in 1.9
	procs.getRows, _ = dll.FindProc("cudot_get_rows") // optional: new in 1.10, like the next
	procs.dotEachRow, _ = dll.FindProc("cudot_dot_each_row")
	procs.getMode, _ = dll.FindProc("cudot_get_mode") // optional: new in 1.13, like the next
	procs.joinExactPartials, _ = dll.FindProc("cudot_join_exact_partials")
	// The DLL is never released: contexts may use it until the process exits.
	return nil
}

// goString copies a NUL-terminated C string returned in a register. Reading the uintptr's bytes as a
// pointer (rather than converting it) keeps go vet's unsafeptr check quiet; the memory is C's.
func goString(r uintptr) string {
	p := *(**byte)(unsafe.Pointer(&r))
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

func libVersion() uint32 {
	r, _, _ := procs.version.Call()
	return uint32(r)
}

func libInit(n uint64, cfg config) (unsafe.Pointer, Status, string) {
	// cudot_last_error(NULL) is per OS thread: keep the goroutine on one thread across both calls.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var h unsafe.Pointer
	r, _, _ := procs.init.Call(uintptr(unsafe.Pointer(&h)), uintptr(n), uintptr(unsafe.Pointer(&cfg)))
	if st := Status(int32(r)); st != StatusOK {
		m, _, _ := procs.lastError.Call(0)
		return nil, st, goString(m)
	}
	if h == nil {
		return nil, StatusInternal, "cudot_init returned CUDOT_OK without a context"
	}
	return h, StatusOK, ""
}

// callOn makes one call on context h (0 for calls without one) and, if it fails, reads its message on
// the same OS thread before another call there can replace it: the library gives each thread the
// message of its own failure, and the goroutine stays on its thread for both calls.
func callOn(h uintptr, call func() uintptr) (Status, string) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st := Status(int32(call()))
	if st == StatusOK {
		return st, ""
	}
	m, _, _ := procs.lastError.Call(h)
	return st, goString(m)
}

func libGetInputs(h unsafe.Pointer) (x, y unsafe.Pointer, st Status, msg string) {
	st, msg = callOn(uintptr(h), func() uintptr {
		r, _, _ := procs.getInputs.Call(uintptr(h), uintptr(unsafe.Pointer(&x)), uintptr(unsafe.Pointer(&y)))
		return r
	})
	return x, y, st, msg
}

func libDot(h unsafe.Pointer, n uint64, all bool) (float64, Status, string) {
	var res float64
	st, msg := callOn(uintptr(h), func() uintptr {
		if all {
			r, _, _ := procs.dot.Call(uintptr(h), uintptr(unsafe.Pointer(&res)))
			return r
		}
		r, _, _ := procs.dotN.Call(uintptr(h), uintptr(n), uintptr(unsafe.Pointer(&res)))
		return r
	})
	return res, st, msg
}

func libDeinit(h unsafe.Pointer) (Status, string) {
	st, msg := callOn(0, func() uintptr {
		r, _, _ := procs.deinit.Call(uintptr(h))
		return r
	})
	// cudot_deinit's message is in cudot_last_error(NULL) since the version after 1.5.0; an older
	// library left it nowhere, and the text read would be an unrelated older failure.
	if libVersion() <= 10500 {
		msg = ""
	}
	return st, msg
}

func libGetMemory(h unsafe.Pointer, memory, device *int32) (Status, string) {
	return callOn(uintptr(h), func() uintptr {
		r, _, _ := procs.getMemory.Call(uintptr(h), uintptr(unsafe.Pointer(memory)), uintptr(unsafe.Pointer(device)))
		return r
	})
}

// libGetDTypes calls cudot_get_dtypes; ok is false when the library (1.0) lacks it.
func libGetDTypes(h unsafe.Pointer, x, y *int32) (st Status, ok bool, msg string) {
	if procs.getDTypes == nil {
		return StatusOK, false, ""
	}
	st, msg = callOn(uintptr(h), func() uintptr {
		r, _, _ := procs.getDTypes.Call(uintptr(h), uintptr(unsafe.Pointer(x)), uintptr(unsafe.Pointer(y)))
		return r
	})
	return st, true, msg
}

func libStatusString(st Status) string {
	r, _, _ := procs.statusString.Call(uintptr(st))
	return goString(r)
}

// libHasContextRows reports whether the library (1.10 or later) has cudot_get_rows and
// cudot_dot_each_row.
func libHasContextRows() bool { return procs.getRows != nil && procs.dotEachRow != nil }

// libGetRows calls cudot_get_rows; ok is false when the library (older than 1.10) lacks it.
func libGetRows(h unsafe.Pointer, rows, n *uint64) (st Status, ok bool, msg string) {
	if !libHasContextRows() {
		return StatusOK, false, ""
	}
	var r, l uintptr // size_t
	st, msg = callOn(uintptr(h), func() uintptr {
		ret, _, _ := procs.getRows.Call(uintptr(h), uintptr(unsafe.Pointer(&r)), uintptr(unsafe.Pointer(&l)))
		return ret
	})
	*rows, *n = uint64(r), uint64(l)
	return st, true, msg
}

// libDotEachRow dots the first n elements of each of the first rows rows into results (rows of them).
func libDotEachRow(h unsafe.Pointer, rows, n uint64, results []float64) (Status, string) {
	p := first0(results)
	return callOn(uintptr(h), func() uintptr {
		r, _, _ := procs.dotEachRow.Call(uintptr(h), uintptr(rows), uintptr(n), uintptr(p))
		return r
	})
}

// libHasExact reports whether the library (1.13 or later) has cudot_get_mode and
// cudot_join_exact_partials: the exact mode of contexts and its partials.
func libHasExact() bool { return procs.getMode != nil && procs.joinExactPartials != nil }

// libGetMode calls cudot_get_mode; ok is false when the library (older than 1.13) lacks it.
func libGetMode(h unsafe.Pointer, mode *int32) (st Status, ok bool, msg string) {
	if !libHasExact() {
		return StatusOK, false, ""
	}
	st, msg = callOn(uintptr(h), func() uintptr {
		r, _, _ := procs.getMode.Call(uintptr(h), uintptr(unsafe.Pointer(mode)))
		return r
	})
	return st, true, msg
}

// libJoinExactPartials joins len(partials)/ExactPartialBytes exact partials.
func libJoinExactPartials(partials []byte) (float64, Status, string) {
	p := first0(partials) // NULL for none
	var res float64
	st, msg := callOn(0, func() uintptr {
		r, _, _ := procs.joinExactPartials.Call(uintptr(p), uintptr(len(partials)/ExactPartialBytes),
			uintptr(unsafe.Pointer(&res)))
		return r
	})
	return res, st, msg
}

// libHasPartials reports whether the library (1.2 or later) has cudot_tile_partials and
// cudot_join_partials.
func libHasPartials() bool { return procs.tilePartials != nil && procs.joinPartials != nil }

// libTilePartials writes the partials of elements [first, first+n) into out, which has room for them.
func libTilePartials(h unsafe.Pointer, first, n uint64, out []byte) (Status, string) {
	var p *byte // NULL for n == 0
	if len(out) > 0 {
		p = &out[0]
	}
	return callOn(uintptr(h), func() uintptr {
		r, _, _ := procs.tilePartials.Call(uintptr(h), uintptr(first), uintptr(n), uintptr(unsafe.Pointer(p)))
		return r
	})
}

// libJoinPartials joins len(partials)/PartialBytes partials; the message comes with a failure.
func libJoinPartials(x, y DType, partials []byte) (float64, Status, string) {
	// cudot_last_error(NULL) is per OS thread: keep the goroutine on one thread across both calls.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var p *byte // NULL for no tiles
	if len(partials) > 0 {
		p = &partials[0]
	}
	var res float64
	r, _, _ := procs.joinPartials.Call(uintptr(x), uintptr(y), uintptr(unsafe.Pointer(p)),
		uintptr(len(partials)/PartialBytes), uintptr(unsafe.Pointer(&res)))
	if st := Status(int32(r)); st != StatusOK {
		m, _, _ := procs.lastError.Call(0)
		return 0, st, goString(m)
	}
	return res, StatusOK, ""
}

// cArray and cArrays mirror cudot_array and cudot_arrays of 1.11 (96 bytes on 64-bit Windows; a library
// before 1.11 reads mode 0, the canonical mode, as the zero bytes past its 88, and refuses any other). data is
// an unsafe.Pointer so that the collector sees the Go slices it points into while the call runs;
// device addresses go into it unconverted (asPointer), as the collector ignores addresses outside its
// heap.
type cArray struct {
	data            unsafe.Pointer
	dtype, reserved int32
	stride          int64
}

type cArrays struct {
	size, reserved         uint32
	n                      uintptr
	x, y                   cArray
	stream, xReady, yReady uintptr
	mode, reserved2        int32
}

// asPointer reinterprets a device address as a pointer without converting the uintptr (which go vet's
// unsafeptr check would question); the memory is CUDA's.
func asPointer(addr uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) }

func (o operand) c() cArray {
	data := o.p
	if data == nil {
		data = asPointer(o.addr)
	}
	return cArray{data: data, dtype: int32(o.dtype), stride: o.stride}
}

func (c *arraysCall) c() *cArrays {
	return &cArrays{size: uint32(unsafe.Sizeof(cArrays{})), n: uintptr(c.n), x: c.x.c(), y: c.y.c(),
		stream: c.streams.Stream, xReady: c.streams.XReady, yReady: c.streams.YReady, mode: int32(c.mode)}
}

// libHasArrays reports whether the library (1.7 or later) has the calls for dots of own arrays. On
// 32-bit Windows Go aligns the int64 stride to 4 bytes where C aligns it to 8, so cArrays would not
// match cudot_arrays there: the calls are answered as unsupported.
func libHasArrays() bool {
	return unsafe.Sizeof(cArrays{}) == 96 && procs.dotArrays != nil && procs.dotArraysAsync != nil && procs.tilePartialsArrays != nil &&
		procs.registerHost != nil && procs.unregisterHost != nil
}

func libDotArrays(c *arraysCall) (float64, Status, string) {
	a := c.c()
	var res float64
	st, msg := callOn(0, func() uintptr {
		r, _, _ := procs.dotArrays.Call(uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(&res)))
		return r
	})
	return res, st, msg
}

// libDotArraysAsync queues the dot of c, whose operands are device addresses, writing to result.
func libDotArraysAsync(c *arraysCall, result uintptr) (Status, string) {
	a := c.c()
	return callOn(0, func() uintptr {
		r, _, _ := procs.dotArraysAsync.Call(uintptr(unsafe.Pointer(a)), result)
		return r
	})
}

// libTilePartialsArrays writes the partials of c into out, which has room for them.
func libTilePartialsArrays(c *arraysCall, out []byte) (Status, string) {
	a, p := c.c(), first0(out)
	return callOn(0, func() uintptr {
		r, _, _ := procs.tilePartialsArrays.Call(uintptr(unsafe.Pointer(a)), uintptr(p))
		return r
	})
}

// libHostRange registers (op hostRegister) or unregisters the bytes at p.
func libHostRange(op hostOp, p unsafe.Pointer, bytes uintptr) (Status, string) {
	return callOn(0, func() uintptr {
		if op == hostRegister {
			r, _, _ := procs.registerHost.Call(uintptr(p), bytes)
			return r
		}
		r, _, _ := procs.unregisterHost.Call(uintptr(p))
		return r
	})
}

// cRows mirrors cudot_rows of 1.14 (its Go pointers as unsafe.Pointer, as in cArray): 144 bytes on 64-bit
// Windows. A library from 1.9 to 1.13 reads the first 136 and accepts the zero mode and reserved past
// them as the canonical mode; rows.go asks for 1.14 before sending another mode.
type cRows struct {
	size                   uint32
	layout                 int32
	count, n               uintptr
	x, y                   cArray
	xRowStride, yRowStride int64
	offsets                unsafe.Pointer
	xRows, yRows           uintptr // row pointers: not offered from Go (0)
	stream, xReady, yReady uintptr
	mode, reserved         int32
}

// libHasRows reports whether the library (1.9 or later) has cudot_dot_rows, on a platform where cRows
// lays out as cudot_rows does (not 32-bit Windows: see libHasArrays).
func libHasRows() bool { return unsafe.Sizeof(cArrays{}) == 96 && procs.dotRows != nil }

// libDotRows dots the rows of c into results (count of them).
func libDotRows(c *rowsCall, results []float64) (Status, string) {
	b := &cRows{size: uint32(unsafe.Sizeof(cRows{})), layout: int32(c.layout), count: uintptr(c.count),
		n: uintptr(c.n), x: c.x.c(), y: c.y.c(), xRowStride: c.xRowStride, yRowStride: c.yRowStride,
		mode: int32(c.mode)}
	if len(c.offsets) > 0 {
		b.offsets = unsafe.Pointer(&c.offsets[0])
	}
	return callOn(0, func() uintptr {
		r, _, _ := procs.dotRows.Call(uintptr(unsafe.Pointer(b)), uintptr(first0(results)))
		return r
	})
}
