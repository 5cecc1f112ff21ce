//go:build !windows && cgo

package cudot

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The cudot.h declarations we need, repeated so that this package builds without the header or the
// library; scripts/check_bindings_abi.py compares them with cudot.h. The context stays an opaque void*.
// cudot_config as of 1.13: 40 bytes, reserved last. Go fills it as its config (context.go), whose layout
// is checked against this one below. An older library accepts it while the fields it lacks are zero
// (y_dtype for 1.0, wait_ms before 1.5, rows before 1.10, mode before 1.13): it ignores zero bytes past
// the fields it knows.
typedef struct { uint32_t size; int32_t dtype, memory, device, y_dtype; uint32_t wait_ms; uint64_t rows; int32_t mode; int32_t reserved; } cd_config;
_Static_assert(sizeof(cd_config) == 40, "cudot_config is 40 bytes");
typedef int (*cd_init_fn)(void **, size_t, const cd_config *);
typedef int (*cd_get_inputs_fn)(void *, void **, void **);
typedef int (*cd_dot_fn)(void *, double *);
typedef int (*cd_dot_n_fn)(void *, size_t, double *);
typedef int (*cd_deinit_fn)(void *);
typedef int (*cd_get_memory_fn)(const void *, int32_t *, int32_t *);
typedef int (*cd_get_dtypes_fn)(const void *, int32_t *, int32_t *);
typedef const char *(*cd_status_string_fn)(int);
typedef const char *(*cd_last_error_fn)(const void *);
typedef uint32_t (*cd_version_fn)(void);
typedef int (*cd_tile_partials_fn)(void *, size_t, size_t, void *);
typedef int (*cd_join_partials_fn)(int32_t, int32_t, const void *, size_t, double *);
typedef int (*cd_get_rows_fn)(const void *, size_t *, size_t *);
typedef int (*cd_dot_each_row_fn)(void *, size_t, size_t, double *);
typedef int (*cd_get_mode_fn)(const void *, int32_t *);
typedef int (*cd_join_exact_partials_fn)(const void *, size_t, double *);

// cudot_array and cudot_arrays as of 1.11 (96 bytes on 64-bit platforms; a library before 1.11 reads the
// first 88, and refuses a non-zero mode in the last 8 as bytes it does not know).
typedef struct { const void *data; int32_t dtype, reserved; int64_t stride; } cd_array;
typedef struct { uint32_t size, reserved; size_t n; cd_array x, y; void *stream, *x_ready, *y_ready;
	int32_t mode, reserved2; } cd_arrays;
_Static_assert(sizeof(void *) != 8 || sizeof(cd_arrays) == 96, "cudot_arrays is 96 bytes");
typedef int (*cd_dot_arrays_fn)(const cd_arrays *, double *);
typedef int (*cd_tile_partials_arrays_fn)(const cd_arrays *, void *);
typedef int (*cd_register_host_fn)(const void *, size_t);
// cudot_rows as of 1.14 (144 bytes on 64-bit platforms): a batch of dots of own rows. A library from 1.9
// to 1.13 knows the first 136 bytes and accepts the rest while it is zero (the canonical mode); it would
// refuse a non-zero mode only as bytes it does not know, so rows.go asks for 1.14 before sending one.
typedef struct {
	uint32_t size; int32_t layout; size_t count, n; cd_array x, y; int64_t x_row_stride, y_row_stride;
	const int64_t *offsets; const void *const *x_rows; const void *const *y_rows; void *stream, *x_ready, *y_ready;
	int32_t mode, reserved;
} cd_rows;
_Static_assert(sizeof(void *) != 8 || sizeof(cd_rows) == 144, "cudot_rows is 144 bytes");
typedef int (*cd_dot_rows_fn)(const cd_rows *, double *);
typedef int (*cd_unregister_host_fn)(const void *);

