// buffers.cu - what each strategy allocates (create) and frees (destroy), on every GPU of a context.
#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "../process/input_buffers.hpp"
#include "../process/process_limits.hpp"
#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "device_health.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

// Checks that every GPU can serve the strategy, and that MANAGED's share of each fits in its free memory
// (oversubscribed managed memory can stall the whole GPU: refuse before allocating).
static cudot_status check_devices(const cudot_ctx &ctx, DeviceState &s, ErrorSink err) {
    const std::size_t x_bytes = s.slice_elements * element_size(ctx.dtype);
    const std::size_t y_bytes = s.slice_elements * element_size(ctx.y_dtype);
    for (const Gpu &g : s.gpus) {
        if (ctx.memory == CUDOT_MEMORY_MAPPED && !can_map(g.device))
            return fail(err, CUDOT_ERROR_UNSUPPORTED, "GPU %d cannot map host memory: use PINNED", g.device);
        if (ctx.memory != CUDOT_MEMORY_MANAGED) continue;
        int managed = 0, concurrent = 0;
        CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, g.device));
        if (!managed) return fail(err, CUDOT_ERROR_UNSUPPORTED, "GPU %d does not support managed memory", g.device);
        CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, g.device));
#if defined(CUDOT_TESTING)
        if (seams::no_concurrent_managed()) concurrent = 0;
#endif
        if (!concurrent && s.gpus.size() > 1)
            return fail(err, CUDOT_ERROR_UNSUPPORTED,
                        "GPU %d cannot share managed memory with other GPUs (no concurrent managed access): "
                        "use one device, or PINNED/MAPPED",
                        g.device);
        // Without concurrent access the host may not touch managed memory while a kernel runs, and
        // prefetching is not available: every dot waits for its kernel to end, and none prefetches.
        if (!concurrent) s.sync_after_dot = true;
        std::size_t free_bytes = 0, total_bytes = 0;
        CUDOT_CUDA_TRY_AS(err, use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
        CUDOT_CUDA_TRY(err, cudaMemGetInfo(&free_bytes, &total_bytes));
        const std::size_t reserve = std::max<std::size_t>(free_bytes / 16, std::size_t(256) << 20);
        if (!managed_fits(free_bytes, x_bytes, y_bytes))
            return fail(err, CUDOT_ERROR_OUT_OF_MEMORY,
                        "MANAGED buffers of %zu + %zu bytes (this GPU's share) do not fit in GPU %d's free memory "
                        "(%zu bytes, of which %zu are kept in reserve)",
                        x_bytes, y_bytes, g.device, free_bytes, reserve);
    }
    return CUDOT_OK;
}

// Allocates the two input buffers the caller fills: page-locked host memory (PINNED, MAPPED; portable,
// so every GPU of the context may use it) or managed memory. Called with the first GPU current.
// The bytes of an input buffer of this type (non-NULL pointers even for n == 0).
static std::size_t input_bytes(const cudot_ctx &ctx, int32_t dtype) {
    return std::max<std::size_t>(ctx.capacity * element_size(dtype), 256);
}

// Zero pages of cudot's own mapping, page-locked (and mapped, with cudaHostRegisterMapped) for every GPU.
static cudot_status locked_buffer(std::size_t bytes, unsigned flags, void *&out, ErrorSink err) {
    void *p = buffers::map(bytes);
    if (!p) return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "cannot map %zu bytes of host memory", bytes);
    const cudaError_t e = checked(cudaHostRegister(p, bytes, flags));
    if (e != cudaSuccess) {
        buffers::retire(p, bytes);
        return cuda_fail(err, e, "cudaHostRegister (an input buffer)");
    }
    out = p;
    return CUDOT_OK;
}

// Ends a buffer of locked_buffer: unlocked, then replaced by zero pages (input_buffers.hpp).
static cudaError_t retire_locked(void *p, std::size_t bytes) {
    const cudaError_t e = cudaHostUnregister(p);
    buffers::retire(p, bytes);
    return e;
}

