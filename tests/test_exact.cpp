// test_exact.cpp - CUDOT_MODE_EXACT on host arrays (the CPU computes it): the correctly rounded dot,
// checked against known answers, IEEE's special values, MPFR's exact sums (where MPFR is linked) and
// itself under any permutation, cut or thread count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <cstddef>
#include <random>
#include <vector>

#include "cpu/exact_dot.hpp"
#include "cpu/tile_kernels.hpp"
#include "own_arrays.hpp"
#include "reference.hpp"
#if defined(CUDOT_TESTS_WITH_MPFR)
#include "gendot.hpp"
#endif

using test::bits;
using test::exact_request;
using test::wide_values;

namespace {

template <class T>
double exact_of(const std::vector<T> &x, const std::vector<T> &y, int32_t dtype) {
    double r = -1;
    const cudot_arrays a = exact_request(x.size(), dtype, x.data(), 1, dtype, y.data(), 1);
    INFO(cudot_last_error(nullptr));
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    return r;
}
double exact(const std::vector<double> &x, const std::vector<double> &y) { return exact_of(x, y, CUDOT_F64); }
double exact_f32(const std::vector<float> &x, const std::vector<float> &y) { return exact_of(x, y, CUDOT_F32); }

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();


}  // namespace

TEST_CASE("exact: known answers: cancellation, products and sums beyond the double range", "[exact]") {
    // f32 [1e16, 1, -1e16] x 100 then [3], against ones: the canonical mode gives 4, the exact sum is 103.
    std::vector<float> x;
    for (int i = 0; i < 100; ++i) x.insert(x.end(), {1e16f, 1.0f, -1e16f});
    x.push_back(3.0f);
    CHECK(exact_f32(x, std::vector<float>(x.size(), 1.0f)) == 103.0);
    // Products beyond the double range that cancel: 1e200 * 1e200 - 1e200 * 1e200 + 1 * 1 is 1.
    CHECK(exact({1e200, 1e200, 1.0}, {1e200, -1e200, 1.0}) == 1.0);
    // A sum whose partial values overflow while the exact value is finite: [1e308, 1e308] . [10, -10] = 0.
    CHECK(bits(exact({1e308, 1e308}, {10.0, -10.0})) == bits(0.0));
    // An exact value beyond the largest double rounds to +inf, not NaN.
    std::vector<double> big, ten;
    for (int i = 0; i < 3; ++i) {
        big.insert(big.end(), {1e300, 1e300, -1e300});
        ten.insert(ten.end(), {1e10, 1e10, 1e10});
    }
    CHECK(exact(big, ten) == kInf);
    CHECK(exact({-1e300, -1e300}, {1e10, 1e10}) == -kInf);
    // The largest double exactly, and the midpoint above it (rounds to even: up, to inf).
    const double max = std::numeric_limits<double>::max();
    CHECK(exact({max}, {1.0}) == max);
    CHECK(exact({max, std::ldexp(1.0, 970)}, {1.0, 1.0}) == kInf);
    CHECK(exact({max, std::ldexp(1.0, 969)}, {1.0, 1.0}) == max);
}

