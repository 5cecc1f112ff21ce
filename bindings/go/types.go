package cudot

import (
	"fmt"
	"strings"
)

// DType is the element type of a Context's inputs.
type DType int32

// Element types. The zero value means the library's default, Float32.
const (
	Float32 DType = 1
	Float64 DType = 2
)

func (d DType) String() string {
	switch d {
	case 0, Float32:
		return "float32"
	case Float64:
		return "float64"
	}
	return fmt.Sprintf("DType(%d)", int32(d))
}

// Memory is a memory strategy: where the inputs live and who computes (see cudot.h).
type Memory int32

// Memory strategies. The zero value is Auto: a GPU strategy when a usable GPU exists, otherwise Host.
const (
	Auto    Memory = 0
	Pinned  Memory = 1
	Mapped  Memory = 2
	Managed Memory = 3
	Host    Memory = 4
)

var memoryNames = [...]string{"auto", "pinned", "mapped", "managed", "host"}

func (m Memory) String() string {
	if m >= 0 && int(m) < len(memoryNames) {
		return memoryNames[m]
	}
	return fmt.Sprintf("Memory(%d)", int32(m))
}

// ParseMemory turns "auto", "pinned", "mapped", "managed" or "host" (any case) into a Memory.
func ParseMemory(s string) (Memory, error) {
	for i, name := range memoryNames {
		if strings.EqualFold(s, name) {
			return Memory(i), nil
		}
	}
	return 0, fmt.Errorf("cudot: unknown memory strategy %q (want auto, pinned, mapped, managed or host)", s)
}

// DeviceNone is what Device reports for a Context that computes on the CPU.
const DeviceNone = -2

// Options for New. The zero value asks for the defaults: Float32, Auto, device 0.
type Options struct {
	DType  DType
	Memory Memory
	Device int // CUDA device ordinal; ignored by Host, and by Auto when no GPU exists
}