static cudot_status allocate_inputs(cudot_ctx &ctx, std::size_t x_alloc, std::size_t y_alloc, ErrorSink err) {
    if (ctx.memory == CUDOT_MEMORY_MANAGED) {
        CUDOT_CUDA_TRY(err, cudaMallocManaged(&ctx.x, x_alloc, cudaMemAttachGlobal));
        CUDOT_CUDA_TRY(err, cudaMallocManaged(&ctx.y, y_alloc, cudaMemAttachGlobal));
        // Zero, as every strategy's buffers start (cudot.h). Written by the host, where the caller's fill
        // will also put them; the first dot moves them as it would have.
        std::memset(ctx.x, 0, x_alloc);
        std::memset(ctx.y, 0, y_alloc);
        return CUDOT_OK;
    }
    if (ctx.memory != CUDOT_MEMORY_PINNED && ctx.memory != CUDOT_MEMORY_MAPPED)
        return fail(err, CUDOT_ERROR_INTERNAL, "CUDA backend asked for strategy %d", static_cast<int>(ctx.memory));
    const std::size_t physical = limits::usable_memory();
    if (physical != 0 && (x_alloc > physical / 4 || y_alloc > physical / 4 || x_alloc + y_alloc > physical / 2))
        return fail(err, CUDOT_ERROR_OUT_OF_MEMORY,
                    "refusing to page-lock %zu + %zu bytes: more than half of this machine's %zu bytes", x_alloc,
                    y_alloc, physical);
    // Mapped for PINNED too, where every GPU can map: it may read its inputs in place instead of copying
    // them (one_gpu_dot.cu).
    bool mappable = true;
    for (const Gpu &g : ctx.gpu->gpus) mappable = mappable && can_map(g.device);
    // Pages cudot maps itself (zero, and kept as zero pages after deinit: input_buffers.hpp), page-locked
    // for every GPU, rather than cudaHostAlloc's, which a stale view could reach after they are freed.
    const unsigned flags = cudaHostRegisterPortable | (mappable ? cudaHostRegisterMapped : 0u);
    cudot_status status = locked_buffer(x_alloc, flags, ctx.x, err);
    if (status == CUDOT_OK) status = locked_buffer(y_alloc, flags, ctx.y, err);
    return status;
}

// Everything one GPU needs: its views of the shared buffers, its own buffers, its streams.
static cudot_status create_gpu(cudot_ctx &ctx, DeviceState &s, Gpu &g, ErrorSink err) {
    CUDOT_CUDA_TRY_AS(err, use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
    switch (ctx.memory) {
        case CUDOT_MEMORY_MAPPED:
            CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&g.d_x, ctx.x, 0));
            CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&g.d_y, ctx.y, 0));
            break;
        case CUDOT_MEMORY_MANAGED:
            g.d_x = ctx.x;
            g.d_y = ctx.y;
            break;
        default:  // PINNED: device buffers for the run of elements this GPU computes
            CUDOT_CUDA_TRY(err, cudaMalloc(&g.d_x, std::max<std::size_t>(s.slice_elements * element_size(ctx.dtype), 256)));
            CUDOT_CUDA_TRY(err, cudaMalloc(&g.d_y, std::max<std::size_t>(s.slice_elements * element_size(ctx.y_dtype), 256)));
    }
    cudot_status status = resident_blocks(g.device, ctx.dtype, ctx.y_dtype, &g.blocks, err);
    if (status != CUDOT_OK) return status;
    if (ctx.mode == CUDOT_MODE_EXACT) {
        status = resident_blocks(g.device, ctx.dtype, ctx.y_dtype, &g.exact_blocks, err, true);
        if (status != CUDOT_OK) return status;
    }

    if (ctx.memory == CUDOT_MEMORY_PINNED && can_map(g.device)) {  // for reading the inputs in place
        CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&g.d_mapped_x, ctx.x, 0));
        CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&g.d_mapped_y, ctx.y, 0));
    }
    CUDOT_CUDA_TRY(err, cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    // The stream's workspace, made now so that dots allocate nothing: a single-GPU dot keeps one partial
    // per tile there, the exact mode a slot per block.
    const std::size_t tiles = std::max<std::size_t>(order::tile_count(s.slice_elements), 1);
    const std::size_t after_head = std::max(tiles * order::kMaxPartialBytes, g.exact_blocks * kExactSlotBytes);
    cudot_status reserved = reserve_stream_workspace(g.device, g.stream, kHeadBytes + after_head, err);
    if (reserved != CUDOT_OK) return reserved;
    CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&g.d_partials, s.h_partials, 0));
    if (ctx.hybrid) {
        CUDOT_CUDA_TRY(err, cudaEventCreate(&g.start));
        CUDOT_CUDA_TRY(err, cudaEventCreate(&g.stop));
    }
    CUDOT_CUDA_TRY(err, cudaStreamSynchronize(g.stream));
    return CUDOT_OK;
}

