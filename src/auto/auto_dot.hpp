// auto_dot.hpp - AUTO with a GPU: each dot on the CPU, on the GPU(s), or split between them, chosen
// from measured times. It sits above both backends and calls each through its own header.
#pragma once

#include <cstddef>

#include "../core/context.hpp"
#include "../core/rows.hpp"

namespace cudot {

// The canonical dot of the first n elements (n >= 1) of an AUTO context that has a GPU (ctx.hybrid).
cudot_status auto_dot(cudot_ctx &ctx, std::size_t n, double *result);
// cudot_dot_each_row on such a context: `rows` (a strided batch over its buffers) split between the GPUs
// (the first rows) and the CPU threads (the rest), the split moved after each call toward the share at
// which both finish together. Batches of fewer than kGpuMinElements elements stay on the CPU.
cudot_status auto_dot_rows(cudot_ctx &ctx, const Rows &rows, double *results);
// The GPUs' share of the tiles of the next split dot (tests: set_hybrid_share fixes it).
double auto_split_share(const cudot_ctx &ctx);
// How many leading elements of AUTO's managed buffers it moved into GPU memory (0: all on the host).
std::size_t auto_elements_on_gpus(const cudot_ctx &ctx);
// What AUTO decided on a context so far, and the times it judged by (microseconds): for tests and
// experiments (cudot::testing::auto_counts), which report which road dots took and, on managed buffers,
// why inputs did or did not move.
struct AutoCounts {
    unsigned long long sentinels = 0;         // sentinels moved into GPU memory
    unsigned long long stayed = 0;            // sentinels found there at the next dot (the whole inputs followed)
    unsigned long long not_stayed = 0;        // sentinels the host had written
    unsigned long long resident_kept = 0;     // dots read from GPU memory that kept the inputs there
    unsigned long long resident_noisy = 0;    // ... of them slower than the roads' estimate, judged noise
    unsigned long long resident_left = 0;     // dots after which the inputs went back to the host
    double reference_us = 0, last_check_us = 0;  // the sentinel's fastest GPU time, and its last judged one
    double resident_us = 0, last_resident_us = 0, best_road_us = 0;  // resident dots: fastest, last; the roads' best there
    // Every AUTO context: the dots each road took (0 the CPU, 1 the GPUs, 2 both: a split), and each
    // road's estimate (us) at the size class of the last road dot.
    unsigned long long roads[3] = {};
    double road_us[3] = {};
    // The CPU road's estimates (us) on the calling thread and on the pool at that size (0: not timed;
    // outside the band of sizes where either can win, the size alone decides).
    double where_us[2] = {};
};
AutoCounts auto_counts(const cudot_ctx &ctx);
// Frees what auto_dot learned about the context (at deinit).
void free_auto_state(cudot_ctx &ctx);

}  // namespace cudot
