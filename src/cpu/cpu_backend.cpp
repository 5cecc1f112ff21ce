// cpu_backend.cpp - the HOST strategy. See cpu_backend.hpp and, for the order of operations, order.hpp.
#include "cpu_backend.hpp"

#include <algorithm>
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
constexpr std::size_t kSerialTilesF32 = 16;  // 2^17 elements (Double and Exact kinds)
constexpr std::size_t kSerialTilesF64 = 4;   // 2^15 elements (Dot2)
// Work per pool task: big enough to amortize the task claim and let the hardware prefetchers ramp up
// on each stream, small enough to balance threads. Counted in bytes read (8 tiles of an f32 pair), so
// narrow pairs get proportionally more tiles per task; never fewer than 8 tiles.
constexpr std::size_t kTaskBytes = 8 * order::kTile * 8;
constexpr std::size_t kMinTilesPerTask = 8;

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

cudot_status create(cudot_ctx &ctx, ErrorSink err) {
    // Overflow of these products was ruled out by the caller.
    const std::size_t x_bytes = ctx.capacity * element_size(ctx.dtype);
    const std::size_t y_bytes = ctx.capacity * element_size(ctx.y_dtype);
    std::size_t tiles = order::tile_count(ctx.capacity);
    std::size_t physical = physical_memory();
    if (physical != 0 && (x_bytes > physical / 2 || y_bytes > physical / 2 || x_bytes + y_bytes > physical))
        return fail(err, CUDOT_ERROR_OUT_OF_MEMORY,
                    "HOST buffers of %zu + %zu bytes exceed this machine's physical memory (%zu bytes)", x_bytes,
                    y_bytes, physical);
    HostState *state = new (std::nothrow) HostState;
    if (!state) return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the context");
    ctx.host = state;
    ctx.x = allocate_host(x_bytes);
    ctx.y = allocate_host(y_bytes);
    state->partials = allocate_host(tiles * order::kMaxPartialBytes);
    if (!ctx.x || !ctx.y || !state->partials) {
        destroy(ctx);
        return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "cannot allocate %zu + %zu bytes of host memory", x_bytes, y_bytes);
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

struct Job {
    const void *x;
    const void *y;
    std::size_t n;
    std::size_t first, last;  // tiles to compute
    void *partials;
    PartialsFn kernel;
    std::size_t tiles_per_task;

    void run_tiles(std::size_t from, std::size_t to) const { kernel(x, y, n, from, to, partials); }
    static void task(void *self, std::size_t index) {
        const Job &job = *static_cast<const Job *>(self);
        std::size_t from = job.first + index * job.tiles_per_task;
        std::size_t to = from + job.tiles_per_task < job.last ? from + job.tiles_per_task : job.last;
        job.run_tiles(from, to);
    }
};

void compute_partials(int32_t x_dtype, int32_t y_dtype, const void *x, const void *y, std::size_t n,
                      std::size_t first, std::size_t last, void *partials, const TestHooks &hooks) {
    if (first >= last) return;
    const std::size_t tile_bytes = order::kTile * (types::size_of(x_dtype) + types::size_of(y_dtype));
    const std::size_t per_task = std::max(kMinTilesPerTask, kTaskBytes / tile_bytes);
    Job job{x, y, n, first, last, partials, tile_kernels().get(x_dtype, y_dtype), per_task};
    const std::size_t tiles = last - first;
    // Dot2 costs about three times the Double kind per element: it goes parallel sooner.
    const std::size_t serial_tiles =
        types::kind_of(x_dtype, y_dtype) == types::Kind::Dot2 ? kSerialTilesF64 : kSerialTilesF32;
    if (tiles <= serial_tiles && !hooks.cpu_always_parallel) {
        job.run_tiles(first, last);
    } else {
        ThreadPool::instance().run((tiles + per_task - 1) / per_task, hooks.cpu_threads, &Job::task, &job);
    }
}

void *partial_scratch(cudot_ctx &ctx) { return ctx.host->partials; }

template <types::Kind K>
static double join_kind(const void *partials, std::size_t tiles) {
    using A = order::Arith<K>;
    return A::finish(order::join_tiles<A>(static_cast<const typename A::Acc *>(partials), tiles));
}

double join_partials(types::Kind kind, const void *partials, std::size_t tiles) {
    switch (kind) {
        case types::Kind::Dot2: return join_kind<types::Kind::Dot2>(partials, tiles);
        case types::Kind::Exact: return join_kind<types::Kind::Exact>(partials, tiles);
        default: return join_kind<types::Kind::Double>(partials, tiles);
    }
}

cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result) {
    const std::size_t tiles = order::tile_count(n);
    compute_partials(ctx.dtype, ctx.y_dtype, ctx.x, ctx.y, n, 0, tiles, ctx.host->partials, ctx.hooks);
    *result = join_partials(types::kind_of(ctx.dtype, ctx.y_dtype), ctx.host->partials, tiles);
    return CUDOT_OK;
}

}  // namespace cpu
}  // namespace cudot
