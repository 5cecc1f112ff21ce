// launch.cu - the typed launches of the dot kernel, the grid they get, and how the host waits for a
// single-GPU dot's result. It instantiates dot_kernel; strided_kernels.cu instantiates strided_dot_kernel.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

#include "cuda_check.hpp"
#include "device_health.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

template <class Tx, class Ty>
static void prepare_typed(const LaunchArgs &a, KernelCall &c) {
    using Acc = typename PairOf<Tx, Ty>::Acc;
    static_assert(sizeof(DotParams<Tx, Ty>) <= sizeof c.params, "KernelCall::params holds every pair's DotParams");
    unsigned slice_shift = 0;
    while ((1u << slice_shift) < a.slices) ++slice_shift;
    const DotParams<Tx, Ty> p{static_cast<const Tx *>(a.x), static_cast<const Ty *>(a.y), a.n, a.items,
                              slice_shift, static_cast<Acc *>(a.partials), a.ticket, a.done, a.hold};
    std::memset(&c, 0, sizeof c);
    std::memcpy(c.params, &p, sizeof p);
    c.args[0] = c.params;
    c.node.gridDim = dim3(a.blocks);
    if (!a.dense) {
        c.x = StridedView{static_cast<const unsigned char *>(a.x), a.x_stride, a.x_aligned};
        c.y = StridedView{static_cast<const unsigned char *>(a.y), a.y_stride, a.y_aligned};
        c.args[1] = &c.x;
        c.args[2] = &c.y;
        static void *const strided = strided_kernel_for(types::Traits<Tx>::id, types::Traits<Ty>::id);
        c.node.func = strided;
        c.node.blockDim = dim3(kThreads);
    } else {
        c.node.func = reinterpret_cast<void *>(&dot_kernel<Tx, Ty>);
        c.node.blockDim = dim3(kThreads / a.slices);
    }
    c.node.kernelParams = c.args;
}

template <class Tx, class Ty>
static cudaError_t launch_typed(const LaunchArgs &a, cudaStream_t stream) {
    KernelCall c;
    prepare_typed<Tx, Ty>(a, c);
    // cudaLaunchKernel returns this launch's own error: not one that the caller's code (or an earlier
    // call of cudot's) left pending in CUDA's per-thread last error.
    return cudaLaunchKernel(c.node.func, c.node.gridDim, c.node.blockDim, c.args, 0, stream);
}

template <class Tx, class Ty>
static cudaError_t occupancy_typed(int threads, int *blocks_per_sm) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, dot_kernel<Tx, Ty>, threads, 0);
}

Launcher launcher_for(int32_t x_dtype, int32_t y_dtype) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            using Tx = decltype(xt);
            using Ty = decltype(yt);
            Launcher l;
            l.launch = launch_typed<Tx, Ty>;
            l.prepare = prepare_typed<Tx, Ty>;
            l.occupancy = occupancy_typed<Tx, Ty>;
            l.partial_bytes = sizeof(typename PairOf<Tx, Ty>::Acc);
            return l;
        });
    });
}

cudaError_t kernels_load() {
    cudaFuncAttributes attributes;
    return cudaFuncGetAttributes(&attributes, dot_kernel<float, float>);
}

// Slices: at small n a dot has fewer tiles than the GPU has multiprocessors; cutting each tile into
// slices (whole warps of its lanes) spreads the same work over more of them, but costs a second join
// level and smaller blocks, and measured slower (docs/PERFORMANCE.md): one slice per tile unless tuning
// asks for more.
GridPlan plan_grid(const cudot_ctx &ctx, const DeviceState &s, const Gpu &g, std::size_t tiles, bool joined) {
    unsigned slices = 1;
    if (joined && s.tuning.slices) slices = s.tuning.slices;
    int choice = 0;
    while ((1u << choice) < slices) ++choice;
    const std::size_t items = tiles * slices;
    std::size_t blocks = ctx.hooks().gpu_blocks ? ctx.hooks().gpu_blocks : g.resident_blocks[choice];
    blocks = std::min(blocks, items);
    return GridPlan{slices, static_cast<unsigned>(std::max<std::size_t>(blocks, 1))};
}

