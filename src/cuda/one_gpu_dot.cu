// one_gpu_dot.cu - a dot on one GPU: its inputs brought to where the kernel reads them, one launch
// (replayed from a CUDA graph when the same dot came before), and the result read as soon as it lands.
#include <algorithm>
#include <chrono>
#include <new>

#include "cuda_check.hpp"
#include "gpu_state.hpp"
#include "../core/path_chooser.hpp"

namespace cudot {
namespace cuda {

static bool aligned(std::size_t bytes) { return bytes % kLoadAlign == 0; }

cudot_status source(cudot_ctx &ctx, DeviceState &s, Gpu &g, const void *host, void *view, void *&stage,
                    std::size_t size, std::size_t at, std::size_t count, cudaStream_t stream, const void *&out) {
    ErrorSink err = ctx.sink();
    const std::size_t offset = at * size, bytes = count * size;
    if (ctx.memory != CUDOT_MEMORY_PINNED && aligned(offset)) {
        out = static_cast<const char *>(view) + offset;
        return CUDOT_OK;
    }
    void *target = view;  // PINNED: the GPU's own buffer
    if (ctx.memory != CUDOT_MEMORY_PINNED) {
        if (!stage) CUDOT_CUDA_TRY(err, cudaMalloc(&stage, std::max<std::size_t>(s.slice_elements * size, 256)));
        target = stage;
    }
    CUDOT_CUDA_TRY(err, cudaMemcpyAsync(target, static_cast<const char *>(host) + offset, bytes, cudaMemcpyDefault,
                                        stream));
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

// Queues the inputs' way to the GPU (copies, a migration, or nothing) and sets args.x, args.y.
static cudot_status bring_inputs(cudot_ctx &ctx, DeviceState &s, Gpu &g, std::size_t n, bool prefetch, bool in_place,
                                 LaunchArgs &args) {
    if (ctx.memory == CUDOT_MEMORY_PINNED && in_place) {
        args.x = g.d_mapped_x;
        args.y = g.d_mapped_y;
        return CUDOT_OK;
    }
    if (ctx.memory == CUDOT_MEMORY_MANAGED && prefetch) {
        cudot_status status = prefetch_run(ctx, g, 0, n);
        if (status != CUDOT_OK) return status;
    }
    const std::size_t sx = element_size(ctx.dtype), sy = element_size(ctx.y_dtype);
    cudot_status status = source(ctx, s, g, ctx.x, g.d_x, g.stage_x, sx, 0, n, g.stream, args.x);
    if (status == CUDOT_OK) status = source(ctx, s, g, ctx.y, g.d_y, g.stage_y, sy, 0, n, g.stream, args.y);
    return status;
}

// The whole dot, queued on g's stream: inputs, then one launch that joins on the device.
static cudot_status queue_dot(cudot_ctx &ctx, DeviceState &s, Gpu &g, std::size_t n, bool prefetch, bool in_place) {
    LaunchArgs args;
    cudot_status status = bring_inputs(ctx, s, g, n, prefetch, in_place, args);
    if (status != CUDOT_OK) return status;
    args.n = n;
    args.tiles = order::tile_count(n);
    args.blocks = grid_blocks(g.blocks, args.tiles);
    args.ticket = static_cast<unsigned *>(g.scratch);
    args.partials = static_cast<char *>(g.scratch) + kTicketBytes;
    args.done = g.d_done;
    return launch(ctx, s, g, args);
}

// A CUDA graph of the dot (copies included), captured once and replayed: a replay costs the host and
// the GPU less than a launch, and the kernel's arguments do not change from dot to dot (the result
// goes to the same slot every time, Completion). Made on the second dot in a row with the same shape, so callers that change n at
// every call never pay for captures.
static cudot_status replay_or_queue(cudot_ctx &ctx, DeviceState &s, Gpu &g, std::size_t n, bool in_place) {
    ErrorSink err = ctx.sink();
    const GraphKey key{n, grid_blocks(g.blocks, order::tile_count(n)), in_place};
    const bool repeat = key == g.last_key;
    g.last_key = key;
    if (!(key == g.graph_key && g.graph_exec) && !repeat) return queue_dot(ctx, s, g, n, false, in_place);
    if (!(key == g.graph_key && g.graph_exec)) {
        if (g.graph_exec) CUDOT_CUDA_TRY(err, cudaGraphExecDestroy(g.graph_exec));
        g.graph_exec = nullptr;
        g.graph_key = GraphKey{};
        CUDOT_CUDA_TRY(err, cudaStreamBeginCapture(g.stream, cudaStreamCaptureModeThreadLocal));
        const cudot_status status = queue_dot(ctx, s, g, n, false, in_place);
        cudaGraph_t graph = nullptr;
        const cudaError_t end = cudaStreamEndCapture(g.stream, &graph);  // ends the capture in any case
        if (status != CUDOT_OK) {
            if (graph) (void)cudaGraphDestroy(graph);
            return status;
        }
        CUDOT_CUDA_TRY(err, end);
        const cudaError_t made = cudaGraphInstantiate(&g.graph_exec, graph, 0);
        (void)cudaGraphDestroy(graph);  // the instance keeps what it needs
        CUDOT_CUDA_TRY(err, made);
        g.graph_key = key;
    }
    CUDOT_CUDA_TRY(err, cudaGraphLaunch(g.graph_exec, g.stream));
    return CUDOT_OK;
}

cudot_status single_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool prefetch, double *result) {
    Gpu &g = s.gpus[0];
    CUDOT_CUDA_TRY_AS(ctx.sink(), use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
    const bool in_place = ctx.memory == CUDOT_MEMORY_PINNED && pinned_in_place(s, n);
    const auto start = std::chrono::steady_clock::now();
    expect_result(s);
    cudot_status status = prefetch ? queue_dot(ctx, s, g, n, true, false) : replay_or_queue(ctx, s, g, n, in_place);
    if (status == CUDOT_OK) status = wait_for_result(ctx, s, g, result);
    if (status == CUDOT_OK && ctx.memory == CUDOT_MEMORY_PINNED)
        pinned_took(s, n, in_place, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    return status;
}

}  // namespace cuda
}  // namespace cudot