static cudot_status create_state(cudot_ctx &ctx, DeviceState &s, ErrorSink err) {
    std::vector<int> devices;
    cudot_status status = device_list(ctx.device, devices, err);
    if (status != CUDOT_OK) return status;
    s.gpus.resize(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) s.gpus[i].device = devices[i];
    // Several GPUs split the tiles into equal runs: each GPU's own buffers hold the longest run.
    const std::size_t tiles = order::tile_count(ctx.capacity), count = s.gpus.size();
    s.slice_elements = count == 1 ? ctx.capacity : std::min(ctx.capacity, (tiles + count - 1) / count * order::kTile);
    status = check_devices(ctx, s, err);
    if (status != CUDOT_OK) return status;

    CUDOT_CUDA_TRY_AS(err, use_primary_context(s.gpus[0].device), "cuCtxSetCurrent (the GPU's primary context)");
    // Non-NULL pointers even for n == 0.
    status = allocate_inputs(ctx, input_bytes(ctx, ctx.dtype), input_bytes(ctx, ctx.y_dtype), err);
    if (status != CUDOT_OK) return status;
    // One partial per tile, or in the exact mode one exact partial per GPU.
    const std::size_t partial_bytes = std::max(std::max<std::size_t>(tiles, 1) * order::kMaxPartialBytes,
                                               s.gpus.size() * kExactPartialBytes);
    CUDOT_CUDA_TRY(err, cudaHostAlloc(&s.h_partials, partial_bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    s.launcher = launcher_for(ctx.dtype, ctx.y_dtype);
    for (Gpu &g : s.gpus) {
        status = create_gpu(ctx, s, g, err);
        if (status != CUDOT_OK) return status;
    }
    if (ctx.hybrid && ctx.memory == CUDOT_MEMORY_MANAGED) {  // AUTO: src/auto/auto_dot.cpp moves them
        CUDOT_CUDA_TRY_AS(err, use_primary_context(s.gpus[0].device), "cuCtxSetCurrent (the GPU's primary context)");
        return auto_advise(ctx, s, err);
    }
    return CUDOT_OK;
}

cudot_status create(cudot_ctx &ctx, ErrorSink err) {
    CallerCudaState caller;
    DeviceState *s = new (std::nothrow) DeviceState;
    if (!s) return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the context");
    ctx.gpu = s;
    cudot_status status = create_state(ctx, *s, err);  // std::bad_alloc from the vector: api.cpp's guard
    if (status != CUDOT_OK) destroy(ctx, ErrorSink{nullptr, 0});  // keep the first message
    return caller.restore(status, err);
}

// Runs a freeing call, remembering only the first failure.
static void free_checked(cudot_status &first, ErrorSink err, cudaError_t error, const char *call) {
    error = checked(error);
    if (error != cudaSuccess && first == CUDOT_OK) first = cuda_fail(err, error, call);
}

static void destroy_gpu(const cudot_ctx &ctx, Gpu &g, cudot_status &first, ErrorSink err) {
    free_checked(first, err, use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
    if (g.stream) {
        const cudot_status released = release_stream_workspace(g.device, g.stream, first == CUDOT_OK ? err : ErrorSink{nullptr, 0});
        if (first == CUDOT_OK) first = released;
        free_checked(first, err, cudaStreamDestroy(g.stream), "cudaStreamDestroy");
    }
    if (g.start) free_checked(first, err, cudaEventDestroy(g.start), "cudaEventDestroy");
    if (g.stop) free_checked(first, err, cudaEventDestroy(g.stop), "cudaEventDestroy");
    if (g.stage_x) free_checked(first, err, cudaFree(g.stage_x), "cudaFree(stage_x)");
    if (g.stage_y) free_checked(first, err, cudaFree(g.stage_y), "cudaFree(stage_y)");
    if (ctx.memory == CUDOT_MEMORY_PINNED) {  // only PINNED has device copies of its own
        if (g.d_x) free_checked(first, err, cudaFree(g.d_x), "cudaFree(d_x)");
        if (g.d_y) free_checked(first, err, cudaFree(g.d_y), "cudaFree(d_y)");
    }
    g = Gpu{};
}

// Whether every GPU of the context can be freed without an unbounded wait: CUDA's frees wait for all
// work on the device, so first the context's own streams must have finished (bounded), and no other
// call may have work there that could still hang (device_health.hpp). On false, says which GPU and why.
static bool safe_to_free(cudot_ctx &ctx, DeviceState &s, ErrorSink err) {
    if (s.hung) return false;
    s.wait_bound_ms = wait_bound_ms(ctx, 0);
    for (Gpu &g : s.gpus) {
        // A failed stream (not a stuck one) is no reason to keep the memory: its frees fail or return.
        if (g.stream && use_primary_context(g.device) == cudaSuccess) (void)wait_stream(s, g, ErrorSink{nullptr, 0});
        if (s.hung || !wait_until_idle(g.device)) {
            refuse_stuck(err, g.device, "cudot_deinit (this context's GPU and page-locked memory stay allocated)");
            return false;
        }
    }
    return true;
}

cudot_status destroy(cudot_ctx &ctx, ErrorSink err) {
    CallerCudaState caller;
    DeviceState *s = ctx.gpu;
    cudot_status first = CUDOT_OK;
    const bool told = s && s->hung;  // an earlier call reported this context's own hang
    if (s && !safe_to_free(ctx, *s, err)) {
        // Work may still run on a GPU of this context: freeing anything would wait for it (CUDA's frees
        // synchronize) or pull memory from under it. Only the host-side bookkeeping goes; the GPU and
        // page-locked memory stay allocated until the process ends (docs/RELIABILITY.md). A context that
        // hung itself was told so already; one stuck behind other work learns it here.
        first = told ? CUDOT_OK : CUDOT_ERROR_CUDA;
        free_pinned_policy(*s);
        delete s;
        ctx.gpu = nullptr;
        ctx.x = ctx.y = nullptr;
        return caller.restore(first, err);
    }
    if (s) {
        const int allocated_on = s->gpus.empty() ? -1 : s->gpus[0].device;  // where the shared buffers were made
        for (Gpu &g : s->gpus) destroy_gpu(ctx, g, first, err);
        if (allocated_on >= 0)
            free_checked(first, err, use_primary_context(allocated_on), "cuCtxSetCurrent (the GPU's primary context)");
        if (s->h_partials) free_checked(first, err, cudaFreeHost(s->h_partials), "cudaFreeHost(partials)");
        free_pinned_policy(*s);
    }
    const bool managed = ctx.memory == CUDOT_MEMORY_MANAGED;
    const std::size_t x_alloc = input_bytes(ctx, ctx.dtype), y_alloc = input_bytes(ctx, ctx.y_dtype);
    if (ctx.x) free_checked(first, err, managed ? cudaFree(ctx.x) : retire_locked(ctx.x, x_alloc), "freeing x");
    if (ctx.y) free_checked(first, err, managed ? cudaFree(ctx.y) : retire_locked(ctx.y, y_alloc), "freeing y");
    ctx.x = ctx.y = nullptr;
    delete s;
    ctx.gpu = nullptr;
    return caller.restore(first, err);
}

}  // namespace cuda
}  // namespace cudot
