// cuda_backend.cu - the GPU strategies: what each allocates, what a dot copies, the launches.
//
// A context runs on one GPU or, with config->device == CUDOT_DEVICE_ALL, on every visible GPU. One GPU:
// each dot is a single launch whose last block joins the tile partials on the device. Several GPUs
// (and AUTO's CPU+GPU hybrid, and cudot_tile_partials): each GPU computes the partials of one
// contiguous run of tiles into a mapped host array, and the host joins them in the canonical order.
// Who computes a tile never changes its partial, so every way of splitting gives the same bits.
#include "cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <new>
#include <vector>

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
    std::size_t partial_bytes;  // one tile partial of the pair's kind, packed
};

static Launcher launcher_for(int32_t x_dtype, int32_t y_dtype) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            using Tx = decltype(xt);
            using Ty = decltype(yt);
            return Launcher{launch_typed<Tx, Ty>, occupancy_typed<Tx, Ty>, sizeof(typename PairOf<Tx, Ty>::Acc)};
        });
    });
}

// One GPU's part of a context.
struct Gpu {
    int device = 0;
    void *d_x = nullptr;  // where this GPU reads: its own device buffers (PINNED, holding the run of
    void *d_y = nullptr;  //   elements it computes at offset 0), or its view of the whole host or managed buffers
    void *stage_x = nullptr;  // MAPPED/MANAGED: device copies for cudot_tile_partials starts that are not
    void *stage_y = nullptr;  //   16-byte aligned (the kernel's vector loads need it); made on first use
    void *scratch = nullptr;  // the kernel's ticket, then one partial per tile (single-GPU dots)
    double *d_result = nullptr;  // this GPU's view of DeviceState::h_result
    void *d_partials = nullptr;  // this GPU's view of DeviceState::h_partials
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;  // hybrid dots time the GPUs' share
    unsigned resident_blocks = 1;  // blocks of the dot kernel this device holds at once
    std::size_t first_tile = 0, last_tile = 0;  // the run of tiles of the current operation
};

struct DeviceState {
    std::vector<Gpu> gpus;  // one, or every GPU of a CUDOT_DEVICE_ALL context
    Launcher launcher = {nullptr, nullptr, 0};
    std::size_t slice_elements = 0;  // elements each GPU's own buffers (PINNED, staging) hold
    double *h_result = nullptr;  // mapped host word a single-GPU dot's last block writes the result into
    void *h_partials = nullptr;  // mapped host array of tile partials, joined on the host
    double share = 0.25;  // hybrid: fraction of tiles the GPUs take; adapted after every hybrid dot
    bool prefetch = true;  // MANAGED: whether the next dot first migrates the inputs in bulk (managed_dot)
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
constexpr std::size_t kLoadAlign = 16;     // the kernel's widest load

// Test-only fault injection (src/testing.hpp): the calling thread's countdown-th checked CUDA call
// from now is reported as failing with fault_code, after it was really made, so the clean-up paths
// also see whatever that call did take. Negative: no fault pending. Thread-local, so a test's fault
// never lands in another thread's context.
static thread_local long fault_countdown = -1;
static thread_local cudaError_t fault_code = cudaSuccess;
// Test-only: the GPUs a CUDOT_DEVICE_ALL init on this thread uses instead of every visible one.
static thread_local std::vector<int> forced_devices;

void inject_fault(unsigned calls_before, int cuda_error) {
    fault_countdown = cuda_error ? static_cast<long>(calls_before) : -1;
    fault_code = static_cast<cudaError_t>(cuda_error);
}
bool fault_pending() { return fault_countdown >= 0; }
void force_devices(const int *devices, int count) { forced_devices.assign(devices, devices + std::max(count, 0)); }

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

// The ordinals a context asked for: one, or every visible GPU (or the test override).
static cudot_status device_list(int32_t device, std::vector<int> &out, ErrorSink err) {
    out.clear();
    if (device != CUDOT_DEVICE_ALL) {
        out.push_back(device);
        return CUDOT_OK;
    }
    if (!forced_devices.empty()) {
        out = forced_devices;
        return CUDOT_OK;
    }
    int count = 0;
    CUDOT_CUDA_TRY(err, cudaGetDeviceCount(&count));
    for (int d = 0; d < count; ++d) out.push_back(d);
    return CUDOT_OK;
}

static cudot_status probe_one(int device, ErrorSink err) {
    CUDOT_CUDA_TRY(err, cudaSetDevice(device));
    cudaFuncAttributes attributes;
    cudaError_t e = cudaFuncGetAttributes(&attributes, dot_kernel<float, float>);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) prop = cudaDeviceProp{};
        return fail(err, CUDOT_ERROR_NO_DEVICE,
                    "GPU %d (%s, compute capability %d.%d) cannot run this build's kernels: %s (%s)", device,
                    prop.name, prop.major, prop.minor, cudaGetErrorString(e), cudaGetErrorName(e));
    }
    return CUDOT_OK;
}

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
    std::vector<int> devices;
    cudot_status status = device_list(device, devices, err);
    for (std::size_t i = 0; status == CUDOT_OK && i < devices.size(); ++i) status = probe_one(devices[i], err);
    return status;
}

