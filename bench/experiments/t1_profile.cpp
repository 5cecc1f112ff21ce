// t1_profile.cpp - a program for Nsight Compute (issue 24, T1): MANAGED resident dots at the T1 block's
// sizes, so that ncu can say how long the dot kernel runs on the GPU and where its warps wait. The
// T1 block times a whole dot (launch, kernel, the host's poll of the result) against an empty kernel's
// launch + sync; the kernel's own duration at 2^10 (one tile, one block) and at 2^20 (128 tiles: 128
// blocks, then the device join: each block's fence and ticket, the last block's read and tree of the
// partials) splits the dot's time into what the GPU runs and what the launch and the wait add.
// For each of f32 and f64 and n = 2^10, 2^13, 2^14, 2^17, 2^20: a MANAGED context filled once, then
// warm + profiled dots, all of which ncu profiles (the first ones bring the pages to the GPU: read the
// last ones of each size). Every result is checked against a double reference (small integer inputs:
// every sum is exact in any order).
//
// Build (from the repository root, after the build in build/):
//   g++ -O2 -std=c++17 -Iinclude bench/experiments/t1_profile.cpp -Lbuild -lcudot -Wl,-rpath,'$ORIGIN/..' \
//       -o build/experiments/t1_profile
// Run on a GPU machine, e.g.:
//   ncu --clock-control none --kernel-name regex:dot_kernel --section SpeedOfLight --section WarpStateStats \
//       --section LaunchStats build/experiments/t1_profile 3 2
//   usage: t1_profile [warm = 3] [profiled = 2]
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

#include "cudot.h"

int main(int argc, char **argv) {
    const int warm = argc > 1 ? std::atoi(argv[1]) : 3, profiled = argc > 2 ? std::atoi(argv[2]) : 2;
    bool all_right = true;
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg : {10, 13, 14, 17, 20}) {
            const std::size_t n = std::size_t(1) << lg;
            cudot_config cfg = CUDOT_CONFIG_INIT;
            cfg.dtype = dtype;
            cfg.memory = CUDOT_MEMORY_MANAGED;
            cudot_ctx *ctx = nullptr;
            void *x = nullptr, *y = nullptr;
            if (cudot_init(&ctx, n, &cfg) != CUDOT_OK || cudot_get_inputs(ctx, &x, &y) != CUDOT_OK) {
                std::printf("cudot_init: %s\n", cudot_last_error(nullptr));
                return 1;
            }
            double want = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const int a = static_cast<int>(i % 17) - 8, b = static_cast<int>(i % 13) - 6;
                if (dtype == CUDOT_F32) static_cast<float *>(x)[i] = a, static_cast<float *>(y)[i] = b;
                else static_cast<double *>(x)[i] = a, static_cast<double *>(y)[i] = b;
                want += double(a) * b;
            }
            double r = 0;
            bool right = true;
            for (int k = 0; k < warm + profiled; ++k)
                right = right && cudot_dot(ctx, &r) == CUDOT_OK && r == want;
            std::printf("%s n=2^%d: %d dots, %s\n", dtype == CUDOT_F32 ? "f32" : "f64", lg, warm + profiled,
                        right ? "every result right" : "WRONG");
            all_right = all_right && right;
            cudot_deinit(ctx);
        }
    return all_right ? 0 : 1;
}
