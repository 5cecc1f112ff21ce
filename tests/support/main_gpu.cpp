// main_gpu.cpp - main() of the GPU test programs, with Catch2's implementation. Every case is checked
// for process state it leaves changed, the current CUDA device included (isolation.hpp): a whole run must
// pass as each case alone does.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>

#include "cudot.h"
#include "isolation.hpp"
#include "testing.hpp"

// Exits 77 ("skipped" to CTest) when no GPU is usable, unless Catch2 is only listing tests.
int main(int argc, char **argv) {
    bool listing = false;
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--list", 6) == 0) listing = true;
    if (!listing) {
        cudot_config config = CUDOT_CONFIG_INIT;
        config.memory = CUDOT_MEMORY_PINNED;
        cudot_ctx *ctx = nullptr;
        if (cudot_init(&ctx, 1, &config) != CUDOT_OK) {
            std::printf("SKIPPED: no usable GPU: %s\n", cudot_last_error(nullptr));
            return 77;
        }
        cudot_deinit(ctx);
    }
#if defined(CUDOT_TESTS_WITH_CUDA)
    test::check_after_every_case(true);
#else
    test::check_after_every_case(false);
#endif
    const int failed = Catch::Session().run(argc, argv);
    // What dots of own arrays keep until the process ends, freed so that compute-sanitizer's leak check
    // at exit reports only real leaks.
    cudot::testing::release_own_array_state();
    return failed;
}
