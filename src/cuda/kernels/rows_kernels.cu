// rows_kernels.cu - the batch kernels (rows_kernel.cuh) for every pair of element types, and their launch
// made ready for a stream or a CUDA graph node (launchers.hpp). Apart from the single dot's kernels so that the sets compile
// side by side.
#include <cstring>

#include "launchers.hpp"
#include "rows_kernel.cuh"

namespace cudot {
namespace cuda {

static_assert(sizeof(RowsParams) <= sizeof(KernelCall{}.params), "KernelCall::params holds RowsParams");

namespace {

template <class Tx, class Ty> void *rows_kernel_typed(bool short_rows) {
    return short_rows ? reinterpret_cast<void *>(&rows_short_kernel<Tx, Ty>)
                      : reinterpret_cast<void *>(&rows_tile_kernel<Tx, Ty>);
}

void *rows_kernel_for(int32_t x_dtype, int32_t y_dtype, bool short_rows) {
    return types::with_type(x_dtype, [&](auto xt) {
        return types::with_type(y_dtype, [&](auto yt) { return rows_kernel_typed<decltype(xt), decltype(yt)>(short_rows); });
    });
}

}  // namespace

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
