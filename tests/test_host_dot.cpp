// test_host_dot.cpp - the HOST backend: accuracy, every awkward size, special values, and bitwise
// reproducibility across calls, thread counts and instruction-set variants.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "checks.hpp"
#include "cpu/tile_kernels.hpp"
#include "isolation.hpp"
#include "knobs.hpp"
#include "own_arrays.hpp"
#include "core/order.hpp"
#include "testing.hpp"

using test::Ctx;

TEST_CASE("HOST: random inputs of awkward sizes are within the documented bound", "[host][accuracy]") {
    for (std::size_t n : test::awkward_sizes()) {
        test::check_accuracy<float>(CUDOT_MEMORY_HOST, CUDOT_F32, n, n);
        test::check_accuracy<double>(CUDOT_MEMORY_HOST, CUDOT_F64, n, n + 1);
    }
}

TEST_CASE("HOST: counts come out exact at every size (no dropped tail)", "[host][slow-under-checkers]") {
    for (std::size_t n : test::awkward_sizes()) {
        test::check_counts<float>(CUDOT_MEMORY_HOST, CUDOT_F32, n);
        test::check_counts<double>(CUDOT_MEMORY_HOST, CUDOT_F64, n);
    }
}

TEST_CASE("HOST: every dot sees what the host last wrote", "[host]") {
    test::check_fresh_data<float>(CUDOT_MEMORY_HOST, CUDOT_F32);
    test::check_fresh_data<double>(CUDOT_MEMORY_HOST, CUDOT_F64);
}

TEST_CASE("HOST: NaN and Inf behave as IEEE arithmetic", "[host][special]") {
    test::check_special_values<float>(CUDOT_MEMORY_HOST, CUDOT_F32);
    test::check_special_values<double>(CUDOT_MEMORY_HOST, CUDOT_F64);
}

TEST_CASE("HOST: F64 is compensated (Dot2)", "[host][accuracy]") { test::check_f64_cancellation(CUDOT_MEMORY_HOST); }

