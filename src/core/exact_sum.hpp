// exact_sum.hpp - the exact mode's arithmetic, shared by the CPU and the GPU (__host__ __device__): a sum
// of exact products held without any rounding, its one rounding to a double at the end, and the short
// floating-point expansions that let a thread add most products without touching the sum.
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
#include <cstring>

#include "order.hpp"

#if defined(__CUDACC__)
#define CUDOT_EXACT_HD __host__ __device__ inline
#else
#define CUDOT_EXACT_HD inline
#endif

namespace cudot {
namespace exact {

constexpr int kDigitBits = 32;
constexpr int kLowestBit = -2240;  // weight of digit 0's lowest bit: below 2^-2148, the least product
constexpr int kDigits = 138;       // up to 2^(32 * 138 - 2240) = 2^2176: 2^2048 products, 2^128 of room
constexpr std::uint32_t kAddsBeforeNormalize = 1u << 30;
constexpr std::uint64_t kQuietNaNBits = 0x7ff8000000000000ull;  // cudot's one NaN

enum Special : std::uint32_t { kNaN = 1, kPlusInf = 2, kMinusInf = 4 };

struct Sum {
    std::int64_t digit[kDigits];  // value = sum of digit[i] * 2^(32 i + kLowestBit)
    std::uint32_t special;        // Special bits: the infinite and NaN products seen
    std::uint32_t adds;           // additions since the last normalize()
};

CUDOT_EXACT_HD std::uint64_t bits_of(double v) {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint64_t>(__double_as_longlong(v));
#else
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
#endif
}

CUDOT_EXACT_HD double double_of(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(b));
#else
    double v;
    std::memcpy(&v, &b, sizeof v);
    return v;
#endif
}

CUDOT_EXACT_HD bool is_special(std::uint64_t bits) { return ((bits >> 52) & 0x7ff) == 0x7ff; }

// A finite double's bits as m * 2^q, m < 2^53 an integer.
CUDOT_EXACT_HD void split(std::uint64_t bits, std::uint64_t &m, int &q) {
    const int e = static_cast<int>((bits >> 52) & 0x7ff);
    m = bits & ((std::uint64_t(1) << 52) - 1);
    if (e != 0) m |= std::uint64_t(1) << 52;
    q = (e != 0 ? e : 1) - 1075;
}

// The 128-bit product of two 64-bit integers, as hi * 2^64 + lo.
CUDOT_EXACT_HD void multiply(std::uint64_t a, std::uint64_t b, std::uint64_t &hi, std::uint64_t &lo) {
#if defined(__CUDA_ARCH__)
    hi = __umul64hi(a, b);
    lo = a * b;
#elif defined(__SIZEOF_INT128__)
    const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    hi = static_cast<std::uint64_t>(p >> 64);
    lo = static_cast<std::uint64_t>(p);
#else
    const std::uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const std::uint64_t middle = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    lo = (middle << 32) | (p00 & 0xffffffffu);
    hi = p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
#endif
}

// The Special bit of an infinite or NaN product (IEEE: NaN for a NaN or inf * 0, else an infinity of the
// product's sign).
CUDOT_EXACT_HD std::uint32_t special_of(double product) {
    if (product != product) return kNaN;
    return product > 0 ? kPlusInf : kMinusInf;
}

// Calls add(i, d) for each digit i that m * 2^q (m = hi * 2^64 + lo < 2^128, negated when `negative`)
// adds to, d its signed 32-bit piece; q + the bit length of m must stay within the sum's range. The
// CPU adds the pieces to a Sum, the GPU to a block's shared digits with atomic additions.
template <class Add>
CUDOT_EXACT_HD void for_each_digit(std::uint64_t hi, std::uint64_t lo, int q, bool negative, Add add) {
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
        if (d != 0 && first + k < kDigits) add(first + k, (static_cast<std::int64_t>(d) ^ flip) - flip);
    }
}

// Moves the carries of words [from, kDigits) up, so that they lie in [0, 2^32) and the last one holds the
// sign; the value is unchanged. Words below `from` must already be digits.
CUDOT_EXACT_HD void normalize_from(Sum &s, int from) {
    for (int i = from; i + 1 < kDigits; ++i) {
        const std::int64_t carry = s.digit[i] >> kDigitBits;  // arithmetic shift: floor division by 2^32
        s.digit[i] -= carry * (std::int64_t(1) << kDigitBits);
        s.digit[i + 1] += carry;
    }
    s.adds = 0;
}

CUDOT_EXACT_HD void normalize(Sum &s) { normalize_from(s, 0); }

