// inputs.hpp - what the benchmark programs do to their inputs: rewrite them before a "fresh" call, and
// check a measured result bit for bit against HOST on the same values (a peer's: close to it). Public API only.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>

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

// The same for a context's untyped buffers of an f32 or f64 dot.
inline void rewrite(int dtype, void *x, void *y, std::size_t n, int round) {
    if (dtype == CUDOT_F64) rewrite(static_cast<double *>(x), static_cast<double *>(y), n, round);
    else rewrite(static_cast<float *>(x), static_cast<float *>(y), n, round);
}

// A context of one strategy with n elements of one f32 or f64 dtype on `device` (an ordinal or
// CUDOT_DEVICE_ALL), its inputs written once (round 0): the resident data of rows that time repeated dots
// on unchanged inputs; rows of fresh inputs rewrite them before each call. ok() is false if cudot_init
// failed (the reason on stderr, after `who`).
class BenchContext {
public:
    BenchContext(int dtype, int memory, std::size_t n, const char *who, int device = 0) {
        cudot_config cfg = CUDOT_CONFIG_INIT;
        cfg.dtype = dtype;
        cfg.memory = memory;
        cfg.device = device;
        if (cudot_init(&ctx_, n, &cfg) != CUDOT_OK) {
            std::fprintf(stderr, "bench: %s, n=%zu: %s\n", who, n, cudot_last_error(nullptr));
            return;
        }
        cudot_get_inputs(ctx_, &x_, &y_);
        rewrite(dtype, x_, y_, n, 0);
    }
    ~BenchContext() { cudot_deinit(ctx_); }
    BenchContext(const BenchContext &) = delete;
    BenchContext &operator=(const BenchContext &) = delete;

    bool ok() const { return ctx_ != nullptr; }
    cudot_ctx *ctx() const { return ctx_; }
    void *x() const { return x_; }
    void *y() const { return y_; }

private:
    cudot_ctx *ctx_ = nullptr;
    void *x_ = nullptr, *y_ = nullptr;
};

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

// Whether a peer's result `got` (OpenBLAS, the seed design: another summation order, and f32 peers sum
// in float) is close to HOST's result `host` on the same f32 or f64 inputs. The scale of any summation
// error is the sum of |x[i] y[i]|, not the result: with these inputs the dot is 1e-4 to 1e-2 of that
// sum, so a tolerance relative to the result would flag a correct float sum.
inline bool close_to_host(int dtype, const void *x, const void *y, std::size_t n, double got, double host) {
    std::mutex m;
    double magnitude = 0;
    parallel_for(n, [&](std::size_t b, std::size_t e) {
        double s = 0;
        for (std::size_t i = b; i < e; ++i)
            s += dtype == CUDOT_F64 ? std::fabs(static_cast<const double *>(x)[i] * static_cast<const double *>(y)[i])
                                    : std::fabs(double(static_cast<const float *>(x)[i]) * static_cast<const float *>(y)[i]);
        std::lock_guard<std::mutex> lock(m);
        magnitude += s;
    });
    const double tolerance = (dtype == CUDOT_F64 ? 1e-10 : 1e-4) * magnitude;
    return std::fabs(got - host) <= tolerance;
}

}  // namespace bench
