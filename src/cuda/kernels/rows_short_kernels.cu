// rows_short_kernels.cu - rows_short_kernel (rows_kernel.cuh) for every pair of element types. Each kernel
// set has its own file so that a parallel build compiles them side by side.
#include "launchers.hpp"
#include "rows_kernel.cuh"

namespace cudot {
namespace cuda {

void *rows_short_kernel_for(int32_t x_dtype, int32_t y_dtype) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            return reinterpret_cast<void *>(&rows_short_kernel<decltype(xt), decltype(yt)>);
        });
    });
}

}  // namespace cuda
}  // namespace cudot
