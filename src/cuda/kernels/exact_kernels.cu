// exact_kernels.cu - exact_dot_kernel (exact_kernel.cuh) for every pair of element types, and its launch
// made ready for a stream or a CUDA graph node (launchers.hpp).
#include <algorithm>
#include <cstring>

#include "exact_kernel.cuh"
#include "launchers.hpp"

namespace cudot {
namespace cuda {

static_assert(sizeof(ExactWorkspace) <= kExactHeadBytes, "the workspace head holds the exact mode's digits");
static_assert(kExactSlotBytes == kExpansion * sizeof(double), "a block's slot holds its expansion");
static_assert(kExactPartialBytes == sizeof(exact::Partial), "a partial is the size the launch leaves room for");

template <class Tx, class Ty>
static void prepare_exact_typed(const LaunchArgs &a, KernelCall &c) {
    static_assert(sizeof(ExactParams<Tx, Ty>) <= sizeof c.params, "KernelCall::params holds ExactParams");
    ExactParams<Tx, Ty> p;
    std::memset(&p, 0, sizeof p);
    p.x = static_cast<const Tx *>(a.x);
    p.y = static_cast<const Ty *>(a.y);
    p.n = a.n;
    p.dense = a.dense;
    p.xs = StridedView{static_cast<const unsigned char *>(a.x), a.x_stride, a.x_aligned};
    p.ys = StridedView{static_cast<const unsigned char *>(a.y), a.y_stride, a.y_aligned};
    p.workspace = reinterpret_cast<ExactWorkspace *>(a.ticket);
    p.slots = static_cast<double *>(a.partials);
    p.done = a.done;
    p.partial = static_cast<exact::Partial *>(a.exact_partial);
    // The grid: every block past the first adds the ticket, its slot and its share of the last block's
    // merge, while each element a thread adds lengthens its chain of dependent additions (a fraction of
    // a microsecond, against microseconds for a second block on an H200). So one block up to 8 loads a thread;
    // then a block for every kThreads loads, at most kShortGrid blocks below 2^22 elements and the
    // resident blocks (the whole GPU's bandwidth) from there on.
    constexpr std::size_t loads_per_block = std::size_t(kThreads) * kExactGroup<Tx, Ty>;
    constexpr std::size_t kShortGrid = 128;
    const std::size_t wanted = a.n <= 8 * loads_per_block ? 1 : (a.n + loads_per_block - 1) / loads_per_block;
    const std::size_t most = a.n < (std::size_t(1) << 22) ? std::min<std::size_t>(kShortGrid, a.blocks) : a.blocks;
    std::memset(&c, 0, sizeof c);
    std::memcpy(c.params, &p, sizeof p);
    c.args[0] = c.params;
    c.node.func = reinterpret_cast<void *>(&exact_dot_kernel<Tx, Ty>);
    c.node.gridDim = dim3(static_cast<unsigned>(std::max<std::size_t>(1, std::min(most, wanted))));
    c.node.blockDim = dim3(kThreads);
    c.node.kernelParams = c.args;
}

template <class Tx, class Ty>
static cudaError_t exact_occupancy_typed(int *blocks_per_sm) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, exact_dot_kernel<Tx, Ty>, kThreads, 0);
}

ExactLauncher exact_launcher_for(int32_t x_dtype, int32_t y_dtype) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            using Tx = decltype(xt);
            using Ty = decltype(yt);
            ExactLauncher l;
            l.prepare = prepare_exact_typed<Tx, Ty>;
            l.occupancy = exact_occupancy_typed<Tx, Ty>;
            return l;
        });
    });
}

}  // namespace cuda
}  // namespace cudot
