// strided_kernels.cu - strided_dot_kernel for every pair of element types (views that are not dense:
// strides, broadcasts, misaligned addresses). Apart from dot_kernels.cu so that the two sets compile
// side by side.
#include "launchers.hpp"

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
