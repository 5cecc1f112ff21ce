// inputs.hpp - what the benchmark programs do to their inputs: rewrite them before a "fresh" call, and
// check a measured result bit for bit against HOST on the same values. Public API only.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstring>

#include "cudot.h"
#include "measure.hpp"

namespace bench {

inline std::size_t size_of(int dtype) {
    return dtype == CUDOT_F64 ? 8 : dtype == CUDOT_F32 ? 4 : (dtype == CUDOT_F16 || dtype == CUDOT_BF16) ? 2 : 1;
}

// Writes new values into the inputs (untimed): every element changes on every call.
template <class T>
inline void rewrite(T *x, T *y, std::size_t n, int round) {
    parallel_for(n, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
            x[i] = static_cast<T>(static_cast<int>((i * 7 + round) % 2001) - 1000) * T(0.001);
            y[i] = static_cast<T>(static_cast<int>((i * 13 + 3 * round) % 1999) - 999) * T(0.002);
        }
    });
}

// Dot of the same values on HOST, to check the measured strategy's last result bit for bit.
inline double host_reference(int dtype, const void *x, const void *y, std::size_t n, int y_dtype = 0) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = dtype;
    cfg.y_dtype = y_dtype;
    cfg.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) return std::nan("");
    void *hx, *hy;
    cudot_get_inputs(ctx, &hx, &hy);
    std::memcpy(hx, x, n * size_of(dtype));
    std::memcpy(hy, y, n * size_of(y_dtype ? y_dtype : dtype));
    double r = std::nan("");
    cudot_dot(ctx, &r);
    cudot_deinit(ctx);
    return r;
}

inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace bench
