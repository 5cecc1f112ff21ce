// reference.cpp - see reference.hpp.
#include "reference.hpp"

#include "gendot.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace test {

namespace {
}  // namespace
struct Neumaier {
    long double sum = 0.0L, comp = 0.0L;
    void add(long double v) {
        long double t = sum + v;
        if (std::fabs(sum) >= std::fabs(v))
            comp += (sum - t) + v;
        else
            comp += (v - t) + sum;
        sum = t;
    }
    long double value() const { return sum + comp; }
};

long double reference_dot(const float *x, const float *y, std::size_t n) {
    Neumaier acc;
    for (std::size_t i = 0; i < n; ++i) acc.add(static_cast<long double>(x[i]) * y[i]);  // exact product
    return acc.value();
}

long double reference_dot(const double *x, const double *y, std::size_t n) {
    Neumaier acc;
    for (std::size_t i = 0; i < n; ++i) {
        double p = x[i] * y[i];
        double e = std::fma(x[i], y[i], -p);  // p + e == x*y exactly
        acc.add(p);
        acc.add(e);
    }
    return acc.value();
}

long double abs_dot(const float *x, const float *y, std::size_t n) {
    long double s = 0.0L;
    for (std::size_t i = 0; i < n; ++i) s += std::fabs(static_cast<long double>(x[i]) * y[i]);
    return s;
}

long double abs_dot(const double *x, const double *y, std::size_t n) {
    long double s = 0.0L;
    for (std::size_t i = 0; i < n; ++i) s += std::fabs(static_cast<long double>(x[i]) * y[i]);
    return s;
}

double error_bound(int32_t dtype, long double exact, long double abs_sum, std::size_t n) {
    // The reference itself: long double, compensated; its error is far below both bounds.
    const long double ref_error = std::ldexp(1.0L, -62) * std::fabs(exact) + std::ldexp(1.0L, -120) * abs_sum * n;
    return static_cast<double>(dot_error_bound(dtype == CUDOT_F64, exact, abs_sum, static_cast<long double>(n)) +
                               ref_error);
}

template <class T>
static void fill(T *x, T *y, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = static_cast<T>(dist(rng));
        y[i] = static_cast<T>(dist(rng));
    }
}
void fill_random(float *x, float *y, std::size_t n, std::uint64_t seed) { fill(x, y, n, seed); }
void fill_random(double *x, double *y, std::size_t n, std::uint64_t seed) { fill(x, y, n, seed); }

double Ctx::dot() const {
    double r = std::nan("");
    cudot_status s = cudot_dot(ctx, &r);
    INFO(cudot_last_error(ctx));
    REQUIRE(s == CUDOT_OK);
    return r;
}

double Ctx::dot_n(std::size_t n) const {
    double r = std::nan("");
    cudot_status s = cudot_dot_n(ctx, n, &r);
    INFO(cudot_last_error(ctx));
    REQUIRE(s == CUDOT_OK);
    return r;
}

const std::vector<std::size_t> &awkward_sizes() {
    static const std::vector<std::size_t> sizes = {
        1,    2,     3,     7,     31,    1000,  1023,  1024,   1025,   4095,       4096,       4097,
        8191, 8192,  8193,  12345, 16384, 16385, 100000, 131072, 131073, (1u << 20) + 3, 3 * 8192 * 1024 + 777,
    };
    return sizes;
}

const char *memory_name(int32_t memory) {
    switch (memory) {
        case CUDOT_MEMORY_AUTO: return "AUTO";
        case CUDOT_MEMORY_PINNED: return "PINNED";
        case CUDOT_MEMORY_MAPPED: return "MAPPED";
        case CUDOT_MEMORY_MANAGED: return "MANAGED";
        case CUDOT_MEMORY_HOST: return "HOST";
    }
    return "?";
}

}  // namespace test

