// reference.hpp - what the tests compare cudot with: an independent, more precise dot, the error
// bounds docs/ACCURACY.md promises, input generators and small RAII helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cudot.h"

namespace test {

// The dot product accumulated in long double with compensation (Neumaier), every product split
// exactly first. Far more accurate than anything the bounds below allow cudot.
long double reference_dot(const float *x, const float *y, std::size_t n);
long double reference_dot(const double *x, const double *y, std::size_t n);
// sum |x_i * y_i|, in long double.
long double abs_dot(const float *x, const float *y, std::size_t n);
long double abs_dot(const double *x, const double *y, std::size_t n);

// The largest error docs/ACCURACY.md allows, plus the reference's own (tiny) error.
//  F32: |r - exact| <= gamma(n-1) * sum|x y|            (exact products, double sums)
//  F64: |r - exact| <= u |exact| + gamma(n-1)^2 sum|x y|  (Dot2, Ogita-Rump-Oishi Prop. 5.5 form)
double error_bound(int32_t dtype, long double exact, long double abs_sum, std::size_t n);

// Fills x and y with uniform values in [-1, 1) from a fixed seed.
void fill_random(float *x, float *y, std::size_t n, std::uint64_t seed);
void fill_random(double *x, double *y, std::size_t n, std::uint64_t seed);

inline std::uint64_t bits(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

// Owns a context; checks init succeeded.
struct Ctx {
    cudot_ctx *ctx = nullptr;
    cudot_status status = CUDOT_ERROR_INTERNAL;
    std::string init_error;
    Ctx(std::size_t n, int32_t dtype, int32_t memory, int32_t device = 0) {
        cudot_config c = CUDOT_CONFIG_INIT;
        c.dtype = dtype;
        c.memory = memory;
        c.device = device;
        status = cudot_init(&ctx, n, &c);
        if (status != CUDOT_OK) init_error = cudot_last_error(nullptr);
    }
    ~Ctx() { cudot_deinit(ctx); }
    Ctx(const Ctx &) = delete;
    Ctx &operator=(const Ctx &) = delete;
    template <class T> T *x() const {
        void *p = nullptr;
        cudot_get_inputs(ctx, &p, nullptr);
        return static_cast<T *>(p);
    }
    template <class T> T *y() const {
        void *p = nullptr;
        cudot_get_inputs(ctx, nullptr, &p);
        return static_cast<T *>(p);
    }
    double dot() const;                 // REQUIREs success
    double dot_n(std::size_t n) const;  // REQUIREs success
};

// Sizes that stress every boundary of the tiling: 1, odd, around lanes and tiles, and beyond.
const std::vector<std::size_t> &awkward_sizes();

const char *memory_name(int32_t memory);

}  // namespace test