static cd_init_fn p_init;
static cd_get_inputs_fn p_get_inputs;
static cd_dot_fn p_dot;
static cd_dot_n_fn p_dot_n;
static cd_deinit_fn p_deinit;
static cd_get_memory_fn p_get_memory;
static cd_get_dtypes_fn p_get_dtypes; // since 1.1: NULL with a 1.0 library
static cd_status_string_fn p_status_string;
static cd_last_error_fn p_last_error;
static cd_version_fn p_version;
static cd_tile_partials_fn p_tile_partials; // since 1.2: NULL with an older library
static cd_join_partials_fn p_join_partials; // since 1.2
static cd_dot_arrays_fn p_dot_arrays;       // since 1.7, like the next four
static cd_dot_arrays_fn p_dot_arrays_async; // the same signature: a double * (there in device memory)
static cd_tile_partials_arrays_fn p_tile_partials_arrays;
static cd_register_host_fn p_register_host;
static cd_unregister_host_fn p_unregister_host;
static cd_dot_rows_fn p_dot_rows; // since 1.9
static cd_get_rows_fn p_get_rows; // since 1.10, like the next
static cd_dot_each_row_fn p_dot_each_row;
static cd_get_mode_fn p_get_mode; // since 1.13, like the next
static cd_join_exact_partials_fn p_join_exact_partials;

static void cd_copy(char *dst, size_t cap, const char *src) {
	snprintf(dst, cap, "%s", src ? src : "");
}

// Opens path and binds every symbol (the optional ones, newer than 1.0, where present), or fails without
// binding any. dlerror() is per thread, so it is read here, in the same C call as the dlopen/dlsym that
// set it.
static int cd_open(const char *path, char *err, size_t cap) {
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) { cd_copy(err, cap, dlerror()); return -1; }
	static const char *names[] = {"cudot_init", "cudot_get_inputs", "cudot_dot", "cudot_dot_n", "cudot_deinit",
		"cudot_get_memory", "cudot_status_string", "cudot_last_error", "cudot_version"};
	void *syms[9];
	for (int i = 0; i < 9; i++) {
		syms[i] = dlsym(lib, names[i]);
		if (!syms[i]) {
			snprintf(err, cap, "%s: missing symbol %s", path, names[i]);
			dlclose(lib);
			return -1;
		}
	}
	// Never dlclosed: contexts and the finalizer may use the library until the process exits.
	p_init = (cd_init_fn)syms[0];
	p_get_inputs = (cd_get_inputs_fn)syms[1];
	p_dot = (cd_dot_fn)syms[2];
	p_dot_n = (cd_dot_n_fn)syms[3];
	p_deinit = (cd_deinit_fn)syms[4];
	p_get_memory = (cd_get_memory_fn)syms[5];
	p_status_string = (cd_status_string_fn)syms[6];
	p_last_error = (cd_last_error_fn)syms[7];
	p_version = (cd_version_fn)syms[8];
	p_get_dtypes = (cd_get_dtypes_fn)dlsym(lib, "cudot_get_dtypes");
	p_tile_partials = (cd_tile_partials_fn)dlsym(lib, "cudot_tile_partials");
	p_join_partials = (cd_join_partials_fn)dlsym(lib, "cudot_join_partials");
	p_dot_arrays = (cd_dot_arrays_fn)dlsym(lib, "cudot_dot_arrays");
	p_dot_arrays_async = (cd_dot_arrays_fn)dlsym(lib, "cudot_dot_arrays_async");
	p_tile_partials_arrays = (cd_tile_partials_arrays_fn)dlsym(lib, "cudot_tile_partials_arrays");
	p_register_host = (cd_register_host_fn)dlsym(lib, "cudot_register_host");
	p_unregister_host = (cd_unregister_host_fn)dlsym(lib, "cudot_unregister_host");
	p_dot_rows = (cd_dot_rows_fn)dlsym(lib, "cudot_dot_rows");
	p_get_rows = (cd_get_rows_fn)dlsym(lib, "cudot_get_rows");
	p_dot_each_row = (cd_dot_each_row_fn)dlsym(lib, "cudot_dot_each_row");
	p_get_mode = (cd_get_mode_fn)dlsym(lib, "cudot_get_mode");
	p_join_exact_partials = (cd_join_exact_partials_fn)dlsym(lib, "cudot_join_exact_partials");
	return 0;
}