TEST_CASE("HOST: F32 products are exact in double", "[host][accuracy]") {
    Ctx c(3, CUDOT_F32, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    float *x = c.x<float>(), *y = c.y<float>();
    x[0] = 1.0f + std::ldexp(1.0f, -23); y[0] = 1.0f + std::ldexp(1.0f, -23);  // 1 + 2^-22 + 2^-46
    x[1] = -1.0f; y[1] = 1.0f;
    x[2] = 0.0f; y[2] = 0.0f;
    CHECK(c.dot() == std::ldexp(1.0, -22) + std::ldexp(1.0, -46));
}

template <class T>
static void check_thread_counts(int32_t dtype, std::size_t n) {
    Ctx c(n, dtype, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    test::fill_random(c.x<T>(), c.y<T>(), n, 99);
    const double serial = c.dot();
    cudot::testing::set_cpu_always_parallel(c.ctx, true);
    for (unsigned threads = 1; threads <= 8; ++threads) {
        cudot::testing::set_cpu_threads(c.ctx, threads);
        INFO("threads " << threads << " n " << n);
        CHECK(test::bits(c.dot()) == test::bits(serial));
    }
}

TEST_CASE("HOST: bitwise identical for 1..8 threads and serial", "[host][determinism]") {
    for (std::size_t n : {std::size_t(5000), std::size_t(200000), std::size_t(3 * 8192 * 64 + 5)}) {
        check_thread_counts<float>(CUDOT_F32, n);
        check_thread_counts<double>(CUDOT_F64, n);
    }
}

TEST_CASE("HOST: every instruction-set variant of the inner loop gives the same bits", "[host][determinism]") {
    using namespace cudot;
    const cpu::TileKernels *variants[4];
    int count = cpu::tile_kernel_variants(variants, 4);
    REQUIRE(count >= 1);
    WARN("CPU inner-loop variants on this machine: " << count << " (in use: " << cpu::tile_kernels().isa << ")");
    if (count < 2) TEST_SKIP("one inner-loop variant here (" << cpu::tile_kernels().isa << "): nothing to compare");
    const std::size_t n = 5 * order::kTile + 1234, tiles = order::tile_count(n);
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes()) {
            std::vector<unsigned char> x(n * 8), y(n * 8);
            test::fill_random_any(xd, x.data(), n, 5 + xd);
            test::fill_random_any(yd, y.data(), n, 6 + yd);
            if (xd == CUDOT_F64)  // adversarial magnitudes: huge cancellations, tiny terms
                for (std::size_t i = 0; i < n; i += 7)
                    reinterpret_cast<double *>(x.data())[i] *= std::ldexp(1.0, static_cast<int>(i % 120) - 60);
            std::vector<unsigned char> p0(tiles * order::kMaxPartialBytes), p(tiles * order::kMaxPartialBytes);
            variants[0]->get(xd, yd, n)(x.data(), y.data(), n, 0, tiles, p0.data());
            for (int v = 1; v < count; ++v) {
                INFO(variants[v]->isa << " " << test::dtype_name(xd) << " x " << test::dtype_name(yd));
                variants[v]->get(xd, yd, n)(x.data(), y.data(), n, 0, tiles, p.data());
                CHECK(std::memcmp(p.data(), p0.data(), p.size()) == 0);
            }
        }
}

// Turns every Inf/NaN bit pattern of a floating dtype into a finite one (clears an exponent bit).
static void finite_bits(int32_t dtype, unsigned char *p, std::size_t n) {
    auto fix = [&](auto *v, auto exp_mask, auto flip) {
        for (std::size_t i = 0; i < n; ++i)
            if ((v[i] & exp_mask) == exp_mask) v[i] ^= flip;
    };
    if (dtype == CUDOT_F16) fix(reinterpret_cast<std::uint16_t *>(p), std::uint16_t(0x7c00), std::uint16_t(0x4000));
    if (dtype == CUDOT_BF16) fix(reinterpret_cast<std::uint16_t *>(p), std::uint16_t(0x7f80), std::uint16_t(0x4000));
    if (dtype == CUDOT_F32) fix(reinterpret_cast<std::uint32_t *>(p), 0x7f800000u, 0x40000000u);
    if (dtype == CUDOT_F64) fix(reinterpret_cast<std::uint64_t *>(p), 0x7ff0000000000000ULL, 0x4000000000000000ULL);
}

// Stores v (Inf or NaN) as element i of a floating dtype; integer dtypes have no such values.
static void set_special(int32_t dtype, unsigned char *p, std::size_t i, double v) {
    const bool nan = std::isnan(v);
    if (dtype == CUDOT_F16) reinterpret_cast<std::uint16_t *>(p)[i] = nan ? 0x7e00 : 0x7c00;
    if (dtype == CUDOT_BF16) reinterpret_cast<std::uint16_t *>(p)[i] = nan ? 0x7fc0 : 0x7f80;
    if (dtype == CUDOT_F32) reinterpret_cast<float *>(p)[i] = static_cast<float>(v);
    if (dtype == CUDOT_F64) reinterpret_cast<double *>(p)[i] = v;
}

// Stores a finite value v as element i of any dtype (exactly representable in each: -1, 0).
static void set_value(int32_t dtype, unsigned char *p, std::size_t i, double v) {
    switch (dtype) {
        case CUDOT_F16: reinterpret_cast<std::uint16_t *>(p)[i] = v < 0 ? 0xbc00 : 0x0000; break;
        case CUDOT_BF16: reinterpret_cast<std::uint16_t *>(p)[i] = v < 0 ? 0xbf80 : 0x0000; break;
        case CUDOT_F32: reinterpret_cast<float *>(p)[i] = static_cast<float>(v); break;
        case CUDOT_F64: reinterpret_cast<double *>(p)[i] = v; break;
        case CUDOT_I8: reinterpret_cast<std::int8_t *>(p)[i] = static_cast<std::int8_t>(v); break;
        default: reinterpret_cast<std::uint8_t *>(p)[i] = static_cast<std::uint8_t>(v < 0 ? 0 : v); break;
    }
}

TEST_CASE("HOST: instruction-set variants agree on every bit pattern (subnormals, extremes, Inf, NaN)",
          "[host][determinism]") {
    // Random bit patterns reach what random values do not: f16 and bf16 subnormals, the largest
    // magnitudes (where a float product of two bf16 would overflow), infinities and NaNs. The AVX2 copy
    // forms some products in float, so this is where it could part from the baseline. NaN payloads may
    // differ inside a partial (the returned NaN is canonical), so two NaNs count as equal.
    using namespace cudot;
    const cpu::TileKernels *variants[4];
    const int count = cpu::tile_kernel_variants(variants, 4);
    if (count < 2) TEST_SKIP("one inner-loop variant here (" << cpu::tile_kernels().isa << "): nothing to compare");
    const std::size_t n = 3 * order::kTile + 77, tiles = order::tile_count(n);
    std::uint64_t state = 0x9e3779b97f4a7c15ULL;
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes()) {
            std::vector<unsigned char> x(n * 8), y(n * 8);
            for (auto *buf : {&x, &y})
                for (auto &byte : *buf) {
                    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                    byte = static_cast<unsigned char>(state >> 56);
                }
            // Finite patterns everywhere (one NaN would make every partial NaN and hide the rest), then
            // an Inf in tile 2 and a NaN in the short last tile.
            finite_bits(xd, x.data(), n);
            finite_bits(yd, y.data(), n);
            set_special(xd, x.data(), 2 * order::kTile + 3, std::numeric_limits<double>::infinity());
            set_special(yd, y.data(), 3 * order::kTile + 5, std::numeric_limits<double>::quiet_NaN());
            std::vector<double> p0(tiles * 2), p(tiles * 2);
            variants[0]->get(xd, yd, n)(x.data(), y.data(), n, 0, tiles, p0.data());
            const bool exact = types::kind_of(xd, yd) == types::Kind::Exact;
            for (int v = 1; v < count; ++v) {
                INFO(variants[v]->isa << " " << test::dtype_name(xd) << " x " << test::dtype_name(yd));
                std::fill(p.begin(), p.end(), 0.0);
                variants[v]->get(xd, yd, n)(x.data(), y.data(), n, 0, tiles, p.data());
                for (std::size_t i = 0; i < p.size(); ++i) {
                    const bool both_nan = !exact && std::isnan(p[i]) && std::isnan(p0[i]);
                    if (!both_nan) REQUIRE(test::bits(p[i]) == test::bits(p0[i]));
                }
            }
        }
}