namespace test {

const std::vector<int32_t> &all_dtypes() {
    static const std::vector<int32_t> d = {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_BF16, CUDOT_I8, CUDOT_U8};
    return d;
}

const char *dtype_name(int32_t dtype) {
    switch (dtype) {
        case CUDOT_F32: return "f32";
        case CUDOT_F64: return "f64";
        case CUDOT_F16: return "f16";
        case CUDOT_BF16: return "bf16";
        case CUDOT_I8: return "i8";
        case CUDOT_U8: return "u8";
    }
    return "?";
}

std::size_t dtype_size(int32_t dtype) {
    switch (dtype) {
        case CUDOT_F64: return 8;
        case CUDOT_F32: return 4;
        case CUDOT_F16:
        case CUDOT_BF16: return 2;
        default: return 1;
    }
}

// binary16 decoded with ldexp, independently of src/core/types.hpp.
static long double half_value(std::uint16_t h) {
    int sign = h >> 15, e = (h >> 10) & 31, f = h & 1023;
    long double m;
    if (e == 0) m = std::ldexp(static_cast<long double>(f), -24);
    else if (e == 31) m = f ? std::numeric_limits<long double>::quiet_NaN() : std::numeric_limits<long double>::infinity();
    else m = std::ldexp(static_cast<long double>(1024 + f), e - 25);
    return sign ? -m : m;
}

// The nearest binary16 to v (|v| within range), by searching the monotone positive encodings.
static std::uint16_t to_half(double v) {
    if (std::isnan(v)) return 0x7e00;
    std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    if (std::isinf(v)) return static_cast<std::uint16_t>(sign | 0x7c00);
    double a = std::fabs(v);
    std::uint16_t lo = 0, hi = 0x7bff;  // 0 .. 65504
    while (lo < hi) {  // first encoding with value >= a
        std::uint16_t mid = static_cast<std::uint16_t>((lo + hi) / 2);
        if (half_value(mid) < a) lo = static_cast<std::uint16_t>(mid + 1);
        else hi = mid;
    }
    if (lo > 0 && a - half_value(static_cast<std::uint16_t>(lo - 1)) < half_value(lo) - a) --lo;
    return static_cast<std::uint16_t>(sign | lo);
}

static long double bf16_value(std::uint16_t b) {
    std::uint32_t bits = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

static std::uint16_t to_bf16(double v) {  // truncation of the float: exact for values we set
    float f = static_cast<float>(v);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return static_cast<std::uint16_t>(bits >> 16);
}

long double value_at(int32_t dtype, const void *p, std::size_t i) {
    switch (dtype) {
        case CUDOT_F32: return static_cast<const float *>(p)[i];
        case CUDOT_F64: return static_cast<const double *>(p)[i];
        case CUDOT_F16: return half_value(static_cast<const std::uint16_t *>(p)[i]);
        case CUDOT_BF16: return bf16_value(static_cast<const std::uint16_t *>(p)[i]);
        case CUDOT_I8: return static_cast<const std::int8_t *>(p)[i];
        case CUDOT_U8: return static_cast<const std::uint8_t *>(p)[i];
    }
    return 0;
}

void set_value(int32_t dtype, void *p, std::size_t i, double v) {
    switch (dtype) {
        case CUDOT_F32: static_cast<float *>(p)[i] = static_cast<float>(v); break;
        case CUDOT_F64: static_cast<double *>(p)[i] = v; break;
        case CUDOT_F16: static_cast<std::uint16_t *>(p)[i] = to_half(v); break;
        case CUDOT_BF16: static_cast<std::uint16_t *>(p)[i] = to_bf16(v); break;
        case CUDOT_I8: static_cast<std::int8_t *>(p)[i] = static_cast<std::int8_t>(v); break;
        case CUDOT_U8: static_cast<std::uint8_t *>(p)[i] = static_cast<std::uint8_t>(v); break;
    }
}

void fill_random_any(int32_t dtype, void *p, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
        switch (dtype) {
            case CUDOT_F16: {  // random encodings of finite values in (-2, 2): exponent field 0..15
                std::uint16_t e = static_cast<std::uint16_t>(rng() % 16), f = static_cast<std::uint16_t>(rng() % 1024);
                static_cast<std::uint16_t *>(p)[i] = static_cast<std::uint16_t>((rng() & 1) << 15 | e << 10 | f);
                break;
            }
            case CUDOT_BF16: static_cast<std::uint16_t *>(p)[i] = to_bf16(unit(rng)); break;
            case CUDOT_I8: static_cast<std::int8_t *>(p)[i] = static_cast<std::int8_t>(static_cast<int>(rng() % 256) - 128); break;
            case CUDOT_U8: static_cast<std::uint8_t *>(p)[i] = static_cast<std::uint8_t>(rng() % 256); break;
            default: set_value(dtype, p, i, unit(rng)); break;
        }
    }
}

static bool is_int(int32_t d) { return d == CUDOT_I8 || d == CUDOT_U8; }

Reference reference_any(int32_t xd, const void *x, int32_t yd, const void *y, std::size_t n) {
    Reference r{0, 0, is_int(xd) && is_int(yd)};
    if (r.integer) {
        long long s = 0;
        for (std::size_t i = 0; i < n; ++i)
            s += static_cast<long long>(value_at(xd, x, i)) * static_cast<long long>(value_at(yd, y, i));
        r.exact = static_cast<long double>(s);
        for (std::size_t i = 0; i < n; ++i) r.abs_sum += std::fabs(value_at(xd, x, i) * value_at(yd, y, i));
        return r;
    }
    Neumaier acc;
    for (std::size_t i = 0; i < n; ++i) {
        double a = static_cast<double>(value_at(xd, x, i)), b = static_cast<double>(value_at(yd, y, i));
        double p = a * b;
        double e = std::fma(a, b, -p);  // p + e == a*b exactly (every value is a double)
        acc.add(p);
        acc.add(e);
        r.abs_sum += std::fabs(static_cast<long double>(a) * b);
    }
    r.exact = acc.value();
    return r;
}

bool within_bound(int32_t xd, int32_t yd, double r, const Reference &ref, std::size_t n) {
    if (ref.integer) return r == static_cast<double>(static_cast<long long>(ref.exact));
    int32_t kind_dtype = (xd == CUDOT_F64 || yd == CUDOT_F64) ? CUDOT_F64 : CUDOT_F32;
    return std::fabs(static_cast<long double>(r) - ref.exact) <= error_bound(kind_dtype, ref.exact, ref.abs_sum, n);
}

}  // namespace test
