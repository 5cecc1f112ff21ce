// exact_sum.cpp - see exact_sum.hpp.
#include "exact_sum.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace cudot {
namespace exact {

namespace {

std::uint64_t bits_of(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

// A finite double as m * 2^q, m < 2^53 an integer.
void split(std::uint64_t bits, std::uint64_t &m, int &q) {
    const int e = static_cast<int>((bits >> 52) & 0x7ff);
    m = bits & ((std::uint64_t(1) << 52) - 1);
    if (e != 0) m |= std::uint64_t(1) << 52;
    q = (e != 0 ? e : 1) - 1075;
}

// The 128-bit product of two 64-bit integers, as hi * 2^64 + lo.
void multiply(std::uint64_t a, std::uint64_t b, std::uint64_t &hi, std::uint64_t &lo) {
#if defined(__SIZEOF_INT128__)
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

void note_special(Sum &s, double product) {
    if (product != product) s.special |= kNaN;
    else s.special |= product > 0 ? kPlusInf : kMinusInf;
}

}  // namespace

void clear(Sum &s) {
    std::memset(s.digit, 0, sizeof s.digit);
    s.special = 0;
    s.adds = 0;
}

void normalize(Sum &s) {
    for (int i = 0; i + 1 < kDigits; ++i) {
        const std::int64_t carry = s.digit[i] >> kDigitBits;  // arithmetic shift: floor division by 2^32
        s.digit[i] -= carry * (std::int64_t(1) << kDigitBits);
        s.digit[i + 1] += carry;
    }
    s.adds = 0;
}

void add_double(Sum &s, double v) {
    const std::uint64_t b = bits_of(v);
    if (((b >> 52) & 0x7ff) == 0x7ff) {
        note_special(s, v);
        return;
    }
    std::uint64_t m;
    int q;
    split(b, m, q);
    if (m != 0) add_integer(s, 0, m, q, (b >> 63) != 0);
}

void add_product(Sum &s, double x, double y) {
    const std::uint64_t bx = bits_of(x), by = bits_of(y);
    if (((bx >> 52) & 0x7ff) == 0x7ff || ((by >> 52) & 0x7ff) == 0x7ff) {
        note_special(s, x * y);  // IEEE: NaN for a NaN or inf * 0, else an infinity of the product's sign
        return;
    }
    std::uint64_t mx, my, hi, lo;
    int qx, qy;
    split(bx, mx, qx);
    split(by, my, qy);
    if (mx == 0 || my == 0) return;
    multiply(mx, my, hi, lo);
    add_integer(s, hi, lo, qx + qy, ((bx ^ by) >> 63) != 0);
}

void merge(Sum &s, const Sum &t) {
    Sum u = t;
    normalize(u);
    normalize(s);
    for (int i = 0; i < kDigits; ++i) s.digit[i] += u.digit[i];
    s.special |= t.special;
}

double round(const Sum &sum) {
    if ((sum.special & kNaN) || (sum.special & (kPlusInf | kMinusInf)) == (kPlusInf | kMinusInf))
        return std::numeric_limits<double>::quiet_NaN();
    if (sum.special & kPlusInf) return std::numeric_limits<double>::infinity();
    if (sum.special & kMinusInf) return -std::numeric_limits<double>::infinity();
    Sum s = sum;
    normalize(s);
    const bool negative = s.digit[kDigits - 1] < 0;
    if (negative) {
        for (int i = 0; i < kDigits; ++i) s.digit[i] = -s.digit[i];
        normalize(s);  // now every digit is in [0, 2^32): the magnitude
    }
    int top = kDigits - 1;
    while (top >= 0 && s.digit[top] == 0) --top;
    if (top < 0) return 0.0;  // an exact zero is +0.0
    auto bit = [&](int i) { return i < 0 ? 0 : static_cast<int>((s.digit[i / kDigitBits] >> (i % kDigitBits)) & 1); };
    int t = top * kDigitBits + kDigitBits - 1;
    while (!bit(t)) --t;
    // The leading bit has weight 2^(t + kLowestBit); a double keeps 53 bits from there, or down to 2^-1074.
    const int exponent = t + kLowestBit;
    const int lsb = (exponent - 52 > -1074 ? exponent - 52 : -1074) - kLowestBit;
    std::uint64_t m = 0;
    for (int i = t; i >= lsb; --i) m = (m << 1) | static_cast<std::uint64_t>(bit(i));
    const int round_bit = bit(lsb - 1);
    bool sticky = false;
    for (int i = 0; i < (lsb - 1) / kDigitBits && !sticky; ++i) sticky = s.digit[i] != 0;
    for (int i = (lsb - 1) / kDigitBits * kDigitBits; i < lsb - 1 && !sticky; ++i) sticky = bit(i) != 0;
    if (round_bit && (sticky || (m & 1))) ++m;  // m may become 2^53: still exact in a double
    const double r = std::ldexp(static_cast<double>(m), lsb + kLowestBit);  // exact, or an overflow to inf
    return negative ? -r : r;
}

}  // namespace exact
}  // namespace cudot
