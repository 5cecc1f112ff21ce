// split_dot.cu - dots whose tile partials are joined on the host: over several GPUs (each one run of
// tiles), the GPUs' share of AUTO's CPU+GPU split (cuda_backend.cu's queue_tiles), and
// cudot_tile_partials. Who computes a tile never changes its partial, so every way of splitting gives the
// same bits.
#include <algorithm>
#include <chrono>
#include <memory>
#include <new>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

cudot_status queue_partials(cudot_ctx &ctx, DeviceState &s, std::size_t first, std::size_t n, std::size_t gpu_tiles,
                            bool timed, bool prefetch, bool pinned_in_place) {
    ErrorSink err = ctx.sink();
    const std::size_t count = s.gpus.size(), sx = element_size(ctx.dtype), sy = element_size(ctx.y_dtype);
    for (std::size_t k = 0; k < count; ++k) {
        Gpu &g = s.gpus[k];
        g.first_tile = gpu_tiles * k / count;
        g.last_tile = gpu_tiles * (k + 1) / count;
        if (g.first_tile == g.last_tile) continue;
        const std::size_t begin = g.first_tile * order::kTile;
        const std::size_t elements = std::min(n, g.last_tile * order::kTile) - begin;
        CUDOT_CUDA_TRY_AS(err, use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
        if (timed) CUDOT_CUDA_TRY(err, cudaEventRecord(g.start, g.stream));
        cudot_status status = CUDOT_OK;
        if (ctx.memory == CUDOT_MEMORY_MANAGED && prefetch) status = prefetch_run(ctx, g, first + begin, elements);
        if (status != CUDOT_OK) return status;
        // PINNED copied: each GPU's buffers hold its run at offset 0 (source() copies it there). PINNED in
        // place: the run starts a whole number of tiles into the page-locked buffers, so its loads stay aligned.
        const void *x = nullptr, *y = nullptr;
        if (ctx.memory == CUDOT_MEMORY_PINNED && pinned_in_place) {
            x = static_cast<const char *>(g.d_mapped_x) + begin * sx;
            y = static_cast<const char *>(g.d_mapped_y) + begin * sy;
        } else {
            status = source(ctx, s, g, ctx.x, g.d_x, g.stage_x, sx, first + begin, elements, g.stream, x);
            if (status == CUDOT_OK)
                status = source(ctx, s, g, ctx.y, g.d_y, g.stage_y, sy, first + begin, elements, g.stream, y);
            if (status != CUDOT_OK) return status;
        }
        const Operands run{elements, dense_operand(x, ctx.dtype), dense_operand(y, ctx.y_dtype)};
        KernelCall call;
        if (ctx.mode == CUDOT_MODE_EXACT) {  // the run's exact sum, unrounded, in the GPU's own place
            char *partial = static_cast<char *>(g.d_partials) + k * kExactPartialBytes;
            exact_launcher_for(ctx.dtype, ctx.y_dtype).prepare(exact_launch(run, g.exact_blocks, g.scratch, nullptr, partial),
                                                               call);
        } else {
            char *run_partials = static_cast<char *>(g.d_partials) + g.first_tile * s.launcher.partial_bytes;
            s.launcher.prepare(dot_launch(run, g.blocks, run_partials), call);
        }
        status = launch(call, g.device, g.stream, err);
        if (status != CUDOT_OK) return status;
        if (timed) CUDOT_CUDA_TRY(err, cudaEventRecord(g.stop, g.stream));
    }
    return CUDOT_OK;
}

cudot_status wait_partials(cudot_ctx &ctx, DeviceState &s, float *slowest_ms) {
    ErrorSink err = ctx.sink();
    for (Gpu &g : s.gpus) {
        if (g.first_tile == g.last_tile) continue;
        CUDOT_CUDA_TRY_AS(err, use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
        const cudot_status waited = wait_stream(s, g, err);
        if (waited != CUDOT_OK) return waited;
        if (slowest_ms) {
            float ms = 0;
            CUDOT_CUDA_TRY(err, cudaEventElapsedTime(&ms, g.start, g.stop));
            *slowest_ms = std::max(*slowest_ms, ms);
        }
    }
    return CUDOT_OK;
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
