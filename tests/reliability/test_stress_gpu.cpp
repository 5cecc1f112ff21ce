// test_stress_gpu.cpp - the concurrency stress (stress.hpp) on the GPU strategies: 32 threads, private
// and shared contexts in a mix of PINNED, MAPPED, MANAGED and AUTO, every result checked exactly (the
// random-valued shared contexts bit for bit against a single-threaded HOST dot). Without a usable GPU
// the program exits 77 (tests/support/main_gpu.cpp), which CTest reports as skipped.
#include <catch2/catch.hpp>

#include "stress.hpp"

TEST_CASE("stress: GPU 32 threads PINNED MAPPED MANAGED AUTO mix", "[reliability][stress][gpu]") {
    stress::Options o;
    o.memories = {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO};
    o.threads = 32;
    o.ops = 10000;
    o.seed = 3;
    stress::run_and_check(o);
}

// GPU and HOST contexts side by side: the thread pool and the GPU streams busy at the same time.
TEST_CASE("stress: GPU and HOST 32 threads side by side", "[reliability][stress][gpu]") {
    stress::Options o;
    o.memories = {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_HOST, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_HOST, CUDOT_MEMORY_MANAGED,
                  CUDOT_MEMORY_AUTO};
    o.threads = 32;
    o.ops = 5000;
    o.seed = 4;
    stress::run_and_check(o);
}