TEST_CASE("exact: zeros, subnormals and special values", "[exact]") {
    CHECK(bits(exact({1.0, -1.0}, {1.0, 1.0})) == bits(0.0));  // an exact zero is +0.0
    CHECK(bits(exact({-0.0}, {1.0})) == bits(0.0));
    CHECK(bits(exact({}, {})) == bits(0.0));
    const double tiny = std::numeric_limits<double>::denorm_min();
    CHECK(exact({tiny, tiny}, {1.0, 1.0}) == 2 * tiny);
    CHECK(bits(exact({tiny}, {0.5})) == bits(0.0));                   // 2^-1075: a tie, to even (zero)
    CHECK(exact({tiny, tiny}, {0.5, 0.25}) == tiny);                    // 0.75 * 2^-1074 rounds up
    CHECK(exact({tiny, 1.0, -1.0}, {tiny, 1.0, 1.0}) == 0.0);           // 2^-2148, rounded to 0
    CHECK(std::signbit(exact({-tiny}, {tiny})));                       // -2^-2148 rounds to -0.0
    CHECK(exact({std::ldexp(1.0, -1070)}, {std::ldexp(1.0, 1000)}) == std::ldexp(1.0, -70));
    CHECK(exact({std::ldexp(1.0, -537), 3.0}, {std::ldexp(1.0, -537), -1.0}) == -3.0);
    CHECK(std::isnan(exact({kNaN, 1.0}, {1.0, 1.0})));
    CHECK(std::isnan(exact({kInf}, {0.0})));
    CHECK(std::isnan(exact({kInf, -kInf}, {1.0, 1.0})));
    CHECK(exact({kInf, 1e308, 1e308}, {1.0, 10.0, -10.0}) == kInf);
    CHECK(exact({-kInf, 5.0}, {2.0, 1.0}) == -kInf);
    CHECK(exact({kInf, kInf}, {-1.0, -3.0}) == -kInf);
    // One NaN for every NaN: the library's quiet NaN.
    const double got = exact({kNaN}, {1.0});
    CHECK(bits(got) == bits(std::numeric_limits<double>::quiet_NaN()));
}

TEST_CASE("exact: exact zeros among the factors, beside products that underflow, give the exact sum", "[exact]") {
    // Zero factors must not send their block (or element) down the slow road, nor be mistaken for the
    // products of 2^-1075 that round to zero alone and must not be lost.
    const double tiny = std::numeric_limits<double>::denorm_min();
    for (std::size_t n : {std::size_t(4), std::size_t(1000), std::size_t(100002)})
        for (std::uint64_t seed = 0; seed < 3; ++seed) {
            std::vector<double> x, y;
            test::zeros_and_underflow(n, 40 + seed, x, y);
            std::vector<float> yf(y.begin(), y.end());
            INFO("n " << n << ", seed " << seed);
            CHECK(bits(exact(x, y)) == bits(tiny));
            CHECK(bits(exact(y, x)) == bits(tiny));
            double r = 0;
            const cudot_arrays mixed = exact_request(n, CUDOT_F64, x.data(), 1, CUDOT_F32, yf.data(), 1);
            REQUIRE(cudot_dot_arrays(&mixed, &r) == CUDOT_OK);
            CHECK(bits(r) == bits(tiny));
            std::vector<double> x2(2 * n), y2(2 * n);  // stride 2: one element at a time
            for (std::size_t i = 0; i < n; ++i) x2[2 * i] = x[i], y2[2 * i] = y[i];
            const cudot_arrays strided = exact_request(n, CUDOT_F64, x2.data(), 2, CUDOT_F64, y2.data(), 2);
            REQUIRE(cudot_dot_arrays(&strided, &r) == CUDOT_OK);
            CHECK(bits(r) == bits(tiny));
#if defined(CUDOT_TESTS_WITH_MPFR)
            CHECK(bits(test::exact_dot(x.data(), y.data(), n).value) == bits(tiny));
#endif
            // Without the two tiny products the sum is an exact zero: +0.0.
            for (std::size_t i = 0; i < n; ++i)
                if (std::fabs(x[i] * 0x1p960) == 1.0 && std::fabs(y[i] * 0x1p115) == 1.0) x[i] = 0.0;
            CHECK(bits(exact(x, y)) == bits(0.0));
            // A zero times an infinity among them is still NaN.
            x[n / 2] = kInf;
            y[n / 2] = 0.0;
            CHECK(std::isnan(exact(x, y)));
        }
}

