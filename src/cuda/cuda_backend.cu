// cuda_backend.cu - the GPU strategies: what each allocates, what a dot copies, the one launch.
#include "cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <new>

#include "../cpu/cpu_backend.hpp"
#include "kernels/dot_kernel.cuh"

namespace cudot {
namespace cuda {

// The typed launch, selected once per context from (dtype, y_dtype).
using LaunchFn = cudaError_t (*)(unsigned blocks, cudaStream_t stream, const void *x, const void *y, std::size_t n,
                                 void *partials, unsigned *ticket, double *result);
using OccupancyFn = cudaError_t (*)(int *blocks_per_sm);

template <class Tx, class Ty>
static cudaError_t launch_typed(unsigned blocks, cudaStream_t stream, const void *x, const void *y, std::size_t n,
                                void *partials, unsigned *ticket, double *result) {
    dot_kernel<Tx, Ty><<<blocks, kThreads, 0, stream>>>(static_cast<const Tx *>(x), static_cast<const Ty *>(y), n,
                                                        static_cast<typename PairOf<Tx, Ty>::Acc *>(partials),
                                                        ticket, result);
    return cudaGetLastError();
}

template <class Tx, class Ty>
static cudaError_t occupancy_typed(int *blocks_per_sm) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, dot_kernel<Tx, Ty>, kThreads, 0);
}

struct Launcher {
    LaunchFn launch;
    OccupancyFn occupancy;
};

static Launcher launcher_for(int32_t x_dtype, int32_t y_dtype) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            using Tx = decltype(xt);
            using Ty = decltype(yt);
            return Launcher{launch_typed<Tx, Ty>, occupancy_typed<Tx, Ty>};
        });
    });
}

struct DeviceState {
    void *d_x = nullptr;  // what the kernel reads: device buffers (PINNED), device aliases of the
    void *d_y = nullptr;  //   host buffers (MAPPED), or the managed buffers themselves (MANAGED)
    void *scratch = nullptr;         // the kernel's ticket, then one partial per tile
    double *h_result = nullptr;      // mapped host word the kernel writes the result into
    double *d_result = nullptr;
    cudaStream_t stream = nullptr;
    unsigned resident_blocks = 1;  // blocks of the dot kernel the whole device holds at once
    Launcher launcher = {nullptr, nullptr};
    // Hybrid (AUTO) only: tile partials in mapped host memory, written by both the GPU and the CPU.
    void *h_partials = nullptr;
    void *d_partials = nullptr;
    cudaEvent_t gpu_start = nullptr, gpu_stop = nullptr;
    double share = 0.25;  // fraction of tiles the GPU takes; adapted after every hybrid dot
    // MANAGED only: whether the next dot first migrates the inputs in bulk (see managed_dot).
    bool prefetch = true;
};

// Hybrid dots below this many tiles run on the CPU alone: the launch and synchronization would cost
// more than the GPU could take off the CPU's hands.
// (Measured on an H100 host: below 2^24 elements the CPU alone was as fast or faster.)
constexpr std::size_t kHybridMinTiles = 2048;  // 2^24 elements

// MANAGED dots on fewer bytes than this neither prefetch nor time themselves: latency dominates.
constexpr std::size_t kManagedAdaptBytes = std::size_t(4) << 20;
// A dot slower than this moved pages over the bus: the host had written to them.
constexpr double kMigratedGBps = 300.0;

constexpr std::size_t kTicketBytes = 256;  // keeps the partials after it 256-byte aligned

// Test-only fault injection (src/testing.hpp): the calling thread's countdown-th checked CUDA call
// from now is reported as failing with fault_code, after it was really made, so the clean-up paths
// also see whatever that call did take. Negative: no fault pending. Thread-local, so a test's fault
// never lands in another thread's context.
static thread_local long fault_countdown = -1;
static thread_local cudaError_t fault_code = cudaSuccess;

void inject_fault(unsigned calls_before, int cuda_error) {
    fault_countdown = cuda_error ? static_cast<long>(calls_before) : -1;
    fault_code = static_cast<cudaError_t>(cuda_error);
}
bool fault_pending() { return fault_countdown >= 0; }

static cudaError_t checked(cudaError_t result) {
    if (fault_countdown < 0) return result;
    return fault_countdown-- == 0 ? fault_code : result;
}