// The AVX2 copy starts each lane of an F32/F64 tile at its first product instead of at +0 + product
// (src/cpu/row_order_tiles.inc), so products of -0 and special values at a lane's first row, a short last
// row and every row count must still give the baseline copy's partials, bit for bit (NaN as NaN).
TEST_CASE("HOST: variants agree where lanes start with -0, Inf or NaN, at every row count", "[host][determinism]") {
    using namespace cudot;
    const cpu::TileKernels *variants[4];
    const int count = cpu::tile_kernel_variants(variants, 4);
    if (count < 2) WARN("only one inner-loop variant on this machine: nothing to compare");
    const int32_t types[] = {CUDOT_F32, CUDOT_F64};
    const std::size_t sizes[] = {1024, 1025, 1027, 2048, 2051, 3072, 4096, 5000, 7168, 8191, 8192, 8192 + 1024, 3 * 8192 + 2047};
    for (int32_t xd : types)
        for (int32_t yd : types)
            for (std::size_t n : sizes)
                for (int pattern = 0; pattern < 4; ++pattern) {
                    // 0: every product -0 (x = -1, y = +0); 1: -0 products in the first row only, then
                    // ones; 2: an Inf product in lane 5's first row, a -0 elsewhere; 3: NaN in the last row.
                    std::vector<double> xs(n, 1.0), ys(n, 1.0);
                    for (std::size_t i = 0; i < n; ++i) {
                        if (pattern == 0 || (pattern >= 1 && i < order::kLanes)) {
                            xs[i] = -1.0;
                            ys[i] = 0.0;
                        }
                    }
                    if (pattern == 2) xs[5] = ys[5] = std::numeric_limits<double>::infinity();
                    if (pattern == 3) xs[n - 1] = std::numeric_limits<double>::quiet_NaN();
                    std::vector<unsigned char> x(n * 8), y(n * 8);
                    for (std::size_t i = 0; i < n; ++i) {
                        if (xd == CUDOT_F32) reinterpret_cast<float *>(x.data())[i] = static_cast<float>(xs[i]);
                        else reinterpret_cast<double *>(x.data())[i] = xs[i];
                        if (yd == CUDOT_F32) reinterpret_cast<float *>(y.data())[i] = static_cast<float>(ys[i]);
                        else reinterpret_cast<double *>(y.data())[i] = ys[i];
                    }
                    const std::size_t tiles = order::tile_count(n);
                    std::vector<double> p0(tiles * 2, 7.0), p(tiles * 2, 7.0);
                    variants[0]->get(xd, yd, n)(x.data(), y.data(), n, 0, tiles, p0.data());
                    if (pattern == 0) {  // the canonical partial of all -0 products is +0 (lanes start at +0)
                        INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n);
                        CHECK(test::bits(p0[0]) == test::bits(0.0));
                    }
                    for (int v = 1; v < count; ++v) {
                        INFO(variants[v]->isa << " " << test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n
                                              << " pattern " << pattern);
                        variants[v]->get(xd, yd, n)(x.data(), y.data(), n, 0, tiles, p.data());
                        for (std::size_t i = 0; i < p.size(); ++i) {
                            const bool both_nan = std::isnan(p[i]) && std::isnan(p0[i]);
                            if (!both_nan) REQUIRE(test::bits(p[i]) == test::bits(p0[i]));
                        }
                    }
                }
}

