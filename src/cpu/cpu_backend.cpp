// cpu_backend.cpp - the HOST strategy. See cpu_backend.hpp and, for the order of operations, order.hpp.
#include "cpu_backend.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <chrono>
#include <cstdlib>
#include <new>

#if defined(_WIN32)
#include <malloc.h>
#endif

#include "../core/order.hpp"
#include "../core/rows.hpp"
#include "../process/input_buffers.hpp"
#include "../process/process_limits.hpp"
#include "exact_dot.hpp"
#include "thread_pool.hpp"
#include "tile_kernels.hpp"

namespace cudot {
namespace cpu {

// When the pool takes a dot, and how the dot is cut into tasks. Sizes are bytes of x and y read.
struct ParallelPolicy {
    // Below this a dot runs on the calling thread, with no pool involved. Inputs the caller has just
    // written sit in its own L2 cache, and other cores must first fetch them from there: below about
    // that cache's size, sharing a dot of fresh data saves less than the fetching costs (resident data
    // pays for threads sooner). Dot2 does about three times the arithmetic per element of the Double
    // kind, so it pays at fewer bytes. The Exact kind streams as fast as the Double kind.
    static constexpr std::size_t kBytesDouble = std::size_t(1) << 20;
    static constexpr std::size_t kBytesDot2 = std::size_t(512) << 10;
    // Tasks are whole tiles, about this many per thread, so that every thread gets work and a thread
    // that starts late (it was asleep) or runs slow leaves little behind...
    static constexpr std::size_t kTasksPerThread = 4;
    // ...but no larger than this, so that large dots still balance across threads.
    static constexpr std::size_t kMaxTaskBytes = std::size_t(512) << 10;

    // Between these sizes a HOST context measures both ways per size class and keeps the faster
    // (PathChooser): whether the pool pays depends on whether the inputs are in the caller's cache
    // (written by it: the pool pays only for larger dots) or not (resident, or written by other
    // threads), which the library cannot see (docs/PERFORMANCE.md has the crossover sizes).
    static constexpr std::size_t kChooseFrom = std::size_t(128) << 10;
    static constexpr std::size_t kChooseUpTo = std::size_t(4) << 20;

    static std::size_t threshold(types::Kind kind) { return kind == types::Kind::Dot2 ? kBytesDot2 : kBytesDouble; }
};

struct HostState {
    void *partials = nullptr;  // one accumulator per tile of capacity
    WhereChooser where;           // calling thread or pool, for sizes where either can win
};

std::size_t physical_memory() { return limits::usable_memory(); }

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
                    "HOST buffers of %zu + %zu bytes exceed the memory this process may use (%zu bytes: physical "
                    "memory, or its cgroup's limit if lower)", x_bytes,
                    y_bytes, physical);
    HostState *state = new (std::nothrow) HostState;
    if (!state) return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the context");
    (void)tile_kernels();  // the process's first init builds the kernel tables, not its first dot
    ctx.host = state;
    ctx.x = buffers::map(x_bytes);  // zero pages (input_buffers.hpp)
    ctx.y = buffers::map(y_bytes);
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
    // Replaced by zero pages, not freed: a caller's view that outlives the context stays harmless.
    buffers::retire(ctx.x, ctx.capacity * element_size(ctx.dtype));
    buffers::retire(ctx.y, ctx.capacity * element_size(ctx.y_dtype));
    ctx.x = ctx.y = nullptr;
}

namespace {

// Bytes of one tile partial of a pair's kind, packed.
std::size_t partial_bytes(types::Kind kind) {
    return kind == types::Kind::Dot2 ? sizeof(order::SumF64)
                                     : kind == types::Kind::Exact ? sizeof(order::SumI64) : sizeof(order::SumDouble);
}

// A tile of a view that is not dense (strided, reversed, repeated, or not aligned to its type) is first
// gathered into a buffer of the thread's, so the same inner loops read it: they see the same values in
// the same order, so the tile's partial has the same bits. Each thread keeps its buffers (two tiles of
// the widest type, 128 KiB) until it ends.
class GatherBuffers {
   public:
    // Buffers for x and y, or nullptr if they cannot be had.
    unsigned char *get() {
        if (!bytes_) bytes_.reset(new (std::nothrow) unsigned char[2 * kTileBytes + 64]);
        return bytes_.get();
    }
    static constexpr std::size_t kTileBytes = order::kTile * sizeof(double);

