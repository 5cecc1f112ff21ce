// auto_dot.hpp - AUTO with a GPU: each dot on the CPU, on the GPU(s), or split between them, chosen
// from measured times. It sits above both backends and calls each through its own header.
#pragma once

#include <cstddef>

#include "context.hpp"

namespace cudot {

// The canonical dot of the first n elements (n >= 1) of an AUTO context that has a GPU (ctx.hybrid).
cudot_status auto_dot(cudot_ctx &ctx, std::size_t n, double *result);
// The GPUs' share of the tiles of the next split dot (tests: set_hybrid_share fixes it).
double auto_split_share(const cudot_ctx &ctx);
// How many leading elements of AUTO's managed buffers it moved into GPU memory (0: all on the host).
std::size_t auto_elements_on_gpus(const cudot_ctx &ctx);
// Frees what auto_dot learned about the context (at deinit).
void free_auto_state(cudot_ctx &ctx);

}  // namespace cudot
