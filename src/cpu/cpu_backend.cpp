// cpu_backend.cpp - the HOST strategy. See cpu_backend.hpp and, for the order of operations, order.hpp.
#include "cpu_backend.hpp"

#include <cstdlib>
#include <new>

#if defined(_WIN32)
#include <malloc.h>
#include <windows.h>
#else
#include <unistd.h>
#endif

#include "../order.hpp"
#include "thread_pool.hpp"
#include "tile_kernels.hpp"

namespace cudot {
namespace cpu {

// Below this many tiles a dot runs on the calling thread: waking workers costs more than it saves.
// F64's compensated arithmetic costs about three times F32's per element, so it goes parallel sooner.
constexpr std::size_t kSerialTilesF32 = 16;  // 2^17 elements
constexpr std::size_t kSerialTilesF64 = 4;   // 2^15 elements
// Tiles per pool task: big enough to amortize the task claim, small enough to balance threads.
constexpr std::size_t kTilesPerTask = 8;

struct HostState {
    void *partials = nullptr;  // one accumulator per tile of capacity
};

std::size_t physical_memory() {
#if defined(_WIN32)
    MEMORYSTATUSEX status;
    status.dwLength = sizeof status;
    return GlobalMemoryStatusEx(&status) ? static_cast<std::size_t>(status.ullTotalPhys) : 0;
#else
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
#endif
}

void *allocate_host(std::size_t bytes) {
    constexpr std::size_t kAlign = 4096;
    std::size_t physical = physical_memory();
    if (physical != 0 && bytes > physical) return nullptr;  // would only succeed by overcommitting
    std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    if (rounded < bytes || rounded == 0) rounded = kAlign;
#if defined(_WIN32)
    return _aligned_malloc(rounded, kAlign);
#else
    void *p = nullptr;
    return posix_memalign(&p, kAlign, rounded) == 0 ? p : nullptr;
#endif
}

void free_host(void *p) {
#if defined(_WIN32)
    _aligned_free(p);
#else
    std::free(p);
#endif
}

static std::size_t partial_size(int32_t dtype) {
    return dtype == CUDOT_F64 ? sizeof(order::SumF64) : sizeof(order::SumF32);
}

cudot_status create(cudot_ctx &ctx, ErrorSink err) {
    std::size_t bytes = ctx.capacity * element_size(ctx.dtype);  // overflow checked by the caller
    std::size_t tiles = order::tile_count(ctx.capacity);
    std::size_t physical = physical_memory();
    if (physical != 0 && bytes > physical / 2)
        return fail(err, CUDOT_ERROR_OUT_OF_MEMORY,
                    "HOST buffers of 2 x %zu bytes exceed this machine's physical memory (%zu bytes)", bytes,
                    physical);
    HostState *state = new (std::nothrow) HostState;
    if (!state) return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the context");
    ctx.host = state;
    ctx.x = allocate_host(bytes);
    ctx.y = allocate_host(bytes);
    state->partials = allocate_host(tiles * partial_size(ctx.dtype));
    if (!ctx.x || !ctx.y || !state->partials) {
        destroy(ctx);
        return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "cannot allocate 2 x %zu bytes of host memory", bytes);
    }
    return CUDOT_OK;
}

void destroy(cudot_ctx &ctx) {
    if (ctx.host) {
        free_host(ctx.host->partials);
        delete ctx.host;
        ctx.host = nullptr;
    }
    free_host(ctx.x);
    free_host(ctx.y);
    ctx.x = ctx.y = nullptr;
}

template <class T>
struct Job {
    const T *x;
    const T *y;
    std::size_t n;
    std::size_t first, last;  // tiles to compute
    typename order::Arith<T>::Acc *partials;
    const TileKernels *kernels;

    void run_tiles(std::size_t from, std::size_t to) const;
    static void task(void *self, std::size_t index) {
        const Job &job = *static_cast<const Job *>(self);
        std::size_t from = job.first + index * kTilesPerTask;
        std::size_t to = from + kTilesPerTask < job.last ? from + kTilesPerTask : job.last;
        job.run_tiles(from, to);
    }
};

template <>
void Job<float>::run_tiles(std::size_t from, std::size_t to) const {
    kernels->f32(x, y, n, from, to, partials);
}
template <>
void Job<double>::run_tiles(std::size_t from, std::size_t to) const {
    kernels->f64(x, y, n, from, to, partials);
}

template <class T>
static void partials_typed(const void *x, const void *y, std::size_t n, std::size_t first, std::size_t last,
                           void *partials, const TestHooks &hooks) {
    using Acc = typename order::Arith<T>::Acc;
    if (first >= last) return;
    Job<T> job{static_cast<const T *>(x), static_cast<const T *>(y), n, first, last, static_cast<Acc *>(partials),
               &tile_kernels()};
    const std::size_t tiles = last - first;
    const std::size_t serial_tiles = sizeof(T) == 8 ? kSerialTilesF64 : kSerialTilesF32;
    if (tiles <= serial_tiles && !hooks.cpu_always_parallel) {
        job.run_tiles(first, last);
    } else {
        ThreadPool::instance().run((tiles + kTilesPerTask - 1) / kTilesPerTask, hooks.cpu_threads, &Job<T>::task, &job);
    }
}

void compute_partials(int32_t dtype, const void *x, const void *y, std::size_t n, std::size_t first,
                      std::size_t last, void *partials, const TestHooks &hooks) {
    if (dtype == CUDOT_F64)
        partials_typed<double>(x, y, n, first, last, partials, hooks);
    else
        partials_typed<float>(x, y, n, first, last, partials, hooks);
}

double join_partials(int32_t dtype, const void *partials, std::size_t tiles) {
    if (dtype == CUDOT_F64)
        return order::Arith<double>::finish(
            order::join_tiles<double>(static_cast<const order::SumF64 *>(partials), tiles));
    return order::Arith<float>::finish(order::join_tiles<float>(static_cast<const order::SumF32 *>(partials), tiles));
}

cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result) {
    const std::size_t tiles = order::tile_count(n);
    compute_partials(ctx.dtype, ctx.x, ctx.y, n, 0, tiles, ctx.host->partials, ctx.hooks);
    *result = join_partials(ctx.dtype, ctx.host->partials, tiles);
    return CUDOT_OK;
}

}  // namespace cpu
}  // namespace cudot
