// cuda_check.cu - see cuda_check.hpp.
#include "cuda_check.hpp"

namespace cudot {
namespace cuda {

cudot_status cuda_fail(ErrorSink err, cudaError_t error, const char *call) {
    cudot_status status = error == cudaErrorMemoryAllocation ? CUDOT_ERROR_OUT_OF_MEMORY : CUDOT_ERROR_CUDA;
    return fail(err, status, "%s failed: %s (%s)", call, cudaGetErrorString(error), cudaGetErrorName(error));
}

}  // namespace cuda
}  // namespace cudot
