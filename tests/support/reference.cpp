// reference.cpp - see reference.hpp.
#include "reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

namespace test {

namespace {
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
}  // namespace

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
    const long double u = std::ldexp(1.0L, -53);
    const long double nu = static_cast<long double>(n) * u;
    const long double gamma = nu / (1.0L - nu);
    // The reference itself: long double, compensated; its error is far below both bounds.
    const long double ref_error = std::ldexp(1.0L, -62) * std::fabs(exact) + std::ldexp(1.0L, -120) * abs_sum * n;
    if (dtype == CUDOT_F64) return static_cast<double>(u * std::fabs(exact) + gamma * gamma * abs_sum + ref_error);
    return static_cast<double>(gamma * abs_sum + ref_error);
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