CUDOT_EXACT_HD void clear(Sum &s) {
    for (int i = 0; i < kDigits; ++i) s.digit[i] = 0;
    s.special = 0;
    s.adds = 0;
}

// s += m * 2^q (for_each_digit's terms).
CUDOT_EXACT_HD void add_integer(Sum &s, std::uint64_t hi, std::uint64_t lo, int q, bool negative) {
    for_each_digit(hi, lo, q, negative, [&s](int i, std::int64_t d) { s.digit[i] += d; });
    if (++s.adds == kAddsBeforeNormalize) normalize(s);
}

// s += v for a double v (finite, infinite or NaN).
CUDOT_EXACT_HD void add_double(Sum &s, double v) {
    const std::uint64_t b = bits_of(v);
    if (is_special(b)) {
        s.special |= special_of(v);
        return;
    }
    std::uint64_t m;
    int q;
    split(b, m, q);
    if (m != 0) add_integer(s, 0, m, q, (b >> 63) != 0);
}

// Calls add(hi, lo, q, negative) with x * y as an integer m = hi * 2^64 + lo times 2^q, exactly, for any
// two finite doubles (the product may lie beyond the double range); nothing for a zero product. Returns
// the Special bit of an infinite or NaN product instead.
template <class AddInteger>
CUDOT_EXACT_HD std::uint32_t product_terms(double x, double y, AddInteger add) {
    const std::uint64_t bx = bits_of(x), by = bits_of(y);
    if (is_special(bx) || is_special(by)) return special_of(x * y);
    std::uint64_t mx, my, hi, lo;
    int qx, qy;
    split(bx, mx, qx);
    split(by, my, qy);
    if (mx == 0 || my == 0) return 0;
    multiply(mx, my, hi, lo);
    add(hi, lo, qx + qy, ((bx ^ by) >> 63) != 0);
    return 0;
}

// s += x * y, exactly, for any two doubles.
CUDOT_EXACT_HD void add_product(Sum &s, double x, double y) {
    s.special |= product_terms(x, y, [&s](std::uint64_t hi, std::uint64_t lo, int q, bool negative) {
        add_integer(s, hi, lo, q, negative);
    });
}

// s += t: exact.
CUDOT_EXACT_HD void merge(Sum &s, const Sum &t) {
    normalize(s);
    for (int i = 0; i < kDigits; ++i) s.digit[i] += t.digit[i];
    normalize(s);  // t's words were below 2^63 / 2; now every word is a digit again
    s.special |= t.special;
}

// The result of an infinite or NaN product seen (special != 0).
CUDOT_EXACT_HD double special_result(std::uint32_t special) {
    if ((special & kNaN) || (special & (kPlusInf | kMinusInf)) == (kPlusInf | kMinusInf))
        return double_of(kQuietNaNBits);
    return double_of((special & kPlusInf ? 0ull : 1ull << 63) | 0x7ff0000000000000ull);
}

