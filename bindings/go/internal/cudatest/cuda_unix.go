//go:build !windows && cgo

package cudatest

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

typedef int (*cu_fn)();
enum { F_INIT, F_COUNT, F_GET, F_RETAIN, F_PUSH, F_POP, F_ALLOC, F_FREE, F_HTOD, F_DTOH, F_SCREATE, F_SDESTROY,
	F_SSYNC, F_ERRSTR, F_NFN };
static const char *cu_names[F_NFN] = {"cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDevicePrimaryCtxRetain",
	"cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2",
	"cuMemcpyDtoH_v2", "cuStreamCreate", "cuStreamDestroy_v2", "cuStreamSynchronize", "cuGetErrorString"};
static void *cu_fns[F_NFN];
static void *cu_ctx;

// The driver's error text for a result, into msg.
static void cu_text(int r, const char *what, char *msg, size_t cap) {
	const char *s = NULL;
	if (cu_fns[F_ERRSTR]) ((int (*)(int, const char **))cu_fns[F_ERRSTR])(r, &s);
	snprintf(msg, cap, "%s: error %d (%s)", what, r, s ? s : "?");
}

static int cu_open(char *msg, size_t cap) {
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) { snprintf(msg, cap, "%s", dlerror()); return -1; }
	for (int i = 0; i < F_NFN; i++) {
		cu_fns[i] = dlsym(lib, cu_names[i]);
		if (!cu_fns[i]) { snprintf(msg, cap, "libcuda.so.1 lacks %s", cu_names[i]); return -1; }
	}
	int r, count = 0, dev = 0;
	if ((r = ((int (*)(unsigned))cu_fns[F_INIT])(0)) != 0) { cu_text(r, "cuInit", msg, cap); return -1; }
	if ((r = ((int (*)(int *))cu_fns[F_COUNT])(&count)) != 0) { cu_text(r, "cuDeviceGetCount", msg, cap); return -1; }
	if (count == 0) { snprintf(msg, cap, "no CUDA device"); return -1; }
	if ((r = ((int (*)(int *, int))cu_fns[F_GET])(&dev, 0)) != 0) { cu_text(r, "cuDeviceGet", msg, cap); return -1; }
	if ((r = ((int (*)(void **, int))cu_fns[F_RETAIN])(&cu_ctx, dev)) != 0) {
		cu_text(r, "cuDevicePrimaryCtxRetain", msg, cap);
		return -1;
	}
	return 0;
}

// One driver call in the primary context: op selects it, a and b and n are its operands.
enum { OP_ALLOC, OP_FREE, OP_HTOD, OP_DTOH, OP_SCREATE, OP_SDESTROY, OP_SSYNC };
static int cu_call(int op, uintptr_t *out, uintptr_t a, const void *host, void *host_out, size_t n, char *msg, size_t cap) {
	int r = ((int (*)(void *))cu_fns[F_PUSH])(cu_ctx);
	if (r != 0) { cu_text(r, "cuCtxPushCurrent", msg, cap); return r; }
	const char *what = "?";
	unsigned long long d = 0;
	void *s = NULL;
	switch (op) {
	case OP_ALLOC: what = "cuMemAlloc"; r = ((int (*)(unsigned long long *, size_t))cu_fns[F_ALLOC])(&d, n); *out = (uintptr_t)d; break;
	case OP_FREE: what = "cuMemFree"; r = ((int (*)(unsigned long long))cu_fns[F_FREE])(a); break;
	case OP_HTOD: what = "cuMemcpyHtoD"; r = ((int (*)(unsigned long long, const void *, size_t))cu_fns[F_HTOD])(a, host, n); break;
	case OP_DTOH: what = "cuMemcpyDtoH"; r = ((int (*)(void *, unsigned long long, size_t))cu_fns[F_DTOH])(host_out, a, n); break;
	case OP_SCREATE: what = "cuStreamCreate"; r = ((int (*)(void **, unsigned))cu_fns[F_SCREATE])(&s, 1); *out = (uintptr_t)s; break;
	case OP_SDESTROY: what = "cuStreamDestroy"; r = ((int (*)(void *))cu_fns[F_SDESTROY])((void *)a); break;
	case OP_SSYNC: what = "cuStreamSynchronize"; r = ((int (*)(void *))cu_fns[F_SSYNC])((void *)a); break;
	}
	if (r != 0) cu_text(r, what, msg, cap);
	void *popped;
	((int (*)(void **))cu_fns[F_POP])(&popped);
	return r;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

var (
	openOnce sync.Once
	openErr  error
)

const msgCap = 512

// text is the NUL-terminated message C wrote into b.
func text(b []byte) string { return C.GoString((*C.char)(unsafe.Pointer(&b[0]))) }

// Open loads the driver and retains device 0's primary context, once; its error matches ErrUnavailable.
func Open() error {
	openOnce.Do(func() {
		buf := make([]byte, msgCap)
		if C.cu_open((*C.char)(unsafe.Pointer(&buf[0])), msgCap) != 0 {
			openErr = fmt.Errorf("%w: %s", ErrUnavailable, text(buf))
		}
	})
	return openErr
}

func call(op C.int, a uintptr, host unsafe.Pointer, hostOut unsafe.Pointer, n uintptr) (uintptr, error) {
	if err := Open(); err != nil {
		return 0, err
	}
	var out C.uintptr_t
	buf := make([]byte, msgCap)
	if C.cu_call(op, &out, C.uintptr_t(a), host, hostOut, C.size_t(n), (*C.char)(unsafe.Pointer(&buf[0])), msgCap) != 0 {
		return 0, fmt.Errorf("cudatest: %s", text(buf))
	}
	return uintptr(out), nil
}

// Malloc allocates bytes of device memory (cuMemAlloc) and returns its address.
func Malloc(bytes int) (uintptr, error) { return call(C.OP_ALLOC, 0, nil, nil, uintptr(bytes)) }

// Free frees device memory from Malloc.
func Free(addr uintptr) error { _, err := call(C.OP_FREE, addr, nil, nil, 0); return err }

// CopyToDevice copies src to the device memory at dst.
func CopyToDevice(dst uintptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	_, err := call(C.OP_HTOD, dst, unsafe.Pointer(&src[0]), nil, uintptr(len(src)))
	return err
}

// CopyFromDevice copies len(dst) bytes from the device memory at src into dst.
func CopyFromDevice(dst []byte, src uintptr) error {
	if len(dst) == 0 {
		return nil
	}
	_, err := call(C.OP_DTOH, src, nil, unsafe.Pointer(&dst[0]), uintptr(len(dst)))
	return err
}

// NewStream creates a non-blocking stream and returns its handle.
func NewStream() (uintptr, error) { return call(C.OP_SCREATE, 0, nil, nil, 0) }

// DestroyStream destroys a stream from NewStream.
func DestroyStream(s uintptr) error { _, err := call(C.OP_SDESTROY, s, nil, nil, 0); return err }

// Synchronize waits for the work queued on stream s.
func Synchronize(s uintptr) error { _, err := call(C.OP_SSYNC, s, nil, nil, 0); return err }