// Records a failed CUDA call on the sink, naming the call and CUDA's own words, and clears the
// error if it is not sticky.
static cudot_status cuda_fail(ErrorSink err, cudaError_t error, const char *call) {
    (void)cudaGetLastError();
    cudot_status status = error == cudaErrorMemoryAllocation ? CUDOT_ERROR_OUT_OF_MEMORY : CUDOT_ERROR_CUDA;
    return fail(err, status, "%s failed: %s (%s)", call, cudaGetErrorString(error), cudaGetErrorName(error));
}

#define CUDOT_CUDA_TRY(err, call)                                    \
    do {                                                             \
        cudaError_t cudot_error_ = checked(call);                    \
        if (cudot_error_ != cudaSuccess) return cuda_fail(err, cudot_error_, #call); \
    } while (0)

cudot_status probe(int32_t device, ErrorSink err) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return fail(err, CUDOT_ERROR_NO_DEVICE, "no usable GPU: cudaGetDeviceCount failed: %s (%s)",
                    cudaGetErrorString(e), cudaGetErrorName(e));
    }
    if (count == 0) return fail(err, CUDOT_ERROR_NO_DEVICE, "no usable GPU: the CUDA driver reports no devices");
    if (device >= count)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "config->device %d does not exist: %d CUDA device(s) present",
                    static_cast<int>(device), count);
    CUDOT_CUDA_TRY(err, cudaSetDevice(device));
    cudaFuncAttributes attributes;
    e = cudaFuncGetAttributes(&attributes, dot_kernel<float, float>);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) prop = cudaDeviceProp{};
        return fail(err, CUDOT_ERROR_NO_DEVICE,
                    "GPU %d (%s, compute capability %d.%d) cannot run this build's kernels: %s (%s)",
                    static_cast<int>(device), prop.name, prop.major, prop.minor, cudaGetErrorString(e),
                    cudaGetErrorName(e));
    }
    return CUDOT_OK;
}

int32_t auto_strategy(int32_t device) {
    int can_map = 0;
    if (cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, device) != cudaSuccess) {
        (void)cudaGetLastError();
        can_map = 0;
    }
    return can_map ? CUDOT_MEMORY_MAPPED : CUDOT_MEMORY_PINNED;
}

// Allocates the two input buffers for the strategy. Called with the device current.
static cudot_status allocate_inputs(cudot_ctx &ctx, DeviceState &s, std::size_t x_bytes, std::size_t y_bytes,
                                    ErrorSink err) {
    const std::size_t physical = cpu::physical_memory();
    // Non-NULL pointers even for n == 0.
    const std::size_t x_alloc = std::max<std::size_t>(x_bytes, 256), y_alloc = std::max<std::size_t>(y_bytes, 256);
    switch (ctx.memory) {
        case CUDOT_MEMORY_PINNED:
        case CUDOT_MEMORY_MAPPED: {
            if (physical != 0 && (x_bytes > physical / 4 || y_bytes > physical / 4 || x_bytes + y_bytes > physical / 2))
                return fail(err, CUDOT_ERROR_OUT_OF_MEMORY,
                            "refusing to page-lock %zu + %zu bytes: more than half of this machine's %zu bytes",
                            x_bytes, y_bytes, physical);
            unsigned flags = cudaHostAllocPortable;
            if (ctx.memory == CUDOT_MEMORY_MAPPED) {
                int can_map = 0;
                CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, ctx.device));
                if (!can_map)
                    return fail(err, CUDOT_ERROR_UNSUPPORTED, "GPU %d cannot map host memory: use PINNED",
                                static_cast<int>(ctx.device));
                flags |= cudaHostAllocMapped;
            }
            CUDOT_CUDA_TRY(err, cudaHostAlloc(&ctx.x, x_alloc, flags));
            CUDOT_CUDA_TRY(err, cudaHostAlloc(&ctx.y, y_alloc, flags));
            if (ctx.memory == CUDOT_MEMORY_MAPPED) {
                CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&s.d_x, ctx.x, 0));
                CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&s.d_y, ctx.y, 0));
            } else {
                CUDOT_CUDA_TRY(err, cudaMalloc(&s.d_x, x_alloc));
                CUDOT_CUDA_TRY(err, cudaMalloc(&s.d_y, y_alloc));
            }
            return CUDOT_OK;
        }
        case CUDOT_MEMORY_MANAGED: {
            int managed = 0;
            CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, ctx.device));
            if (!managed)
                return fail(err, CUDOT_ERROR_UNSUPPORTED, "GPU %d does not support managed memory",
                            static_cast<int>(ctx.device));
            // Oversubscribed managed memory can stall the whole GPU: refuse before allocating.
            std::size_t free_bytes = 0, total_bytes = 0;
            CUDOT_CUDA_TRY(err, cudaMemGetInfo(&free_bytes, &total_bytes));
            const std::size_t reserve = std::max<std::size_t>(free_bytes / 16, std::size_t(256) << 20);
            if (x_bytes > free_bytes / 2 || y_bytes > free_bytes / 2 || x_bytes + y_bytes + reserve > free_bytes)
                return fail(err, CUDOT_ERROR_OUT_OF_MEMORY,
                            "MANAGED buffers of %zu + %zu bytes do not fit in GPU %d's free memory (%zu bytes, of "
                            "which %zu are kept in reserve)",
                            x_bytes, y_bytes, static_cast<int>(ctx.device), free_bytes, reserve);
            CUDOT_CUDA_TRY(err, cudaMallocManaged(&ctx.x, x_alloc, cudaMemAttachGlobal));
            CUDOT_CUDA_TRY(err, cudaMallocManaged(&ctx.y, y_alloc, cudaMemAttachGlobal));
            s.d_x = ctx.x;
            s.d_y = ctx.y;
            return CUDOT_OK;
        }
        default:
            return fail(err, CUDOT_ERROR_INTERNAL, "CUDA backend asked for strategy %d", static_cast<int>(ctx.memory));
    }
}

