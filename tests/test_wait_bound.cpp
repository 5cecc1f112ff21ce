// test_wait_bound.cpp - the default bound of a GPU wait grows with the bytes a call reads, so that no
// healthy dot of any size the library accepts runs out of it (issue 22: a 1 TiB MAPPED F64 context read
// at 25 GB/s takes about 44 s, and a fixed 60 s bound is too close; at a slow link it is far beyond).
#include <catch2/catch.hpp>

#include <cstdint>

#include "cudot.h"
#include "testing.hpp"

TEST_CASE("the default GPU wait bound covers a healthy dot of any size", "[api][wait]") {
    using cudot::testing::default_gpu_wait_ms;
    // Small dots keep the documented minimum.
    CHECK(default_gpu_wait_ms(0) == CUDOT_DEFAULT_WAIT_MS);
    CHECK(default_gpu_wait_ms(std::size_t(8) << 20) < CUDOT_DEFAULT_WAIT_MS + 1000);
    // A 1 TiB F64 context (2^37 elements of x and of y: 2 TiB read) over links of 25 GB/s and 1 GB/s.
    const std::size_t bytes = std::size_t(2) << 40;
    const double at_25 = static_cast<double>(bytes) / 25e9 * 1000, at_1 = static_cast<double>(bytes) / 1e9 * 1000;
    CHECK(static_cast<double>(default_gpu_wait_ms(bytes)) > 10 * at_25);
    CHECK(static_cast<double>(default_gpu_wait_ms(bytes)) > at_1);
    // It grows with the bytes.
    CHECK(default_gpu_wait_ms(bytes) > default_gpu_wait_ms(bytes / 2));
}