   private:
    std::unique_ptr<unsigned char[]> bytes_;
};
thread_local GatherBuffers gather_buffers;

template <std::size_t Size>
void gather_elements(const Operand &o, std::size_t from, std::size_t count, unsigned char *out) {
    const unsigned char *p = o.at(from);
    const std::ptrdiff_t step = o.stride_bytes();
    for (std::size_t i = 0; i < count; ++i, p += step) std::memcpy(out + i * Size, p, Size);
}

// Elements [from, from + count) of o, contiguous and aligned: o's own memory when it is dense, else a copy.
const unsigned char *tile_source(const Operand &o, std::size_t from, std::size_t count, unsigned char *buffer) {
    if (o.dense()) return o.at(from);
    switch (o.size()) {
        case 1: gather_elements<1>(o, from, count, buffer); break;
        case 2: gather_elements<2>(o, from, count, buffer); break;
        case 4: gather_elements<4>(o, from, count, buffer); break;
        default: gather_elements<8>(o, from, count, buffer); break;
    }
    return buffer;
}

// Tiles [first, last) of a dot, and where their partials go.
struct Job {
    PartialsFn kernel;
    const Operands *ops;
    std::size_t first, last;
    void *partials;
    std::size_t partial_size;        // bytes of one partial
    std::size_t tiles_per_task = 0;  // when shared with the pool
    std::atomic<bool> out_of_memory{false};

    void run_tiles(std::size_t from, std::size_t to) {
        const Operands &o = *ops;
        if (o.x.dense() && o.y.dense()) {
            kernel(o.x.data, o.y.data, o.n, from, to, partials);
            return;
        }
        unsigned char *buffers = gather_buffers.get();
        if (!buffers) {
            out_of_memory.store(true, std::memory_order_relaxed);
            return;
        }
        unsigned char *bx = buffers, *by = buffers + GatherBuffers::kTileBytes;
        for (std::size_t t = from; t < to; ++t) {
            const std::size_t begin = t * order::kTile, count = std::min(order::kTile, o.n - begin);
            // The tile's partial is a function of its elements alone: tile 0 of a dot of `count` elements.
            kernel(tile_source(o.x, begin, count, bx), tile_source(o.y, begin, count, by), count, 0, 1,
                   static_cast<unsigned char *>(partials) + t * partial_size);
        }
    }
    static void task(void *self, std::size_t index) {
        Job &job = *static_cast<Job *>(self);
        const std::size_t from = job.first + index * job.tiles_per_task;
        job.run_tiles(from, std::min(from + job.tiles_per_task, job.last));
    }
};

void run_on_pool(Job &job, std::size_t pair_bytes, const PoolUse &use) {
    const std::size_t tiles = job.last - job.first;
    ThreadPool &pool = ThreadPool::instance();
    const std::size_t threads = std::min(use.max_threads, pool.threads());
    const std::size_t tile_bytes = order::kTile * pair_bytes;
    const std::size_t largest = std::max<std::size_t>(1, ParallelPolicy::kMaxTaskBytes / tile_bytes);
    const std::size_t wanted = threads * ParallelPolicy::kTasksPerThread;
    job.tiles_per_task = std::min(largest, (tiles + wanted - 1) / wanted);
    pool.run((tiles + job.tiles_per_task - 1) / job.tiles_per_task, static_cast<unsigned>(threads), &Job::task, &job);
}

// Computes the job's partials on the calling thread or on the pool: by size, and in the band where
// either can win, by the context's measurements (chooser; nullptr: by size alone).
void compute_tiles(Job &job, std::size_t pair_bytes, const PoolUse &use, WhereChooser *chooser = nullptr) {
    const std::size_t tiles = job.last - job.first;
    const std::size_t elements = std::min(job.ops->n, job.last * order::kTile) - job.first * order::kTile;
    const std::size_t bytes = elements * pair_bytes;
    if (tiles > 1 && chooser && use.measured && bytes >= ParallelPolicy::kChooseFrom && bytes < ParallelPolicy::kChooseUpTo) {
        auto any = [](int) { return true; };
        // Classes by bytes, not elements: a chooser may serve several pairs (own arrays: one per thread).
        const int where = chooser->choose(bytes, any);
        const auto start = std::chrono::steady_clock::now();
        if (where == kPool) run_on_pool(job, pair_bytes, use);
        else job.run_tiles(job.first, job.last);
        chooser->record(bytes, where,
                        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count(), any);
        return;
    }
    if (bytes < use.from_bytes || tiles == 1) job.run_tiles(job.first, job.last);
    else run_on_pool(job, pair_bytes, use);
}

std::size_t pair_bytes(const Operands &ops) { return ops.x.size() + ops.y.size(); }

}  // namespace