// Dots of at most one lane row keep their whole lane tree in registers (in_register_partial in
// tile_kernels.inc), and batches of such rows of float and double pairs go through each copy's own loop
// (short_rows). Both must give the baseline copy's bits at every length around the vector widths, for
// every pair, with -0, Inf and NaN products; and a batch's results must be the join of the row's own
// partial.
TEST_CASE("HOST: short dots and batches of short rows agree with the baseline copy at every length",
          "[host][determinism][rows]") {
    using namespace cudot;
    const cpu::TileKernels *variants[4];
    const int count = cpu::tile_kernel_variants(variants, 4);
    std::vector<std::size_t> lengths;
    for (std::size_t n = 1; n <= 140; ++n) lengths.push_back(n);
    for (std::size_t n : {255, 256, 257, 511, 512, 513, 1000, 1023, 1024}) lengths.push_back(n);
    std::uint64_t state = 0x243f6a8885a308d3ULL;
    auto next = [&state] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return state >> 33;
    };
    const std::size_t rows = 3;
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : lengths)
                for (int pattern = 0; pattern < 3; ++pattern) {
                    // 0: random values; 1: -0 products (x = -1, y = +0) with a few random ones; 2: random
                    // values with an Inf at one element of row 1 and a NaN at one of row 2.
                    const std::size_t stride = n + 1;  // rows with a gap, not aligned to a vector
                    const std::vector<unsigned char> xr = test::random_values(xd, rows * stride, 31 + n);
                    const std::vector<unsigned char> yr = test::random_values(yd, rows * stride, 32 + n);
                    std::vector<unsigned char> x(xr), y(yr);
                    if (pattern == 1)
                        for (std::size_t i = 0; i < rows * stride; ++i)
                            if (next() % 8 != 0) {
                                set_value(xd, x.data(), i, -1.0);
                                set_value(yd, y.data(), i, 0.0);
                            }
                    if (pattern == 2) {
                        set_special(xd, x.data(), stride + next() % n, std::numeric_limits<double>::infinity());
                        set_special(yd, y.data(), 2 * stride + next() % n, std::numeric_limits<double>::quiet_NaN());
                    }
                    const std::size_t sx = test::dtype_size(xd), sy = test::dtype_size(yd);
                    const types::Kind kind = types::kind_of(xd, yd);
                    INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n << " pattern " << pattern);
                    double want[rows], got[rows];
                    for (std::size_t r = 0; r < rows; ++r) {  // the baseline copy's single dot of each row
                        double partial[2] = {0, 0};
                        variants[0]->get(xd, yd, n)(x.data() + r * stride * sx, y.data() + r * stride * sy, n, 0, 1,
                                                    partial);
                        want[r] = order::join_packed_partials(kind, partial, 1);
                    }
                    for (int v = 0; v < count; ++v) {
                        INFO(variants[v]->isa);
                        for (std::size_t r = 0; r < rows; ++r) {
                            double partial[2] = {0, 0};
                            variants[v]->get(xd, yd, n)(x.data() + r * stride * sx, y.data() + r * stride * sy, n, 0,
                                                        1, partial);
                            const double one = order::join_packed_partials(kind, partial, 1);
                            CHECK((test::bits(one) == test::bits(want[r]) || (std::isnan(one) && std::isnan(want[r]))));
                        }
                        // The loop over short rows exists for the float and double pairs only.
                        const bool floats = (xd == CUDOT_F32 || xd == CUDOT_F64) && (yd == CUDOT_F32 || yd == CUDOT_F64);
                        REQUIRE((variants[v]->short_rows(xd, yd) != nullptr) == floats);
                        if (!floats) continue;
                        std::fill(got, got + rows, 7.0);
                        variants[v]->short_rows(xd, yd)(x.data(), y.data(), n, rows, std::ptrdiff_t(stride * sx),
                                                         std::ptrdiff_t(stride * sy), got);
                        for (std::size_t r = 0; r < rows; ++r)
                            CHECK((test::bits(got[r]) == test::bits(want[r]) || (std::isnan(got[r]) && std::isnan(want[r]))));
                    }
                    if (pattern == 2 && xd <= CUDOT_BF16 && yd <= CUDOT_BF16) CHECK(std::isnan(want[2]));  // (floating pairs)
                }
}

