// test_fp_env.cpp - the caller's floating-point environment changes no result, and comes back exactly as
// it was: its control modes (flush-to-zero, denormals-are-zero, rounding) and its sticky exception flags.
#include <catch2/catch.hpp>

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "caller_fp_mode.h"
#include "isolation.hpp"
#include "reference.hpp"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#if !defined(RUNNING_ON_VALGRIND)
#define RUNNING_ON_VALGRIND 0
#endif

using test::Ctx;

namespace {

// valgrind emulates neither MXCSR's FTZ, DAZ and rounding bits nor the exception flags.
bool fp_environment_emulated() { return !RUNNING_ON_VALGRIND; }

#if CALLER_FP_MODE_AVAILABLE
// Sets the calling thread's floating-point control register for the scope and gives the caller's back
// when it ends, however it ends (a failed REQUIRE throws): a mode left set would change the cases after.
class FpControl {
   public:
    explicit FpControl(std::uint64_t mode) : callers_(caller_fp_control()) { caller_fp_set_control(mode); }
    ~FpControl() { caller_fp_set_control(callers_); }
    FpControl(const FpControl &) = delete;
    FpControl &operator=(const FpControl &) = delete;

   private:
    std::uint64_t callers_;
};
#endif

// A vector whose element i is the subnormal (or, for y_int, integer) value k_i * 2^e, written as bits:
// a subnormal's bits are its multiple of the smallest subnormal.
struct SubnormalCase {
    int32_t x_dtype, y_dtype;
    int x_exp, y_exp;  // value of bits 1 in each type (the smallest subnormal), or 0 for integers given as y
    const char *name;
};

unsigned k_x(std::size_t i) { return 1 + static_cast<unsigned>(i % 7); }
unsigned k_y(std::size_t i) { return 1 + static_cast<unsigned>(i % 5); }

void write_multiple(int32_t dtype, void *p, std::size_t i, unsigned k, bool as_integer) {
    if (as_integer) return test::set_value(dtype, p, i, k);
    if (dtype == CUDOT_F32) {
        const std::uint32_t b = k;
        std::memcpy(static_cast<char *>(p) + 4 * i, &b, 4);
    } else if (dtype == CUDOT_F64) {
        const std::uint64_t b = k;
        std::memcpy(static_cast<char *>(p) + 8 * i, &b, 8);
    } else {  // F16
        const std::uint16_t b = static_cast<std::uint16_t>(k);
        std::memcpy(static_cast<char *>(p) + 2 * i, &b, 2);
    }
}

// Fills the context and returns the exact dot: the products are multiples of 2^(x_exp + y_exp), exact in
// double, and their integer sum stays far below 2^53, so every correct order gives these bits.
double fill_subnormal(const Ctx &c, const SubnormalCase &s, std::size_t n) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        write_multiple(s.x_dtype, c.x(), i, k_x(i), false);
        write_multiple(s.y_dtype, c.y(), i, k_y(i), s.y_exp == 0);
        sum += std::uint64_t(k_x(i)) * k_y(i);
    }
    return std::ldexp(static_cast<double>(sum), s.x_exp + s.y_exp);
}

const SubnormalCase kSubnormalCases[] = {
    {CUDOT_F32, CUDOT_F32, -149, -149, "F32 x F32, both subnormal"},
    {CUDOT_F64, CUDOT_F64, -1074, 0, "F64 (Dot2): x subnormal, y integers"},
    {CUDOT_F16, CUDOT_F32, -24, -149, "F16 x F32, both subnormal"},
};

// The dot of the whole context, and the same through the public partials and their join.
void dot_and_partials(const Ctx &c, const SubnormalCase &s, std::size_t n, double *dot, double *joined) {
    REQUIRE(cudot_dot(c.ctx, dot) == CUDOT_OK);
    const std::size_t tiles = (n + CUDOT_TILE_ELEMENTS - 1) / CUDOT_TILE_ELEMENTS;
    std::vector<unsigned char> partials(tiles * CUDOT_PARTIAL_BYTES);
    REQUIRE(cudot_tile_partials(c.ctx, 0, n, partials.data()) == CUDOT_OK);
    REQUIRE(cudot_join_partials(s.x_dtype, s.y_dtype, partials.data(), tiles, joined) == CUDOT_OK);
}

}  // namespace

#if CALLER_FP_MODE_AVAILABLE
TEST_CASE("HOST: all-subnormal inputs give the exact bits under the caller's flush-to-zero and rounding mode",
          "[host][determinism][fp_env]") {
    if (!fp_environment_emulated()) TEST_SKIP("valgrind ignores the floating-point modes this case sets");
    const std::size_t n = 3 * CUDOT_TILE_ELEMENTS + 5;  // a short last tile; on the calling thread
    for (const SubnormalCase &s : kSubnormalCases) {
        INFO(s.name << " under " << CALLER_FP_MODE_NAME);
        Ctx c(n, s.x_dtype, CUDOT_MEMORY_HOST, 0, s.y_dtype);
        REQUIRE(c.status == CUDOT_OK);
        const double expected = fill_subnormal(c, s, n);
        REQUIRE(expected != 0.0);  // flushing anything would show

        double dot = 0, joined = 0;
        std::uint64_t after = 0;
        {
            const FpControl flush(caller_fp_flush_toward_zero());
            dot_and_partials(c, s, n, &dot, &joined);
            after = caller_fp_control();
        }

        CHECK(test::bits(dot) == test::bits(expected));
        CHECK(test::bits(joined) == test::bits(expected));
        CHECK(after == caller_fp_flush_toward_zero());  // the caller's mode is given back
    }
}