static bool can_map(int device) {
    int yes = 0;
    if (cudaDeviceGetAttribute(&yes, cudaDevAttrCanMapHostMemory, device) != cudaSuccess) {
        (void)cudaGetLastError();
        yes = 0;
    }
    return yes != 0;
}

int32_t auto_strategy(int32_t device) {
    std::vector<int> devices;
    if (device_list(device, devices, ErrorSink{nullptr, 0}) != CUDOT_OK) return CUDOT_MEMORY_PINNED;
    for (int d : devices)
        if (!can_map(d)) return CUDOT_MEMORY_PINNED;
    return CUDOT_MEMORY_MAPPED;
}

// Checks that every GPU can serve the strategy, and that MANAGED's share of each fits in its free memory
// (oversubscribed managed memory can stall the whole GPU: refuse before allocating).
static cudot_status check_devices(const cudot_ctx &ctx, const DeviceState &s, ErrorSink err) {
    const std::size_t x_bytes = s.slice_elements * element_size(ctx.dtype);
    const std::size_t y_bytes = s.slice_elements * element_size(ctx.y_dtype);
    for (const Gpu &g : s.gpus) {
        if (ctx.memory == CUDOT_MEMORY_MAPPED && !can_map(g.device))
            return fail(err, CUDOT_ERROR_UNSUPPORTED, "GPU %d cannot map host memory: use PINNED", g.device);
        if (ctx.memory != CUDOT_MEMORY_MANAGED) continue;
        int managed = 0, concurrent = 0;
        CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, g.device));
        if (!managed) return fail(err, CUDOT_ERROR_UNSUPPORTED, "GPU %d does not support managed memory", g.device);
        if (s.gpus.size() > 1) {
            CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, g.device));
            if (!concurrent)
                return fail(err, CUDOT_ERROR_UNSUPPORTED,
                            "GPU %d cannot share managed memory with other GPUs (no concurrent managed access): "
                            "use one device, or PINNED/MAPPED",
                            g.device);
        }
        std::size_t free_bytes = 0, total_bytes = 0;
        CUDOT_CUDA_TRY(err, cudaSetDevice(g.device));
        CUDOT_CUDA_TRY(err, cudaMemGetInfo(&free_bytes, &total_bytes));
        const std::size_t reserve = std::max<std::size_t>(free_bytes / 16, std::size_t(256) << 20);
        if (x_bytes > free_bytes / 2 || y_bytes > free_bytes / 2 || x_bytes + y_bytes + reserve > free_bytes)
            return fail(err, CUDOT_ERROR_OUT_OF_MEMORY,
                        "MANAGED buffers of %zu + %zu bytes (this GPU's share) do not fit in GPU %d's free memory "
                        "(%zu bytes, of which %zu are kept in reserve)",
                        x_bytes, y_bytes, g.device, free_bytes, reserve);
    }
    return CUDOT_OK;
}