// Rounds s once to the nearest double, ties to even, using s as scratch: only words [lo, hi] may be
// non-zero (any values); +inf or -inf where that passes the largest double; +0.0 for an exact zero. NaN
// for a NaN product, inf * 0, or infinite products of both signs; otherwise the infinity of the infinite
// products. The carries walk only from lo up to where they die out, so a sum whose digits span a few
// words rounds in a few steps (the GPU's last block rounds on one thread).
CUDOT_EXACT_HD double round_in_place(Sum &s, int lo, int hi) {
    if (s.special) return special_result(s.special);
    if (lo > hi) return 0.0;
    // Carries up from lo; past hi only the carry is left, and it dies out at 0 (a sum >= 0) or stays -1
    // (a negative sum: the digits so far minus 2^(32 end)).
    auto carry_up = [&s](int from, int last_nonzero, int &end) {
        std::int64_t carry = 0;
        int i = from;
        for (; i < kDigits - 1; ++i) {
            if (i > last_nonzero && (carry == 0 || carry == -1)) break;
            const std::int64_t v = s.digit[i] + carry;
            carry = v >> kDigitBits;
            s.digit[i] = v - carry * (std::int64_t(1) << kDigitBits);
        }
        if (i == kDigits - 1) {  // no room left above: the last word keeps the sign (never for a product sum)
            s.digit[i] += carry;
            end = kDigits;
            return s.digit[i] < 0;
        }
        end = i;
        return carry == -1;
    };
    int end = 0;
    const bool negative = carry_up(lo, hi, end);
    if (negative) {  // the magnitude: -digits (+ 2^(32 end)), carried again
        for (int i = lo; i < end; ++i) s.digit[i] = -s.digit[i];
        if (end < kDigits) s.digit[end] = 1;
        carry_up(lo, end < kDigits ? end : kDigits - 1, end);
    }
    int top = end - 1;
    while (top >= lo && s.digit[top] == 0) --top;
    if (top < lo) return 0.0;  // an exact zero is +0.0
    // The three top words as one 96-bit window V = w2:w1:w0 (words below lo are zero): it holds the
    // leading bit and the 53 after it, so a double's bits, the round bit and most of the sticky bits
    // come from it in a few shifts.
    const std::uint64_t w2 = static_cast<std::uint64_t>(s.digit[top]);
    const std::uint64_t w1 = top - 1 >= lo ? static_cast<std::uint64_t>(s.digit[top - 1]) : 0;
    const std::uint64_t w0 = top - 2 >= lo ? static_cast<std::uint64_t>(s.digit[top - 2]) : 0;
    int lead = kDigitBits - 1;
    while (!((w2 >> lead) & 1)) --lead;
    // The leading bit has weight 2^(t + kLowestBit); a double keeps 53 bits from there, or down to 2^-1074.
    const int t = top * kDigitBits + lead;
    const int exponent = t + kLowestBit;
    const int lsb = (exponent - 52 > -1074 ? exponent - 52 : -1074) - kLowestBit;
    std::uint64_t m = 0;
    int round_bit;
    bool sticky;
    if (lsb > t) {  // below half the least subnormal, or at most that (the leading bit is the round bit)
        round_bit = lsb - 1 == t;
        sticky = !round_bit || (w2 & ((std::uint64_t(1) << lead) - 1)) != 0 || w1 != 0 || w0 != 0;
    } else {
        const int shift = lsb - (top - 2) * kDigitBits;  // V's bit of the lsb: 12 .. 95
        const std::uint64_t high = (w2 << 32) | w1;      // V >> 32
        m = shift >= 32 ? high >> (shift - 32) : (high << (32 - shift)) | (w0 >> shift);
        const int r = shift - 1;  // the round bit's place in V; below it, the sticky bits
        round_bit = static_cast<int>((r >= 32 ? high >> (r - 32) : w0 >> r) & 1);
        sticky = r >= 32 ? (high & ((std::uint64_t(1) << (r - 32)) - 1)) != 0 || w0 != 0
                         : (w0 & ((std::uint64_t(1) << r) - 1)) != 0;
    }
    for (int i = lo; i < top - 2 && !sticky; ++i) sticky = s.digit[i] != 0;
    if (round_bit && (sticky || (m & 1))) ++m;  // m may become 2^53: still exact in a double
    // m * 2^(lsb + kLowestBit), built from bits: m < 2^54, and the weight of m's lowest bit is at least
    // 2^-1074; past the largest double it is an infinity.
    const int q = lsb + kLowestBit;  // >= -1074
    std::uint64_t bits;
    if (m >> 52 == 0) {  // subnormal: q is -1074
        bits = m;
    } else {
        const int shift = m >> 53 ? 1 : 0;  // 2^53 after rounding up: one bit less
        const int biased = q + shift + 52 + 1023;
        bits = biased >= 0x7ff ? 0x7ff0000000000000ull
                               : (static_cast<std::uint64_t>(biased) << 52) | ((m >> shift) & ((1ull << 52) - 1));
    }
    return double_of(bits | (negative ? 1ull << 63 : 0ull));
}

// The sum rounded once (round_in_place on a copy).
inline double round(const Sum &sum) {
    Sum s = sum;
    int lo = 0, hi = kDigits - 1;
    while (lo <= hi && s.digit[lo] == 0) ++lo;
    while (hi >= lo && s.digit[hi] == 0) --hi;
    return round_in_place(s, lo, hi);
}

// ---- partials: a sum carried to another process, GPU or call, and joined there exactly ----
//
// A Partial is a Sum made portable: its words carried (every word but the last a 32-bit digit, the last
// the sign), behind a tag that says what it is. Its size is the header's CUDOT_EXACT_PARTIAL_BYTES.
constexpr std::uint32_t kPartialTag = 0x31584443u;  // "CDX1" in the bytes of a little-endian word

struct Partial {
    std::uint32_t tag;      // kPartialTag
    std::uint32_t special;  // Special bits
    std::uint64_t reserved; // 0
    std::int64_t digit[kDigits];
};

// p = s, s carried first (s changes representation, not value).
CUDOT_EXACT_HD void to_partial(Sum &s, Partial &p) {
    normalize(s);
    p.tag = kPartialTag;
    p.special = s.special;
    p.reserved = 0;
    for (int i = 0; i < kDigits; ++i) p.digit[i] = s.digit[i];
}

