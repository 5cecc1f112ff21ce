// cpu_backend.hpp - the HOST strategy: aligned host buffers, tile partials on the thread pool.
#pragma once

#include <cstddef>

#include "../context.hpp"
#include "../types.hpp"

namespace cudot {
namespace cpu {

// Allocates ctx.x, ctx.y (ctx.capacity elements of ctx.dtype and ctx.y_dtype) and a dot's scratch.
cudot_status create(cudot_ctx &ctx, ErrorSink err);
void destroy(cudot_ctx &ctx);
// The canonical dot of the first n elements of x and y (n <= capacity).
cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result);

// The pieces dot() is made of, for AUTO's CPU and CPU+GPU paths (src/cuda/auto_policy.cu, split_dot.cu)
// and cudot_tile_partials (api.cpp):
// the partials of tiles [first, last) of an n-element dot, on the pool when worth it, packed (each the
// size of the pair's accumulator, unlike cudot_tile_partials's CUDOT_PARTIAL_BYTES slots)...
void compute_packed_partials(int32_t x_dtype, int32_t y_dtype, const void *x, const void *y, std::size_t n,
                             std::size_t first, std::size_t last, void *partials, const TestHooks &hooks);
// ...and the canonical join of `tiles` such packed partials (of the pair's kind) into the result.
double join_packed_partials(types::Kind kind, const void *partials, std::size_t tiles);
// A HOST context's scratch for the partials of up to its capacity's tiles (cudot_tile_partials).
void *partial_scratch(cudot_ctx &ctx);

// Page-aligned host memory that is refused (nullptr) rather than overcommitted beyond physical_memory().
void *allocate_host(std::size_t bytes);
void free_host(void *p);
// The memory this process may use in bytes: physical RAM, or the container's (cgroup's) limit where
// that is lower (0 if unknown).
std::size_t physical_memory();

}  // namespace cpu
}  // namespace cudot
