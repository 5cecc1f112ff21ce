// gendot.cpp - see gendot.hpp.
#include "gendot.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace test {

namespace {
// Products of two doubles lie within 2^-2148 .. 2^2048 and need 106 bits; a sum of up to 2^40 of them
// needs fewer than 4400 bits to be held exactly.
constexpr mpfr_prec_t kExactBits = 4400;

struct Mpfr {
    mpfr_t v;
    explicit Mpfr(mpfr_prec_t bits) { mpfr_init2(v, bits); mpfr_set_zero(v, 1); }
    ~Mpfr() { mpfr_clear(v); }
    Mpfr(const Mpfr &) = delete;
    Mpfr &operator=(const Mpfr &) = delete;
};

// acc += x * y, exactly.
void add_product(Mpfr &acc, Mpfr &product, double x, double y) {
    mpfr_set_d(product.v, x, MPFR_RNDN);   // exact: a double fits in 106 bits
    mpfr_mul_d(product.v, product.v, y, MPFR_RNDN);  // exact: 53 + 53 bits
    mpfr_add(acc.v, acc.v, product.v, MPFR_RNDN);    // exact: kExactBits covers the range
}
}  // namespace

ExactDot exact_dot(const double *x, const double *y, std::size_t n) {
    Mpfr acc(kExactBits), abs_acc(kExactBits), product(110);
    for (std::size_t i = 0; i < n; ++i) {
        add_product(acc, product, x[i], y[i]);
        add_product(abs_acc, product, std::fabs(x[i]), std::fabs(y[i]));
    }
    ExactDot r;
    r.value = mpfr_get_d(acc.v, MPFR_RNDN);
    r.abs_sum = mpfr_get_d(abs_acc.v, MPFR_RNDN);
    if (mpfr_zero_p(acc.v)) {
        r.condition = std::numeric_limits<double>::infinity();
    } else {
        Mpfr ratio(64);
        mpfr_div(ratio.v, abs_acc.v, acc.v, MPFR_RNDN);
        r.condition = std::fabs(2.0 * mpfr_get_d(ratio.v, MPFR_RNDN));
    }
    return r;
}

double exact_error(const double *x, const double *y, std::size_t n, double r) {
    Mpfr acc(kExactBits), product(110);
    for (std::size_t i = 0; i < n; ++i) add_product(acc, product, x[i], y[i]);
    mpfr_sub_d(acc.v, acc.v, r, MPFR_RNDN);  // exact at this precision
    return std::fabs(mpfr_get_d(acc.v, MPFR_RNDN));
}

double documented_bound(bool compensated, double exact, double abs_sum, std::size_t n) {
    const long double b = dot_error_bound(compensated, exact, abs_sum, static_cast<long double>(n > 1 ? n - 1 : 1));
    return static_cast<double>(b * (1.0L + std::ldexp(1.0L, -50)));  // exact, abs_sum rounded: relative 2^-52
}

void gendot(std::size_t n, double condition, bool f32, std::uint64_t seed, std::vector<double> &x,
            std::vector<double> &y) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    auto round_to_type = [f32](double v) { return f32 ? static_cast<double>(static_cast<float>(v)) : v; };
    x.assign(n, 0.0);
    y.assign(n, 0.0);
    if (condition < 100) {  // no cancellation at all: positive pairs, cond = 2 (the least there is)
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = round_to_type(0.5 + 0.5 * std::fabs(unit(rng)));
            y[i] = round_to_type(0.5 + 0.5 * std::fabs(unit(rng)));
        }
        return;
    }
    const double b = std::log2(std::max(condition, 1.0));
    const std::size_t half = n / 2;
    // First half: exponents uniform in [0, b/2], with the extremes present.
    for (std::size_t i = 0; i < half; ++i) {
        int e = static_cast<int>(std::lround(unit(rng) * 0.5 * b / 2 + b / 4));
        if (i == 0) e = static_cast<int>(std::lround(b / 2)) + 1;
        if (i == half - 1) e = 0;
        x[i] = round_to_type(std::ldexp(unit(rng), e));
        y[i] = round_to_type(std::ldexp(unit(rng), e));
    }
    // Second half: each y_i cancels most of the exact dot so far; exponents fall from b/2 to 0.
    Mpfr acc(kExactBits), product(110);
    for (std::size_t i = 0; i < half; ++i) add_product(acc, product, x[i], y[i]);
    const std::size_t rest = n - half;
    for (std::size_t k = 0; k < rest; ++k) {
        const std::size_t i = half + k;
        const double frac = rest > 1 ? static_cast<double>(k) / static_cast<double>(rest - 1) : 1.0;
        const int e = static_cast<int>(std::lround(b / 2 * (1.0 - frac)));
        double xi = round_to_type(std::ldexp(unit(rng), e));
        if (xi == 0.0) xi = round_to_type(std::ldexp(0.5, e));
        const double partial = mpfr_get_d(acc.v, MPFR_RNDN);
        x[i] = xi;
        y[i] = round_to_type((std::ldexp(unit(rng), e) - partial) / xi);
        add_product(acc, product, x[i], y[i]);
    }
    // Shuffle the pairs together, so the cancellation is spread over the whole vector.
    for (std::size_t i = n - 1; i > 0; --i) {
        std::size_t j = static_cast<std::size_t>(rng() % (i + 1));
        std::swap(x[i], x[j]);
        std::swap(y[i], y[j]);
    }
}

}  // namespace test
