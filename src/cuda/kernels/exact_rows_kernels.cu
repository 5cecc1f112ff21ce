// exact_rows_kernels.cu - a batch's launch in the exact mode made ready for a stream or a CUDA graph node
// (launchers.hpp). exact_rows_kernel.cuh's two kernels are instantiated for every pair of element types,
// each in a file of its own so that a parallel build compiles them side by side: the part kernels here,
// the group kernels in exact_group_rows_kernels.cu.
#include <cstring>

#include "exact_rows_kernel.cuh"
#include "launchers.hpp"

namespace cudot {
namespace cuda {

static_assert(kExactRowSlotBytes == sizeof(ExactRowSlot), "a part's slot is the size the plan leaves room for");
static_assert(kExactRowSpillBytes == kExactSpillBytes, "a part's spill slot is the size the plan leaves room for");

static void *exact_rows_kernel_for(int32_t x_dtype, int32_t y_dtype, bool groups) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) {
            using Tx = decltype(xt);
            using Ty = decltype(yt);
            return groups ? exact_group_rows_kernel_for(x_dtype, y_dtype)
                          : reinterpret_cast<void *>(&exact_part_rows_kernel<Tx, Ty>);
        });
    });
}

void prepare_exact_rows(const RowsParams &params, int32_t x_dtype, int32_t y_dtype, unsigned blocks, KernelCall &call) {
    std::memset(&call, 0, sizeof call);
    std::memcpy(call.params, &params, sizeof params);
    call.args[0] = call.params;
    call.node.func = exact_rows_kernel_for(x_dtype, y_dtype, params.group > 0);
    call.node.gridDim = dim3(blocks);
    call.node.blockDim = dim3(kThreads);
    call.node.kernelParams = call.args;
}

cudaError_t exact_rows_occupancy(int32_t x_dtype, int32_t y_dtype, bool groups, int *blocks_per_sm) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, exact_rows_kernel_for(x_dtype, y_dtype, groups),
                                                         kThreads, 0);
}

}  // namespace cuda
}  // namespace cudot
