// dot_kernels.cu - dot_kernel for every pair of element types, and the typed launch preparation
// (launchers.hpp). strided_kernels.cu instantiates strided_dot_kernel: the build compiles the two sets
// of 36 pairs side by side, and together they are most of the library's build time.
#include <cstring>

#include "launchers.hpp"

namespace cudot {
namespace cuda {

template <class Tx, class Ty>
static void prepare_typed(const LaunchArgs &a, KernelCall &c) {
    using Acc = typename PairOf<Tx, Ty>::Acc;
    static_assert(sizeof(DotParams<Tx, Ty>) <= sizeof c.params, "KernelCall::params holds every pair's DotParams");
    const DotParams<Tx, Ty> p{static_cast<const Tx *>(a.x), static_cast<const Ty *>(a.y), a.n, a.tiles,
                              static_cast<Acc *>(a.partials), a.ticket, a.done};
    std::memset(&c, 0, sizeof c);
    std::memcpy(c.params, &p, sizeof p);
    c.args[0] = c.params;
    c.node.gridDim = dim3(a.blocks);
    c.node.blockDim = dim3(kThreads);
    if (!a.dense) {
        c.x = StridedView{static_cast<const unsigned char *>(a.x), a.x_stride, a.x_aligned};
        c.y = StridedView{static_cast<const unsigned char *>(a.y), a.y_stride, a.y_aligned};
        c.args[1] = &c.x;
        c.args[2] = &c.y;
        static void *const strided = strided_kernel_for(types::Traits<Tx>::id, types::Traits<Ty>::id);
        c.node.func = strided;
    } else {
        c.node.func = reinterpret_cast<void *>(&dot_kernel<Tx, Ty>);
    }
    c.node.kernelParams = c.args;
}

template <class Tx, class Ty>
static cudaError_t occupancy_typed(int *blocks_per_sm) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, dot_kernel<Tx, Ty>, kThreads, 0);
}

Launcher launcher_for(int32_t x_dtype, int32_t y_dtype) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            using Tx = decltype(xt);
            using Ty = decltype(yt);
            Launcher l;
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

}  // namespace cuda
}  // namespace cudot