static cudot_status create_state(cudot_ctx &ctx, DeviceState &s, ErrorSink err) {
    CUDOT_CUDA_TRY(err, cudaSetDevice(ctx.device));
    cudot_status status = allocate_inputs(ctx, s, ctx.capacity * element_size(ctx.dtype),
                                          ctx.capacity * element_size(ctx.y_dtype), err);
    if (status != CUDOT_OK) return status;

    s.launcher = launcher_for(ctx.dtype, ctx.y_dtype);
    int sms = 0, per_sm = 0;
    CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
    CUDOT_CUDA_TRY(err, s.launcher.occupancy(&per_sm));
    s.resident_blocks = static_cast<unsigned>(std::max(1, sms * std::max(1, per_sm)));

    CUDOT_CUDA_TRY(err, cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    const std::size_t tiles = std::max<std::size_t>(order::tile_count(ctx.capacity), 1);
    CUDOT_CUDA_TRY(err, cudaMalloc(&s.scratch, kTicketBytes + tiles * order::kMaxPartialBytes));
    CUDOT_CUDA_TRY(err, cudaMemsetAsync(s.scratch, 0, kTicketBytes, s.stream));
    void *result = nullptr;
    CUDOT_CUDA_TRY(err, cudaHostAlloc(&result, sizeof(double), cudaHostAllocMapped | cudaHostAllocPortable));
    s.h_result = static_cast<double *>(result);
    CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&result, s.h_result, 0));
    s.d_result = static_cast<double *>(result);
    if (ctx.hybrid) {
        CUDOT_CUDA_TRY(err, cudaHostAlloc(&s.h_partials, tiles * order::kMaxPartialBytes,
                                          cudaHostAllocMapped | cudaHostAllocPortable));
        CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&s.d_partials, s.h_partials, 0));
        CUDOT_CUDA_TRY(err, cudaEventCreate(&s.gpu_start));
        CUDOT_CUDA_TRY(err, cudaEventCreate(&s.gpu_stop));
    }
    CUDOT_CUDA_TRY(err, cudaStreamSynchronize(s.stream));
    return CUDOT_OK;
}

cudot_status create(cudot_ctx &ctx, ErrorSink err) {
    DeviceState *s = new (std::nothrow) DeviceState;
    if (!s) return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the context");
    ctx.gpu = s;
    cudot_status status = create_state(ctx, *s, err);
    if (status != CUDOT_OK) destroy(ctx, ErrorSink{nullptr, 0});  // keep the first message
    return status;
}

// Runs a freeing call, remembering only the first failure.
static void release(cudot_status &first, ErrorSink err, cudaError_t error, const char *call) {
    error = checked(error);
    if (error != cudaSuccess && first == CUDOT_OK) first = cuda_fail(err, error, call);
    else if (error != cudaSuccess) (void)cudaGetLastError();
}

