// strided_kernels.cu - the instantiations of strided_dot_kernel (views that are not dense: strides,
// broadcasts, misaligned addresses). They live apart from launch.cu, which instantiates dot_kernel, so
// that a build compiles the two sets of 36 pairs for every architecture side by side, not one after the
// other: together they are most of the library's build time.
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

void *strided_kernel_for(int32_t x_dtype, int32_t y_dtype) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            return reinterpret_cast<void *>(&strided_dot_kernel<decltype(xt), decltype(yt)>);
        });
    });
}

}  // namespace cuda
}  // namespace cudot
