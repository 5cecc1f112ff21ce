// threads.hpp - concurrency checks shared by the CPU and GPU test programs.
#pragma once

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "reference.hpp"

namespace test {

// Several threads, each with its own context, init/fill/dot/deinit in a loop. Catch2's assertion
// macros are not thread-safe, so threads count failures and the main thread checks the count.
inline void check_private_contexts(int32_t memory, int threads, int rounds) {
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r) {
                const std::size_t n = 1000 + 7919 * static_cast<std::size_t>(t * rounds + r);
                Ctx c(n, (t + r) % 2 ? CUDOT_F64 : CUDOT_F32, memory);
                if (c.status != CUDOT_OK) { ++failures; continue; }
                bool f64 = (t + r) % 2;
                for (std::size_t i = 0; i < n; ++i) {
                    if (f64) { c.x<double>()[i] = 2.0; c.y<double>()[i] = 0.5; }
                    else { c.x<float>()[i] = 2.0f; c.y<float>()[i] = 0.5f; }
                }
                double v = -1;
                if (cudot_dot(c.ctx, &v) != CUDOT_OK || v != static_cast<double>(n)) ++failures;
            }
        });
    for (auto &th : pool) th.join();
    CHECK(failures == 0);
}

// Many threads calling dot on one shared context at once: calls are serialized, all results equal.
inline void check_shared_context(int32_t memory, int threads, int calls) {
    const std::size_t n = 300000;
    Ctx c(n, CUDOT_F64, memory);
    INFO(c.init_error);
    REQUIRE(c.status == CUDOT_OK);
    fill_random(c.x<double>(), c.y<double>(), n, 3);
    const double expected = c.dot();
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&] {
            for (int i = 0; i < calls; ++i) {
                double v = 0;
                if (cudot_dot(c.ctx, &v) != CUDOT_OK || bits(v) != bits(expected)) ++failures;
                if (cudot_dot_n(c.ctx, 1, &v) != CUDOT_OK) ++failures;
            }
        });
    for (auto &th : pool) th.join();
    CHECK(failures == 0);
}

}  // namespace test
