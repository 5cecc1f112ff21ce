// cpu_backend.hpp - the HOST strategy: aligned host buffers, tile partials on the thread pool.
#pragma once

#include <cstddef>

#include "../core/context.hpp"
#include "../core/operands.hpp"
#include "../core/path_chooser.hpp"
#include "../core/rows.hpp"
#include "../core/types.hpp"

namespace cudot {
namespace cpu {

// Allocates ctx.x, ctx.y (ctx.capacity elements of ctx.dtype and ctx.y_dtype) and a dot's scratch.
cudot_status create(cudot_ctx &ctx, ErrorSink err);
void destroy(cudot_ctx &ctx);
// The canonical dot of the first n elements of x and y (n <= capacity).
cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result);

// Whether a dot runs on the calling thread or on the pool, where either can win: measured per size class
// by a context (or by the caller of the functions below; nullptr: decided by size alone).
enum Where { kCaller, kPool, kWheres };
using WhereChooser = PathChooser<kWheres>;

// The canonical dot of two operand views of host memory (ops.n >= 1); `partials` holds the tile count's
// packed partials. The road every CPU dot takes: a context's buffers, a caller's arrays, AUTO's CPU share.
// OUT_OF_MEMORY only when a thread cannot get its gather buffers (views that are not dense).
cudot_status dot(const Operands &ops, void *partials, const PoolUse &pool, WhereChooser *chooser, double *result);
// What dot() is made of, for AUTO's CPU+GPU split (src/auto/auto_dot.cpp) and the tile partials: the
// partials of tiles [first, last), on the pool when worth it, packed (each the size of the pair's
// accumulator, unlike cudot_tile_partials's CUDOT_PARTIAL_BYTES slots); order::join_packed_partials
// joins them.
cudot_status compute_packed_partials(const Operands &ops, std::size_t first, std::size_t last, void *partials,
                                     const PoolUse &pool, WhereChooser *chooser = nullptr);
// results[i] = the dot of rows.row(i), for every row, with the bits of that row's own dot(). `partials`
// holds the packed partials of the longest row's tiles (rows computed inside pool tasks use buffers of
// their own). OUT_OF_MEMORY only when a thread cannot get its gather buffers.
cudot_status dot_rows(const Rows &rows, double *results, void *partials);
// The library's use of the pool for dots of this pair of element types: every thread, from the size at
// which sharing pays, measured where either way can win.
PoolUse pool_use(int32_t x_dtype, int32_t y_dtype);
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