// Allocates the two input buffers the caller fills: page-locked host memory (PINNED, MAPPED; portable,
// so every GPU of the context may use it) or managed memory. Called with the first GPU current.
static cudot_status allocate_inputs(cudot_ctx &ctx, std::size_t x_alloc, std::size_t y_alloc, ErrorSink err) {
    if (ctx.memory == CUDOT_MEMORY_MANAGED) {
        CUDOT_CUDA_TRY(err, cudaMallocManaged(&ctx.x, x_alloc, cudaMemAttachGlobal));
        CUDOT_CUDA_TRY(err, cudaMallocManaged(&ctx.y, y_alloc, cudaMemAttachGlobal));
        return CUDOT_OK;
    }
    if (ctx.memory != CUDOT_MEMORY_PINNED && ctx.memory != CUDOT_MEMORY_MAPPED)
        return fail(err, CUDOT_ERROR_INTERNAL, "CUDA backend asked for strategy %d", static_cast<int>(ctx.memory));
    const std::size_t physical = cpu::physical_memory();
    if (physical != 0 && (x_alloc > physical / 4 || y_alloc > physical / 4 || x_alloc + y_alloc > physical / 2))
        return fail(err, CUDOT_ERROR_OUT_OF_MEMORY,
                    "refusing to page-lock %zu + %zu bytes: more than half of this machine's %zu bytes", x_alloc,
                    y_alloc, physical);
    const unsigned flags = cudaHostAllocPortable | (ctx.memory == CUDOT_MEMORY_MAPPED ? cudaHostAllocMapped : 0u);
    CUDOT_CUDA_TRY(err, cudaHostAlloc(&ctx.x, x_alloc, flags));
    CUDOT_CUDA_TRY(err, cudaHostAlloc(&ctx.y, y_alloc, flags));
    return CUDOT_OK;
}

// Everything one GPU needs: its views of the shared buffers, its own buffers, a stream.
static cudot_status create_gpu(cudot_ctx &ctx, DeviceState &s, Gpu &g, ErrorSink err) {
    CUDOT_CUDA_TRY(err, cudaSetDevice(g.device));
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
    int sms = 0, per_sm = 0;
    CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g.device));
    CUDOT_CUDA_TRY(err, s.launcher.occupancy(&per_sm));
    g.resident_blocks = static_cast<unsigned>(std::max(1, sms * std::max(1, per_sm)));

    CUDOT_CUDA_TRY(err, cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    const std::size_t tiles = std::max<std::size_t>(order::tile_count(s.slice_elements), 1);
    CUDOT_CUDA_TRY(err, cudaMalloc(&g.scratch, kTicketBytes + tiles * order::kMaxPartialBytes));
    CUDOT_CUDA_TRY(err, cudaMemsetAsync(g.scratch, 0, kTicketBytes, g.stream));
    void *view = nullptr;
    CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&view, s.h_result, 0));
    g.d_result = static_cast<double *>(view);
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

    CUDOT_CUDA_TRY(err, cudaSetDevice(s.gpus[0].device));
    // Non-NULL pointers even for n == 0.
    status = allocate_inputs(ctx, std::max<std::size_t>(ctx.capacity * element_size(ctx.dtype), 256),
                             std::max<std::size_t>(ctx.capacity * element_size(ctx.y_dtype), 256), err);
    if (status != CUDOT_OK) return status;
    void *result = nullptr;
    CUDOT_CUDA_TRY(err, cudaHostAlloc(&result, sizeof(double), cudaHostAllocMapped | cudaHostAllocPortable));
    s.h_result = static_cast<double *>(result);
    CUDOT_CUDA_TRY(err, cudaHostAlloc(&s.h_partials, std::max<std::size_t>(tiles, 1) * order::kMaxPartialBytes,
                                      cudaHostAllocMapped | cudaHostAllocPortable));
    s.launcher = launcher_for(ctx.dtype, ctx.y_dtype);
    for (Gpu &g : s.gpus) {
        status = create_gpu(ctx, s, g, err);
        if (status != CUDOT_OK) return status;
    }
    return CUDOT_OK;
}