TEST_CASE("exact: every copy of the CPU's inner loop gives the same bits", "[exact]") {
    using namespace cudot;
    const cpu::TileKernels *variants[4];
    const int count = cpu::tile_kernel_variants(variants, 4);
    auto check = [&](const std::vector<unsigned char> &x, int32_t xd, const std::vector<unsigned char> &y, int32_t yd,
                     std::size_t n, std::int64_t stride) {
        Operands ops;
        ops.n = n;
        ops.x = dense_operand(x.data(), xd);
        ops.y = dense_operand(y.data(), yd);
        ops.x.stride = ops.y.stride = stride;
        double want = 0;
        REQUIRE(cpu::exact_dot(ops, &want, variants[0]) == CUDOT_OK);
        for (int v = 1; v < count; ++v) {
            double got = 0;
            INFO(variants[v]->isa << ": " << test::dtype_name(xd) << " x " << test::dtype_name(yd) << ", stride " << stride);
            REQUIRE(cpu::exact_dot(ops, &got, variants[v]) == CUDOT_OK);
            CHECK(bits(got) == bits(want));
        }
        return want;
    };
    auto bytes = [](const std::vector<double> &v) {
        std::vector<unsigned char> b(v.size() * 8);
        std::memcpy(b.data(), v.data(), b.size());
        return b;
    };
    for (std::uint64_t seed = 0; seed < 8; ++seed) {  // every range, and cancellation
        std::vector<double> x = wide_values(3001, -1074, 1023, 900 + seed), y = wide_values(3001, -1074, 1023, 950 + seed);
        if (seed % 2)
            for (std::size_t i = 0; i + 1 < x.size(); i += 2) x[i + 1] = -x[i], y[i + 1] = y[i];
        const double r = check(bytes(x), CUDOT_F64, bytes(y), CUDOT_F64, x.size(), 1);
#if defined(CUDOT_TESTS_WITH_MPFR)
        CHECK(bits(r) == bits(test::exact_dot(x.data(), y.data(), x.size()).value));
#endif
        (void)r;
    }
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::int64_t stride : {1, 2}) {
                const std::size_t n = 1003;
                const std::vector<unsigned char> x = test::random_values(xd, 2 * n, 31 + xd),
                                                 y = test::random_values(yd, 2 * n, 37 + yd);
                check(x, xd, y, yd, n, stride);
            }
    for (std::uint64_t seed = 0; seed < 2; ++seed) {  // exact zeros beside products that underflow
        std::vector<double> x, y;
        test::zeros_and_underflow(30002, 60 + seed, x, y);
        CHECK(bits(check(bytes(x), CUDOT_F64, bytes(y), CUDOT_F64, x.size(), 1)) ==
              bits(std::numeric_limits<double>::denorm_min()));
    }
    std::vector<double> x(4000, 1.5), y(4000, -2.0);  // a run of infinities and NaNs among finite products
    x[1000] = kInf, x[2001] = kNaN;
    CHECK(std::isnan(check(bytes(x), CUDOT_F64, bytes(y), CUDOT_F64, x.size(), 1)));
}

TEST_CASE("exact: any permutation, cut and thread count gives the same bits", "[exact]") {
    const std::size_t n = 300000;  // several pieces on the pool
    std::vector<double> x = wide_values(n, -600, 600, 1), y = wide_values(n, -400, 400, 2);
    const double want = exact(x, y);
    std::mt19937_64 rng(3);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    for (int round = 0; round < 4; ++round) {
        std::shuffle(order.begin(), order.end(), rng);
        std::vector<double> xs(n), ys(n);
        for (std::size_t i = 0; i < n; ++i) {
            xs[i] = x[order[i]];
            ys[i] = y[order[i]];
        }
        CHECK(bits(exact(xs, ys)) == bits(want));
    }
    // Reversed through a negative stride, and each element read by an unaligned, strided view.
    double r = 0;
    cudot_arrays a = exact_request(n, CUDOT_F64, x.data() + n - 1, -1, CUDOT_F64, y.data() + n - 1, -1);
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(want));
    std::vector<unsigned char> xu(n * 16 + 1), yu(n * 16 + 1);
    for (std::size_t i = 0; i < n; ++i) {
        std::memcpy(&xu[1 + 16 * i], &x[i], 8);
        std::memcpy(&yu[1 + 16 * i], &y[i], 8);
    }
    a = exact_request(n, CUDOT_F64, &xu[1], 2, CUDOT_F64, &yu[1], 2);
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(want));
}