// cudot_last_error(NULL) is thread-local and Go may move the goroutine to another thread between two
// cgo calls, so the message of a failed init is copied out in the same C call as the init.
static int cd_init(void **ctx, size_t n, const cd_config *cfg, char *msg, size_t cap) {
	int st = p_init(ctx, n, cfg);
	if (st != 0) cd_copy(msg, cap, p_last_error(NULL));
	return st;
}

// cudot_join_partials reports failures through cudot_last_error(NULL), per thread, like cudot_init:
// the message is copied out in the same C call.
static int cd_join_partials(int32_t x, int32_t y, const void *partials, size_t tiles, double *r, char *msg,
	size_t cap) {
	int st = p_join_partials(x, y, partials, tiles, r);
	if (st != 0) cd_copy(msg, cap, p_last_error(NULL));
	return st;
}

// A failed call's message is read in the same C call as the call, for the same reason: the library
// gives each thread the message of its own failure. On success, or if the copy's memory cannot be had,
// NULL. The caller frees the copy.
static char *cd_message(int st, const void *ctx) {
	if (st == 0) return NULL;
	const char *text = p_last_error(ctx);
	return strdup(text ? text : "");
}

// cudot_deinit's message is in cudot_last_error(NULL) since the version after 1.5.0; an older
// library left it nowhere, and cudot_last_error(NULL) would give an unrelated older failure.
static char *cd_deinit_message(int st) { return p_version() > 10500 ? cd_message(st, NULL) : NULL; }

static int cd_has_partials(void) { return p_tile_partials != NULL && p_join_partials != NULL; }
static int cd_tile_partials(void *ctx, size_t first, size_t n, void *out, char **msg) {
	int st = p_tile_partials(ctx, first, n, out);
	*msg = cd_message(st, ctx);
	return st;
}
static int cd_get_inputs(void *ctx, void **x, void **y, char **msg) {
	int st = p_get_inputs(ctx, x, y);
	*msg = cd_message(st, ctx);
	return st;
}
static int cd_dot(void *ctx, double *r, char **msg) {
	int st = p_dot(ctx, r);
	*msg = cd_message(st, ctx);
	return st;
}
static int cd_dot_n(void *ctx, size_t n, double *r, char **msg) {
	int st = p_dot_n(ctx, n, r);
	*msg = cd_message(st, ctx);
	return st;
}
static int cd_deinit(void *ctx, char **msg) {
	int st = p_deinit(ctx);
	*msg = cd_deinit_message(st);
	return st;
}
static int cd_get_memory(void *ctx, int32_t *m, int32_t *d, char **msg) {
	int st = p_get_memory(ctx, m, d);
	*msg = cd_message(st, ctx);
	return st;
}
static int cd_has_get_dtypes(void) { return p_get_dtypes != NULL; }
static int cd_get_dtypes(void *ctx, int32_t *x, int32_t *y, char **msg) {
	int st = p_get_dtypes(ctx, x, y);
	*msg = cd_message(st, ctx);
	return st;
}
// Contexts with rows (1.10): results is a Go pointer (rows doubles, NULL for none).
static int cd_has_context_rows(void) { return p_get_rows != NULL && p_dot_each_row != NULL; }
static int cd_get_rows(void *ctx, uint64_t *rows, uint64_t *n, char **msg) {
	size_t r = 0, l = 0;
	int st = p_get_rows(ctx, &r, &l);
	*rows = r, *n = l;
	*msg = cd_message(st, ctx);
	return st;
}
static int cd_dot_each_row(void *ctx, uint64_t rows, uint64_t n, double *results, char **msg) {
	int st = p_dot_each_row(ctx, (size_t)rows, (size_t)n, results);
	*msg = cd_message(st, ctx);
	return st;
}
// The exact mode of contexts and its partials (1.13). cudot_join_exact_partials reports failures through
// cudot_last_error(NULL), read in the same C call.
static int cd_has_exact(void) { return p_get_mode != NULL && p_join_exact_partials != NULL; }
static int cd_get_mode(void *ctx, int32_t *mode, char **msg) {
	int st = p_get_mode(ctx, mode);
	*msg = cd_message(st, ctx);
	return st;
}
static int cd_join_exact_partials(const void *partials, uint64_t count, double *r, char **msg) {
	int st = p_join_exact_partials(partials, (size_t)count, r);
	*msg = cd_message(st, NULL);
	return st;
}
// Dots of own arrays. Go fills a cd_request (no Go pointers in it, so cgo lets C read it) and passes
// the Go pointers of slice operands beside it; the shim builds the cudot_arrays on the C stack. An
// operand is a Go pointer (xp, yp) or a device address (x_addr, y_addr); NULL and 0 for an empty one.
// Messages come from cudot_last_error(NULL), read in the same C call.
typedef struct {
	uint64_t n;
	uintptr_t x_addr, y_addr;
	int64_t x_stride, y_stride;
	int32_t x_dtype, y_dtype;
	uintptr_t stream, x_ready, y_ready;
	int32_t mode;
} cd_request;

