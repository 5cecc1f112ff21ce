package cudot

import (
	"fmt"
	"strings"
)

// DType is the element type of one input buffer (cudot.h's CUDOT_F32 ... CUDOT_U8).
//
// Go has no float16 or bfloat16 type, so buffers of Float16 and BFloat16 are exposed as []uint16
// holding the IEEE binary16 or bfloat16 bit patterns; Float16bits, Float16frombits, BFloat16bits and
// BFloat16frombits convert them to and from float32. Uint8 also serves bool data stored as 0/1 bytes.
type DType int32

// Element types; the values are fixed by the C ABI. The zero value of Options.DType means Float32,
// and the zero value of Options.YDType means "the same as DType".
const (
	Float32  DType = 1 // []float32
	Float64  DType = 2 // []float64
	Float16  DType = 3 // []uint16: IEEE 754 binary16 bit patterns
	BFloat16 DType = 4 // []uint16: bfloat16 bit patterns (the top half of a float32)
	Int8     DType = 5 // []int8
	Uint8    DType = 6 // []uint8, or []bool for 0/1 data
)

var dtypeNames = [...]string{Float32: "float32", Float64: "float64", Float16: "float16",
	BFloat16: "bfloat16", Int8: "int8", Uint8: "uint8"}

func (d DType) String() string {
	if d == 0 {
		return dtypeNames[Float32]
	}
	if d > 0 && int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", int32(d))
}

// ParseDType turns "float32", "float64", "float16", "bfloat16", "int8" or "uint8" (any case) into a
// DType.
func ParseDType(s string) (DType, error) {
	for d := Float32; int(d) < len(dtypeNames); d++ {
		if strings.EqualFold(s, dtypeNames[d]) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("cudot: unknown element type %q (want float32, float64, float16, bfloat16, int8 or uint8)", s)
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

// DeviceAll (CUDOT_DEVICE_ALL), as Options.Device, asks for one Context over every visible GPU
// (CUDA_VISIBLE_DEVICES decides which): each dot is split between them, and the result is bitwise the
// same as on one GPU or the CPU. Device then reports DeviceAll. Needs library 1.3 (older ones answer
// ErrUnsupported).
const DeviceAll = -1

// DeviceNone is what Device reports for a Context that computes on the CPU.
const DeviceNone = -2

// DefaultWaitMS (CUDOT_DEFAULT_WAIT_MS) is the fixed part of the library's default bound on waits for the
// GPU, in milliseconds: what Options.WaitMS zero asks for, plus 2 s for every GiB the call reads.
const DefaultWaitMS = 60000

// Options for New. The zero value asks for the defaults: x and y Float32, Auto, device 0.
type Options struct {
	DType  DType // element type of x (and of y when YDType is zero); zero means Float32
	Memory Memory
	Device int // CUDA device ordinal, or DeviceAll for every visible GPU; ignored by Host, and by Auto when no GPU exists
	// YDType is the element type of y; zero means the same as DType. Any of the 36 pairs works, e.g.
	// DType Float32 with YDType Uint8 for a float vector times a 0/1 mask. Needs library version 1.1.
	YDType DType
	// WaitMS bounds, in milliseconds, how long one call of a GPU strategy waits for the GPU; zero means
	// the library's default (DefaultWaitMS plus 2 s for every GiB the call reads). A call that waits
	// longer (a hung GPU) fails with ErrCUDA, and the Context can then only be closed. Needs library
	// version 1.5: an older one refuses a non-zero WaitMS with ErrUnsupported.
	WaitMS uint32
	// Rows makes buffers of Rows rows of n elements each (New's n), row-major: row r is elements
	// r*n .. r*n+n-1 of each (Row gives it as a slice), and Capacity is Rows*n. DotEachRow and RowDots
	// dot them row by row; Dot, DotN and TilePartials see each buffer as one vector of Rows*n elements.
	// Zero (or 1) means one row. Needs library version 1.10 when above 1: an older one answers
	// ErrUnsupported.
	Rows int
	// Mode is how Dot, DotN and TilePartials sum (cudot_config.mode); zero means ModeCanonical.
	// ModeExact makes every Dot and DotN the correctly rounded dot (what DotExact gives for the same
	// values), TilePartials one exact partial of ExactPartialBytes for JoinExactPartials, and DotEachRow
	// and RowDots each row's exact dot (library 1.14; a 1.13 library refuses them with ErrUnsupported).
	// Needs library version 1.13: with an older one New answers ErrUnsupported for any Mode but zero.
	Mode Mode
}
