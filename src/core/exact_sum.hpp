// exact_sum.hpp - the exact mode's arithmetic: a sum of exact products held without any rounding, and its
// one rounding to a double at the end.
//
// Every product of two elements cudot reads is a binary number m * 2^q with m < 2^106 and
// -2148 <= q <= 1942 (two doubles: 53-bit significands, exponents from the subnormal 2^-1074 up). A sum
// of up to 2^64 of them is an integer multiple of 2^kLowestBit below 2^2176, so it fits a fixed-point
// number of kDigits digits of 32 bits: no product is ever rounded, and the sum is the same whatever the
// order of the additions, the split into pieces, threads, GPUs or processes (merge() is exact too).
//
// The digits are signed 64-bit words holding 32-bit digits with room for carries: an addition adds
// each 32-bit piece of a product to its word and carries nothing; normalize() moves the carries up
// before any word could overflow (every 2^30 additions) and whenever the value is read. Infinite and NaN
// products are not digits: they are kept as flags and decide the result as IEEE arithmetic would with
// an infinitely precise sum.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cudot {
namespace exact {

constexpr int kDigitBits = 32;
constexpr int kLowestBit = -2240;  // weight of digit 0's lowest bit: below 2^-2148, the least product
constexpr int kDigits = 138;       // up to 2^(32 * 138 - 2240) = 2^2176: 2^2048 products, 2^128 of room
constexpr std::uint32_t kAddsBeforeNormalize = 1u << 30;

enum Special : std::uint32_t { kNaN = 1, kPlusInf = 2, kMinusInf = 4 };

struct Sum {
    std::int64_t digit[kDigits];  // value = sum of digit[i] * 2^(32 i + kLowestBit)
    std::uint32_t special;        // Special bits: the infinite and NaN products seen
    std::uint32_t adds;           // additions since the last normalize()
};

void clear(Sum &s);

// Moves every word's carries up, so that digits 0 .. kDigits - 2 lie in [0, 2^32) and the last one holds
// the sign; the value is unchanged.
void normalize(Sum &s);

// s += m * 2^q, m < 2^128 given as hi * 2^64 + lo, negated when `negative`; q + the bit length of m must
// stay within the range above.
inline void add_integer(Sum &s, std::uint64_t hi, std::uint64_t lo, int q, bool negative) {
    const int at = q - kLowestBit;
    const int first = at / kDigitBits, shift = at % kDigitBits;
    // The four 32-bit words of m, then the five digits of m << shift.
    const std::uint64_t w[4] = {lo & 0xffffffffu, lo >> 32, hi & 0xffffffffu, hi >> 32};
    const std::int64_t flip = negative ? -1 : 0;  // (d ^ flip) - flip: d or -d
    std::uint64_t below = 0;
    for (int k = 0; k < 5; ++k) {
        const std::uint64_t word = k < 4 ? w[k] : 0;
        const std::uint64_t d = ((word << shift) | (below >> (kDigitBits - shift))) & 0xffffffffu;
        below = word;
        if (d != 0 && first + k < kDigits)
            s.digit[first + k] += (static_cast<std::int64_t>(d) ^ flip) - flip;
    }
    if (++s.adds == kAddsBeforeNormalize) normalize(s);
}

// s += v for a double v (finite, infinite or NaN).
void add_double(Sum &s, double v);

// s += x * y, exactly, for any two doubles (the product may lie beyond the double range).
void add_product(Sum &s, double x, double y);

// s += t: exact.
void merge(Sum &s, const Sum &t);

// The sum rounded once to the nearest double, ties to even; +inf or -inf where that passes the largest
// double; +0.0 for an exact zero. NaN for a NaN product, inf * 0, or infinite products of both signs;
// otherwise the infinity of the infinite products.
double round(const Sum &s);

}  // namespace exact
}  // namespace cudot