// A tile's short last row is read with masked loads (src/cpu/row_order_tiles.inc) that must not touch
// memory past the operands' last element: exactly sized heap arrays, each ending its allocation, so that
// the sanitizers (CI's ASan and valgrind runs) see any read beyond it. The results must equal the same
// values in a HOST context's buffers.
TEST_CASE("HOST: arrays that end where their allocation ends are read no further", "[host][own]") {
    for (std::size_t n : {std::size_t(1025), std::size_t(1027), std::size_t(2049), std::size_t(4097), std::size_t(8191),
                          std::size_t(8192 + 1025)}) {
        std::unique_ptr<float[]> xf(new float[n]), yf(new float[n]);
        std::unique_ptr<double[]> xd(new double[n]), yd(new double[n]);
        for (std::size_t i = 0; i < n; ++i) {
            xf[i] = static_cast<float>(i % 13) - 5.5f;
            yf[i] = 0.25f * static_cast<float>(i % 7);
            xd[i] = xf[i] * 1e-3;
            yd[i] = yf[i] + 1e-9;
        }
        struct Case {
            int32_t xt, yt;
            const void *x, *y;
        };
        const Case cases[] = {{CUDOT_F32, CUDOT_F32, xf.get(), yf.get()}, {CUDOT_F64, CUDOT_F64, xd.get(), yd.get()},
                              {CUDOT_F32, CUDOT_F64, xf.get(), yd.get()}};
        for (const Case &c : cases) {
            INFO("n=" << n << " " << test::dtype_name(c.xt) << " x " << test::dtype_name(c.yt));
            cudot_arrays a = CUDOT_ARRAYS_INIT;
            a.n = n;
            a.x = {c.x, c.xt, 0, 1};
            a.y = {c.y, c.yt, 0, 1};
            double own = 0;
            REQUIRE(cudot_dot_arrays(&a, &own) == CUDOT_OK);
            cudot_config cfg = CUDOT_CONFIG_INIT;
            cfg.memory = CUDOT_MEMORY_HOST;
            cfg.dtype = c.xt;
            cfg.y_dtype = c.yt;
            cudot_ctx *ctx = nullptr;
            REQUIRE(cudot_init(&ctx, n, &cfg) == CUDOT_OK);
            void *bx = nullptr, *by = nullptr;
            REQUIRE(cudot_get_inputs(ctx, &bx, &by) == CUDOT_OK);
            std::memcpy(bx, c.x, n * (c.xt == CUDOT_F32 ? 4 : 8));
            std::memcpy(by, c.y, n * (c.yt == CUDOT_F32 ? 4 : 8));
            double in_context = 1;
            CHECK(cudot_dot(ctx, &in_context) == CUDOT_OK);
            CHECK(cudot_deinit(ctx) == CUDOT_OK);
            CHECK(test::bits(own) == test::bits(in_context));
            CHECK(own != 0.0);
        }
    }
}

