// rows_kernels.cu - a batch's launch made ready for a stream or a CUDA graph node (launchers.hpp); the
// kernels' instantiations are in rows_short_kernels.cu and rows_tile_kernels.cu.
#include <cstring>

#include "launchers.hpp"
#include "rows_kernel.cuh"

namespace cudot {
namespace cuda {

static_assert(sizeof(RowsParams) <= sizeof(KernelCall{}.params), "KernelCall::params holds RowsParams");

static void *rows_kernel_for(int32_t x_dtype, int32_t y_dtype, bool short_rows) {
    return short_rows ? rows_short_kernel_for(x_dtype, y_dtype) : rows_tile_kernel_for(x_dtype, y_dtype);
}

void prepare_rows(const RowsParams &params, int32_t x_dtype, int32_t y_dtype, bool short_rows, unsigned blocks,
                  KernelCall &call) {
    std::memset(&call, 0, sizeof call);
    std::memcpy(call.params, &params, sizeof params);
    call.args[0] = call.params;
    call.node.func = rows_kernel_for(x_dtype, y_dtype, short_rows);
    call.node.gridDim = dim3(blocks);
    call.node.blockDim = dim3(kThreads);
    call.node.kernelParams = call.args;
}

cudaError_t rows_occupancy(int32_t x_dtype, int32_t y_dtype, bool short_rows, int *blocks_per_sm) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, rows_kernel_for(x_dtype, y_dtype, short_rows),
                                                         kThreads, 0);
}

}  // namespace cuda
}  // namespace cudot
