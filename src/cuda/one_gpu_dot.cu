// one_gpu_dot.cu - a context's dot on one GPU: its inputs brought to where the kernel reads them, then the
// dot as a batch of one row on the GPU's stream (stream_dot.cu's queue_rows, the road every GPU dot takes),
// its result read as soon as it lands.
#include <algorithm>
#include <chrono>
#include <new>

#include "cuda_check.hpp"
#include "gpu_state.hpp"
#include "../core/path_chooser.hpp"

namespace cudot {
namespace cuda {

static bool aligned(std::size_t bytes) { return bytes % kLoadAlign == 0; }

StreamCall context_call(DeviceState &s, const Gpu &g) {
    StreamCall call;
    call.stream = g.stream;
    call.bound_ms = s.wait_bound_ms;
    call.then = " (cudot_config.wait_ms): the context can only be destroyed now";
    call.gave_up = &s.hung;
    call.own_stream = true;
    return call;
}

cudot_status source(cudot_ctx &ctx, DeviceState &s, const void *host, void *view, void *&stage, std::size_t size,
                    std::size_t at, std::size_t count, const void *&out, InputCopy *copies, unsigned &copy_count) {
    const std::size_t offset = at * size, bytes = count * size;
    if (ctx.memory != CUDOT_MEMORY_PINNED && aligned(offset)) {
        out = static_cast<const char *>(view) + offset;
        return CUDOT_OK;
    }
    void *target = view;  // PINNED: the GPU's own buffer
    if (ctx.memory != CUDOT_MEMORY_PINNED) {
        if (!stage) CUDOT_CUDA_TRY(ctx.sink(), cudaMalloc(&stage, std::max<std::size_t>(s.slice_elements * size, 256)));
        target = stage;
    }
    copies[copy_count++] = InputCopy{target, static_cast<const char *>(host) + offset, bytes};
    out = target;
    return CUDOT_OK;
}

cudot_status prefetch_run(cudot_ctx &ctx, Gpu &g, std::size_t at, std::size_t count) {
    ErrorSink err = ctx.sink();
    const std::size_t sx = element_size(ctx.dtype), sy = element_size(ctx.y_dtype);
    cudaMemLocation gpu{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = g.device;
    CUDOT_CUDA_TRY(err, cudaMemPrefetchAsync(static_cast<char *>(ctx.x) + at * sx, count * sx, gpu, 0, g.stream));
    CUDOT_CUDA_TRY(err, cudaMemPrefetchAsync(static_cast<char *>(ctx.y) + at * sy, count * sy, gpu, 0, g.stream));
    return CUDOT_OK;
}

// PINNED's two ways to the inputs: copy them into the GPU's buffers (copy engine), or let the kernel
// read the page-locked buffers in place over the bus. Same bits either way; which is faster depends on
// the machine and on whether the host just wrote the data (the copy engine slows down on pages the CPU
// has just written), so a PathChooser measures per size.
enum PinnedPath { kCopy, kInPlace, kPinnedPaths };
struct PinnedPolicy : PathChooser<kPinnedPaths> {};

static bool every_gpu_maps(const DeviceState &s) {
    for (const Gpu &g : s.gpus)
        if (!g.d_mapped_x) return false;  // a GPU that cannot map host memory
    return !s.gpus.empty();
}

bool pinned_in_place(DeviceState &s, std::size_t n) {
    if (!every_gpu_maps(s)) return false;
    if (!s.pinned_policy) s.pinned_policy = new (std::nothrow) PinnedPolicy;
    if (!s.pinned_policy) return false;
    return s.pinned_policy->choose(n, [](int) { return true; }) == kInPlace;
}

void pinned_took(DeviceState &s, std::size_t n, bool in_place, double us) {
    if (s.pinned_policy && every_gpu_maps(s))
        s.pinned_policy->record(n, in_place ? kInPlace : kCopy, us, [](int) { return true; });
}

void free_pinned_policy(DeviceState &s) {
    delete s.pinned_policy;
    s.pinned_policy = nullptr;
}

// The first n elements as one row, read where GPU g sees them: PINNED's copies in its own buffers (the
// copies go with the kernel, in one submission of the stream's graph) or the page-locked buffers in place;
// MAPPED's and MANAGED's shared buffers (MANAGED migrated first where `prefetch`).
cudot_status single_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool prefetch, double *result) {
    Gpu &g = s.gpus[0];
    CUDOT_CUDA_TRY_AS(ctx.sink(), use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
    const bool in_place = ctx.memory == CUDOT_MEMORY_PINNED && pinned_in_place(s, n);
    const bool copied = ctx.memory == CUDOT_MEMORY_PINNED && !in_place;
    const auto start = std::chrono::steady_clock::now();
    Operands ops;
    ops.n = n;
    ops.x = dense_operand(in_place ? g.d_mapped_x : g.d_x, ctx.dtype);
    ops.y = dense_operand(in_place ? g.d_mapped_y : g.d_y, ctx.y_dtype);
    const InputCopy copies[2] = {{g.d_x, ctx.x, n * element_size(ctx.dtype)},
                                 {g.d_y, ctx.y, n * element_size(ctx.y_dtype)}};
    if (prefetch)
        if (cudot_status status = prefetch_run(ctx, g, 0, n)) return status;
    StreamCall call = context_call(s, g);
    call.host_result = result;
    call.copies = copies;
    call.copy_count = copied ? 2 : 0;
    call.blocks = ctx.mode == CUDOT_MODE_EXACT ? g.exact_blocks : g.blocks;
    PendingRows pending;
    cudot_status status = queue_rows(Rows::one(ops, ctx.mode == CUDOT_MODE_EXACT), g.device, call, pending, ctx.sink());
    // (The GPU's context is still current; without concurrent managed access the kernel must also end.)
    if (status == CUDOT_OK) status = finish_rows(pending, ctx.sink());
    if (status == CUDOT_OK && s.sync_after_dot) status = wait_stream(s, g, ctx.sink());
    if (status == CUDOT_OK && ctx.memory == CUDOT_MEMORY_PINNED)
        pinned_took(s, n, in_place, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    return status;
}

}  // namespace cuda
}  // namespace cudot
