// exact_group_rows_kernels.cu - exact_group_rows_kernel (exact_rows_kernel.cuh) for every pair of element
// types, compiled beside exact_rows_kernels.cu's part kernels.
#include "exact_rows_kernel.cuh"
#include "launchers.hpp"

namespace cudot {
namespace cuda {

void *exact_group_rows_kernel_for(int32_t x_dtype, int32_t y_dtype) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            return reinterpret_cast<void *>(&exact_group_rows_kernel<decltype(xt), decltype(yt)>);
        });
    });
}

}  // namespace cuda
}  // namespace cudot
