// exact_rows_kernels.cu - exact_rows_kernel (exact_rows_kernel.cuh) for every pair of element types, and
// its launch made ready for a stream or a CUDA graph node (launchers.hpp).
#include <cstring>

#include "exact_rows_kernel.cuh"
#include "launchers.hpp"

namespace cudot {
namespace cuda {

static_assert(kExactRowSlotBytes == sizeof(ExactRowSlot), "a part's slot is the size the plan leaves room for");
static_assert(kExactRowSpillBytes == kExactSpillBytes, "a part's spill slot is the size the plan leaves room for");

static void *exact_rows_kernel_for(int32_t x_dtype, int32_t y_dtype) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            return reinterpret_cast<void *>(&exact_rows_kernel<decltype(xt), decltype(yt)>);
        });
    });
}

void prepare_exact_rows(const RowsParams &params, int32_t x_dtype, int32_t y_dtype, unsigned blocks, KernelCall &call) {
    std::memset(&call, 0, sizeof call);
    std::memcpy(call.params, &params, sizeof params);
    call.args[0] = call.params;
    call.node.func = exact_rows_kernel_for(x_dtype, y_dtype);
    call.node.gridDim = dim3(blocks);
    call.node.blockDim = dim3(kThreads);
    call.node.kernelParams = call.args;
}

cudaError_t exact_rows_occupancy(int32_t x_dtype, int32_t y_dtype, int *blocks_per_sm) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, exact_rows_kernel_for(x_dtype, y_dtype),
                                                         kThreads, 0);
}

}  // namespace cuda
}  // namespace cudot