cudot_status create(cudot_ctx &ctx, ErrorSink err) {
    DeviceState *s = new (std::nothrow) DeviceState;
    if (!s) return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the context");
    ctx.gpu = s;
    cudot_status status = create_state(ctx, *s, err);  // std::bad_alloc from the vector: api.cpp's guard
    if (status != CUDOT_OK) destroy(ctx, ErrorSink{nullptr, 0});  // keep the first message
    return status;
}

// Runs a freeing call, remembering only the first failure.
static void release(cudot_status &first, ErrorSink err, cudaError_t error, const char *call) {
    error = checked(error);
    if (error != cudaSuccess && first == CUDOT_OK) first = cuda_fail(err, error, call);
    else if (error != cudaSuccess) (void)cudaGetLastError();
}

static void destroy_gpu(const cudot_ctx &ctx, Gpu &g, cudot_status &first, ErrorSink err) {
    release(first, err, cudaSetDevice(g.device), "cudaSetDevice");
    if (g.stream) release(first, err, cudaStreamSynchronize(g.stream), "cudaStreamSynchronize");
    if (g.stream) release(first, err, cudaStreamDestroy(g.stream), "cudaStreamDestroy");
    if (g.scratch) release(first, err, cudaFree(g.scratch), "cudaFree(scratch)");
    if (g.start) release(first, err, cudaEventDestroy(g.start), "cudaEventDestroy");
    if (g.stop) release(first, err, cudaEventDestroy(g.stop), "cudaEventDestroy");
    if (g.stage_x) release(first, err, cudaFree(g.stage_x), "cudaFree(stage_x)");
    if (g.stage_y) release(first, err, cudaFree(g.stage_y), "cudaFree(stage_y)");
    if (ctx.memory == CUDOT_MEMORY_PINNED) {  // only PINNED has device copies of its own
        if (g.d_x) release(first, err, cudaFree(g.d_x), "cudaFree(d_x)");
        if (g.d_y) release(first, err, cudaFree(g.d_y), "cudaFree(d_y)");
    }
    g = Gpu{};
}

cudot_status destroy(cudot_ctx &ctx, ErrorSink err) {
    DeviceState *s = ctx.gpu;
    cudot_status first = CUDOT_OK;
    if (s) {
        for (Gpu &g : s->gpus) destroy_gpu(ctx, g, first, err);
        if (s->h_result) release(first, err, cudaFreeHost(s->h_result), "cudaFreeHost(result)");
        if (s->h_partials) release(first, err, cudaFreeHost(s->h_partials), "cudaFreeHost(partials)");
    }
    const bool managed = ctx.memory == CUDOT_MEMORY_MANAGED;
    if (ctx.x) release(first, err, managed ? cudaFree(ctx.x) : cudaFreeHost(ctx.x), "freeing x");
    if (ctx.y) release(first, err, managed ? cudaFree(ctx.y) : cudaFreeHost(ctx.y), "freeing y");
    ctx.x = ctx.y = nullptr;
    delete s;
    ctx.gpu = nullptr;
    return first;
}

