// own_arrays.hpp - test helpers for dots of the caller's own arrays (cudot_dot_arrays): the reference
// (a HOST context holding the same values) and operands laid out with a given stride and misalignment.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "reference.hpp"

namespace test {

// The bits cudot_dot_arrays must return: a HOST context holding the n values of x and y (contiguous).
inline double host_context_dot(int32_t xd, int32_t yd, const void *x, const void *y, std::size_t n) {
    Ctx c(n, xd, CUDOT_MEMORY_HOST, 0, yd);
    REQUIRE(c.status == CUDOT_OK);
    if (n > 0) {
        std::memcpy(c.x(), x, n * dtype_size(xd));
        std::memcpy(c.y(), y, n * dtype_size(yd));
    }
    return c.dot();
}

// n elements of `values` (contiguous, of `size` bytes each) laid out in `storage` so that element i sits at
// element(0) + i * stride elements, element 0 being `offset` bytes past an aligned address. stride 0
// stores values[0] once (the caller's values must then all equal it).
struct Layout {
    std::int64_t stride = 1;
    std::size_t offset = 0;
};

// Where element 0 sits (bytes past the aligned start) and how many bytes the layout spans from that start.
struct Placement {
    std::size_t element0 = 0, bytes = 0;
};
inline Placement place(std::size_t size, std::size_t n, Layout layout) {
    const std::size_t step = static_cast<std::size_t>(layout.stride < 0 ? -layout.stride : layout.stride);
    const std::size_t span = n == 0 ? 0 : ((n - 1) * step + 1) * size;
    Placement p;
    p.element0 = layout.offset + (layout.stride < 0 && n > 0 ? (n - 1) * step * size : 0);
    p.bytes = layout.offset + span;
    return p;
}
// Writes the n values into `start` (p.bytes long) as the layout places them; other bytes get 0xA5.
inline void scatter(const void *values, std::size_t size, std::size_t n, Layout layout, unsigned char *start) {
    const Placement p = place(size, n, layout);
    std::memset(start, 0xA5, p.bytes);
    const unsigned char *v = static_cast<const unsigned char *>(values);
    for (std::size_t i = 0; i < n; ++i)
        std::memcpy(start + p.element0 + static_cast<std::ptrdiff_t>(i) * layout.stride * static_cast<std::ptrdiff_t>(size),
                    v + i * size, size);
}

struct LaidOut {
    std::vector<unsigned char> storage;
    const unsigned char *element0 = nullptr;
};

// The layout in host memory (64-byte aligned start).
inline LaidOut lay_out(const void *values, std::size_t size, std::size_t n, Layout layout) {
    LaidOut out;
    const Placement p = place(size, n, layout);
    out.storage.assign(p.bytes + 64, 0);
    unsigned char *start = out.storage.data();
    start += (64 - reinterpret_cast<std::uintptr_t>(start) % 64) % 64;
    scatter(values, size, n, layout, start);
    out.element0 = start + p.element0;
    return out;
}

// n random values of dtype (at least one element's room, so n = 0 has a valid pointer).
inline std::vector<unsigned char> random_values(int32_t dtype, std::size_t n, std::uint64_t seed) {
    std::vector<unsigned char> v((n > 0 ? n : 1) * dtype_size(dtype));
    fill_random_any(dtype, v.data(), n, seed);
    return v;
}

inline cudot_arrays arrays_of(std::size_t n, int32_t xd, const void *x, std::int64_t sx, int32_t yd, const void *y,
                              std::int64_t sy) {
    cudot_arrays a = CUDOT_ARRAYS_INIT;
    a.n = n;
    a.x.data = x;
    a.x.dtype = xd;
    a.x.stride = sx;
    a.y.data = y;
    a.y.dtype = yd;
    a.y.stride = sy;
    return a;
}

// The same request in the exact mode (CUDOT_MODE_EXACT).
inline cudot_arrays exact_request(std::size_t n, int32_t xd, const void *x, std::int64_t sx, int32_t yd,
                                  const void *y, std::int64_t sy) {
    cudot_arrays a = arrays_of(n, xd, x, sx, yd, y, sy);
    a.mode = CUDOT_MODE_EXACT;
    return a;
}

// Doubles with random signs and exponents over [lo, hi], full random significands.
inline std::vector<double> wide_values(std::size_t n, int lo, int hi, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> e(lo, hi);
    std::uniform_real_distribution<double> m(1.0, 2.0);
    std::vector<double> v(n);
    for (double &d : v) d = std::ldexp(m(rng), e(rng)) * (rng() & 1 ? -1.0 : 1.0);
    return v;
}

// n (even, >= 4) pairs of factors whose exact dot is the least subnormal, 2^-1074: products in pairs
// that cancel (magnitudes 2^-40 .. 2^40), one pair in eight with zeros and -0.0 among its factors, and
// one pair of products of 2^-1075 each, which round to zero alone. Every y is exactly a float, so y may
// be taken as f32 too.
inline void zeros_and_underflow(std::size_t n, std::uint64_t seed, std::vector<double> &x, std::vector<double> &y) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> e(-20, 20);
    std::uniform_real_distribution<double> m(1.0, 2.0);
    x.assign(n, 0.0);
    y.assign(n, 0.0);
    for (std::size_t i = 0; i + 1 < n; i += 2) {
        const double v = std::ldexp(m(rng), e(rng)) * (rng() & 1 ? -1.0 : 1.0);
        const double w = static_cast<float>(std::ldexp(m(rng), e(rng)) * (rng() & 1 ? -1.0 : 1.0));
        switch (rng() % 16) {
            case 0: x[i] = 0.0, x[i + 1] = -0.0, y[i] = w, y[i + 1] = -w; break;  // zero x
            case 1: x[i] = v, x[i + 1] = -v, y[i] = -0.0, y[i + 1] = 0.0; break;  // zero y
            default: x[i] = v, x[i + 1] = -v, y[i] = y[i + 1] = w;                // cancel
        }
    }
    const std::size_t tiny = (rng() % (n / 2)) * 2;
    x[tiny] = x[tiny + 1] = std::ldexp(1.0, -960);
    y[tiny] = y[tiny + 1] = std::ldexp(1.0, -115);  // a normal float
}

}  // namespace test