cudot_status destroy(cudot_ctx &ctx, ErrorSink err) {
    DeviceState *s = ctx.gpu;
    cudot_status first = CUDOT_OK;
    release(first, err, cudaSetDevice(ctx.device), "cudaSetDevice");
    if (s) {
        if (s->stream) release(first, err, cudaStreamSynchronize(s->stream), "cudaStreamSynchronize");
        if (s->stream) release(first, err, cudaStreamDestroy(s->stream), "cudaStreamDestroy");
        if (s->scratch) release(first, err, cudaFree(s->scratch), "cudaFree(scratch)");
        if (s->h_result) release(first, err, cudaFreeHost(s->h_result), "cudaFreeHost(result)");
        if (s->h_partials) release(first, err, cudaFreeHost(s->h_partials), "cudaFreeHost(partials)");
        if (s->gpu_start) release(first, err, cudaEventDestroy(s->gpu_start), "cudaEventDestroy");
        if (s->gpu_stop) release(first, err, cudaEventDestroy(s->gpu_stop), "cudaEventDestroy");
        if (ctx.memory == CUDOT_MEMORY_PINNED) {  // only PINNED has device copies of its own
            if (s->d_x) release(first, err, cudaFree(s->d_x), "cudaFree(d_x)");
            if (s->d_y) release(first, err, cudaFree(s->d_y), "cudaFree(d_y)");
        }
    }
    const bool managed = ctx.memory == CUDOT_MEMORY_MANAGED;
    if (ctx.x) release(first, err, managed ? cudaFree(ctx.x) : cudaFreeHost(ctx.x), "freeing x");
    if (ctx.y) release(first, err, managed ? cudaFree(ctx.y) : cudaFreeHost(ctx.y), "freeing y");
    ctx.x = ctx.y = nullptr;
    delete s;
    ctx.gpu = nullptr;
    return first;
}

// Launches the dot kernel on the first n elements. partials/result: see dot_kernel (result nullptr:
// partials only).
static cudot_status launch_any(cudot_ctx &ctx, DeviceState &s, std::size_t n, void *partials, double *result) {
    const std::size_t tiles = order::tile_count(n);
    unsigned blocks = ctx.hooks.gpu_blocks ? ctx.hooks.gpu_blocks : s.resident_blocks;
    blocks = static_cast<unsigned>(std::min<std::size_t>(blocks, tiles));
    cudaError_t e = checked(s.launcher.launch(blocks, s.stream, s.d_x, s.d_y, n, partials, static_cast<unsigned *>(s.scratch),
                                              result));
    return e == cudaSuccess ? CUDOT_OK : cuda_fail(ctx.sink(), e, "dot_kernel launch");
}

double current_hybrid_share(const cudot_ctx &ctx) {
    if (!ctx.gpu) return 0.0;
    return ctx.hooks.hybrid_share >= 0 ? ctx.hooks.hybrid_share : ctx.gpu->share;
}

// AUTO with a GPU: the GPU reads tiles [0, g) of the mapped buffers over the bus while the CPU threads
// compute tiles [g, tiles) from host memory; both write tile partials into one mapped array, which
// the CPU joins in the canonical order. The split only decides who computes a tile, so the result is
// the same bits for any g. After each dot, g moves toward the split that makes both finish together.
static cudot_status hybrid_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    ErrorSink err = ctx.sink();
    const std::size_t tiles = order::tile_count(n);
    const double share = current_hybrid_share(ctx);
    std::size_t g = tiles < kHybridMinTiles && ctx.hooks.hybrid_share < 0
                        ? 0
                        : std::min(tiles, static_cast<std::size_t>(share * static_cast<double>(tiles) + 0.5));
    if (g > 0) {
        CUDOT_CUDA_TRY(err, cudaSetDevice(ctx.device));
        CUDOT_CUDA_TRY(err, cudaEventRecord(s.gpu_start, s.stream));
        cudot_status status = launch_any(ctx, s, std::min(n, g * order::kTile), s.d_partials, nullptr);
        if (status != CUDOT_OK) return status;
        CUDOT_CUDA_TRY(err, cudaEventRecord(s.gpu_stop, s.stream));
    }
    const auto cpu_start = std::chrono::steady_clock::now();
    cpu::compute_partials(ctx.dtype, ctx.y_dtype, ctx.x, ctx.y, n, g, tiles, s.h_partials, ctx.hooks);
    const double cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - cpu_start).count();
    if (g > 0) {
        CUDOT_CUDA_TRY(err, cudaStreamSynchronize(s.stream));
        float gpu_ms = 0;
        CUDOT_CUDA_TRY(err, cudaEventElapsedTime(&gpu_ms, s.gpu_start, s.gpu_stop));
        if (g < tiles && gpu_ms > 0 && cpu_ms > 0) {
            const double gpu_rate = g / static_cast<double>(gpu_ms), cpu_rate = (tiles - g) / cpu_ms;
            const double balanced = gpu_rate / (gpu_rate + cpu_rate);
            s.share = std::min(0.95, std::max(0.02, 0.5 * s.share + 0.5 * balanced));
        }
    }
    *result = cpu::join_partials(types::kind_of(ctx.dtype, ctx.y_dtype), s.h_partials, tiles);
    return CUDOT_OK;
}

