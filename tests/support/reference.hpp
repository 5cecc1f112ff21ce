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
    Ctx(std::size_t n, int32_t dtype, int32_t memory, int32_t device = 0, int32_t y_dtype = 0) {
        cudot_config c = CUDOT_CONFIG_INIT;
        c.dtype = dtype;
        c.memory = memory;
        c.device = device;
        c.y_dtype = y_dtype;
        status = cudot_init(&ctx, n, &c);
        if (status != CUDOT_OK) init_error = cudot_last_error(nullptr);
    }
    ~Ctx() { cudot_deinit(ctx); }
    Ctx(const Ctx &) = delete;
    Ctx &operator=(const Ctx &) = delete;
    template <class T = void> T *x() const {
        void *p = nullptr;
        cudot_get_inputs(ctx, &p, nullptr);
        return static_cast<T *>(p);
    }
    template <class T = void> T *y() const {
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

// ---- every element type, for tests over all 36 (dtype, y_dtype) pairs -------------------------------
namespace test {

const std::vector<int32_t> &all_dtypes();  // CUDOT_F32 .. CUDOT_U8
const char *dtype_name(int32_t dtype);
std::size_t dtype_size(int32_t dtype);

// The exact value of element i of a buffer of `dtype` (decoded independently of the library).
long double value_at(int32_t dtype, const void *p, std::size_t i);
// Random values typical of the type: floats in [-1, 1) (F16/BF16 rounded to the type), I8 in
// [-128, 127], U8 in [0, 255]; every value finite.
void fill_random_any(int32_t dtype, void *p, std::size_t n, std::uint64_t seed);
// Sets element i to the type's representation of v (v must be representable; used for 0, 1, 2, 3...).
void set_value(int32_t dtype, void *p, std::size_t i, double v);

struct Reference {
    long double exact;    // the dot, accurate far beyond what any bound below allows
    long double abs_sum;  // sum |x_i y_i|
    bool integer;         // both types integer: `exact` is the exact integer sum
};
Reference reference_any(int32_t x_dtype, const void *x, int32_t y_dtype, const void *y, std::size_t n);
// Whether r is within the documented bound for this pair (Dot2 if either side is F64; exact, rounded
// once to double, if both are integers; double accumulation of exact products otherwise).
bool within_bound(int32_t x_dtype, int32_t y_dtype, double r, const Reference &ref, std::size_t n);

}  // namespace test