// s += p, exactly; false (s unchanged) where p is not a Partial that to_partial could have written: a
// wrong tag, unknown special bits, reserved bytes set, or words outside their digits' range.
inline bool add_partial(Sum &s, const Partial &p) {
    if (p.tag != kPartialTag || (p.special & ~std::uint32_t(kNaN | kPlusInf | kMinusInf)) != 0 || p.reserved != 0)
        return false;
    for (int i = 0; i + 1 < kDigits; ++i)
        if (p.digit[i] < 0 || p.digit[i] >= (std::int64_t(1) << kDigitBits)) return false;
    // The last word holds the sign and what the sum's 2^128 of headroom allows: far inside this bound,
    // which keeps the merge below from overflowing.
    if (p.digit[kDigits - 1] < -(std::int64_t(1) << 40) || p.digit[kDigits - 1] >= (std::int64_t(1) << 40))
        return false;
    normalize(s);
    for (int i = 0; i < kDigits; ++i) s.digit[i] += p.digit[i];
    normalize(s);
    s.special |= p.special;
    return true;
}

// ---- expansions: most products added in floating point, exactly ----
//
// A thread keeps K doubles a[0..K-1] whose exact sum it is responsible for. Adding a double p runs p
// through them with TwoSum (each a[k] becomes the rounded sum, p its exact error, so a[0] + .. + a[K-1]
// + p is unchanged); what is left over after a[K-1] is added to the fixed-point sum. Data of moderate
// range leaves nothing over, so the thread touches the sum only at its end. TwoSum is exact for any two
// doubles whose sum does not overflow, subnormal ones included: the callers keep what they add well
// inside the double range (kExpansionLimit), and send anything else to the fixed-point sum directly.

// Products (and their FMA errors) added through expansions lie in [2^-960, 2^960] or are zero: below,
// an f64 product's FMA error could be subnormal and inexact; above, K doubles summing up to 2^40 such
// values stay below 2^1001, far from overflow.
constexpr double kExpansionLow = 0x1p-960;
constexpr double kExpansionHigh = 0x1p960;

template <int K> struct Expansion {
    double a[K];
};

// s, e: the rounded sum of a and b and its exact error (Knuth's TwoSum: six additions, no branch).
// Written with order.hpp's additions, which no compiler setting may fuse with the product before them
// into an fma: TwoSum's error is exact only for the sum it computed.
CUDOT_EXACT_HD void two_sum(double a, double b, double &s, double &e) {
    using order::add_rn;
    s = add_rn(a, b);
    const double bb = add_rn(s, -a);
    e = add_rn(add_rn(a, -add_rn(s, -bb)), add_rn(b, -bb));
}

// Adds p to the expansion; returns what it could not hold (0 almost always).
template <int K> CUDOT_EXACT_HD double absorb(Expansion<K> &x, double p) {
    for (int k = 0; k < K; ++k) two_sum(x.a[k], p, x.a[k], p);
    return p;
}

// ---- an expansion rounded without the fixed-point sum ----
//
// Where nothing went to the fixed-point sum, the exact value is an expansion's few terms, and rounding
// them needs no digits: two terms are rounded by one addition (IEEE rounds the exact a + b once), three
// by Boldo and Melquiond's correctly rounded sum of three ("Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE Trans. Computers, 2008): TwoSum twice, the two errors
// added with rounding to odd, then one addition to nearest. No step may overflow, which the expansions'
// range (kExpansionHigh) guarantees; underflow is harmless, as every double is a multiple of 2^-1074.

// a + b rounded to odd: toward zero, with the last bit set where that was inexact.
CUDOT_EXACT_HD double add_odd(double a, double b) {
    double s, e;
    two_sum(a, b, s, e);
    if (e == 0) return s;
    std::uint64_t bits = bits_of(s);  // s != 0: a zero sum is exact
    if ((e < 0) != (s < 0)) bits -= 1;  // the exact sum lies between s and zero: one step toward zero
    return double_of(bits | 1);
}

// a + b + c, exactly, rounded once to nearest, ties to even.
CUDOT_EXACT_HD double round_three(double a, double b, double c) {
    double uh, ul, th, tl;
    two_sum(b, c, uh, ul);
    two_sum(a, uh, th, tl);
    return order::add_rn(th, add_odd(tl, ul));
}

// An expansion's exact value rounded once (2 or 3 terms).
template <int K> CUDOT_EXACT_HD double round_terms(const Expansion<K> &x) {
    static_assert(K == 2 || K == 3, "two or three terms");
    if constexpr (K == 2) return order::add_rn(x.a[0], x.a[1]);
    else return round_three(x.a[0], x.a[1], x.a[2]);
}

}  // namespace exact
}  // namespace cudot
