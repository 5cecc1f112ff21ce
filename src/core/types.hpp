// types.hpp - the six element types, their exact conversions, and which arithmetic a pair of them uses.
// Shared by the CPU and the CUDA backends (__host__ __device__).
#pragma once

#include <cstdint>
#include <cstring>

#include "cudot.h"

// Every result cudot promises rests on IEEE arithmetic done as written: -ffast-math and -Ofast let the
// compiler drop Dot2's compensation, assume no Inf or NaN and pick other NaN bits. CMakeLists.txt refuses
// those flags (cmake/ieee_flags.cmake); this stops a build that passes them some other way.
#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error "cudot must not be compiled with -ffast-math, -Ofast or -ffinite-math-only: they change its results"
#endif

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

#if defined(__CUDACC__)
#define CUDOT_TYPES_HD __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define CUDOT_TYPES_HD inline __attribute__((always_inline))
#else
#define CUDOT_TYPES_HD inline
#endif

namespace cudot {
namespace types {

// 16-bit floating types, stored as their bit patterns (C and most FFI languages have no such type).
struct f16 {
    std::uint16_t bits;
};
struct bf16 {
    std::uint16_t bits;
};

CUDOT_TYPES_HD float bits_to_float(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(b);
#else
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
#endif
}

// Exact conversions to double: every value of every type is representable.
CUDOT_TYPES_HD double to_double(float v) { return static_cast<double>(v); }
CUDOT_TYPES_HD double to_double(double v) { return v; }
CUDOT_TYPES_HD double to_double(std::int8_t v) { return static_cast<double>(v); }
CUDOT_TYPES_HD double to_double(std::uint8_t v) { return static_cast<double>(v); }
CUDOT_TYPES_HD double to_double(bf16 v) { return static_cast<double>(bits_to_float(std::uint32_t(v.bits) << 16)); }
CUDOT_TYPES_HD std::uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
#endif
}

CUDOT_TYPES_HD double to_double(f16 v) {
#if defined(__CUDA_ARCH__)
    return static_cast<double>(__half2float(__ushort_as_half(v.bits)));  // one exact conversion instruction
#else
    // binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. Normal numbers, Inf and NaN are rebuilt
    // as a binary32 bit pattern; subnormals (exponent 0) are fraction * 2^-24, an exact float product
    // that never touches a subnormal float (so a caller's flush-to-zero mode cannot change it).
    // Selections are bit masks, not branches, so the CPU loop vectorizes.
    const std::uint32_t h = v.bits;
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu, fraction = h & 0x3ffu;
    const std::uint32_t inf_nan = 0u - static_cast<std::uint32_t>(exponent == 0x1fu);  // all ones or zero
    const std::uint32_t sub = 0u - static_cast<std::uint32_t>(exponent == 0u);
    const std::uint32_t e32 = (exponent + 112u) | (inf_nan & 0xffu);  // 112 = 127 - 15; 31 + 112 | 255 = 255
    const std::uint32_t normal_bits = sign | (e32 << 23) | (fraction << 13);
    const std::uint32_t sub_bits = float_to_bits(static_cast<float>(fraction) * 5.9604644775390625e-8f) | sign;
    return static_cast<double>(bits_to_float((sub_bits & sub) | (normal_bits & ~sub)));
#endif
}

CUDOT_TYPES_HD std::int32_t to_int(std::int8_t v) { return v; }
CUDOT_TYPES_HD std::int32_t to_int(std::uint8_t v) { return v; }

template <class T> struct Traits;
template <> struct Traits<float> { static constexpr int32_t id = CUDOT_F32; static constexpr bool is_int = false; };
template <> struct Traits<double> { static constexpr int32_t id = CUDOT_F64; static constexpr bool is_int = false; };
template <> struct Traits<f16> { static constexpr int32_t id = CUDOT_F16; static constexpr bool is_int = false; };
template <> struct Traits<bf16> { static constexpr int32_t id = CUDOT_BF16; static constexpr bool is_int = false; };
template <> struct Traits<std::int8_t> { static constexpr int32_t id = CUDOT_I8; static constexpr bool is_int = true; };
template <> struct Traits<std::uint8_t> { static constexpr int32_t id = CUDOT_U8; static constexpr bool is_int = true; };

// Types with at most 11 significant bits and magnitudes in [2^-24, 2^16]: F16, I8, U8. The product of
// two of them has at most 22 significant bits and lies in [2^-48, 2^32], so it is exact in float and
// equals the exact double product: both backends form such products with one float multiply.
template <class T>
constexpr bool kExactFloatProduct = Traits<T>::id == CUDOT_F16 || Traits<T>::id == CUDOT_I8 || Traits<T>::id == CUDOT_U8;

// The arithmetic a pair of element types is summed with (src/core/order.hpp):
//  Dot2   - either side F64: products need 106 bits, so compensated (TwoProduct + TwoSum).
//  Exact  - both sides integer: 64-bit integer sums, exact.
//  Double - everything else: every product of two of F32/F16/BF16/I8/U8 fits in 53 bits, so products
//           are exact in double and only the sums round.
enum class Kind { Double, Dot2, Exact };

template <class Tx, class Ty>
constexpr Kind kind_of() {
    return (Traits<Tx>::id == CUDOT_F64 || Traits<Ty>::id == CUDOT_F64) ? Kind::Dot2
           : (Traits<Tx>::is_int && Traits<Ty>::is_int)                 ? Kind::Exact
                                                                         : Kind::Double;
}

constexpr Kind kind_of(int32_t x, int32_t y) {
    return (x == CUDOT_F64 || y == CUDOT_F64)                                   ? Kind::Dot2
           : ((x == CUDOT_I8 || x == CUDOT_U8) && (y == CUDOT_I8 || y == CUDOT_U8)) ? Kind::Exact
                                                                                    : Kind::Double;
}

constexpr bool valid_dtype(int32_t d) { return d >= CUDOT_F32 && d <= CUDOT_U8; }

constexpr std::size_t size_of(int32_t d) {
    return d == CUDOT_F64 ? 8 : d == CUDOT_F32 ? 4 : (d == CUDOT_F16 || d == CUDOT_BF16) ? 2 : 1;
}

// Calls f.template operator()<T>() with the C++ type of a dtype (which must be valid).
template <class F>
auto with_type(int32_t d, F &&f) {
    switch (d) {
        case CUDOT_F64: return f(double{});
        case CUDOT_F16: return f(f16{});
        case CUDOT_BF16: return f(bf16{});
        case CUDOT_I8: return f(std::int8_t{});
        case CUDOT_U8: return f(std::uint8_t{});
        default: return f(float{});
    }
}

}  // namespace types
}  // namespace cudot