namespace {

// exact_loop.inc sums contiguous runs in blocks of 512 elements by extraction, each block's bound taken from
// the block before; each set below makes some blocks leave that road. The references: the same elements
// with stride 2 (one element at a time, no blocks) and MPFR where it is linked.
template <class T> void check_extraction_blocks(int32_t dtype) {
    const std::size_t n = 512 * 12 + 37;
    std::mt19937_64 rng(2026 + dtype);
    std::uniform_real_distribution<T> u(-1, 1);
    auto uniform = [&] {
        std::vector<T> v(n);
        for (T &f : v) f = u(rng);
        return v;
    };
    auto check = [&](const std::vector<T> &x, const std::vector<T> &y, const char *what) {
        std::vector<T> x2(2 * n), y2(2 * n);
        for (std::size_t i = 0; i < n; ++i) x2[2 * i] = x[i], y2[2 * i] = y[i];
        for (std::size_t skip : {0, 1, 5}) {  // heads off the lanes' grid
            INFO(test::dtype_name(dtype) << ": " << what << ", first " << skip << " elements left out");
            const std::size_t m = n - skip;
            double got = -1, want = -2;
            const cudot_arrays dense = exact_request(m, dtype, x.data() + skip, 1, dtype, y.data() + skip, 1);
            const cudot_arrays strided = exact_request(m, dtype, x2.data() + 2 * skip, 2, dtype, y2.data() + 2 * skip, 2);
            REQUIRE(cudot_dot_arrays(&dense, &got) == CUDOT_OK);
            REQUIRE(cudot_dot_arrays(&strided, &want) == CUDOT_OK);
            if (std::isnan(want)) {
                CHECK(std::isnan(got));
                continue;
            }
            CHECK(bits(got) == bits(want));
#if defined(CUDOT_TESTS_WITH_MPFR)
            const std::vector<double> xd(x.begin() + skip, x.end()), yd(y.begin() + skip, y.end());
            CHECK(bits(got) == bits(test::exact_dot(xd.data(), yd.data(), m).value));
#endif
        }
    };
    const int top = std::numeric_limits<T>::max_exponent - 1;  // 127 or 1023
    check(uniform(), uniform(), "uniform in [-1, 1]");
    {  // each block 2^40 above or below the one before: the bound from the block before is wrong
        std::vector<T> x = uniform(), y = uniform();
        for (std::size_t i = 0; i < n; ++i) x[i] = std::ldexp(x[i], (i / 512) % 3 == 1 ? 40 : ((i / 512) % 3 == 2 ? -40 : 0));
        check(x, y, "blocks 2^40 apart");
    }
    {  // products 2^-60 below the others in some blocks: something is left after the last level
        std::vector<T> x = uniform(), y = uniform();
        for (std::size_t i = 3; i < n; i += 700) x[i] = std::ldexp(x[i], -60);
        check(x, y, "a few products 2^-60 below the rest");
    }
    {  // exact cancellation to a few low bits across blocks
        std::vector<T> x = uniform(), y = uniform();
        for (std::size_t i = 0; i + 1 < n; i += 2) x[i + 1] = -x[i], y[i + 1] = y[i];
        x[n - 1] = std::ldexp(T(1), -100);
        check(x, y, "cancellation");
    }
    {  // -0.0 products (a negative times a zero) and zero blocks
        std::vector<T> x = uniform(), y = uniform();
        for (std::size_t i = 0; i < n; ++i)
            if (i % 3 == 0 || (i >= 1024 && i < 2048)) y[i] = 0;
        check(x, y, "zeros and negative zeros");
    }
    {  // the smallest products the type makes (f32: near 2^-298; f64: below 2^-960, whose fma errors are
       // not exact, and subnormal ones), beside normal ones in other blocks
        std::vector<T> x = uniform(), y = uniform();
        const int low = std::numeric_limits<T>::min_exponent - 4;  // -129 or -1025
        for (std::size_t i = 0; i < 3 * 512; ++i) x[i] = std::ldexp(x[i], low), y[i] = std::ldexp(y[i], i < 512 ? low : -20);
        check(x, y, "the smallest products");
    }
    {  // products of the smallest elements (f64: far below the smallest double, so that a block that lost
       // them would not see it) decide the sign of a result that rounds to zero, or break a tie
        std::vector<T> x = uniform(), y = uniform();
        const int low = std::numeric_limits<T>::min_exponent - 4;
        for (std::size_t i = 0; i < n; ++i) x[i] = std::ldexp(x[i], low), y[i] = std::ldexp(std::fabs(y[i]), low);
        x[9] = -std::fabs(x[9]) - std::ldexp(T(1), low);  // the sum's sign: mostly negative, whatever the draw
        for (std::size_t i = 0; i < n; ++i) x[i] = -std::fabs(x[i]);
        for (std::size_t i = 12 * 512; i < n; ++i) y[i] = 0;  // none in the tail, which no block takes
        check(x, y, "only products of the smallest elements");
        x[700] = 1, y[700] = 1, x[701] = std::ldexp(T(1), -std::numeric_limits<T>::digits), y[701] = 1;
        for (std::size_t i = 0; i < n; ++i)
            if (i != 700 && i != 701) x[i] = std::fabs(x[i]);
        check(x, y, "a tie broken by products of the smallest elements");
    }
    {  // products near the largest the type makes, with cancellation
        std::vector<T> x = uniform(), y = uniform();
        const int half = top / 2;
        for (std::size_t i = 512; i < 1024; ++i) x[i] = std::ldexp(x[i], half), y[i] = std::ldexp(y[i], half);
        x[600] = std::ldexp(T(1.5), top), y[600] = T(1.25), x[601] = -x[600], y[601] = y[600];
        check(x, y, "products near the largest");
    }
    for (std::size_t at : {std::size_t(0), std::size_t(700), n - 1}) {  // infinities and NaNs in a block
        std::vector<T> x = uniform(), y = uniform();
        const std::size_t next = at + 1 < n ? at + 1 : at - 1;
        x[at] = std::numeric_limits<T>::infinity();
        y[at] = std::fabs(y[at]) + 1;
        check(x, y, "an infinity");
        x[next] = -std::numeric_limits<T>::infinity();
        y[next] = std::fabs(y[next]) + 1;
        check(x, y, "infinities of both signs");
        x[at] = std::numeric_limits<T>::quiet_NaN();
        check(x, y, "a NaN");
    }
}

}  // namespace

