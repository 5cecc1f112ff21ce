// checks.hpp - checks every strategy must pass, written once: test_host_dot.cpp runs them on HOST,
// test_gpu.cpp on PINNED, MAPPED and MANAGED (and compares with HOST bit for bit).
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "reference.hpp"

namespace test {

// Random inputs of size n: the result is within the documented bound of the exact dot.
// Returns the result so callers can compare it across strategies.
template <class T>
double check_accuracy(int32_t memory, int32_t dtype, std::size_t n, std::uint64_t seed, int32_t device = 0) {
    Ctx c(n, dtype, memory, device);
    INFO(memory_name(memory) << " n=" << n << " " << c.init_error);
    REQUIRE(c.status == CUDOT_OK);
    T *x = c.x<T>(), *y = c.y<T>();
    fill_random(x, y, n, seed);
    long double exact = reference_dot(x, y, n);
    double bound = error_bound(dtype, exact, abs_dot(x, y, n), n);
    double r = c.dot();
    INFO("result " << r << " exact " << static_cast<double>(exact) << " bound " << bound);
    CHECK(std::fabs(static_cast<long double>(r) - exact) <= bound);
    CHECK(bits(c.dot()) == bits(r));  // the same on every call
    return r;
}

// x = 1, y = 1 for every element: the exact answer is n (catches dropped tails and lost tiles).
template <class T>
void check_counts(int32_t memory, int32_t dtype, std::size_t n, int32_t device = 0) {
    Ctx c(n, dtype, memory, device);
    INFO(memory_name(memory) << " n=" << n << " " << c.init_error);
    REQUIRE(c.status == CUDOT_OK);
    for (std::size_t i = 0; i < n; ++i) c.x<T>()[i] = c.y<T>()[i] = T(1);
    CHECK(c.dot() == static_cast<double>(n));
    // Only the last element changes: the tail must be read.
    c.y<T>()[n - 1] = T(3);
    CHECK(c.dot() == static_cast<double>(n + 2));
}

// The host writes between dots; every dot sees the latest values.
template <class T>
void check_fresh_data(int32_t memory, int32_t dtype, int32_t device = 0) {
    const std::size_t n = 3 * 8192 + 11;
    Ctx c(n, dtype, memory, device);
    INFO(memory_name(memory) << " " << c.init_error);
    REQUIRE(c.status == CUDOT_OK);
    T *x = c.x<T>(), *y = c.y<T>();
    for (int round = 1; round <= 4; ++round) {
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = T(round);
            y[i] = T(i % 2 ? 1 : -1) * T(round);
        }
        // n is odd: the alternating signs leave one element, +round * round (index 0 is -, n-1 is even)
        double expected = -static_cast<double>(round) * round;
        CHECK(c.dot() == expected);
        x[n / 2] = T(0);  // a single write in the middle
        double delta = static_cast<double>(round) * (n / 2 % 2 ? round : -round);  // the product removed
        CHECK(c.dot() == expected - delta);
        CHECK(c.dot_n(1) == -static_cast<double>(round) * round);
    }
}

// Non-finite values behave as IEEE arithmetic would, and identically everywhere.
template <class T>
std::vector<double> check_special_values(int32_t memory, int32_t dtype, int32_t device = 0) {
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    const std::size_t n = 20000;
    Ctx c(n, dtype, memory, device);
    INFO(memory_name(memory) << " " << c.init_error);
    REQUIRE(c.status == CUDOT_OK);
    T *x = c.x<T>(), *y = c.y<T>();
    auto reset = [&] {
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = T(i % 3) - T(1);
            y[i] = T(0.5);
        }
    };
    std::vector<double> results;
    reset();
    results.push_back(c.dot());
    CHECK(std::isfinite(results.back()));
    x[12345] = nan;
    results.push_back(c.dot());
    CHECK(std::isnan(results.back()));
    reset();
    x[17] = inf;
    results.push_back(c.dot());
    CHECK(results.back() == std::numeric_limits<double>::infinity());
    y[17] = T(-1);
    results.push_back(c.dot());
    CHECK(results.back() == -std::numeric_limits<double>::infinity());
    y[17] = T(0);  // Inf * 0
    results.push_back(c.dot());
    CHECK(std::isnan(results.back()));
    reset();
    x[3] = inf;
    x[n - 1] = -inf;  // Inf + (-Inf)
    results.push_back(c.dot());
    CHECK(std::isnan(results.back()));
    reset();
    // Finite inputs whose sum overflows double (F64 only) must give Inf, not the NaN compensation makes.
    if (sizeof(T) == 8) {
        x[0] = T(std::numeric_limits<double>::max());
        y[0] = T(1);
        x[1] = T(std::numeric_limits<double>::max());
        y[1] = T(1);
        results.push_back(c.dot());
        CHECK(results.back() == std::numeric_limits<double>::infinity());
        x[1] = T(1e300);
        y[1] = T(1e300);  // the product alone overflows
        results.push_back(c.dot());
        CHECK(results.back() == std::numeric_limits<double>::infinity());
    }
    for (double r : results)
        if (std::isnan(r)) CHECK(bits(r) == bits(std::numeric_limits<double>::quiet_NaN()));  // one NaN everywhere
    return results;
}

// Cancellation that plain double summation gets wrong and Dot2 gets right.
inline void check_f64_cancellation(int32_t memory) {
    Ctx c(9000, CUDOT_F64, memory);
    INFO(memory_name(memory) << " " << c.init_error);
    REQUIRE(c.status == CUDOT_OK);
    double *x = c.x<double>(), *y = c.y<double>();
    for (std::size_t i = 0; i < 9000; ++i) x[i] = y[i] = 0.0;
    x[0] = 1e16; y[0] = 1.0;
    x[1] = 1.0;  y[1] = 1.0;
    x[8500] = -1e16; y[8500] = 1.0;  // in another tile
    x[2] = 1.0 + std::ldexp(1.0, -52); y[2] = 1.0 - std::ldexp(1.0, -52);  // product not representable
    CHECK(c.dot() == 2.0);  // exact: 1 + (1 - 2^-104) rounds to 2
    x[3] = std::ldexp(1.0, 60); y[3] = std::ldexp(1.0, 60);
    x[4] = -std::ldexp(1.0, 60); y[4] = std::ldexp(1.0, 60);
    CHECK(c.dot() == 2.0);
}

}  // namespace test
