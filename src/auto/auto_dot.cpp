// auto_dot.cpp - AUTO with a GPU: which road each dot takes, chosen from its size and measured times.
//
// An AUTO context's buffers are host memory that every GPU can read in place: mapped page-locked memory,
// or, opted in (CUDOT_AUTO_MANAGED=1; cuda::auto_strategy says where it applies), managed memory advised
// to stay on the host and mapped for the GPUs. Three roads read
// them there: the CPU alone (cpu::dot: the calling thread for small dots, the thread pool for larger
// ones), the GPU alone (reading over the bus), and both at once (the GPUs take the first share of the
// tiles, the CPU the rest, and the host joins all the partials). Every road gives the same bits, so the
// choice is only about time, and the fastest one depends on the machine, the size and whether the host
// just wrote the inputs: PathChooser measures.
//
// Managed buffers add a fourth way, for inputs the host leaves alone between dots: AUTO moves them into
// GPU memory (a bulk migration), and while later dots on the GPUs, reading them there, beat the best of
// the three roads, every dot goes there; a write by the host moves the pages it writes back (the driver
// sees it), the next GPU dot reads those over the bus, is slower, and AUTO moves the rest back too and
// returns to the three roads. The CPU never reads pages left in GPU memory (that would fault them back
// one by one). A move that does not pay is dear: a migration of just-written pages costs a fixed time far
// above a small dot's, and the caller's next fill faults the pages back at many times a plain write's
// time. So AUTO moves only after a dot whose result has
// the same bits as the last dot of the same size (inputs rewritten with new values almost never give
// that), and then first a sentinel: the first kSentinel elements. The next dot first reads the sentinel
// on the GPU: as fast as right after the move, the host left it alone and the whole inputs follow;
// slower (twice: one slow read may be noise), the host wrote it (perhaps the same values again), and the
// wait before the next sentinel doubles (up to kMoveWaitMax dots of that size). Resident, two slow dots
// in a row send the inputs back.
#include "auto_dot.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "../core/exact_sum.hpp"
#include "../cpu/cpu_backend.hpp"
#include "../cpu/exact_dot.hpp"
#include "../cuda/cuda_backend.hpp"
#include "../core/order.hpp"
#include "../core/path_chooser.hpp"
#include "../core/seams.hpp"
#include "../core/types.hpp"