// Launches the dot kernel on n elements at x, y (device views). partials/result: see dot_kernel
// (result nullptr: partials only).
static cudot_status launch_any(cudot_ctx &ctx, DeviceState &s, Gpu &g, const void *x, const void *y, std::size_t n,
                               void *partials, double *result) {
    const std::size_t tiles = order::tile_count(n);
    unsigned blocks = ctx.hooks.gpu_blocks ? ctx.hooks.gpu_blocks : g.resident_blocks;
    blocks = static_cast<unsigned>(std::min<std::size_t>(blocks, tiles));
    cudaError_t e = checked(s.launcher.launch(blocks, g.stream, x, y, n, partials, static_cast<unsigned *>(g.scratch), result));
    return e == cudaSuccess ? CUDOT_OK : cuda_fail(ctx.sink(), e, "dot_kernel launch");
}

static bool aligned(std::size_t bytes) { return bytes % kLoadAlign == 0; }

// Where GPU g reads the elements [at, at + count) of x (or y, of element size `size`) from, after queueing
// whatever copy that needs on its stream: PINNED copies them to its device buffer; MAPPED and MANAGED
// read the shared buffers in place, unless `at` would misalign the kernel's loads (cudot_tile_partials
// may start anywhere): then the elements are copied to a device staging buffer first.
static cudot_status source(cudot_ctx &ctx, DeviceState &s, Gpu &g, const void *host, void *view, void *&stage,
                           std::size_t size, std::size_t at, std::size_t count, const void *&out) {
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
                                        g.stream));
    out = target;
    return CUDOT_OK;
}

