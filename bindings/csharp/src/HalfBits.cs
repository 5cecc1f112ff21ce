// HalfBits.cs - conversions between float and the 16-bit patterns the Float16 and BFloat16 buffers
// hold. Mono has no System.Half and no runtime has a bfloat16 type, so the views of those buffers are
// Span<ushort>; these helpers fill and read them. Float to 16 bits rounds to nearest, ties to even
// (overflow gives infinity, NaN stays a quiet NaN of the same sign); 16 bits to float is exact.
namespace Cudot
{
    /// <summary>IEEE 754 binary16 bit patterns (DType.Float16) to and from float.</summary>
    public static class Float16Bits
    {
        /// <summary>The value of a binary16 pattern; exact (every binary16 value is a float).</summary>
        public static unsafe float ToSingle(ushort bits)
        {
            uint sign = (uint)(bits & 0x8000) << 16, exponent = (uint)(bits >> 10) & 0x1f, fraction = (uint)bits & 0x3ff;
            if (exponent == 0) // zero or subnormal: fraction * 2^-24, exact in float
            {
                float magnitude = fraction * (1.0f / 16777216.0f);
                return sign != 0 ? -magnitude : magnitude;
            }
            uint f32 = sign | (exponent == 0x1f ? 0xffu : exponent + 112) << 23 | fraction << 13; // 112 = 127 - 15
            return *(float*)&f32;
        }

        /// <summary>The nearest binary16 pattern to value (ties to even); beyond 65504 infinity.</summary>
        public static unsafe ushort FromSingle(float value)
        {
            uint b = *(uint*)&value;
            uint sign = (b >> 16) & 0x8000, exponent = (b >> 23) & 0xff, mantissa = b & 0x7fffff;
            if (exponent == 0xff) // Inf, or NaN (kept quiet and non-zero)
                return (ushort)(sign | 0x7c00 | (mantissa != 0 ? 0x200 | (mantissa >> 13) : 0));
            int e = (int)exponent - 112; // binary16 biased exponent
            if (e >= 0x1f) return (ushort)(sign | 0x7c00);
            if (e >= 1) // normal: drop 13 bits; a carry out of the fraction bumps the exponent (up to Inf)
            {
                uint r = (uint)e << 10 | mantissa >> 13, rest = mantissa & 0x1fff;
                if (rest > 0x1000 || (rest == 0x1000 && (r & 1) != 0)) r++;
                return (ushort)(sign | r);
            }
            // Subnormal or zero in binary16: units of 2^-24. The value is m * 2^(exponent - 150).
            if (exponent == 0) return (ushort)sign; // float subnormals are far below 2^-25
            uint m = mantissa | 0x800000;
            int shift = 126 - (int)exponent; // >= 14
            if (shift > 24) return (ushort)sign; // below 2^-25: rounds to zero
            uint q = m >> shift, remainder = m & ((1u << shift) - 1), half = 1u << (shift - 1);
            if (remainder > half || (remainder == half && (q & 1) != 0)) q++; // may become the smallest normal
            return (ushort)(sign | q);
        }
    }

    /// <summary>bfloat16 bit patterns (DType.BFloat16), the top half of a float's bits, to and from float.</summary>
    public static class BFloat16Bits
    {
        /// <summary>The value of a bfloat16 pattern; exact.</summary>
        public static unsafe float ToSingle(ushort bits)
        {
            uint f32 = (uint)bits << 16;
            return *(float*)&f32;
        }

        /// <summary>The nearest bfloat16 pattern to value (ties to even); NaN stays a quiet NaN.</summary>
        public static unsafe ushort FromSingle(float value)
        {
            uint b = *(uint*)&value;
            if ((b & 0x7fffffff) > 0x7f800000) return (ushort)((b >> 16) | 0x40);
            return (ushort)((b + 0x7fff + ((b >> 16) & 1)) >> 16);
        }
    }
}
