// cuda_backend.cu - the GPU strategies' entry points (cuda_backend.hpp): which orchestration a dot takes.
//
// A context runs on one GPU or, with config->device == CUDOT_DEVICE_ALL, on every visible GPU. Every
// GPU operation is a batch of rows on the GPU's stream, queued as a dot of own arrays is
// (stream_dot.cu's queue_rows). One GPU: a dot is a batch of one row, whose last block joins the partials
// on the device (one_gpu_dot.cu). Several GPUs, AUTO's CPU+GPU split and cudot_tile_partials: each GPU's
// run of tiles is a batch of one row whose partials go into a mapped host array, and the host joins them
// (split_dot.cu). Rows: each GPU a run of them (context_rows.cu). MANAGED decides per dot whether to
// migrate first (managed_policy.cu). AUTO, which also has the CPU to choose from, sits
// above both backends (src/auto/auto_dot.cpp) and comes here for the GPU's roads.
// What each strategy allocates: buffers.cu; probing: devices.cu; the launches: launch.cu and kernels/.
// Whose CUDA context the work runs in: caller_state.cu; how long a wait may last, and GPUs that ran
// past it: device_health.cu.
#include <algorithm>
#include <vector>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "device_health.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

// A context's wait on GPU g's stream: bounded by the call's bound; one that runs out leaves the context
// hung, able only to be destroyed (its kernel may still run).
cudot_status wait_stream(DeviceState &s, Gpu &g, ErrorSink err) {
    GpuWait w;
    w.device = g.device;
    w.stream = g.stream;
    w.deadline = deadline_in(s.wait_bound_ms);
    w.bound_ms = s.wait_bound_ms;
    w.what = "the GPU's work";
    w.then = " (cudot_config.wait_ms): the context can only be destroyed now";
    w.gave_up = &s.hung;
    return wait_gpu(w, nullptr, err);
}

static cudot_status dot_once(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    if (ctx.memory == CUDOT_MEMORY_MANAGED) return managed_dot(ctx, s, n, result);
    return s.gpus.size() == 1 ? single_dot(ctx, s, n, false, result) : multi_dot(ctx, s, n, false, result);
}

// After a failed operation: let whatever it queued finish, so the next call (or deinit) never overlaps
// it. Waits are bounded like the operation's own: a GPU that does not finish is marked stuck and left
// alone. The operation's own error was already reported.
static void settle_after_failure(DeviceState &s) {
    for (Gpu &g : s.gpus) {
        if (!g.stream || s.hung || is_stuck(g.device)) continue;
        if (use_primary_context(g.device) != cudaSuccess) continue;
        // A capture a failure interrupted must end before the stream can be used again.
        cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        if (note(cudaStreamIsCapturing(g.stream, &capturing)) == cudaSuccess && capturing != cudaStreamCaptureStatusNone) {
            cudaGraph_t graph = nullptr;
            if (note(cudaStreamEndCapture(g.stream, &graph)) == cudaSuccess && graph) note(cudaGraphDestroy(graph));
        }
        (void)wait_stream(s, g, ErrorSink{nullptr, 0});  // the failure being settled keeps its message
    }
}

// A context whose GPU did not finish in time takes no more work (its kernel may still run), nor does
// any context on a GPU that is stuck behind another context's work.
static cudot_status refuse_if_stuck(cudot_ctx &ctx, const DeviceState &s, const char *what) {
    if (s.hung)
        return fail(ctx.sink(), CUDOT_ERROR_CUDA,
                    "%s: an earlier call on this context gave up waiting for the GPU (cudot_config.wait_ms): the "
                    "context can only be destroyed (cudot_deinit)", what);
    for (const Gpu &g : s.gpus)
        if (is_stuck(g.device)) return refuse_stuck(ctx.sink(), g.device, what);
    return CUDOT_OK;
}

static std::size_t input_bytes(const cudot_ctx &ctx, std::size_t n) {
    return n * (element_size(ctx.dtype) + element_size(ctx.y_dtype));
}

// Runs op(s) as every GPU call of a context runs: refused on a stuck GPU, waits bounded for n elements'
// bytes, settled after a failure, the caller's CUDA context restored.
template <class Op> static cudot_status in_own_context(cudot_ctx &ctx, std::size_t n, const char *what, Op op) {
    CallerCudaState caller;
    DeviceState &s = *ctx.gpu;
    cudot_status status = refuse_if_stuck(ctx, s, what);
    if (status == CUDOT_OK) {
        s.wait_bound_ms = wait_bound_ms(ctx, input_bytes(ctx, n));
        InFlight in_flight(s);
        status = op(s);
        if (status != CUDOT_OK) settle_after_failure(s);
    }
    return caller.restore(status, ctx.sink());
}

cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result) {
    return in_own_context(ctx, n, "cudot_dot", [&](DeviceState &s) { return dot_once(ctx, s, n, result); });
}

cudot_status tile_partials(cudot_ctx &ctx, std::size_t first, std::size_t n, void **partials) {
    return in_own_context(ctx, n, "cudot_tile_partials", [&](DeviceState &s) {
        // MANAGED: one bulk migration beats page faults. AUTO's managed buffers are read where they are
        // (mapped for the GPUs): only auto_dot.cpp moves them.
        cudot_status status = queue_partials(ctx, s, first, n, order::tile_count(n), false, !s.sync_after_dot && !ctx.hybrid);
        if (status == CUDOT_OK) status = wait_partials(ctx, s, nullptr);
        if (status == CUDOT_OK) *partials = s.h_partials;
        return status;
    });
}