// MANAGED: queues on g's stream the migration of elements [at, at + count) of x and y to GPU g, so the
// kernel reads them from its own memory instead of faulting them in page by page.
static cudot_status prefetch_run(cudot_ctx &ctx, Gpu &g, std::size_t at, std::size_t count) {
    ErrorSink err = ctx.sink();
    const std::size_t sx = element_size(ctx.dtype), sy = element_size(ctx.y_dtype);
    cudaMemLocation gpu{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = g.device;
    CUDOT_CUDA_TRY(err, cudaMemPrefetchAsync(static_cast<char *>(ctx.x) + at * sx, count * sx, gpu, 0, g.stream));
    CUDOT_CUDA_TRY(err, cudaMemPrefetchAsync(static_cast<char *>(ctx.y) + at * sy, count * sy, gpu, 0, g.stream));
    return CUDOT_OK;
}

// Queues, on every GPU, the partials of its run of the tiles [0, gpu_tiles) of the n elements that start
// at element `first` of the buffers, written to h_partials[0..gpu_tiles) (GPU k takes the k-th of equal
// runs). MANAGED prefetches each run to its GPU when `prefetch` says so. Wait with wait_partials.
static cudot_status queue_partials(cudot_ctx &ctx, DeviceState &s, std::size_t first, std::size_t n,
                                   std::size_t gpu_tiles, bool timed, bool prefetch) {
    ErrorSink err = ctx.sink();
    const std::size_t count = s.gpus.size(), sx = element_size(ctx.dtype), sy = element_size(ctx.y_dtype);
    for (std::size_t k = 0; k < count; ++k) {
        Gpu &g = s.gpus[k];
        g.first_tile = gpu_tiles * k / count;
        g.last_tile = gpu_tiles * (k + 1) / count;
        if (g.first_tile == g.last_tile) continue;
        const std::size_t begin = g.first_tile * order::kTile;
        const std::size_t elements = std::min(n, g.last_tile * order::kTile) - begin;
        CUDOT_CUDA_TRY(err, cudaSetDevice(g.device));
        if (timed) CUDOT_CUDA_TRY(err, cudaEventRecord(g.start, g.stream));
        cudot_status status = CUDOT_OK;
        if (ctx.memory == CUDOT_MEMORY_MANAGED && prefetch) status = prefetch_run(ctx, g, first + begin, elements);
        if (status != CUDOT_OK) return status;
        // PINNED: each GPU's buffers hold its run at offset 0 (source() copies it there).
        const void *x = nullptr, *y = nullptr;
        status = source(ctx, s, g, ctx.x, g.d_x, g.stage_x, sx, first + begin, elements, x);
        if (status == CUDOT_OK) status = source(ctx, s, g, ctx.y, g.d_y, g.stage_y, sy, first + begin, elements, y);
        if (status != CUDOT_OK) return status;
        void *partials = static_cast<char *>(g.d_partials) + g.first_tile * s.launcher.partial_bytes;
        status = launch_any(ctx, s, g, x, y, elements, partials, nullptr);
        if (status != CUDOT_OK) return status;
        if (timed) CUDOT_CUDA_TRY(err, cudaEventRecord(g.stop, g.stream));
    }
    return CUDOT_OK;
}

// Waits for queue_partials on every GPU; *slowest_ms (if given) gets the longest GPU's time.
static cudot_status wait_partials(cudot_ctx &ctx, DeviceState &s, float *slowest_ms) {
    ErrorSink err = ctx.sink();
    for (Gpu &g : s.gpus) {
        if (g.first_tile == g.last_tile) continue;
        CUDOT_CUDA_TRY(err, cudaSetDevice(g.device));
        CUDOT_CUDA_TRY(err, cudaStreamSynchronize(g.stream));
        if (slowest_ms) {
            float ms = 0;
            CUDOT_CUDA_TRY(err, cudaEventElapsedTime(&ms, g.start, g.stop));
            *slowest_ms = std::max(*slowest_ms, ms);
        }
    }
    return CUDOT_OK;
}

double current_hybrid_share(const cudot_ctx &ctx) {
    if (!ctx.gpu) return 0.0;
    return ctx.hooks.hybrid_share >= 0 ? ctx.hooks.hybrid_share : ctx.gpu->share;
}

// AUTO with a GPU: the GPUs read tiles [0, g) of the mapped buffers over the bus while the CPU threads
// compute tiles [g, tiles) from host memory; both write tile partials into one mapped array, which
// the CPU joins in the canonical order. The split only decides who computes a tile, so the result is
// the same bits for any g. After each dot, g moves toward the split that makes both finish together.
static cudot_status hybrid_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    const std::size_t tiles = order::tile_count(n);
    const double share = current_hybrid_share(ctx);
    std::size_t g = tiles < kHybridMinTiles && ctx.hooks.hybrid_share < 0
                        ? 0
                        : std::min(tiles, static_cast<std::size_t>(share * static_cast<double>(tiles) + 0.5));
    cudot_status status = g > 0 ? queue_partials(ctx, s, 0, n, g, true, false) : CUDOT_OK;  // AUTO: mapped
    if (status != CUDOT_OK) return status;
    const auto cpu_start = std::chrono::steady_clock::now();
    cpu::compute_partials(ctx.dtype, ctx.y_dtype, ctx.x, ctx.y, n, g, tiles, s.h_partials, ctx.hooks);
    const double cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - cpu_start).count();
    if (g > 0) {
        float gpu_ms = 0;
        status = wait_partials(ctx, s, &gpu_ms);
        if (status != CUDOT_OK) return status;
        if (g < tiles && gpu_ms > 0 && cpu_ms > 0) {
            const double gpu_rate = g / static_cast<double>(gpu_ms), cpu_rate = (tiles - g) / cpu_ms;
            const double balanced = gpu_rate / (gpu_rate + cpu_rate);
            s.share = std::min(0.95, std::max(0.02, 0.5 * s.share + 0.5 * balanced));
        }
    }
    *result = cpu::join_partials(types::kind_of(ctx.dtype, ctx.y_dtype), s.h_partials, tiles);
    return CUDOT_OK;
}

// Several GPUs: each computes the partials of its run of tiles, the host joins them.
static cudot_status multi_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool prefetch, double *result) {
    const std::size_t tiles = order::tile_count(n);
    cudot_status status = queue_partials(ctx, s, 0, n, tiles, false, prefetch);
    if (status == CUDOT_OK) status = wait_partials(ctx, s, nullptr);
    if (status != CUDOT_OK) return status;
    *result = cpu::join_partials(types::kind_of(ctx.dtype, ctx.y_dtype), s.h_partials, tiles);
    return CUDOT_OK;
}

