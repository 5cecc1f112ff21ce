// test_host_dot.cpp - the HOST backend: accuracy, every awkward size, special values, and bitwise
// reproducibility across calls, thread counts and instruction-set variants.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
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

// The canonical order of src/order.hpp written out literally: every lane of every tile (zeros
// included), every level of both trees. The library's CPU path skips zero lanes and the GPU uses
// shuffles; both must agree with this bit for bit.
template <class T>
static double literal_canonical_dot(const T *x, const T *y, std::size_t n) {
    using namespace cudot::order;
    using A = Arith<T>;
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
                if (i < n) A::add_product(lanes[l], x[i], y[i]);
            }
        partials.push_back(full_tree(lanes));
    }
    std::vector<typename A::Acc> join(kLanes, A::zero());
    for (std::size_t t = 0; t < partials.size(); ++t) join[t % kLanes] = A::merge(join[t % kLanes], partials[t]);
    double r = A::finish(full_tree(join));
    return std::isnan(r) ? std::numeric_limits<double>::quiet_NaN() : r;
}

template <class T>
static void check_literal(std::size_t n, int kind) {
    Ctx c(n, sizeof(T) == 4 ? CUDOT_F32 : CUDOT_F64, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    T *x = c.x<T>(), *y = c.y<T>();
    test::fill_random(x, y, n, n * 3 + kind);
    const T inf = std::numeric_limits<T>::infinity();
    if (kind == 1) x[n / 2] = inf;                          // a lone Inf, in a short tile when n is small
    if (kind == 2) { x[0] = inf; x[n - 1] = -inf; }         // Inf - Inf
    if (kind == 3) x[n - 1] = std::numeric_limits<T>::quiet_NaN();
    if (kind == 4)                                          // huge and tiny magnitudes: the error terms matter
        for (std::size_t i = 0; i < n; i += 3) x[i] = std::ldexp(x[i], static_cast<int>(i % 200) - 100);
    INFO("n=" << n << " kind=" << kind);
    CHECK(test::bits(c.dot()) == test::bits(literal_canonical_dot(x, y, n)));
}

TEST_CASE("HOST: equals a literal implementation of the canonical order", "[host][determinism]") {
    for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(5), std::size_t(1000),
                          std::size_t(1024), std::size_t(1025), std::size_t(5000), std::size_t(8192),
                          std::size_t(8193), std::size_t(40000), std::size_t(8192 * 1025 + 3)})
        for (int kind = 0; kind <= 4; ++kind) {
            check_literal<float>(n, kind);
            check_literal<double>(n, kind);
        }
}
