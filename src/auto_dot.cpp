// auto_dot.cpp - AUTO with a GPU: which road each dot takes, chosen from its size and measured times.
//
// An AUTO context's buffers are mapped page-locked host memory, which three roads can read: the CPU
// alone (cpu::dot: the calling thread for small dots, the thread pool for larger ones), the GPU alone
// (cuda::dot: the GPU reads the buffers over the bus), and both at once (the GPUs take the first share
// of the tiles, the CPU the rest, and the host joins all the partials). Every road gives the same bits,
// so the choice is only about time, and the fastest one depends on the machine, the size and whether the
// host just wrote the inputs: PathChooser measures.
#include "auto_dot.hpp"

#include <algorithm>
#include <chrono>
#include <new>

#include "cpu/cpu_backend.hpp"
#include "cuda/cuda_backend.hpp"
#include "order.hpp"
#include "path_chooser.hpp"

namespace cudot {

namespace {

enum Road { kCpu, kGpu, kSplit, kRoads };

// Below this many elements the CPU alone always wins (a launch alone costs more than the whole dot on
// the calling thread), and AUTO goes there without timing anything.
constexpr std::size_t kGpuMinElements = std::size_t(1) << 14;
// The split needs enough tiles to give both sides a useful share.
constexpr std::size_t kSplitMinTiles = 16;
constexpr double kFirstShare = 0.25;  // the GPUs' share of a context's first split dot

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

struct AutoState {
    PathChooser<kRoads> chooser;
    cpu::WhereChooser where;     // the CPU road's calling thread or pool, measured as a HOST context does
    double share = kFirstShare;  // the GPUs' share of a split dot's tiles, moved after each toward balance
};

namespace {

// The CPU road: the calling thread or the pool, chosen as HOST chooses (by measurement in the band of
// sizes where either can win; without a state, by size alone).
cudot_status cpu_dot(cudot_ctx &ctx, AutoState *state, std::size_t n, double *result) {
    return cpu::dot(ctx.operands(n), cuda::host_partials(ctx), ctx.hooks(), state ? &state->where : nullptr, result);
}

// The CPU's part of a split dot: the partials of tiles [first, tiles), timed.
struct CpuShare {
    cudot_ctx *ctx;
    std::size_t n, first, tiles;
    double ms = 0;

    static cudot_status run(void *self, void *partials) {
        CpuShare &c = *static_cast<CpuShare *>(self);
        const auto start = Clock::now();
        const cudot_status status = cpu::compute_packed_partials(c.ctx->operands(c.n), c.first, c.tiles, partials,
                                                                 c.ctx->hooks());
        c.ms = elapsed_ms(start);
        return status;
    }
};

// The GPUs compute tiles [0, g) while the CPU threads compute [g, tiles); after each split dot, g moves
// toward the share at which both finish together.
cudot_status split_dot(cudot_ctx &ctx, AutoState *state, std::size_t n, double *result) {
    const std::size_t tiles = order::tile_count(n);
    const double share = auto_split_share(ctx);
    const std::size_t g = std::min(tiles, static_cast<std::size_t>(share * static_cast<double>(tiles) + 0.5));
    CpuShare cpu_share{&ctx, n, g, tiles};
    float gpu_ms = 0;
    void *partials = nullptr;
    const cudot_status status = cuda::split_tiles(ctx, n, g, cuda::HostShare{&CpuShare::run, &cpu_share}, &gpu_ms,
                                                  &partials);
    if (status != CUDOT_OK) return status;
    if (state && g > 0 && g < tiles && gpu_ms > 0 && cpu_share.ms > 0) {
        const double gpu_rate = g / static_cast<double>(gpu_ms), cpu_rate = (tiles - g) / cpu_share.ms;
        const double balanced = gpu_rate / (gpu_rate + cpu_rate);
        state->share = std::min(0.95, std::max(0.02, 0.5 * state->share + 0.5 * balanced));
    }
    *result = order::join_packed_partials(types::kind_of(ctx.dtype, ctx.y_dtype), partials, tiles);
    return CUDOT_OK;
}

cudot_status run(int road, cudot_ctx &ctx, AutoState *state, std::size_t n, double *result) {
    switch (road) {
        case kCpu: return cpu_dot(ctx, state, n, result);
        case kGpu: return cuda::dot(ctx, n, result);
        default: return split_dot(ctx, state, n, result);
    }
}

}  // namespace

cudot_status auto_dot(cudot_ctx &ctx, std::size_t n, double *result) {
    if (ctx.hooks().hybrid_share >= 0) return split_dot(ctx, ctx.auto_state, n, result);  // tests fix the split
    if (!ctx.auto_state) ctx.auto_state = new (std::nothrow) AutoState;  // nullptr: no memory to learn in
    if (n < kGpuMinElements || !ctx.auto_state) return cpu_dot(ctx, ctx.auto_state, n, result);  // the CPU is never wrong
    PathChooser<kRoads> &chooser = ctx.auto_state->chooser;
    auto usable = [&](int road) { return road != kSplit || order::tile_count(n) >= kSplitMinTiles; };
    const int road = chooser.choose(n, usable);
    const auto start = Clock::now();
    const cudot_status status = run(road, ctx, ctx.auto_state, n, result);
    if (status == CUDOT_OK) chooser.record(n, road, elapsed_ms(start) * 1000.0, usable);
    return status;
}

double auto_split_share(const cudot_ctx &ctx) {
    if (!ctx.hybrid) return 0.0;
    if (ctx.hooks().hybrid_share >= 0) return ctx.hooks().hybrid_share;
    return ctx.auto_state ? ctx.auto_state->share : kFirstShare;
}

void free_auto_state(cudot_ctx &ctx) {
    delete ctx.auto_state;
    ctx.auto_state = nullptr;
}

}  // namespace cudot