TEST_CASE("HOST: the caller's rounding mode does not change a rounded result", "[host][determinism][fp_env]") {
    if (!fp_environment_emulated()) TEST_SKIP("valgrind ignores the floating-point modes this case sets");
    const std::size_t n = 300000;  // large enough for the thread pool
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_F16}) {
        INFO(test::dtype_name(dtype) << " under " << CALLER_FP_MODE_NAME);
        Ctx c(n, dtype, CUDOT_MEMORY_HOST);
        REQUIRE(c.status == CUDOT_OK);
        test::fill_random_any(dtype, c.x(), n, 3);
        test::fill_random_any(dtype, c.y(), n, 4);
        const double expected = c.dot();
        double r = 0;
        cudot_status status = CUDOT_ERROR_INTERNAL;
        std::uint64_t after = 0;
        {
            const FpControl flush(caller_fp_flush_toward_zero());
            status = cudot_dot(c.ctx, &r);
            after = caller_fp_control();
        }
        REQUIRE(status == CUDOT_OK);
        CHECK(test::bits(r) == test::bits(expected));
        CHECK(after == caller_fp_flush_toward_zero());
    }
}
#endif

TEST_CASE("HOST: a call leaves the caller's exception flags exactly as they were", "[host][fp_env]") {
    if (!fp_environment_emulated()) TEST_SKIP("valgrind does not emulate the exception flags");
    // Dots whose arithmetic raises flags of its own: inexact sums (on the pool too), and an Inf - Inf
    // inside Dot2's compensation (invalid) next to a product that overflows.
    const std::size_t n = 300000;
    Ctx f32(n, CUDOT_F32, CUDOT_MEMORY_HOST);
    Ctx special(4, CUDOT_F64, CUDOT_MEMORY_HOST);
    REQUIRE(f32.status == CUDOT_OK);
    REQUIRE(special.status == CUDOT_OK);
    test::fill_random_any(CUDOT_F32, f32.x(), n, 5);
    test::fill_random_any(CUDOT_F32, f32.y(), n, 6);
    const double inf = std::numeric_limits<double>::infinity();
    const double sx[] = {inf, 1, 1e300, 3}, sy[] = {1, 1, 1e10, 1};
    std::memcpy(special.x(), sx, sizeof sx);
    std::memcpy(special.y(), sy, sizeof sy);

    for (int raised : {0, FE_DIVBYZERO | FE_UNDERFLOW, FE_ALL_EXCEPT}) {
        std::feclearexcept(FE_ALL_EXCEPT);
        std::feraiseexcept(raised);
        // Raising one flag may raise others with it (AArch64's glibc raises underflow by an operation that
        // is also inexact): what the caller holds is what it reads back.
        const int before = std::fetestexcept(FE_ALL_EXCEPT);
        INFO("flags before the calls: " << before);
        REQUIRE((before & raised) == raised);
        double r1 = 0, r2 = 0, joined = 0;
        const cudot_status s1 = cudot_dot(f32.ctx, &r1), s2 = cudot_dot(special.ctx, &r2);
        unsigned char partials[CUDOT_PARTIAL_BYTES];
        const cudot_status s3 = cudot_tile_partials(special.ctx, 0, 4, partials);
        const cudot_status s4 = cudot_join_partials(CUDOT_F64, CUDOT_F64, partials, 1, &joined);
        const int after = std::fetestexcept(FE_ALL_EXCEPT);
        std::feclearexcept(FE_ALL_EXCEPT);
        CHECK(after == before);
        REQUIRE((s1 == CUDOT_OK && s2 == CUDOT_OK && s3 == CUDOT_OK && s4 == CUDOT_OK));
        CHECK(r2 == inf);
        CHECK(joined == inf);
    }
}

// What a -ffast-math build returned (cmake/ieee_flags.cmake refuses it): compensation optimised away,
// Inf assumed away, a NaN of another sign.
TEST_CASE("HOST: the results that fast math changes", "[host][fp_env]") {
    const double inf = std::numeric_limits<double>::infinity();
    struct Case {
        double x[4], y[4];
        std::size_t n;
        std::uint64_t expected_bits;
    } cases[] = {
        {{1e16, 1, -1e16}, {1, 1, 1}, 3, 0x3ff0000000000000},       // 1
        {{inf, 1, 1e300, 3}, {1, 1, 1e10, 1}, 4, 0x7ff0000000000000},  // +Inf
        {{inf}, {0}, 1, 0x7ff8000000000000},                          // Inf * 0: the one NaN
    };
    for (const Case &k : cases) {
        Ctx c(k.n, CUDOT_F64, CUDOT_MEMORY_HOST);
        REQUIRE(c.status == CUDOT_OK);
        std::memcpy(c.x(), k.x, k.n * sizeof(double));
        std::memcpy(c.y(), k.y, k.n * sizeof(double));
        CHECK(test::bits(c.dot()) == k.expected_bits);
    }
}