TEST_CASE("exact: blocks summed by extraction, and blocks that do not fit it, give the exact sum", "[exact]") {
    check_extraction_blocks<float>(CUDOT_F32);
    check_extraction_blocks<double>(CUDOT_F64);
}

TEST_CASE("exact: every pair of element types agrees with the exact sum of its values as doubles", "[exact]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes()) {
            const std::size_t n = 5000;
            std::vector<unsigned char> xv = test::random_values(xd, n, 10 + xd), yv = test::random_values(yd, n, 20 + yd);
            std::vector<double> xs(n), ys(n);
            for (std::size_t i = 0; i < n; ++i) {
                xs[i] = static_cast<double>(test::value_at(xd, xv.data(), i));
                ys[i] = static_cast<double>(test::value_at(yd, yv.data(), i));
            }
            double r = 0;
            const cudot_arrays a = exact_request(n, xd, xv.data(), 1, yd, yv.data(), 1);
            INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd));
            REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
            CHECK(bits(r) == bits(exact(xs, ys)));
#if defined(CUDOT_TESTS_WITH_MPFR)
            CHECK(bits(r) == bits(test::exact_dot(xs.data(), ys.data(), n).value));
#endif
        }
}

#if defined(CUDOT_TESTS_WITH_MPFR)
TEST_CASE("exact: equals MPFR's exact sum rounded once, on sets made to break it", "[exact]") {
    SECTION("ill-conditioned dots, condition numbers up to 1e300") {
        for (double condition : {1e3, 1e16, 1e32, 1e100, 1e200, 1e300})
            for (bool f32 : {false, true}) {
                if (f32 && condition > 1e32) continue;  // beyond what float exponents can build
                std::vector<double> x, y;
                test::gendot(2000, condition, f32, 77, x, y);
                INFO("condition " << condition << (f32 ? " f32" : " f64"));
                REQUIRE(std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); }));
                CHECK(bits(exact(x, y)) == bits(test::exact_dot(x.data(), y.data(), x.size()).value));
            }
    }
    SECTION("magnitudes from 2^-1074 to 2^1023, subnormal and overflowing products") {
        for (std::uint64_t seed = 0; seed < 40; ++seed) {
            std::vector<double> x = wide_values(700, -1074, 1023, 100 + seed), y = wide_values(700, -1074, 1023, 200 + seed);
            if (seed % 4 == 1)  // cancellation down to a few low bits
                for (std::size_t i = 0; i + 1 < x.size(); i += 2) {
                    x[i + 1] = -x[i];
                    y[i + 1] = y[i] * (seed % 8 == 1 ? 1.0 : 1.0 + std::ldexp(1.0, -52));
                }
            INFO("seed " << seed);
            CHECK(bits(exact(x, y)) == bits(test::exact_dot(x.data(), y.data(), x.size()).value));
        }
    }
    SECTION("results in the subnormal range") {
        for (std::uint64_t seed = 0; seed < 20; ++seed) {
            std::vector<double> x = wide_values(50, -560, -520, 300 + seed), y = wide_values(50, -560, -520, 400 + seed);
            INFO("seed " << seed);
            CHECK(bits(exact(x, y)) == bits(test::exact_dot(x.data(), y.data(), x.size()).value));
        }
    }
}
#endif