static int cd_has_arrays(void) {
	return p_dot_arrays && p_dot_arrays_async && p_tile_partials_arrays && p_register_host && p_unregister_host;
}
static cd_arrays cd_fill(const cd_request *r, const void *xp, const void *yp) {
	cd_arrays a = {sizeof(cd_arrays), 0, (size_t)r->n,
		{xp ? xp : (const void *)r->x_addr, r->x_dtype, 0, r->x_stride},
		{yp ? yp : (const void *)r->y_addr, r->y_dtype, 0, r->y_stride},
		(void *)r->stream, (void *)r->x_ready, (void *)r->y_ready, r->mode, 0};
	return a;
}
static int cd_dot_arrays(const cd_request *r, const void *xp, const void *yp, double *res, char **msg) {
	cd_arrays a = cd_fill(r, xp, yp);
	int st = p_dot_arrays(&a, res);
	*msg = cd_message(st, NULL);
	return st;
}
static int cd_dot_arrays_async(const cd_request *r, uintptr_t result, char **msg) {
	cd_arrays a = cd_fill(r, NULL, NULL);
	int st = p_dot_arrays_async(&a, (double *)result);
	*msg = cd_message(st, NULL);
	return st;
}
static int cd_tile_partials_arrays(const cd_request *r, const void *xp, const void *yp, void *out, char **msg) {
	cd_arrays a = cd_fill(r, xp, yp);
	int st = p_tile_partials_arrays(&a, out);
	*msg = cd_message(st, NULL);
	return st;
}
// A batch of rows of Go slices (strided or segmented): r's n, dtypes, element strides and mode, with the
// layout, count and row strides beside it; xp, yp, offsets and results are Go pointers.
static int cd_has_rows(void) { return p_dot_rows != NULL; }
static int cd_dot_rows(const cd_request *r, int32_t layout, uint64_t count, int64_t x_row_stride,
	int64_t y_row_stride, const void *xp, const void *yp, const int64_t *offsets, double *results, char **msg) {
	cd_rows b = {sizeof(cd_rows), layout, (size_t)count, (size_t)r->n,
		{xp ? xp : (const void *)r->x_addr, r->x_dtype, 0, r->x_stride},
		{yp ? yp : (const void *)r->y_addr, r->y_dtype, 0, r->y_stride}, x_row_stride, y_row_stride,
		offsets, NULL, NULL, NULL, NULL, NULL, r->mode, 0};
	int st = p_dot_rows(&b, results);
	*msg = cd_message(st, NULL);
	return st;
}
// op 0: cudot_register_host(p, bytes); 1: cudot_unregister_host(p).
static int cd_host_range(int op, const void *p, size_t bytes, char **msg) {
	int st = op == 0 ? p_register_host(p, bytes) : p_unregister_host(p);
	*msg = cd_message(st, NULL);
	return st;
}
static const char *cd_status_string(int st) { return p_status_string(st); }
static uint32_t cd_version(void) { return p_version(); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

var libraryNames = func() []string {
	if runtime.GOOS == "darwin" {
		return []string{"libcudot.1.dylib", "libcudot.dylib"}
	}
	return []string{"libcudot.so.1", "libcudot.so"}
}()

// loadHint ends the error of a failed load (see load): with CUDOT_LIBRARY set (explicit), what it must
// name; without, how to point the binding at the library.
func loadHint(explicit bool) string {
	lib, pathVar := "libcudot.so", "LD_LIBRARY_PATH"
	if runtime.GOOS == "darwin" {
		lib, pathVar = "libcudot.dylib", "DYLD_LIBRARY_PATH"
	}
	if explicit {
		return "CUDOT_LIBRARY must be the full path of a built " + lib + " (e.g. /path/to/build/" + lib + ")"
	}
	return "set CUDOT_LIBRARY to the library's full path (e.g. /path/to/build/" + lib + "), or put its folder in " + pathVar
}

const msgCap = 1024

// cBuffer turns a NUL-terminated Go byte buffer filled by C into a string.
func cBuffer(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func openLibrary(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	buf := make([]byte, msgCap)
	if C.cd_open(cpath, (*C.char)(unsafe.Pointer(&buf[0])), msgCap) != 0 {
		return fmt.Errorf("%w: %s", ErrLoad, cBuffer(buf))
	}
	return nil
}

func libVersion() uint32 { return uint32(C.cd_version()) }

// Go's config is passed as the preamble's cd_config: the same size and field offsets, checked here at
// compile time (each index is 0 only when the two agree; any other constant does not compile).
var _ = [1]struct{}{}[unsafe.Sizeof(config{})-C.sizeof_cd_config]
var _ = [1]struct{}{}[unsafe.Offsetof(config{}.dtype)-unsafe.Offsetof(C.cd_config{}.dtype)]
var _ = [1]struct{}{}[unsafe.Offsetof(config{}.memory)-unsafe.Offsetof(C.cd_config{}.memory)]
var _ = [1]struct{}{}[unsafe.Offsetof(config{}.device)-unsafe.Offsetof(C.cd_config{}.device)]
var _ = [1]struct{}{}[unsafe.Offsetof(config{}.ydtype)-unsafe.Offsetof(C.cd_config{}.y_dtype)]
var _ = [1]struct{}{}[unsafe.Offsetof(config{}.waitMS)-unsafe.Offsetof(C.cd_config{}.wait_ms)]
var _ = [1]struct{}{}[unsafe.Offsetof(config{}.rows)-unsafe.Offsetof(C.cd_config{}.rows)]
var _ = [1]struct{}{}[unsafe.Offsetof(config{}.mode)-unsafe.Offsetof(C.cd_config{}.mode)]
var _ = [1]struct{}{}[unsafe.Offsetof(config{}.reserved)-unsafe.Offsetof(C.cd_config{}.reserved)]

func libInit(n uint64, cfg config) (unsafe.Pointer, Status, string) {
	var h unsafe.Pointer
	buf := make([]byte, msgCap)
	// cfg holds no Go pointer, so cgo lets C read it where it is.
	st := Status(C.cd_init(&h, C.size_t(n), (*C.cd_config)(unsafe.Pointer(&cfg)), (*C.char)(unsafe.Pointer(&buf[0])),
		msgCap))
	if st != StatusOK {
		return nil, st, cBuffer(buf)
	}
	if h == nil {
		return nil, StatusInternal, "cudot_init returned CUDOT_OK without a context"
	}
	return h, st, ""
}

// takeMessage turns a message copied by a shim (NULL: none) into a string and frees the copy.
func takeMessage(m *C.char) string {
	if m == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(m))
	return C.GoString(m)
}

func libGetInputs(h unsafe.Pointer) (x, y unsafe.Pointer, st Status, msg string) {
	var m *C.char
	st = Status(C.cd_get_inputs(h, &x, &y, &m))
	return x, y, st, takeMessage(m)
}

func libDot(h unsafe.Pointer, n uint64, all bool) (float64, Status, string) {
	var r C.double
	var st C.int
	var m *C.char
	if all {
		st = C.cd_dot(h, &r, &m)
	} else {
		st = C.cd_dot_n(h, C.size_t(n), &r, &m)
	}
	return float64(r), Status(st), takeMessage(m)
}

func libDeinit(h unsafe.Pointer) (Status, string) {
	var m *C.char
	st := Status(C.cd_deinit(h, &m))
	return st, takeMessage(m)
}

func libGetMemory(h unsafe.Pointer, memory, device *int32) (Status, string) {
	var m, d C.int32_t
	var msg *C.char
	st := Status(C.cd_get_memory(h, &m, &d, &msg))
	*memory, *device = int32(m), int32(d)
	return st, takeMessage(msg)
}

// libGetDTypes calls cudot_get_dtypes; ok is false when the library (1.0) lacks it.
func libGetDTypes(h unsafe.Pointer, x, y *int32) (st Status, ok bool, msg string) {
	if C.cd_has_get_dtypes() == 0 {
		return StatusOK, false, ""
	}
	var cx, cy C.int32_t
	var m *C.char
	st = Status(C.cd_get_dtypes(h, &cx, &cy, &m))
	*x, *y = int32(cx), int32(cy)
	return st, true, takeMessage(m)
}

func libStatusString(st Status) string { return C.GoString(C.cd_status_string(C.int(st))) }

// libHasContextRows reports whether the library (1.10 or later) has cudot_get_rows and
// cudot_dot_each_row.
func libHasContextRows() bool { return C.cd_has_context_rows() != 0 }

// libGetRows calls cudot_get_rows; ok is false when the library (older than 1.10) lacks it.
func libGetRows(h unsafe.Pointer, rows, n *uint64) (st Status, ok bool, msg string) {
	if !libHasContextRows() {
		return StatusOK, false, ""
	}
	var r, l C.uint64_t
	var m *C.char
	st = Status(C.cd_get_rows(h, &r, &l, &m))
	*rows, *n = uint64(r), uint64(l)
	return st, true, takeMessage(m)
}

// libDotEachRow dots the first n elements of each of the first rows rows into results (rows of them).
func libDotEachRow(h unsafe.Pointer, rows, n uint64, results []float64) (Status, string) {
	var m *C.char
	st := Status(C.cd_dot_each_row(h, C.uint64_t(rows), C.uint64_t(n), (*C.double)(first0(results)), &m))
	return st, takeMessage(m)
}

// libHasExact reports whether the library (1.13 or later) has cudot_get_mode and
// cudot_join_exact_partials: the exact mode of contexts and its partials.
func libHasExact() bool { return C.cd_has_exact() != 0 }

// libGetMode calls cudot_get_mode; ok is false when the library (older than 1.13) lacks it.
func libGetMode(h unsafe.Pointer, mode *int32) (st Status, ok bool, msg string) {
	if !libHasExact() {
		return StatusOK, false, ""
	}
	var md C.int32_t
	var m *C.char
	st = Status(C.cd_get_mode(h, &md, &m))
	*mode = int32(md)
	return st, true, takeMessage(m)
}

// libJoinExactPartials joins len(partials)/ExactPartialBytes exact partials.
func libJoinExactPartials(partials []byte) (float64, Status, string) {
	var r C.double
	var m *C.char
	st := Status(C.cd_join_exact_partials(first0(partials), C.uint64_t(len(partials)/ExactPartialBytes), &r, &m))
	return float64(r), st, takeMessage(m)
}

// libHasPartials reports whether the library (1.2 or later) has cudot_tile_partials and
// cudot_join_partials.
func libHasPartials() bool { return C.cd_has_partials() != 0 }

// libTilePartials writes the partials of elements [first, first+n) into out, which has room for them.
func libTilePartials(h unsafe.Pointer, first, n uint64, out []byte) (Status, string) {
	var p unsafe.Pointer
	if len(out) > 0 {
		p = unsafe.Pointer(&out[0])
	}
	var m *C.char
	st := Status(C.cd_tile_partials(h, C.size_t(first), C.size_t(n), p, &m))
	return st, takeMessage(m)
}

// libJoinPartials joins len(partials)/PartialBytes partials; the message comes with a failure.
func libJoinPartials(x, y DType, partials []byte) (float64, Status, string) {
	var p unsafe.Pointer
	if len(partials) > 0 {
		p = unsafe.Pointer(&partials[0])
	}
	var r C.double
	buf := make([]byte, msgCap)
	st := Status(C.cd_join_partials(C.int32_t(x), C.int32_t(y), p, C.size_t(len(partials)/PartialBytes), &r,
		(*C.char)(unsafe.Pointer(&buf[0])), msgCap))
	if st != StatusOK {
		return 0, st, cBuffer(buf)
	}
	return float64(r), st, ""
}

// libHasArrays reports whether the library (1.7 or later) has the calls for dots of own arrays.
func libHasArrays() bool { return C.cd_has_arrays() != 0 }

// request is c without its Go pointers, which the shims take as separate arguments.
func request(c *arraysCall) C.cd_request {
	return C.cd_request{n: C.uint64_t(c.n),
		x_addr: C.uintptr_t(c.x.addr), y_addr: C.uintptr_t(c.y.addr),
		x_stride: C.int64_t(c.x.stride), y_stride: C.int64_t(c.y.stride),
		x_dtype: C.int32_t(c.x.dtype), y_dtype: C.int32_t(c.y.dtype),
		stream: C.uintptr_t(c.streams.Stream), x_ready: C.uintptr_t(c.streams.XReady),
		y_ready: C.uintptr_t(c.streams.YReady), mode: C.int32_t(c.mode)}
}

func libDotArrays(c *arraysCall) (float64, Status, string) {
	r := request(c)
	var res C.double
	var m *C.char
	st := Status(C.cd_dot_arrays(&r, c.x.p, c.y.p, &res, &m))
	return float64(res), st, takeMessage(m)
}

// libDotArraysAsync queues the dot of c, whose operands are device addresses, writing to result.
func libDotArraysAsync(c *arraysCall, result uintptr) (Status, string) {
	r := request(c)
	var m *C.char
	st := Status(C.cd_dot_arrays_async(&r, C.uintptr_t(result), &m))
	return st, takeMessage(m)
}

// libTilePartialsArrays writes the partials of c into out, which has room for them.
func libTilePartialsArrays(c *arraysCall, out []byte) (Status, string) {
	r := request(c)
	var m *C.char
	st := Status(C.cd_tile_partials_arrays(&r, c.x.p, c.y.p, first0(out), &m))
	return st, takeMessage(m)
}

// libHasRows reports whether the library (1.9 or later) has cudot_dot_rows.
func libHasRows() bool { return C.cd_has_rows() != 0 }

// libDotRows dots the rows of c into results (count of them).
func libDotRows(c *rowsCall, results []float64) (Status, string) {
	r := request(&c.arraysCall)
	var m *C.char
	var offsets *C.int64_t
	if len(c.offsets) > 0 {
		offsets = (*C.int64_t)(unsafe.Pointer(&c.offsets[0]))
	}
	st := Status(C.cd_dot_rows(&r, C.int32_t(c.layout), C.uint64_t(c.count), C.int64_t(c.xRowStride),
		C.int64_t(c.yRowStride), c.x.p, c.y.p, offsets, (*C.double)(first0(results)), &m))
	return st, takeMessage(m)
}

// libHostRange registers (op hostRegister) or unregisters the bytes at p.
func libHostRange(op hostOp, p unsafe.Pointer, bytes uintptr) (Status, string) {
	var m *C.char
	st := Status(C.cd_host_range(C.int(op), p, C.size_t(bytes), &m))
	return st, takeMessage(m)
}
