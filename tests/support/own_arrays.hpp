// own_arrays.hpp - test helpers for dots of the caller's own arrays (cudot_dot_arrays): the reference
// (a HOST context holding the same values) and operands laid out with a given stride and misalignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
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

struct LaidOut {
    std::vector<unsigned char> storage;
    const unsigned char *element0 = nullptr;
};

inline LaidOut lay_out(const void *values, std::size_t size, std::size_t n, Layout layout) {
    LaidOut out;
    const std::size_t step = static_cast<std::size_t>(layout.stride < 0 ? -layout.stride : layout.stride);
    const std::size_t span = n == 0 ? 0 : ((n - 1) * step + 1) * size;
    out.storage.assign(span + layout.offset + 64, 0xA5);  // filler between elements: never read
    unsigned char *base = out.storage.data();
    base += (64 - reinterpret_cast<std::uintptr_t>(base) % 64) % 64;  // aligned (64 spare bytes)
    base += layout.offset;
    const unsigned char *v = static_cast<const unsigned char *>(values);
    unsigned char *e0 = layout.stride < 0 && n > 0 ? base + (n - 1) * step * size : base;
    for (std::size_t i = 0; i < n; ++i)
        std::memcpy(e0 + static_cast<std::ptrdiff_t>(i) * layout.stride * static_cast<std::ptrdiff_t>(size), v + i * size,
                    size);
    out.element0 = e0;
    return out;
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

}  // namespace test
