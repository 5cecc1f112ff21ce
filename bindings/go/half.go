package cudot

import "math"

// Conversions between float32 and the 16-bit bit patterns that Float16 and BFloat16 buffers hold,
// named after math.Float32bits and math.Float32frombits. Every float16 and bfloat16 value is exactly
// a float32, so the frombits direction is exact; the bits direction rounds to nearest, ties to even,
// as IEEE 754 conversions do.

// Float16bits returns the IEEE 754 binary16 bit pattern nearest to f (ties to even). Magnitudes from
// 65520 up become ±Inf, those below 2^-25 become ±0, and between 2^-24 and 2^-14 the result is
// subnormal. A NaN stays a NaN (quiet, with the sign and the top bits of its payload).
func Float16bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff && mant != 0:
		return sign | 0x7e00 | uint16(mant>>13) // NaN: set the quiet bit, keep the payload's top bits
	case exp == 0xff:
		return sign | 0x7c00
	case exp == 0:
		return sign // zero or float32 subnormal: far below half the smallest float16 subnormal
	}
	e := exp - 127 + 15 // the binary16 biased exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	var h, shift uint32
	m := mant
	if e > 0 {
		h, shift = uint32(e)<<10|mant>>13, 13
	} else {
		// Subnormal result: the value is (mant | 1<<23) * 2^(exp-150), in units of 2^-24 that is
		// (mant | 1<<23) >> (14 - e). Shifts beyond 24 leave less than half a unit: zero.
		shift = uint32(14 - e)
		if shift > 24 {
			return sign
		}
		m = mant | 1<<23
		h = m >> shift
	}
	// Round to nearest even; a carry out of the fraction bumps the exponent, up to Inf (0x7c00).
	rest, half := m&(1<<shift-1), uint32(1)<<(shift-1)
	if rest > half || rest == half && h&1 == 1 {
		h++
	}
	return sign | uint16(h)
}

// Float16frombits returns the float32 value of the binary16 bit pattern b (exact).
func Float16frombits(b uint16) float32 {
	sign := uint32(b&0x8000) << 16
	exp := uint32(b>>10) & 0x1f
	frac := uint32(b & 0x3ff)
	switch exp {
	case 0: // zero or subnormal: frac * 2^-24
		return math.Float32frombits(sign | math.Float32bits(float32(frac)*0x1p-24))
	case 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// BFloat16bits returns the bfloat16 bit pattern nearest to f (ties to even): the top 16 bits of f,
// rounded. Magnitudes that round beyond the largest bfloat16 become ±Inf. A NaN stays a NaN (quiet,
// with the sign and the top bits of its payload).
func BFloat16bits(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BFloat16frombits returns the float32 value of the bfloat16 bit pattern b (exact).
func BFloat16frombits(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }
