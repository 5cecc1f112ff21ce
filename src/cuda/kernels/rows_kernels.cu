// rows_kernels.cu - a batch's launch made ready for a stream or a CUDA graph node (launchers.hpp); the
// kernels' instantiations are in rows_short_kernels.cu, rows_staged_kernels.cu and rows_tile_kernels.cu.
#include <cstring>

#include "launchers.hpp"
#include "rows_staged_kernel.cuh"

namespace cudot {
namespace cuda {

static_assert(sizeof(RowsParams) <= sizeof(KernelCall{}.params), "KernelCall::params holds RowsParams");

static void *rows_kernel_for(int32_t x_dtype, int32_t y_dtype, RowsKernel kind) {
    switch (kind) {
        case RowsKernel::Short: return rows_short_kernel_for(x_dtype, y_dtype);
        case RowsKernel::Staged: return rows_staged_kernel_for(x_dtype, y_dtype);
        default: return rows_tile_kernel_for(x_dtype, y_dtype);
    }
}

static std::size_t shared_bytes(RowsKernel kind) { return kind == RowsKernel::Staged ? kStagedBlockBytes : 0; }

void prepare_rows(const RowsParams &params, int32_t x_dtype, int32_t y_dtype, RowsKernel kind, unsigned blocks,
                  KernelCall &call) {
    std::memset(&call, 0, sizeof call);
    std::memcpy(call.params, &params, sizeof params);
    call.args[0] = call.params;
    call.node.func = rows_kernel_for(x_dtype, y_dtype, kind);
    call.node.gridDim = dim3(blocks);
    call.node.blockDim = dim3(kThreads);
    call.node.sharedMemBytes = static_cast<unsigned>(shared_bytes(kind));
    call.node.kernelParams = call.args;
}

cudaError_t rows_occupancy(int32_t x_dtype, int32_t y_dtype, RowsKernel kind, int *blocks_per_sm) {
    const void *kernel = rows_kernel_for(x_dtype, y_dtype, kind);
    if (kind == RowsKernel::Staged) {  // more than the 48 KiB a launch may take without asking
        const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(kStagedBlockBytes));
        if (e != cudaSuccess) return e;
    }
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, kernel, kThreads, shared_bytes(kind));
}

}  // namespace cuda
}  // namespace cudot
