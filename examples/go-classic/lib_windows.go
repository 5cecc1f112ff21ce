//go:build windows

package main

import (
	"math"
	"syscall"
	"unsafe"
)

// The same four helpers over syscall, the way the tutorial did it. Run under wine by
// scripts/test-windows.sh against cudot_classic.dll; LoadDLL is given the full path (-lib).

type Lib struct{ dll *syscall.DLL }

type Proc struct {
	Name string
	proc *syscall.Proc
}

func LoadLib(path string) (*Lib, error) {
	dll, err := syscall.LoadDLL(path)
	if err != nil {
		return nil, err
	}
	return &Lib{dll: dll}, nil
}

func (l *Lib) FindProc(name string) (*Proc, error) {
	p, err := l.dll.FindProc(name)
	if err != nil {
		return nil, err
	}
	return &Proc{Name: name, proc: p}, nil
}

func callInit(p *Proc, n int) (ctx unsafe.Pointer) {
	p.proc.Call(uintptr(unsafe.Pointer(&ctx)), uintptr(n))
	return ctx
}

func callGetInputs(p *Proc, ctx unsafe.Pointer) (x, y *float32) {
	p.proc.Call(uintptr(ctx), uintptr(unsafe.Pointer(&x)), uintptr(unsafe.Pointer(&y)))
	return x, y
}

func callDot(p *Proc, ctx unsafe.Pointer) float32 {
	r := float32(math.NaN())
	p.proc.Call(uintptr(ctx), uintptr(unsafe.Pointer(&r)))
	return r
}

func callDeinit(p *Proc, ctx unsafe.Pointer) { p.proc.Call(uintptr(ctx)) }
