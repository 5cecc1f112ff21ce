// test_threads.cpp - the HOST backend under concurrent use.
#include <catch2/catch.hpp>

#include "threads.hpp"

TEST_CASE("HOST: private contexts on 8 threads", "[host][threads][slow-under-checkers]") {
    test::check_private_contexts(CUDOT_MEMORY_HOST, 8, 25);
}

TEST_CASE("HOST: one context shared by 8 threads", "[host][threads]") {
    test::check_shared_context(CUDOT_MEMORY_HOST, 8, 50);
}

TEST_CASE("HOST: failed inits on many threads keep their own messages", "[host][threads]") {
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < 8; ++t)
        pool.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                cudot_config c = CUDOT_CONFIG_INIT;
                c.dtype = 100 + t;  // each thread's own bad value
                cudot_ctx *ctx = nullptr;
                if (cudot_init(&ctx, 10, &c) != CUDOT_ERROR_INVALID_ARGUMENT) ++failures;
                std::string expected = "config->dtype " + std::to_string(100 + t) + " ";
                if (std::string(cudot_last_error(nullptr)).rfind(expected, 0) != 0) ++failures;
            }
        });
    for (auto &th : pool) th.join();
    CHECK(failures == 0);
}