namespace cudot {

namespace {

enum Road { kCpu, kGpu, kSplit, kRoads };

// Below this many elements the CPU alone always wins (a launch alone costs more than the whole dot on
// the calling thread), and AUTO goes there without timing anything.
constexpr std::size_t kGpuMinElements = std::size_t(1) << 14;
// The split needs enough tiles to give both sides a useful share.
constexpr std::size_t kSplitMinTiles = 16;
constexpr double kFirstShare = 0.25;  // the GPUs' share of a context's first split dot
// Host-road dots of one size between two moves into GPU memory after one that did not pay: the first
// wait, and the longest.
constexpr unsigned kMoveWaitFirst = 4, kMoveWaitMax = 256;
// ... after a move whose fastest dot from GPU memory did not beat the roads (small dots, where a launch
// alone costs more than the CPU's whole dot): no host write to blame, the GPU is no faster there.
constexpr unsigned kMoveWaitNoGain = 64;
// Elements of the sentinel: a GPU dot reads them from GPU memory within a launch's time, over the bus
// (2-4 MB) several times slower.
constexpr std::size_t kSentinel = std::size_t(1) << 18;
// No bus is faster than this (PCIe 5.0 x16 moves about 64 GB/s): a GPU dot that reads its inputs over
// the bus takes at least their bytes at this speed on top of the same dot from GPU memory.
constexpr double kBusBytesPerUs = 64e3;

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

// The fastest time seen for one size (a newer size starts afresh): noise only ever adds time.
struct FastestAt {
    std::size_t n = 0;
    double us = 0;
    void note(std::size_t size, double t) {
        if (n != size || t < us) {
            n = size;
            us = t;
        }
    }
};

struct AutoState {
    PathChooser<kRoads> chooser;
    cpu::WhereChooser where;     // the CPU road's calling thread or pool, measured as a HOST context does
    double share = kFirstShare;  // the GPUs' share of a split dot's tiles, moved after each toward balance
    double rows_share = kFirstShare;  // the same for the rows of cudot_dot_each_row
    // Managed buffers: elements [0, on_gpus) were moved into GPU memory and the CPU has not read them
    // since (0: all on the host); per size class, the wait between moves and the dots left of it (0:
    // none, the last move paid or none was made).
    std::size_t on_gpus = 0;
    unsigned move_every[64] = {}, move_wait[64] = {};
    // The size and the result's bits of the last dot on the host: the same again hints at inputs left alone.
    std::size_t last_n = 0;
    std::uint64_t last_bits = 0;
    bool unchanged = false;    // the last road dot gave the same bits as the one before: inputs left alone
    std::size_t sentinel = 0;  // the sentinel moved after the last dot (0: none)
    FastestAt reference;       // the GPUs' kernel time reading a sentinel right after its move
    FastestAt resident;        // dots of inputs in GPU memory
    unsigned slow_resident = 0;  // resident dots in a row that were slow (resident_dot)
    std::size_t last_road_n = 0;  // the size of the last dot on a road
    AutoCounts counts;         // events, for tests and experiments (auto_counts adds the times)
};

namespace {

// The CPU road: the calling thread or the pool, chosen as HOST chooses (by measurement in the band of
// sizes where either can win; without a state, by size alone).
cudot_status cpu_dot(cudot_ctx &ctx, AutoState *state, std::size_t n, double *result) {
    if (ctx.mode == CUDOT_MODE_EXACT) {
        const cudot_status status = cpu::exact_dot(ctx.operands(n), result);
        if (status == CUDOT_ERROR_OUT_OF_MEMORY)
            return fail(ctx.sink(), status, "out of host memory for the CPU threads' exact sums");
        return status;
    }
    return cpu::dot(ctx.operands(n), cuda::host_partials(ctx), ctx.pool, state ? &state->where : nullptr, result);
}

// The exact mode's join of a dot whose GPUs computed tiles [0, gpu_tiles) (each GPU's exact partial) and
// whose CPU threads summed the rest into `cpu_sum` (or nothing: nullptr): exact, then rounded once.
cudot_status join_exact(cudot_ctx &ctx, exact::Sum *cpu_sum, double *result) {
    std::unique_ptr<exact::Sum> sum(new (std::nothrow) exact::Sum);
    if (!sum) return fail(ctx.sink(), CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for an exact sum");
    exact::clear(*sum);
    if (cpu_sum) exact::merge(*sum, *cpu_sum);
    if (cudot_status status = cuda::add_gpu_exact_sums(ctx, *sum)) return status;
    *result = exact::round(*sum);
    return CUDOT_OK;
}

// The CPU threads' share of an exact split dot: the exact sum of elements [first, n).
cudot_status cpu_exact_share(cudot_ctx &ctx, std::size_t first, std::size_t n, exact::Sum &sum) {
    exact::clear(sum);
    if (first >= n) return CUDOT_OK;
    Operands ops = ctx.operands(n - first);
    ops.x.data = ctx.operands(n).x.at(first);
    ops.y.data = ctx.operands(n).y.at(first);
    if (cpu::exact_sum(ops, sum) != CUDOT_OK)
        return fail(ctx.sink(), CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the CPU threads' exact sums");
    return CUDOT_OK;
}

// The GPUs compute tiles [0, g) while the CPU threads compute [g, tiles), both into the context's mapped
// array of partials; after each split dot, g moves toward the share at which both finish together.
cudot_status split_dot(cudot_ctx &ctx, AutoState *state, std::size_t n, double share, double *result) {
    const std::size_t tiles = order::tile_count(n);
    const std::size_t g = std::min(tiles, static_cast<std::size_t>(share * static_cast<double>(tiles) + 0.5));
    void *partials = cuda::host_partials(ctx);
    if (g > 0)
        if (cudot_status status = cuda::queue_tiles(ctx, n, g)) return status;
    const auto start = Clock::now();
    const bool exact = ctx.mode == CUDOT_MODE_EXACT;
    std::unique_ptr<exact::Sum> cpu_sum(exact ? new (std::nothrow) exact::Sum : nullptr);
    const cudot_status cpu_status =
        !exact     ? cpu::compute_packed_partials(ctx.operands(n), g, tiles, partials, ctx.pool)
        : cpu_sum  ? cpu_exact_share(ctx, g * order::kTile, n, *cpu_sum)
                   : fail(ctx.sink(), CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for an exact sum");
    const double cpu_ms = elapsed_ms(start);
    float gpu_ms = 0;
    if (g > 0)  // the GPUs' work ends before any return
        if (cudot_status status = cuda::wait_tiles(ctx, n, &gpu_ms)) return status;
    if (cpu_status != CUDOT_OK) return cpu_status;
    if (state && g > 0 && g < tiles && gpu_ms > 0 && cpu_ms > 0) {
        const double gpu_rate = g / static_cast<double>(gpu_ms), cpu_rate = (tiles - g) / cpu_ms;
        const double balanced = gpu_rate / (gpu_rate + cpu_rate);
        state->share = std::min(0.95, std::max(0.02, 0.5 * state->share + 0.5 * balanced));
    }
    if (exact) return g > 0 ? join_exact(ctx, cpu_sum.get(), result) : (*result = exact::round(*cpu_sum), CUDOT_OK);
    *result = order::join_packed_partials(types::kind_of(ctx.dtype, ctx.y_dtype), partials, tiles);
    return CUDOT_OK;
}

// The GPUs alone compute every tile of a dot of n elements, reading the inputs where they are. *gpu_us:
// the slowest GPU's kernel time from CUDA events, which no launch latency or wake-up of the host's
// thread (after an idle moment: tens of microseconds) lengthens.
cudot_status gpu_tiles_dot(cudot_ctx &ctx, std::size_t n, double *result, double *gpu_us) {
    const std::size_t tiles = order::tile_count(n);
    float ms = 0;
    if (cudot_status status = cuda::queue_tiles(ctx, n, tiles)) return status;
    if (cudot_status status = cuda::wait_tiles(ctx, n, &ms)) return status;
    *gpu_us = ms * 1000.0;
    if (ctx.mode == CUDOT_MODE_EXACT) return join_exact(ctx, nullptr, result);
    *result = order::join_packed_partials(types::kind_of(ctx.dtype, ctx.y_dtype), cuda::host_partials(ctx), tiles);
    return CUDOT_OK;
}

cudot_status run(int road, cudot_ctx &ctx, AutoState *state, std::size_t n, double *result) {
    switch (road) {
        case kCpu: return cpu_dot(ctx, state, n, result);
        case kGpu:  // managed buffers: read where they are (cuda::dot would apply MANAGED's own moves)
            return ctx.memory == CUDOT_MEMORY_MANAGED ? cuda::auto_gpu_dot(ctx, n, false, result) : cuda::dot(ctx, n, result);
        default: return split_dot(ctx, state, n, auto_split_share(ctx), result);
    }
}

// Managed buffers: moves whatever AUTO put in GPU memory back to the host, before a road reads it there.
cudot_status bring_back(cudot_ctx &ctx, AutoState *state) {
    if (!state || (state->on_gpus == 0 && state->sentinel == 0)) return CUDOT_OK;
    const std::size_t count = std::max(state->on_gpus, state->sentinel);
    state->on_gpus = state->sentinel = 0;  // a failed move leaves pages where they are: still correct, only slower
    state->slow_resident = 0;              // every way back passes here: the next residency is judged afresh
    return cuda::auto_to_host(ctx, count);
}

// A move into GPU memory that did not pay at n's size: the wait before the next one doubles, or starts at
// kMoveWaitNoGain where even the fastest dot from GPU memory lost to the roads.
void wait_longer(AutoState &state, std::size_t n, bool no_gain = false) {
    const int size = PathChooser<kRoads>::size_class(n);
    const unsigned at_least = no_gain ? kMoveWaitNoGain : kMoveWaitFirst;
    state.move_every[size] = std::min(kMoveWaitMax, std::max(at_least, 2 * state.move_every[size]));
    state.move_wait[size] = state.move_every[size];
}

// Whether a GPU dot of n elements that took us read them from GPU memory, against the fastest such dot
// (reference_us, of the same n): within twice its time, and within the time half its bytes would take
// over the fastest bus (a launch's noise can double a small dot's time; large ones gain a wider margin).
bool read_gpu_memory(const cudot_ctx &ctx, std::size_t n, double us, double reference_us) {
    const double bytes = static_cast<double>(n) * (types::size_of(ctx.dtype) + types::size_of(ctx.y_dtype));
    return us <= std::max(2 * reference_us, reference_us + 0.5 * bytes / kBusBytesPerUs);
}

// Managed buffers, inputs in GPU memory: the dot reads them there. Stays while that beats the best
// estimate of the roads; a slower dot that still read GPU memory was noise, and one that did not found
// pages the host wrote (or the GPU is no faster here): after two such dots in a row they all move back.
// One alone may be noise too (a wake-up of this thread, a launch behind other work: judged alone, a
// resident run went back and forth); pages the host wrote stay on the host, so the next dot is as slow,
// and staying one dot longer costs one read over the bus.
cudot_status resident_dot(cudot_ctx &ctx, AutoState &state, std::size_t n, double *result) {
    const auto start = Clock::now();
    const cudot_status status = cuda::auto_gpu_dot(ctx, n, false, result);
    if (status != CUDOT_OK) return status;
    const double us = elapsed_ms(start) * 1000.0, best = state.chooser.best_us(n);
    state.resident.note(n, us);
    state.counts.last_resident_us = us;
    const bool fast = us <= best || (state.resident.us <= best && read_gpu_memory(ctx, n, us, state.resident.us));
    state.slow_resident = fast ? 0 : state.slow_resident + 1;
    if (state.slow_resident < 2) {
        if (fast) state.move_every[PathChooser<kRoads>::size_class(n)] = 0;  // the move paid: no back-off
        ++state.counts.resident_kept;
        state.counts.resident_noisy += us > best;
        return CUDOT_OK;
    }
    ++state.counts.resident_left;
    wait_longer(state, n, state.resident.us > best);
    return bring_back(ctx, &state);
}

// Whether a dot of n elements on the host gave the same bits as the last one of that size; remembers it.
bool same_as_last(AutoState &state, std::size_t n, double result) {
    std::uint64_t bits;
    std::memcpy(&bits, &result, sizeof bits);
    const bool same = state.last_n == n && state.last_bits == bits;
    state.last_n = n;
    state.last_bits = bits;
    return same;
}

// Managed buffers, inputs on the host, after a road's dot: whether to move them into GPU memory now
// (the roads' estimates at this size are confirmed, the result hints that the host left the inputs
// alone, and the wait after a move that did not pay is over). Resident dots are judged against those
// estimates and no road runs while the inputs stay, so a stale one is not corrected there: a CPU road
// judged by its first, cold reads alone would let slower GPU dots keep the inputs for a whole run.
template <class Usable> bool time_to_move(AutoState &state, std::size_t n, bool same, Usable usable) {
    const int size = PathChooser<kRoads>::size_class(n);
    if (state.move_wait[size] > 0) --state.move_wait[size];
    return same && state.move_wait[size] == 0 && state.chooser.confirmed(n, usable);
}

// After a road's dot of n elements: moves the sentinel into GPU memory and times the GPUs' reading of
// it there (the reference: the fastest such time of this sentinel size; noise only ever adds time).
cudot_status place_sentinel(cudot_ctx &ctx, AutoState &state, std::size_t n) {
    const std::size_t count = std::min(n, kSentinel);
    double ignored = 0, us = 0;
    if (cudot_status status = cuda::auto_gpu_dot(ctx, count, true, &ignored)) return status;
    state.sentinel = count;
    if (cudot_status status = gpu_tiles_dot(ctx, count, &ignored, &us)) return status;
    state.reference.note(count, us);
    ++state.counts.sentinels;
    return CUDOT_OK;
}

// Whether the sentinel is still in GPU memory: the GPUs read it as fast as right after the move
// (read_gpu_memory, on kernel times). A slow read is read again and the faster counts: among other
// contexts' work one read alone was judged "written" often enough to keep AUTO off GPU memory for a
// whole resident run, while pages the host wrote stay on the host (the GPU reads them there, mapped)
// and read as slowly twice. *result: that dot of the sentinel's elements.
cudot_status sentinel_stayed(cudot_ctx &ctx, AutoState &state, bool *stayed, double *result) {
    const std::size_t count = state.sentinel;
    state.sentinel = 0;
    auto in_gpu_memory = [&](double us) {
        return state.reference.n == count && read_gpu_memory(ctx, count, us, state.reference.us);
    };
    double us = 0;
    if (cudot_status status = gpu_tiles_dot(ctx, count, result, &us)) return status;
    if (!in_gpu_memory(us)) {
        double again = 0;
        if (cudot_status status = gpu_tiles_dot(ctx, count, result, &again)) return status;
        us = std::min(us, again);
    }
    *stayed = in_gpu_memory(us);
    state.counts.last_check_us = us;
    ++(*stayed ? state.counts.stayed : state.counts.not_stayed);
    return CUDOT_OK;
}

// Managed buffers, a sentinel in GPU memory, a dot of n that the GPUs may serve: reads the sentinel
// there first. If it stayed, the whole inputs follow and this dot reads them in GPU memory (*done); if
// the host wrote it, it goes back, the next move waits longer, and a sentinel of n was this dot (*done).
cudot_status check_sentinel(cudot_ctx &ctx, AutoState &state, std::size_t n, bool *done, double *result) {
    const std::size_t sentinel = state.sentinel;
    bool stayed = false;
    double sentinel_result = 0;
    if (cudot_status status = sentinel_stayed(ctx, state, &stayed, &sentinel_result)) return status;
    if (stayed) {  // a sentinel of n is already all of it
        if (sentinel != n)
            if (cudot_status status = cuda::auto_gpu_dot(ctx, n, true, &sentinel_result)) return status;
        state.on_gpus = std::max(n, sentinel);
        *result = sentinel_result;
        *done = true;
        return CUDOT_OK;
    }
    wait_longer(state, n);
    if (cudot_status status = cuda::auto_to_host(ctx, sentinel)) return status;  // what the host did not write
    *done = sentinel == n;
    if (*done) {
        same_as_last(state, n, sentinel_result);
        *result = sentinel_result;
    }
    return CUDOT_OK;
}

}  // namespace

cudot_status auto_dot(cudot_ctx &ctx, std::size_t n, double *result) {
    const bool managed = ctx.memory == CUDOT_MEMORY_MANAGED;
    if (!ctx.auto_state) ctx.auto_state = new (std::nothrow) AutoState;  // nullptr: no memory to learn in
    AutoState *state = ctx.auto_state;
#if defined(CUDOT_TESTING)
    double fixed_share = 0;
    if (seams::fixed_split(ctx, &fixed_share)) {  // a test chose the road: the split, at this share
        if (state && managed && (state->on_gpus != 0 || state->sentinel != 0))
            if (cudot_status status = bring_back(ctx, state)) return status;
        return split_dot(ctx, state, n, fixed_share, result);
    }
#endif
    const bool gpus_may_serve = n >= kGpuMinElements;
    if (state && managed && (state->on_gpus != 0 || state->sentinel != 0)) {
        if (gpus_may_serve && n <= state->on_gpus) return resident_dot(ctx, *state, n, result);
        // A dot that will not read what AUTO moved into GPU memory brings it back first: the CPU must not
        // read pages there. A sentinel waits for the check below.
        if (state->on_gpus != 0 || !gpus_may_serve)
            if (cudot_status status = bring_back(ctx, state)) return status;
    }
    if (n < kGpuMinElements || !state) return cpu_dot(ctx, state, n, result);  // the CPU is never wrong
    if (managed && state->sentinel != 0) {
        bool done = false;
        if (cudot_status status = check_sentinel(ctx, *state, n, &done, result)) return status;
        if (done) return CUDOT_OK;
    }
    PathChooser<kRoads> &chooser = state->chooser;
    auto usable = [&](int road) { return road != kSplit || order::tile_count(n) >= kSplitMinTiles; };
    const int road = chooser.choose(n, usable);
    const auto start = Clock::now();
    cudot_status status = run(road, ctx, state, n, result);
    if (status != CUDOT_OK) return status;
    chooser.record(n, road, elapsed_ms(start) * 1000.0, usable);
    ++state->counts.roads[road];
    state->last_road_n = n;
    if (!managed) return CUDOT_OK;
    const bool same = same_as_last(*state, n, *result);
    // Inputs that stop changing make the roads' times stale: they were of inputs just written, while
    // unchanged ones sit in the CPU's caches. Each road (and the CPU road's thread or pool) is timed
    // afresh before any move is judged against them: judged by times of fresh inputs, the CPU road
    // looked slower than GPU dots that then kept the inputs in GPU memory at twice HOST's time.
    if (same && !state->unchanged) {
        chooser.retry(n);
        state->where.retry(n * (types::size_of(ctx.dtype) + types::size_of(ctx.y_dtype)));  // its classes are by bytes
    }
    state->unchanged = same;
    if (time_to_move(*state, n, same, usable)) status = place_sentinel(ctx, *state, n);
    return status;
}

cudot_status auto_dot_rows(cudot_ctx &ctx, const Rows &rows, double *results) {
    if (!ctx.auto_state) ctx.auto_state = new (std::nothrow) AutoState;  // nullptr: no memory to learn in
    AutoState *state = ctx.auto_state;
    if (ctx.memory == CUDOT_MEMORY_MANAGED)  // the CPU must not read pages AUTO moved into GPU memory
        if (cudot_status status = bring_back(ctx, state)) return status;
    const std::size_t elements = rows.count * rows.n;
    const double share = state ? state->rows_share : kFirstShare;
    const std::size_t g = elements < kGpuMinElements ? 0
                          : std::min(rows.count, static_cast<std::size_t>(share * static_cast<double>(rows.count) + 0.5));
    if (g > 0)
        if (cudot_status status = cuda::queue_gpu_rows(ctx, rows.strided_run(0, g), results)) return status;
    const auto start = Clock::now();
    const cudot_status cpu_status = cpu::dot_rows(rows.strided_run(g, rows.count - g), results + g, cuda::host_partials(ctx));
    const double cpu_ms = elapsed_ms(start);
    float gpu_ms = 0;
    if (g > 0)  // the GPUs' work ends before any return
        if (cudot_status status = cuda::wait_gpu_rows(ctx, g * rows.n, &gpu_ms)) return status;
    if (cpu_status != CUDOT_OK) return cpu_status;
    if (state && g > 0 && g < rows.count && gpu_ms > 0 && cpu_ms > 0) {
        const double gpu_rate = g / static_cast<double>(gpu_ms), cpu_rate = (rows.count - g) / cpu_ms;
        const double balanced = gpu_rate / (gpu_rate + cpu_rate);
        state->rows_share = std::min(0.95, std::max(0.02, 0.5 * state->rows_share + 0.5 * balanced));
    }
    return CUDOT_OK;
}

double auto_split_share(const cudot_ctx &ctx) {
    if (!ctx.hybrid) return 0.0;
    return ctx.auto_state ? ctx.auto_state->share : kFirstShare;
}

std::size_t auto_elements_on_gpus(const cudot_ctx &ctx) { return ctx.auto_state ? ctx.auto_state->on_gpus : 0; }

AutoCounts auto_counts(const cudot_ctx &ctx) {
    if (!ctx.auto_state) return AutoCounts{};
    const AutoState &state = *ctx.auto_state;
    AutoCounts c = state.counts;
    c.reference_us = state.reference.us;
    c.resident_us = state.resident.us;
    if (state.resident.n) c.best_road_us = state.chooser.best_us(state.resident.n);
    if (state.last_road_n) {
        for (int r = 0; r < kRoads; ++r) c.road_us[r] = state.chooser.estimate_us(state.last_road_n, r);
        const std::size_t bytes = state.last_road_n * (types::size_of(ctx.dtype) + types::size_of(ctx.y_dtype));
        for (int w = 0; w < cpu::kWheres; ++w) c.where_us[w] = state.where.estimate_us(bytes, w);
    }
    return c;
}

void free_auto_state(cudot_ctx &ctx) {
    delete ctx.auto_state;
    ctx.auto_state = nullptr;
}

}  // namespace cudot
