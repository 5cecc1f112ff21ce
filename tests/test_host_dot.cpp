// test_host_dot.cpp - the HOST backend: accuracy, every awkward size, special values, and bitwise
// reproducibility across calls, thread counts and instruction-set variants.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "checks.hpp"
#include "cpu/tile_kernels.hpp"
#include "order.hpp"
#include "testing.hpp"

using test::Ctx;

TEST_CASE("HOST: random inputs of awkward sizes are within the documented bound", "[host][accuracy]") {
    for (std::size_t n : test::awkward_sizes()) {
        test::check_accuracy<float>(CUDOT_MEMORY_HOST, CUDOT_F32, n, n);
        test::check_accuracy<double>(CUDOT_MEMORY_HOST, CUDOT_F64, n, n + 1);
    }
}

TEST_CASE("HOST: counts come out exact at every size (no dropped tail)", "[host]") {
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
    const std::size_t n = 5 * order::kTile + 1234, tiles = order::tile_count(n);
    std::vector<float> xf(n), yf(n);
    std::vector<double> xd(n), yd(n);
    test::fill_random(xf.data(), yf.data(), n, 5);
    test::fill_random(xd.data(), yd.data(), n, 6);
    // Adversarial F64 values: huge cancellations, tiny terms, products that round.
    for (std::size_t i = 0; i < n; i += 7) {
        xd[i] = std::ldexp(xd[i], static_cast<int>(i % 120) - 60);
        yd[i] = -yd[i] * 3.0;
    }
    std::vector<order::SumF32> pf0(tiles), pf(tiles);
    std::vector<order::SumF64> pd0(tiles), pd(tiles);
    variants[0]->f32(xf.data(), yf.data(), n, 0, tiles, pf0.data());
    variants[0]->f64(xd.data(), yd.data(), n, 0, tiles, pd0.data());
    for (int v = 1; v < count; ++v) {
        INFO(variants[v]->isa);
        variants[v]->f32(xf.data(), yf.data(), n, 0, tiles, pf.data());
        variants[v]->f64(xd.data(), yd.data(), n, 0, tiles, pd.data());
        CHECK(std::memcmp(pf.data(), pf0.data(), tiles * sizeof pf[0]) == 0);
        CHECK(std::memcmp(pd.data(), pd0.data(), tiles * sizeof pd[0]) == 0);
    }
}

TEST_CASE("HOST: a large vector (2^24 + 3)", "[host][large]") {
    const std::size_t n = (std::size_t(1) << 24) + 3;
    test::check_accuracy<float>(CUDOT_MEMORY_HOST, CUDOT_F32, n, 11);
    test::check_accuracy<double>(CUDOT_MEMORY_HOST, CUDOT_F64, n, 12);
}