#if defined(__MINGW32__)
// MinGW-w64's fma() is not correctly rounded, so the baseline copy (built without -mfma) has its own
// (src/cpu/fma_mingw.cpp): the processor's FMA, or without one a software path. Both must give the
// instruction's bits, so the baseline copy matches the AVX2 copy, which uses the instruction.
TEST_CASE("HOST (MinGW): the software fma gives the FMA instruction's bits", "[host][determinism]") {
    using namespace cudot;
    if (!__builtin_cpu_supports("fma"))
        TEST_SKIP("this processor has no FMA instruction to compare the software path with");
    // TwoProduct's errors, fma(x, y, -x*y), on random finite bit patterns: subnormals, huge and tiny.
    std::uint64_t state = 0x2545f4914f6cdd1dULL;
    auto next_bits = [&] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return state ^ (state >> 29);
    };
    auto next = [&] {
        std::uint64_t b = next_bits();
        if ((b & 0x7ff0000000000000ULL) == 0x7ff0000000000000ULL) b ^= 0x4000000000000000ULL;  // finite
        double v;
        std::memcpy(&v, &b, sizeof v);
        return v;
    };
    int differ = 0;
    test::SoftwareFma software(false);
    for (int i = 0; i < 200000; ++i) {
        const double x = next(), y = next(), p = order::mul_rn(x, y);
        software.set(false);
        const double hw = order::fma_rn(x, y, -p);
        software.set(true);
        const double sw = order::fma_rn(x, y, -p);
        if (test::bits(hw) != test::bits(sw) && !(std::isnan(hw) && std::isnan(sw))) ++differ;
    }
    CHECK(differ == 0);
    // Whole F64 partials: the baseline copy on the software path against every other copy.
    const cpu::TileKernels *variants[4];
    const int count = cpu::tile_kernel_variants(variants, 4);
    const std::size_t n = 3 * order::kTile + 77, tiles = order::tile_count(n);
    // Magnitudes from 2^-60 to 2^60 (finite products, large cancellations), random significands.
    std::vector<double> x(n), y(n);
    auto moderate = [&](std::size_t i) {
        const double m = 1.0 + static_cast<double>(next_bits() >> 12) * 0x1p-52;
        return std::ldexp(next_bits() & 1 ? -m : m, static_cast<int>(i % 121) - 60);
    };
    for (std::size_t i = 0; i < n; ++i) x[i] = moderate(i), y[i] = moderate(i * 7 + 3);
    std::vector<double> p0(tiles * 2), p(tiles * 2);
    variants[0]->get(CUDOT_F64, CUDOT_F64, n)(x.data(), y.data(), n, 0, tiles, p0.data());
    software.set(false);
    for (int v = 1; v < count; ++v) {
        INFO(variants[v]->isa);
        variants[v]->get(CUDOT_F64, CUDOT_F64, n)(x.data(), y.data(), n, 0, tiles, p.data());
        CHECK(std::memcmp(p.data(), p0.data(), p.size() * sizeof(double)) == 0);
    }
    if (count < 2) WARN("only one inner-loop variant on this machine: partials not compared");
}
#endif

