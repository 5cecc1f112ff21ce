// test_buffers.cpp - the input buffers a context hands out: zero when made, and harmless to a view that
// outlives the context (src/process/input_buffers.hpp), on the HOST backend. The GPU strategies' buffers are
// checked in tests/test_gpu.cpp.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "process/input_buffers.hpp"
#include "reference.hpp"
#include "testing.hpp"

using test::Ctx;

namespace {

bool all_zero(const unsigned char *p, std::size_t bytes) {
    for (std::size_t i = 0; i < bytes; ++i)
        if (p[i] != 0) return false;
    return true;
}

double dot_of(const Ctx &c) {
    double r = -1;
    REQUIRE(cudot_dot(c.ctx, &r) == CUDOT_OK);
    return r;
}

}  // namespace

TEST_CASE("HOST: a new context's buffers read zero, whatever the last one held", "[api][buffers]") {
    for (std::size_t n : {std::size_t(1000), std::size_t(5000), std::size_t(30000), std::size_t(1) << 22}) {
        INFO("n = " << n);
        {
            Ctx old(n, CUDOT_F32, CUDOT_MEMORY_HOST);
            REQUIRE(old.status == CUDOT_OK);
            for (std::size_t i = 0; i < n; ++i) old.x<float>()[i] = old.y<float>()[i] = 7.0f;
            CHECK(dot_of(old) == 49.0 * n);
        }
        Ctx fresh(n, CUDOT_F32, CUDOT_MEMORY_HOST, 0, CUDOT_U8);  // y a byte mask: no stray bytes either
        REQUIRE(fresh.status == CUDOT_OK);
        CHECK(all_zero(fresh.x<unsigned char>(), n * sizeof(float)));
        CHECK(all_zero(fresh.y<unsigned char>(), n));
        CHECK(dot_of(fresh) == 0.0);
        for (std::size_t i = 0; i < 10; ++i) {
            fresh.x<float>()[i] = 1.0f;
            fresh.y<std::uint8_t>()[i] = 1;
        }
        CHECK(dot_of(fresh) == 10.0);  // only what was written counts
    }
}

TEST_CASE("HOST: a view used after deinit reads zeros, and its writes reach no other context", "[api][buffers]") {
    for (std::size_t n : {std::size_t(1000), std::size_t(1) << 22}) {
        INFO("n = " << n);
        cudot_config c = CUDOT_CONFIG_INIT;
        c.memory = CUDOT_MEMORY_HOST;
        cudot_ctx *gone = nullptr;
        REQUIRE(cudot_init(&gone, n, &c) == CUDOT_OK);
        void *vx = nullptr, *vy = nullptr;
        REQUIRE(cudot_get_inputs(gone, &vx, &vy) == CUDOT_OK);
        float *stale_x = static_cast<float *>(vx), *stale_y = static_cast<float *>(vy);
        for (std::size_t i = 0; i < n; ++i) stale_x[i] = stale_y[i] = 3.0f;
        REQUIRE(cudot_deinit(gone) == CUDOT_OK);

        // What a garbage-collected view of the old buffers would now see: zeros.
        volatile float *rx = stale_x, *ry = stale_y;
        CHECK(rx[0] == 0.0f);
        CHECK(rx[n - 1] == 0.0f);
        CHECK(ry[n / 2] == 0.0f);

        Ctx live(n, CUDOT_F32, CUDOT_MEMORY_HOST);
        REQUIRE(live.status == CUDOT_OK);
        CHECK(live.x<float>() != stale_x);
        CHECK(live.y<float>() != stale_y);
        for (std::size_t i = 0; i < n; ++i) {
            live.x<float>()[i] = 0.5f;
            live.y<float>()[i] = 2.0f;
        }
        const double before = dot_of(live);
        CHECK(before == double(n));
        // Writes through the stale views: no crash, and the live context does not see them.
        for (std::size_t i = 0; i < n; ++i) stale_x[i] = stale_y[i] = 99.0f;
        CHECK(rx[n - 1] == 99.0f);  // they land in pages of their own
        CHECK(dot_of(live) == before);
        CHECK(live.x<float>()[n - 1] == 0.5f);
    }
}

TEST_CASE("HOST: the ranges kept for stale views stay bounded over many short-lived contexts", "[api][buffers]") {
    using cudot::buffers::kKeptRanges;
    for (int i = 0; i < int(kKeptRanges); ++i) {  // 2 * kKeptRanges buffers retired: the bound is reached
        Ctx c(1000 + i % 7, CUDOT_F32, CUDOT_MEMORY_HOST);
        REQUIRE(c.status == CUDOT_OK);
        c.x<float>()[0] = 1.0f;
    }
    CHECK(cudot::testing::kept_buffer_ranges() == kKeptRanges);
#if defined(__linux__)
    std::ifstream maps("/proc/self/maps");
    std::size_t lines = 0;
    for (std::string line; std::getline(maps, line);) ++lines;
    CHECK(lines < kKeptRanges + 2000);  // far below vm.max_map_count's default, 65530
#endif
    Ctx after(1000, CUDOT_F32, CUDOT_MEMORY_HOST);  // and new contexts still come
    REQUIRE(after.status == CUDOT_OK);
    CHECK(all_zero(after.x<unsigned char>(), 1000 * sizeof(float)));
}
