//go:build !windows

package main

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>

// dlerror() belongs to the calling thread, and Go may switch threads between cgo calls, so every
// dlopen/dlsym copies its error out in the same C call.
static void *open_lib(const char *path, char *err, size_t cap) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) snprintf(err, cap, "%s", dlerror());
	return h;
}
static void *find_sym(void *lib, const char *name, char *err, size_t cap) {
	dlerror();
	void *p = dlsym(lib, name);
	if (!p) snprintf(err, cap, "%s", dlerror());
	return p;
}

// The classic ABI, one typed trampoline per function: C calls the pointer with the right signature.
typedef struct Ctx Ctx;
static void call_init(void *fn, void **p, size_t n) { ((void (*)(Ctx **, size_t))fn)((Ctx **)p, n); }
static void call_get_inputs(void *fn, void *ctx, float **x, float **y) {
	((void (*)(Ctx *, float **, float **))fn)((Ctx *)ctx, x, y);
}
static void call_dot(void *fn, void *ctx, float *r) { ((void (*)(Ctx *, float *))fn)((Ctx *)ctx, r); }
static void call_deinit(void *fn, void *ctx) { ((void (*)(Ctx *))fn)((Ctx *)ctx); }
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Lib is a loaded shared library (the tutorial's DLL handle).
type Lib struct{ handle unsafe.Pointer }

// Proc is one exported function of a Lib.
type Proc struct {
	Name string
	addr unsafe.Pointer
}

func cErr(buf []byte) error {
	for i, b := range buf {
		if b == 0 {
			return errors.New(string(buf[:i]))
		}
	}
	return errors.New(string(buf))
}

// LoadLib opens the library at path; it is never closed (the process ends first).
func LoadLib(path string) (*Lib, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	buf := make([]byte, 512)
	h := C.open_lib(cpath, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	if h == nil {
		return nil, cErr(buf)
	}
	return &Lib{handle: h}, nil
}

// FindProc looks up an exported function by name.
func (l *Lib) FindProc(name string) (*Proc, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	buf := make([]byte, 512)
	p := C.find_sym(l.handle, cname, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	if p == nil {
		return nil, cErr(buf)
	}
	return &Proc{Name: name, addr: p}, nil
}

func callInit(p *Proc, n int) (ctx unsafe.Pointer) {
	C.call_init(p.addr, &ctx, C.size_t(n))
	return ctx
}

func callGetInputs(p *Proc, ctx unsafe.Pointer) (x, y *float32) {
	var cx, cy *C.float
	C.call_get_inputs(p.addr, ctx, &cx, &cy)
	return (*float32)(unsafe.Pointer(cx)), (*float32)(unsafe.Pointer(cy))
}

func callDot(p *Proc, ctx unsafe.Pointer) float32 {
	var r C.float
	C.call_dot(p.addr, ctx, &r)
	return float32(r)
}

func callDeinit(p *Proc, ctx unsafe.Pointer) { C.call_deinit(p.addr, ctx) }
