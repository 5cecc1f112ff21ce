// cuda_backend.cu - the GPU strategies' entry points (cuda_backend.hpp): which orchestration a dot takes.
//
// A context runs on one GPU or, with config->device == CUDOT_DEVICE_ALL, on every visible GPU. One GPU:
// each dot is a single launch whose last block joins the partials on the device (one_gpu_dot.cu).
// Several GPUs, AUTO's CPU+GPU split and cudot_tile_partials: each GPU computes the partials of one
// run of tiles into a mapped host array, and the host joins them (split_dot.cu). MANAGED decides per
// dot whether to migrate first (managed_policy.cu); AUTO decides per dot which path (auto_policy.cu).
// What each strategy allocates: buffers.cu; probing: devices.cu; the kernels: launch.cu.
#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

static cudot_status dot_once(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    if (ctx.hybrid) return auto_dot(ctx, s, n, result);
    if (ctx.memory == CUDOT_MEMORY_MANAGED) return managed_dot(ctx, s, n, result);
    return s.gpus.size() == 1 ? single_dot(ctx, s, n, false, result) : multi_dot(ctx, s, n, false, result);
}

// A failed operation may have left work queued; wait for it so the next call (or deinit) never overlaps
// it, and reset the join's ticket, which a dot cut short may have left counting. Its own error, if any,
// was already reported.
static void drain(DeviceState &s) {
    for (Gpu &g : s.gpus) {
        if (!g.stream) continue;
        (void)set_device(g.device);
        // A capture a failure interrupted must end before the stream can be used again.
        cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        if (note(cudaStreamIsCapturing(g.stream, &capturing)) == cudaSuccess && capturing != cudaStreamCaptureStatusNone) {
            cudaGraph_t graph = nullptr;
            if (note(cudaStreamEndCapture(g.stream, &graph)) == cudaSuccess && graph) note(cudaGraphDestroy(graph));
        }
        note(cudaStreamSynchronize(g.stream));
        // The ticket, which a dot that stopped half way may have left counting.
        if (g.scratch && note(cudaMemsetAsync(g.scratch, 0, sizeof(unsigned), g.stream)) == cudaSuccess)
            note(cudaStreamSynchronize(g.stream));
    }
}

// A context whose GPU did not finish in time takes no more work (its kernel may still run).
static cudot_status refuse_if_hung(cudot_ctx &ctx, const DeviceState &s) {
    if (!s.hung) return CUDOT_OK;
    return fail(ctx.sink(), CUDOT_ERROR_CUDA,
                "an earlier call on this context gave up waiting for the GPU (cudot_config.wait_ms): the context "
                "can only be destroyed (cudot_deinit)");
}

cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result) {
    CallerCudaState caller;
    DeviceState &s = *ctx.gpu;
    if (cudot_status refused = refuse_if_hung(ctx, s)) return refused;
    cudot_status status = dot_once(ctx, s, n, result);
    if (status != CUDOT_OK && !s.hung) drain(s);  // a hung kernel would hold the drain forever
    return status;
}

cudot_status tile_partials(cudot_ctx &ctx, std::size_t first, std::size_t n, void **partials) {
    CallerCudaState caller;
    DeviceState &s = *ctx.gpu;
    if (cudot_status refused = refuse_if_hung(ctx, s)) return refused;
    // MANAGED: one bulk migration beats page faults
    cudot_status status = queue_partials(ctx, s, first, n, order::tile_count(n), false, !s.sync_after_dot);
    if (status == CUDOT_OK) status = wait_partials(ctx, s, nullptr);
    if (status != CUDOT_OK) {
        if (!s.hung) drain(s);
        return status;
    }
    *partials = s.h_partials;
    return CUDOT_OK;
}

void tune(cudot_ctx &ctx, const GpuTuning &tuning) {
    if (ctx.gpu) ctx.gpu->tuning = tuning;
}

}  // namespace cuda
}  // namespace cudot