cudot_status launch(cudot_ctx &ctx, const DeviceState &s, const Gpu &g, cudaStream_t stream, LaunchArgs args) {
    args.hold = held_word(g.device);
    cudaError_t e = pass_or_inject(s.launcher.launch(args, stream));
    return e == cudaSuccess ? CUDOT_OK : cuda_fail(ctx.sink(), e, "dot_kernel launch");
}

static inline void relax() {
#if defined(__x86_64__) || defined(_M_X64)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
}

// The stream is asked for errors (a fault means the result will never come) this often while polling,
// and after this long the poll yields the processor between looks.
constexpr auto kQueryEvery = std::chrono::microseconds(20);
constexpr auto kSpinFor = std::chrono::microseconds(200);

// One read of the slot: true and the result once the kernel has written it.
static inline bool take_result(const DeviceState &s, double *result) {
    const std::uint64_t bits = reinterpret_cast<const volatile std::uint64_t *>(&s.h_done->result_bits)[0];
    if (bits == kNoResult) return false;
    std::memcpy(result, &bits, sizeof bits);
    return true;
}

// The wait ran past the call's bound: from now on the context only accepts cudot_deinit, and the GPU is
// marked stuck for every context of the process (device_health.hpp).
static cudot_status gave_up(ErrorSink err, DeviceState &s, Gpu &g) {
    s.hung = true;
    mark_stuck(g.device, g.stream);
    return fail(err, CUDOT_ERROR_CUDA,
                "GPU %d did not finish within %llu ms (cudot_config.wait_ms): the context can only be destroyed now",
                g.device, static_cast<unsigned long long>(s.wait_bound_ms));
}

// Waits until `done` says the work is there, or the stream has failed, or the context's bound has
// passed. done() is polled; the stream is queried every kQueryEvery; after kSpinFor the wait yields.
template <class Done>
static cudot_status wait_bounded(ErrorSink err, DeviceState &s, Gpu &g, Done done, const char *what) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now(), bound = start + std::chrono::milliseconds(s.wait_bound_ms);
    auto next_query = start + kQueryEvery;
    for (;;) {
        for (int i = 0; i < 32; ++i) {
            if (done(cudaErrorNotReady)) return CUDOT_OK;
            relax();
        }
        const auto now = Clock::now();
        if (now < next_query) continue;
        next_query = now + kQueryEvery;
        // Not a fault-injection point: how often it runs depends on timing, and the fault walks of the
        // tests need the same sequence of checked calls every time.
        const cudaError_t e = note(cudaStreamQuery(g.stream));
        if (e == cudaSuccess) {
            if (done(cudaSuccess)) return CUDOT_OK;
            return fail(err, CUDOT_ERROR_INTERNAL, "%s ended without its result", what);
        }
        if (e != cudaErrorNotReady) return cuda_fail(err, e, what);
        if (now > bound) return gave_up(err, s, g);
        if (now - start > kSpinFor) std::this_thread::yield();
    }
}

cudot_status wait_for_result(cudot_ctx &ctx, DeviceState &s, Gpu &g, double *result) {
    if (s.tuning.stream_sync) {  // experiments only: the plain, unbounded wait
        CUDOT_CUDA_TRY(ctx.sink(), cudaStreamSynchronize(g.stream));
        if (!take_result(s, result))
            return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "the dot kernel ended without its result");
        return CUDOT_OK;
    }
    // Without concurrent managed access the kernel must have ended, not only written the result.
    if (s.sync_after_dot)
        return wait_bounded(ctx.sink(), s, g,
                            [&](cudaError_t stream) { return stream == cudaSuccess && take_result(s, result); },
                            "dot_kernel (cudaStreamQuery)");
    return wait_bounded(ctx.sink(), s, g, [&](cudaError_t) { return take_result(s, result); },
                        "dot_kernel (cudaStreamQuery)");
}

cudot_status wait_stream(DeviceState &s, Gpu &g, ErrorSink err) {
    return wait_bounded(err, s, g, [](cudaError_t stream) { return stream == cudaSuccess; },
                        "the GPU's work (cudaStreamQuery)");
}

}  // namespace cuda
}  // namespace cudot
