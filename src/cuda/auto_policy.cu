// auto_policy.cu - AUTO with a GPU: which path each dot takes, chosen from its size and measured times.
//
// An AUTO context's buffers are mapped page-locked host memory, which three paths can read: the CPU
// alone (the HOST code: the calling thread for small dots, the thread pool for larger ones), the GPU
// alone (reading the buffers over the bus), and both at once (hybrid_dot: the GPU takes a share of the
// tiles). Every path gives the same bits, so the choice is only about time, and the fastest one depends
// on the machine, the size and whether the host just wrote the inputs: PathChooser measures.
#include <chrono>
#include <new>

#include "../cpu/cpu_backend.hpp"
#include "gpu_state.hpp"
#include "../path_chooser.hpp"

namespace cudot {
namespace cuda {

namespace {

enum Path { kCpu, kGpu, kSplit, kPaths };

// Below this many elements the CPU alone always wins (a launch alone costs more than the whole dot on
// the calling thread), and AUTO goes there without timing anything.
constexpr std::size_t kGpuMinElements = std::size_t(1) << 14;
// The split needs enough tiles to give both sides a useful share.
constexpr std::size_t kSplitMinTiles = 16;


cudot_status cpu_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    return cpu::dot(ctx.operands(n), s.h_partials, ctx.hooks(), nullptr, result);
}

cudot_status run(int path, cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    switch (path) {
        case kCpu: return cpu_dot(ctx, s, n, result);
        case kGpu:
            return s.gpus.size() == 1 ? single_dot(ctx, s, n, false, result) : multi_dot(ctx, s, n, false, result);
        default: return hybrid_dot(ctx, s, n, result);
    }
}

}  // namespace

struct AutoPolicy : PathChooser<kPaths> {};

cudot_status auto_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    if (ctx.hooks().hybrid_share >= 0) return hybrid_dot(ctx, s, n, result);  // tests fix the split
    if (n < kGpuMinElements) return cpu_dot(ctx, s, n, result);
    if (!s.auto_policy) s.auto_policy = new (std::nothrow) AutoPolicy;
    if (!s.auto_policy) return cpu_dot(ctx, s, n, result);  // no memory to learn in: the CPU is never wrong
    AutoPolicy &chooser = *s.auto_policy;
    auto usable = [&](int p) { return p != kSplit || order::tile_count(n) >= kSplitMinTiles; };
    const int path = chooser.choose(n, usable);
    const auto start = std::chrono::steady_clock::now();
    cudot_status status = run(path, ctx, s, n, result);
    if (status == CUDOT_OK)
        chooser.record(n, path, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count(),
                       usable);
    return status;
}

void free_auto_policy(DeviceState &s) {
    delete s.auto_policy;
    s.auto_policy = nullptr;
}

}  // namespace cuda
}  // namespace cudot