PoolUse pool_use(int32_t x_dtype, int32_t y_dtype) {
    PoolUse use;
    use.from_bytes = ParallelPolicy::threshold(types::kind_of(x_dtype, y_dtype));
    return use;
}

cudot_status compute_packed_partials(const Operands &ops, std::size_t first, std::size_t last, void *partials,
                                     const PoolUse &pool, WhereChooser *chooser) {
    if (first >= last) return CUDOT_OK;
    const types::Kind kind = types::kind_of(ops.x.dtype, ops.y.dtype);
    Job job{tile_kernels().get(ops.x.dtype, ops.y.dtype, ops.n), &ops, first, last, partials, partial_bytes(kind)};
    compute_tiles(job, pair_bytes(ops), pool, chooser);
    return job.out_of_memory.load(std::memory_order_relaxed) ? CUDOT_ERROR_OUT_OF_MEMORY : CUDOT_OK;
}

void *partial_scratch(cudot_ctx &ctx) { return ctx.host->partials; }

cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result) {
    return dot(ctx.operands(n), ctx.host->partials, ctx.pool, &ctx.host->where, result);
}

cudot_status dot(const Operands &ops, void *partials, const PoolUse &pool, WhereChooser *chooser, double *result) {
    const std::size_t tiles = order::tile_count(ops.n);
    if (cudot_status status = compute_packed_partials(ops, 0, tiles, partials, pool, chooser)) return status;
    *result = order::join_packed_partials(types::kind_of(ops.x.dtype, ops.y.dtype), partials, tiles);
    return CUDOT_OK;
}

// ---- Rows: many dots in one call ----
//
// Each row is dotted exactly as a single dot of its views is (compute_packed_partials, then the join),
// so it has that dot's bits whoever computes it. Rows below the pool's threshold, and every row of up
// to kSoloTiles tiles where there are at least two rows a thread, are spread over the pool, whole rows
// per task, each computed on one thread; longer rows come after, one at a time, each shared with the
// pool as a single dot of its size is. In the exact mode each row is exact_dot's, the same split.

namespace {

// The most tiles a row computed inside a task has (rows below the threshold, 1 MiB of the narrowest
// pair at two bytes an element, have at most 64): 2 KiB of partials on the task's stack.
constexpr std::size_t kSoloTiles = 128;

struct RowsJob {
    const Rows *rows;
    double *results;
    std::size_t limit_bytes;  // rows that read fewer bytes are computed inside tasks
    std::size_t rows_per_task = 1;
    // At least two rows a thread: every row whose partials fit a task's buffer is computed whole inside
    // a task too, rather than each shared with the pool in turn (a call into the pool a row).
    bool many = false;
    std::atomic<bool> out_of_memory{false};

    // Equal dense rows of one lane row or less in the canonical mode, of a pair the copy has a loop over
    // them for (short_rows in tile_kernels.inc).
    bool short_dense() const {
        return !rows->exact && rows->layout == Rows::Layout::Strided && rows->n >= 1 && rows->n <= order::kLanes &&
               rows->x.dense() && rows->y.dense() && tile_kernels().short_rows(rows->x.dtype, rows->y.dtype);
    }
    bool solo(std::size_t i) const {
        const std::size_t n = rows->length(i);
        return n * pair_bytes_of(*rows) < limit_bytes || (many && order::tile_count(n) <= kSoloTiles);
    }
    static std::size_t pair_bytes_of(const Rows &r) { return r.x.size() + r.y.size(); }