// MANAGED: unified memory serves two patterns that want opposite handling. Inputs that stay the same
// across dots live in GPU memory, and a prefetch would only cost time (about twice the kernel at 2^26
// on an H100). Inputs the host rewrote before each dot have migrated back to the host, and letting the
// kernel fault them over page by page runs at ~8 GB/s where one bulk prefetch runs at ~47 GB/s. So
// each dot watches itself: a dot that ran at bus speed moved pages, and the next one prefetches; a dot
// that ran faster found the inputs resident, and the next one does not. Only timing changes, never
// the result.
static cudot_status managed_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    ErrorSink err = ctx.sink();
    const std::size_t x_bytes = n * element_size(ctx.dtype), y_bytes = n * element_size(ctx.y_dtype);
    const std::size_t bytes = x_bytes + y_bytes;
    const bool adapt = bytes >= 2 * kManagedAdaptBytes;
    const bool prefetch = adapt && s.prefetch;
    const auto start = std::chrono::steady_clock::now();
    if (prefetch) {
        cudaMemLocation gpu{};
        gpu.type = cudaMemLocationTypeDevice;
        gpu.id = ctx.device;
        CUDOT_CUDA_TRY(err, cudaMemPrefetchAsync(ctx.x, x_bytes, gpu, 0, s.stream));
        CUDOT_CUDA_TRY(err, cudaMemPrefetchAsync(ctx.y, y_bytes, gpu, 0, s.stream));
    }
    cudot_status status = launch_any(ctx, s, n, static_cast<char *>(s.scratch) + kTicketBytes, s.d_result);
    if (status != CUDOT_OK) return status;
    CUDOT_CUDA_TRY(err, cudaStreamSynchronize(s.stream));
    *result = *static_cast<volatile double *>(s.h_result);
    if (adapt) {
        // Timed on the host, around the whole dot: events would add microseconds to every call. A dot
        // slower than bus speed moved pages (keep or start prefetching); a prefetching dot faster than
        // that found them already on the GPU (stop prefetching).
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        const double slow_ms = bytes / (kMigratedGBps * 1e6) + 0.25;  // both inputs, plus 250 us of slack
        s.prefetch = ms > slow_ms;
    }
    return CUDOT_OK;
}

static cudot_status dot_once(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    if (ctx.hybrid) return hybrid_dot(ctx, s, n, result);
    if (ctx.memory == CUDOT_MEMORY_MANAGED) {
        CUDOT_CUDA_TRY(ctx.sink(), cudaSetDevice(ctx.device));
        return managed_dot(ctx, s, n, result);
    }
    ErrorSink err = ctx.sink();
    CUDOT_CUDA_TRY(err, cudaSetDevice(ctx.device));
    if (ctx.memory == CUDOT_MEMORY_PINNED) {
        CUDOT_CUDA_TRY(err, cudaMemcpyAsync(s.d_x, ctx.x, n * element_size(ctx.dtype), cudaMemcpyHostToDevice, s.stream));
        CUDOT_CUDA_TRY(err, cudaMemcpyAsync(s.d_y, ctx.y, n * element_size(ctx.y_dtype), cudaMemcpyHostToDevice, s.stream));
    }
    cudot_status status =
        launch_any(ctx, s, n, static_cast<char *>(s.scratch) + kTicketBytes, s.d_result);
    if (status != CUDOT_OK) return status;
    CUDOT_CUDA_TRY(err, cudaStreamSynchronize(s.stream));
    *result = *static_cast<volatile double *>(s.h_result);
    return CUDOT_OK;
}

cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result) {
    DeviceState &s = *ctx.gpu;
    cudot_status status = dot_once(ctx, s, n, result);
    if (status != CUDOT_OK) {
        // A dot that failed part-way may have left work queued; wait for it so the next dot (or
        // deinit) never overlaps it. Its own error, if any, was already reported.
        (void)cudaStreamSynchronize(s.stream);
        (void)cudaGetLastError();
    }
    return status;
}

}  // namespace cuda
}  // namespace cudot