TEST_CASE("HOST: every pair of element types is within its bound", "[host][accuracy]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(8193), std::size_t(100003)}) {
                Ctx c(n, xd, CUDOT_MEMORY_HOST, 0, yd);
                REQUIRE(c.status == CUDOT_OK);
                void *x, *y;
                cudot_get_inputs(c.ctx, &x, &y);
                test::fill_random_any(xd, x, n, n + 31 * xd);
                test::fill_random_any(yd, y, n, n + 37 * yd + 1);
                const double r = c.dot();
                const test::Reference ref = test::reference_any(xd, x, yd, y, n);
                INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n << " r=" << r
                                          << " exact=" << static_cast<double>(ref.exact));
                CHECK(test::within_bound(xd, yd, r, ref, n));
                CHECK(test::bits(c.dot()) == test::bits(r));
                if (n == 100003) {  // the same bits on any number of CPU threads
                    cudot::testing::set_cpu_always_parallel(c.ctx, true);
                    for (unsigned threads : {1u, 2u, 3u, 5u, 8u}) {
                        cudot::testing::set_cpu_threads(c.ctx, threads);
                        CHECK(test::bits(c.dot()) == test::bits(r));
                    }
                }
            }
}

TEST_CASE("HOST: integer pairs are exact, and round once beyond 2^53", "[host][accuracy]") {
    // 2^24 elements of 255 * 255 = 65025: the sum 1090938470400 needs 40 bits; exact in double.
    const std::size_t n = std::size_t(1) << 24;
    Ctx c(n, CUDOT_U8, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    std::memset(c.x<std::uint8_t>(), 255, n);
    std::memset(c.y<std::uint8_t>(), 255, n);
    CHECK(c.dot() == 65025.0 * n);
    // Mixed signs cancel exactly, whatever the order.
    Ctx m(100001, CUDOT_I8, CUDOT_MEMORY_HOST, 0, CUDOT_U8);
    REQUIRE(m.status == CUDOT_OK);
    for (std::size_t i = 0; i < 100001; ++i) {
        m.x<std::int8_t>()[i] = static_cast<std::int8_t>(i % 2 ? -128 : 127);
        m.y<std::uint8_t>()[i] = 200;
    }
    CHECK(m.dot() == 200.0 * (50001.0 * 127 - 50000.0 * 128));
}

TEST_CASE("HOST: a large vector (2^24 + 3)", "[host][large]") {
    const std::size_t n = (std::size_t(1) << 24) + 3;
    test::check_accuracy<float>(CUDOT_MEMORY_HOST, CUDOT_F32, n, 11);
    test::check_accuracy<double>(CUDOT_MEMORY_HOST, CUDOT_F64, n, 12);
}

// The canonical order of src/core/order.hpp written out literally: every lane of every tile (zeros
// included), every level of both trees. The library's CPU path skips zero lanes and the GPU uses
// shuffles; both must agree with this bit for bit.
template <class Tx, class Ty>
static double literal_canonical_dot(const Tx *x, const Ty *y, std::size_t n) {
    using namespace cudot::order;
    using P = Pair<Tx, Ty>;
    using A = typename P::A;
    auto full_tree = [](std::vector<typename A::Acc> v) {
        for (std::size_t width = kLanes / 2; width >= 1; width /= 2)
            for (std::size_t i = 0; i < width; ++i) v[i] = A::merge(v[2 * i], v[2 * i + 1]);
        return v[0];
    };
    std::vector<typename A::Acc> partials;
    for (std::size_t begin = 0; begin < n; begin += kTile) {
        std::vector<typename A::Acc> lanes(kLanes, A::zero());
        for (std::size_t j = 0; j < kSteps; ++j)
            for (std::size_t l = 0; l < kLanes; ++l) {
                std::size_t i = begin + j * kLanes + l;
                if (i < n) P::add(lanes[l], x[i], y[i]);
            }
        partials.push_back(full_tree(lanes));
    }
    std::vector<typename A::Acc> join(kLanes, A::zero());
    for (std::size_t t = 0; t < partials.size(); ++t) join[t % kLanes] = A::merge(join[t % kLanes], partials[t]);
    double r = A::finish(full_tree(join));
    return std::isnan(r) ? std::numeric_limits<double>::quiet_NaN() : r;
}

template <class Tx, class Ty>
static void check_literal(std::size_t n, int kind) {
    const int32_t xd = cudot::types::Traits<Tx>::id, yd = cudot::types::Traits<Ty>::id;
    Ctx c(n, xd, CUDOT_MEMORY_HOST, 0, yd);
    REQUIRE(c.status == CUDOT_OK);
    Tx *x = c.x<Tx>();
    Ty *y = c.y<Ty>();
    test::fill_random_any(xd, x, n, n * 3 + kind);
    test::fill_random_any(yd, y, n, n * 5 + kind);
    const bool fp = !cudot::types::Traits<Tx>::is_int;
    if (fp && kind == 1) test::set_value(xd, x, n / 2, INFINITY);  // a lone Inf, in a short tile when n is small
    if (fp && kind == 2) { test::set_value(xd, x, 0, INFINITY); test::set_value(xd, x, n - 1, -INFINITY); }
    if (fp && kind == 3) test::set_value(xd, x, n - 1, NAN);
    if (kind == 4 && xd == CUDOT_F64)  // huge and tiny magnitudes: the error terms matter
        for (std::size_t i = 0; i < n; i += 3) reinterpret_cast<double *>(x)[i] *= std::ldexp(1.0, static_cast<int>(i % 200) - 100);
    INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n << " kind=" << kind);
    CHECK(test::bits(c.dot()) == test::bits(literal_canonical_dot(x, y, n)));
}