    // Rows [from, to) that are computed inside tasks, on the calling thread. A dense row (the common
    // case) goes straight to the function a single dot of its length picks, then the same join: the
    // steps of dot() without what serves a dot that may share the pool or gather its tiles.
    void run_rows(std::size_t from, std::size_t to) {
        if (short_dense()) {  // the copy's own loop over them
            const Operands first = rows->row(from);
            tile_kernels().short_rows(rows->x.dtype, rows->y.dtype)(
                first.x.data, first.y.data, rows->n, to - from, rows->x_row_stride * std::int64_t(rows->x.size()),
                rows->y_row_stride * std::int64_t(rows->y.size()), results + from);
            return;
        }
        PoolUse alone;
        alone.max_threads = 1;
        alone.measured = false;
        alone.from_bytes = ~std::size_t(0);
        alignas(16) unsigned char partials[kSoloTiles * 16];
        const types::Kind kind = types::kind_of(rows->x.dtype, rows->y.dtype);
        const TileKernels &kernels = tile_kernels();
        for (std::size_t i = from; i < to; ++i) {
            if (!solo(i)) continue;
            const Operands ops = rows->row(i);
            if (ops.n == 0) {
                results[i] = 0.0;
                continue;
            }
            if (rows->exact) {  // on this thread alone: it allocates nothing
                (void)exact_dot(ops, &results[i], &kernels, false);
            } else if (ops.x.dense() && ops.y.dense()) {
                const std::size_t tiles = order::tile_count(ops.n);
                kernels.get(ops.x.dtype, ops.y.dtype, ops.n)(ops.x.data, ops.y.data, ops.n, 0, tiles, partials);
                results[i] = order::join_packed_partials(kind, partials, tiles);
            } else if (dot(ops, partials, alone, nullptr, &results[i]) != CUDOT_OK) {
                out_of_memory.store(true, std::memory_order_relaxed);
            }
        }
    }
    static void task(void *self, std::size_t index) {
        RowsJob &job = *static_cast<RowsJob *>(self);
        const std::size_t from = index * job.rows_per_task;
        job.run_rows(from, std::min(from + job.rows_per_task, job.rows->count));
    }
};

}  // namespace

cudot_status dot_rows(const Rows &rows, double *results, void *partials) {
    if (rows.count == 0) return CUDOT_OK;
    const PoolUse use = pool_use(rows.x.dtype, rows.y.dtype);
    const std::size_t pair = RowsJob::pair_bytes_of(rows);
    static_assert(kSoloTiles * order::kTile * 2 > ParallelPolicy::kBytesDouble, "solo rows fit their partials");
    RowsJob job{&rows, results, use.from_bytes};
    ThreadPool &pool = ThreadPool::instance();
    job.many = rows.count >= 2 * std::size_t(std::min<unsigned>(use.max_threads, pool.threads()));
    std::size_t solo_bytes = 0, solo_rows = 0;
    if (rows.layout != Rows::Layout::Segmented) {  // equal rows: all solo or none
        solo_rows = job.solo(0) ? rows.count : 0;
        solo_bytes = solo_rows * rows.n * pair;
    } else {
        for (std::size_t i = 0; i < rows.count; ++i)
            if (job.solo(i)) {
                solo_bytes += rows.length(i) * pair;
                ++solo_rows;
            }
    }
    if (solo_rows > 0) {
        if (solo_bytes < use.from_bytes || pool.threads() == 1) {
            job.run_rows(0, rows.count);  // together no more than one dot the calling thread keeps
        } else {
            const std::size_t threads = std::min<std::size_t>(use.max_threads, pool.threads());
            const std::size_t average = std::max<std::size_t>(1, solo_bytes / solo_rows);
            const std::size_t by_bytes = std::max<std::size_t>(1, ParallelPolicy::kMaxTaskBytes / average);
            const std::size_t wanted = threads * ParallelPolicy::kTasksPerThread;
            job.rows_per_task = std::max<std::size_t>(1, std::min(by_bytes, (rows.count + wanted - 1) / wanted));
            pool.run((rows.count + job.rows_per_task - 1) / job.rows_per_task, static_cast<unsigned>(threads),
                     &RowsJob::task, &job);
        }
        if (job.out_of_memory.load(std::memory_order_relaxed)) return CUDOT_ERROR_OUT_OF_MEMORY;
    }
    for (std::size_t i = 0; solo_rows < rows.count && i < rows.count; ++i)
        if (!job.solo(i))
            if (cudot_status status = rows.exact ? exact_dot(rows.row(i), &results[i])
                                                 : dot(rows.row(i), partials, use, nullptr, &results[i]))
                return status;
    return CUDOT_OK;
}

}  // namespace cpu
}  // namespace cudot