// One GPU: one launch whose last block joins the partials and writes the result to mapped host memory.
static cudot_status single_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool prefetch, double *result) {
    ErrorSink err = ctx.sink();
    Gpu &g = s.gpus[0];
    CUDOT_CUDA_TRY(err, cudaSetDevice(g.device));
    cudot_status status = CUDOT_OK;
    if (ctx.memory == CUDOT_MEMORY_MANAGED && prefetch) status = prefetch_run(ctx, g, 0, n);
    const void *x = nullptr, *y = nullptr;  // PINNED: copied to the device; otherwise read in place
    if (status == CUDOT_OK) status = source(ctx, s, g, ctx.x, g.d_x, g.stage_x, element_size(ctx.dtype), 0, n, x);
    if (status == CUDOT_OK) status = source(ctx, s, g, ctx.y, g.d_y, g.stage_y, element_size(ctx.y_dtype), 0, n, y);
    if (status == CUDOT_OK)
        status = launch_any(ctx, s, g, x, y, n, static_cast<char *>(g.scratch) + kTicketBytes, g.d_result);
    if (status != CUDOT_OK) return status;
    CUDOT_CUDA_TRY(err, cudaStreamSynchronize(g.stream));
    *result = *static_cast<volatile double *>(s.h_result);
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
    const std::size_t bytes = n * (element_size(ctx.dtype) + element_size(ctx.y_dtype));
    const bool adapt = bytes >= 2 * kManagedAdaptBytes;
    const bool prefetch = adapt && s.prefetch;
    const auto start = std::chrono::steady_clock::now();
    cudot_status status =
        s.gpus.size() == 1 ? single_dot(ctx, s, n, prefetch, result) : multi_dot(ctx, s, n, prefetch, result);
    if (status != CUDOT_OK || !adapt) return status;
    // Timed on the host, around the whole dot: events would add microseconds to every call. A dot
    // slower than bus speed moved pages (keep or start prefetching); a prefetching dot faster than
    // that found them already on the GPU (stop prefetching). Several GPUs share the bytes.
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const double slow_ms = bytes / (kMigratedGBps * 1e6 * s.gpus.size()) + 0.25;  // plus 250 us of slack
    s.prefetch = ms > slow_ms;
    return CUDOT_OK;
}

static cudot_status dot_once(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    if (ctx.hybrid) return hybrid_dot(ctx, s, n, result);
    if (ctx.memory == CUDOT_MEMORY_MANAGED) return managed_dot(ctx, s, n, result);
    return s.gpus.size() == 1 ? single_dot(ctx, s, n, false, result) : multi_dot(ctx, s, n, false, result);
}

// A failed operation may have left work queued; wait for it so the next call (or deinit) never overlaps
// it. Its own error, if any, was already reported.
static void drain(DeviceState &s) {
    for (Gpu &g : s.gpus) {
        if (!g.stream) continue;
        (void)cudaSetDevice(g.device);
        (void)cudaStreamSynchronize(g.stream);
    }
    (void)cudaGetLastError();
}

cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result) {
    DeviceState &s = *ctx.gpu;
    cudot_status status = dot_once(ctx, s, n, result);
    if (status != CUDOT_OK) drain(s);
    return status;
}

cudot_status tile_partials(cudot_ctx &ctx, std::size_t first, std::size_t n, void **partials) {
    DeviceState &s = *ctx.gpu;
    // MANAGED: one bulk migration beats page faults
    cudot_status status = queue_partials(ctx, s, first, n, order::tile_count(n), false, true);
    if (status == CUDOT_OK) status = wait_partials(ctx, s, nullptr);
    if (status != CUDOT_OK) {
        drain(s);
        return status;
    }
    *partials = s.h_partials;
    return CUDOT_OK;
}

}  // namespace cuda
}  // namespace cudot
