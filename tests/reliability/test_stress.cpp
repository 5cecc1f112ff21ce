// test_stress.cpp - the HOST backend under concurrency stress (stress.hpp): 32 threads, private and
// shared contexts, init/dot/deinit interleaved, every result checked exactly. Runs everywhere; must be
// clean under ThreadSanitizer (-DCUDOT_WITH_CUDA=OFF -DCUDOT_SANITIZE=thread).
// CUDOT_STRESS_OPS, CUDOT_STRESS_THREADS and CUDOT_STRESS_SEED override the defaults.
#include <catch2/catch.hpp>

#include "stress.hpp"

TEST_CASE("stress: HOST 32 threads private and shared contexts", "[reliability][stress][host]") {
    stress::Options o;
    o.memories = {CUDOT_MEMORY_HOST};
    o.threads = 32;
    o.ops = 10000;
    stress::run_and_check(o);
}

// Every HOST context goes through the thread pool, so the 32 callers contend for its one job slot.
TEST_CASE("stress: HOST 32 threads all dots on the thread pool", "[reliability][stress][host]") {
    stress::Options o;
    o.memories = {CUDOT_MEMORY_HOST};
    o.threads = 32;
    o.ops = 2500;
    o.parallel_percent = 100;
    o.seed = 2;
    stress::run_and_check(o);
}
