// rows_staged_kernels.cu - rows_staged_kernel (rows_staged_kernel.cuh) for the float and double pairs, the
// element types whose short rows are read at memory speed's most; the other pairs' dense short rows take
// rows_short_kernel, with the same bits.
#include "launchers.hpp"
#include "rows_staged_kernel.cuh"

namespace cudot {
namespace cuda {

void *rows_staged_kernel_for(int32_t x_dtype, int32_t y_dtype) {
    const bool xf = x_dtype == CUDOT_F32 || x_dtype == CUDOT_F64, yf = y_dtype == CUDOT_F32 || y_dtype == CUDOT_F64;
    if (!xf || !yf) return nullptr;
    if (x_dtype == CUDOT_F32)
        return y_dtype == CUDOT_F32 ? reinterpret_cast<void *>(&rows_staged_kernel<float, float>)
                                    : reinterpret_cast<void *>(&rows_staged_kernel<float, double>);
    return y_dtype == CUDOT_F32 ? reinterpret_cast<void *>(&rows_staged_kernel<double, float>)
                                : reinterpret_cast<void *>(&rows_staged_kernel<double, double>);
}

}  // namespace cuda
}  // namespace cudot
