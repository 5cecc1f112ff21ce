// exact_rows.hpp - rows for tests of batches in the exact mode (test_exact_rows.cpp on the CPU,
// test_gpu_exact.cpp on a GPU): element values of every kind a row's exact dot must survive, and the
// exact dot of one row alone (cudot_dot_arrays in CUDOT_MODE_EXACT on host memory), which every batch
// must give that row.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "own_arrays.hpp"
#include "reference.hpp"

namespace test {

// A batch request in the exact mode (layout fields left to the caller).
inline cudot_rows exact_rows_request(int32_t layout, std::size_t count, std::size_t n, int32_t xd, const void *x,
                                     int32_t yd, const void *y) {
    cudot_rows r = CUDOT_ROWS_INIT;
    r.layout = layout;
    r.count = count;
    r.n = n;
    r.x.data = x;
    r.x.dtype = xd;
    r.y.data = y;
    r.y.dtype = yd;
    r.mode = CUDOT_MODE_EXACT;
    return r;
}

// `n` values of `dtype` for row values of kind `kind`: 0 random; 1 magnitudes so far apart that no
// thread's few terms can hold their sum (F32: exponents over +-100; F64: over [-1074, 1023], with
// products beyond the double range); 2 cancelling pairs that leave a few low bits; 3 as 0 with an
// infinity or a NaN somewhere. Types that cannot hold such values get random ones.
inline std::vector<unsigned char> row_values(int32_t dtype, std::size_t n, int kind, std::uint64_t seed) {
    std::vector<unsigned char> v = random_values(dtype, n, seed);
    if (n == 0) return v;
    std::mt19937_64 rng(seed * 7 + 3);
    if (kind == 1 && (dtype == CUDOT_F32 || dtype == CUDOT_F64)) {
        const std::vector<double> w = dtype == CUDOT_F64 ? wide_values(n, -1074, 1023, seed) : wide_values(n, -100, 100, seed);
        for (std::size_t i = 0; i < n; ++i) set_value(dtype, v.data(), i, w[i]);
    } else if (kind == 2 && (dtype == CUDOT_F32 || dtype == CUDOT_F64)) {
        const std::vector<double> w = wide_values(n, -20, 20, seed);
        for (std::size_t i = 0; i < n; ++i) set_value(dtype, v.data(), i, i % 2 ? -w[i - 1] : w[i]);
        set_value(dtype, v.data(), n - 1, std::ldexp(1.0, -30));
    } else if (kind == 3 && (dtype == CUDOT_F32 || dtype == CUDOT_F64 || dtype == CUDOT_F16 || dtype == CUDOT_BF16)) {
        const double special[3] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN()};
        set_value(dtype, v.data(), rng() % n, special[rng() % 3]);
    }
    return v;
}

// The exact dot of one row alone, on host memory.
inline double exact_alone(std::size_t n, int32_t xd, const void *x, std::int64_t sx, int32_t yd, const void *y,
                          std::int64_t sy) {
    if (n == 0) return 0.0;
    const cudot_arrays a = exact_request(n, xd, x, sx, yd, y, sy);
    double r = -1;
    const cudot_status s = cudot_dot_arrays(&a, &r);
    INFO(cudot_last_error(nullptr));
    REQUIRE(s == CUDOT_OK);
    return r;
}

}  // namespace test
