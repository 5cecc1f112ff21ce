// split_dot.cu - dots whose tile partials are joined on the host: over several GPUs (each one run of
// tiles), the GPUs' share of AUTO's CPU+GPU split (cuda_backend.cu's queue_tiles), and
// cudot_tile_partials. Each GPU's run is a batch of one row on its stream (stream_dot.cu's queue_rows)
// whose kernel writes the run's partials into the mapped host array. Who computes a tile never changes
// its partial, so every way of splitting gives the same bits.
#include <algorithm>
#include <chrono>
#include <memory>
#include <new>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

// GPU g's run: its inputs where it reads them (PINNED in place: the run starts a whole number of tiles
// into the page-locked buffers, so its loads stay aligned), then its partials.
static cudot_status queue_tile_run(cudot_ctx &ctx, DeviceState &s, std::size_t k, std::size_t first, std::size_t n,
                              bool timed, bool prefetch, bool pinned_in_place) {
    ErrorSink err = ctx.sink();
    Gpu &g = s.gpus[k];
    const std::size_t sx = element_size(ctx.dtype), sy = element_size(ctx.y_dtype);
    const std::size_t begin = g.first_tile * order::kTile;
    const std::size_t elements = std::min(n, g.last_tile * order::kTile) - begin;
    CUDOT_CUDA_TRY_AS(err, use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
    if (timed) CUDOT_CUDA_TRY(err, cudaEventRecord(g.start, g.stream));
    if (ctx.memory == CUDOT_MEMORY_MANAGED && prefetch)
        if (cudot_status status = prefetch_run(ctx, g, first + begin, elements)) return status;
    const void *x = nullptr, *y = nullptr;
    InputCopy copies[2];
    unsigned copy_count = 0;
    if (ctx.memory == CUDOT_MEMORY_PINNED && pinned_in_place) {
        x = static_cast<const char *>(g.d_mapped_x) + begin * sx;
        y = static_cast<const char *>(g.d_mapped_y) + begin * sy;
    } else {
        cudot_status status = source(ctx, s, ctx.x, g.d_x, g.stage_x, sx, first + begin, elements, x, copies, copy_count);
        if (status == CUDOT_OK)
            status = source(ctx, s, ctx.y, g.d_y, g.stage_y, sy, first + begin, elements, y, copies, copy_count);
        if (status != CUDOT_OK) return status;
    }
    // PINNED's copies go with the kernel, in one submission of the stream's graph; a staging copy of
    // managed or mapped memory is queued before it (graphs' copy nodes take managed memory only on GPUs
    // with concurrent managed access).
    const bool pinned = ctx.memory == CUDOT_MEMORY_PINNED;
    for (unsigned i = 0; i < copy_count && !pinned; ++i)
        CUDOT_CUDA_TRY(err, cudaMemcpyAsync(copies[i].to, copies[i].from, copies[i].bytes, cudaMemcpyDefault, g.stream));
    const Operands run{elements, dense_operand(x, ctx.dtype), dense_operand(y, ctx.y_dtype)};
    StreamCall call = context_call(s, g);
    call.copies = copies;
    call.copy_count = pinned ? copy_count : 0;
    const bool exact = ctx.mode == CUDOT_MODE_EXACT;
    call.blocks = exact ? g.exact_blocks : g.blocks;
    // The run's tile partials at its tiles' place; in the exact mode its exact sum, unrounded, at the GPU's.
    call.gpu_partials = static_cast<char *>(g.d_partials) +
                        (exact ? k * kExactPartialBytes : g.first_tile * s.launcher.partial_bytes);
    if (cudot_status status = queue_rows(Rows::one(run, exact), g.device, call, s.pending[k], err)) return status;
    if (timed) CUDOT_CUDA_TRY(err, cudaEventRecord(g.stop, g.stream));
    return CUDOT_OK;
}

cudot_status queue_partials(cudot_ctx &ctx, DeviceState &s, std::size_t first, std::size_t n, std::size_t gpu_tiles,
                            bool timed, bool prefetch, bool pinned_in_place) {
    const std::size_t count = s.gpus.size();
    s.pending.assign(count, PendingRows{});
    for (std::size_t k = 0; k < count; ++k) {
        Gpu &g = s.gpus[k];
        g.first_tile = gpu_tiles * k / count;
        g.last_tile = gpu_tiles * (k + 1) / count;
        if (g.first_tile == g.last_tile) continue;
        if (cudot_status status = queue_tile_run(ctx, s, k, first, n, timed, prefetch, pinned_in_place)) {
            drop_each_row(s.pending.data(), s.pending.size());  // the runs queued before it
            return status;
        }
    }
    return CUDOT_OK;
}

cudot_status wait_partials(cudot_ctx &ctx, DeviceState &s, float *slowest_ms) {
    ErrorSink err = ctx.sink();
    cudot_status status = finish_each_row(ctx, s, s.pending.data(), s.pending.size());
    for (Gpu &g : s.gpus) {
        if (status != CUDOT_OK || !slowest_ms || g.first_tile == g.last_tile) continue;
        // The partials can land before the kernel has ended (and its stop event with it).
        CUDOT_CUDA_TRY_AS(err, use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
        status = wait_stream(s, g, err);
        float ms = 0;
        if (status == CUDOT_OK) CUDOT_CUDA_TRY(err, cudaEventElapsedTime(&ms, g.start, g.stop));
        *slowest_ms = std::max(*slowest_ms, ms);
    }
    return status;
}

cudot_status add_exact_partials(cudot_ctx &ctx, DeviceState &s, exact::Sum &sum) {
    for (std::size_t k = 0; k < s.gpus.size(); ++k) {
        const Gpu &g = s.gpus[k];
        if (g.first_tile == g.last_tile) continue;
        const auto *partial = reinterpret_cast<const exact::Partial *>(static_cast<const char *>(s.h_partials) +
                                                                        k * kExactPartialBytes);
        if (!exact::add_partial(sum, *partial))
            return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU %d left no exact partial where its run's should be",
                        g.device);
    }
    return CUDOT_OK;
}

cudot_status multi_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool prefetch, double *result) {
    const std::size_t tiles = order::tile_count(n);
    const bool in_place = ctx.memory == CUDOT_MEMORY_PINNED && pinned_in_place(s, n);
    const auto start = std::chrono::steady_clock::now();
    cudot_status status = queue_partials(ctx, s, 0, n, tiles, false, prefetch, in_place);
    if (status == CUDOT_OK) status = wait_partials(ctx, s, nullptr);
    if (status != CUDOT_OK) return status;
    if (ctx.memory == CUDOT_MEMORY_PINNED)
        pinned_took(s, n, in_place, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    if (ctx.mode == CUDOT_MODE_EXACT) {
        std::unique_ptr<exact::Sum> sum(new (std::nothrow) exact::Sum);
        if (!sum) return fail(ctx.sink(), CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for an exact sum");
        exact::clear(*sum);
        if (cudot_status joined = add_exact_partials(ctx, s, *sum)) return joined;
        *result = exact::round(*sum);
        return CUDOT_OK;
    }
    *result = order::join_packed_partials(types::kind_of(ctx.dtype, ctx.y_dtype), s.h_partials, tiles);
    return CUDOT_OK;
}

}  // namespace cuda
}  // namespace cudot