cudot_status dot_rows(cudot_ctx &ctx, const Rows &rows, double *results) {
    return in_own_context(ctx, rows.count * rows.n, "cudot_dot_each_row", [&](DeviceState &s) {
        const auto run = [&](bool prefetch) {
            const cudot_status queued = queue_each_row(ctx, s, rows, results, false, prefetch);
            return queued != CUDOT_OK ? queued : finish_each_row(ctx, s, s.pending.data(), s.pending.size());
        };
        if (ctx.memory != CUDOT_MEMORY_MANAGED) return run(false);
        // The span of the rows' bytes, gaps between their first n elements included.
        const std::size_t elements = (rows.count - 1) * ctx.row_length + rows.n;
        return managed_run(ctx, s, elements * (element_size(ctx.dtype) + element_size(ctx.y_dtype)), run);
    });
}

cudot_status exact_tile_partial(cudot_ctx &ctx, std::size_t first, std::size_t n, exact::Sum &sum) {
    return in_own_context(ctx, n, "cudot_tile_partials", [&](DeviceState &s) {
        cudot_status status = queue_partials(ctx, s, first, n, order::tile_count(n), false, !s.sync_after_dot && !ctx.hybrid);
        if (status == CUDOT_OK) status = wait_partials(ctx, s, nullptr);
        if (status == CUDOT_OK) status = add_exact_partials(ctx, s, sum);
        return status;
    });
}

cudot_status add_gpu_exact_sums(cudot_ctx &ctx, exact::Sum &sum) { return add_exact_partials(ctx, *ctx.gpu, sum); }

void *host_partials(cudot_ctx &ctx) { return ctx.gpu ? ctx.gpu->h_partials : nullptr; }

cudot_status queue_tiles(cudot_ctx &ctx, std::size_t n, std::size_t gpu_tiles) {
    return in_own_context(ctx, n, "cudot_dot", [&](DeviceState &s) {
        cudot_status status = queue_partials(ctx, s, 0, n, gpu_tiles, true, false);
        if (status == CUDOT_OK) s.queued.emplace(s);  // in flight until wait_tiles
        return status;
    });
}

cudot_status wait_tiles(cudot_ctx &ctx, std::size_t n, float *gpu_ms) {
    return in_own_context(ctx, n, "cudot_dot", [&](DeviceState &s) {
        const cudot_status status = wait_partials(ctx, s, gpu_ms);
        s.queued.reset();
        return status;
    });
}

cudot_status queue_gpu_rows(cudot_ctx &ctx, const Rows &rows, double *results) {
    return in_own_context(ctx, rows.count * rows.n, "cudot_dot_each_row", [&](DeviceState &s) {
        cudot_status status = queue_each_row(ctx, s, rows, results, true, false);
        if (status == CUDOT_OK) s.queued.emplace(s);  // in flight until wait_gpu_rows
        return status;
    });
}

cudot_status wait_gpu_rows(cudot_ctx &ctx, std::size_t elements, float *gpu_ms) {
    return in_own_context(ctx, elements, "cudot_dot_each_row", [&](DeviceState &s) {
        std::vector<bool> ran(s.gpus.size(), false);  // s.pending has one entry per GPU
        for (std::size_t i = 0; i < s.pending.size(); ++i) ran[i] = s.pending[i].queued;
        cudot_status status = finish_each_row(ctx, s, s.pending.data(), s.pending.size());
        *gpu_ms = 0;
        // The results can land before the kernel has ended (and its stop event with it): each GPU's stream
        // is waited for (bounded) before its time is read.
        for (std::size_t i = 0; i < s.gpus.size() && status == CUDOT_OK; ++i) {
            if (!ran[i]) continue;
            Gpu &g = s.gpus[i];
            cudaError_t e = checked(use_primary_context(g.device));
            if (e != cudaSuccess) {
                status = cuda_fail(ctx.sink(), e, "cuCtxSetCurrent (the GPU's primary context)");
                break;
            }
            status = wait_stream(s, g, ctx.sink());
            float ms = 0;
            if (status == CUDOT_OK && (e = checked(cudaEventElapsedTime(&ms, g.start, g.stop))) != cudaSuccess)
                status = cuda_fail(ctx.sink(), e, "cudaEventElapsedTime (the GPU's share of the rows)");
            *gpu_ms = std::max(*gpu_ms, ms);
        }
        s.pending.clear();
        s.queued.reset();
        return status;
    });
}

cudot_status auto_gpu_dot(cudot_ctx &ctx, std::size_t n, bool move, double *result) {
    return in_own_context(ctx, n, "cudot_dot", [&](DeviceState &s) { return auto_gpu_dot(ctx, s, n, move, result); });
}

cudot_status auto_to_host(cudot_ctx &ctx, std::size_t n) {
    return in_own_context(ctx, n, "cudot_dot", [&](DeviceState &s) { return auto_to_host(ctx, s, n); });
}

}  // namespace cuda
}  // namespace cudot