TEST_CASE("exact: 2^31 products through broadcast operands", "[exact][slow-under-checkers]") {
    // x = 1 + 2^-23 and y = 3 repeated (stride 0): the exact sum 2^31 * 3 * (1 + 2^-23) = 3 * (2^31 + 2^8).
    const float x = 1.0f + std::ldexp(1.0f, -23), y = 3.0f;
    const std::size_t n = std::size_t(1) << 31;
    double r = 0;
    const cudot_arrays a = exact_request(n, CUDOT_F32, &x, 0, CUDOT_F32, &y, 0);
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(r == 3.0 * (std::ldexp(1.0, 31) + 256.0));
}

TEST_CASE("exact: bad requests get a status and a message, and the result is left alone", "[exact][errors]") {
    const double x[2] = {1, 2}, y[2] = {3, 4};
    cudot_arrays a = exact_request(2, CUDOT_F64, x, 1, CUDOT_F64, y, 1);
    double r = -7;
    a.mode = 2;
    CHECK(cudot_dot_arrays(&a, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("mode") != std::string::npos);
    a.mode = CUDOT_MODE_EXACT;
    a.reserved2 = 1;
    CHECK(cudot_dot_arrays(&a, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    a.reserved2 = 0;
    CHECK(cudot_dot_arrays_async(&a, &r) == CUDOT_ERROR_UNSUPPORTED);
    CHECK(r == -7);
    // A caller of 1.7's size (88 bytes) gets the canonical mode: the same bits as a HOST context.
    a.size = offsetof(cudot_arrays, mode);
    CHECK(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(r == 11.0);
    a.size = sizeof a;
    CHECK(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(r == 11.0);
}