template <class Tx>
static void check_literal_row(std::size_t n, int kind) {
    using namespace cudot::types;
    check_literal<Tx, float>(n, kind);
    check_literal<Tx, double>(n, kind);
    check_literal<Tx, f16>(n, kind);
    check_literal<Tx, bf16>(n, kind);
    check_literal<Tx, std::int8_t>(n, kind);
    check_literal<Tx, std::uint8_t>(n, kind);
}

TEST_CASE("HOST: equals a literal implementation of the canonical order", "[host][determinism][slow-under-checkers]") {
    using namespace cudot::types;
    for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(5), std::size_t(1000), std::size_t(1025),
                          std::size_t(8192), std::size_t(8193), std::size_t(40000)})
        for (int kind = 0; kind <= 4; ++kind) {
            check_literal_row<float>(n, kind);
            check_literal_row<double>(n, kind);
            check_literal_row<f16>(n, kind);
            check_literal_row<bf16>(n, kind);
            check_literal_row<std::int8_t>(n, kind);
            check_literal_row<std::uint8_t>(n, kind);
        }
    for (int kind = 0; kind <= 4; ++kind) {  // more than 1024 tiles: every join lane in use
        check_literal<float, float>(8192 * 1025 + 3, kind);
        check_literal<double, double>(8192 * 1025 + 3, kind);
    }
}
