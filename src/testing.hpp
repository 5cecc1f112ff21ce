// testing.hpp - knobs for the test suite only. Not exported from the shared library: tests that use
// them link the static library. Each must be set before the calls it should affect.
#pragma once

#include "cudot.h"

namespace cudot {
namespace testing {
// Caps the CPU threads one dot on ctx may use (0: all).
void set_cpu_threads(cudot_ctx *ctx, unsigned threads);
// Sends even tiny dots on ctx through the thread pool.
void set_cpu_always_parallel(cudot_ctx *ctx, bool on);
// Forces the dot kernel's grid size on ctx (0: the normal choice).
void set_gpu_blocks(cudot_ctx *ctx, unsigned blocks);
// Fixes the share of tiles the GPU takes in an AUTO (hybrid) dot: 0..1; negative: adapt (the default).
void set_hybrid_share(cudot_ctx *ctx, double share);
// The share the next hybrid dot would use (for tests of the adaptation).
double hybrid_share(const cudot_ctx *ctx);
}  // namespace testing
}  // namespace cudot
