// cuda_check.hpp - how the CUDA backend checks its calls: one macro that names the failing call and turns
// CUDA's error into a status and a message on the context.
#pragma once

#include <cuda_runtime.h>

#include "../core/context.hpp"
#include "../core/seams.hpp"
#include "caller_state.hpp"

namespace cudot {
namespace cuda {

// Every checked CUDA call's result passes here: a failure is noted (caller_state.hpp). The test build may
// then report a fault a test injected instead (the call itself was really made, so the clean-up paths
// also see whatever it took).
inline cudaError_t checked(cudaError_t result) {
    note(result);
#if defined(CUDOT_TESTING)
    result = static_cast<cudaError_t>(seams::cuda_result(static_cast<int>(result)));
#endif
    return result;
}

// Records a failed CUDA call on the sink, naming the call and CUDA's own words. Returns OUT_OF_MEMORY
// for allocation failures, CUDA otherwise.
cudot_status cuda_fail(ErrorSink err, cudaError_t error, const char *call);

}  // namespace cuda
}  // namespace cudot

// The same for a call whose failure should be named otherwise (a wrapper's, by the CUDA call it makes).
#define CUDOT_CUDA_TRY_AS(err, call, name)                                                              \
    do {                                                                                                \
        cudaError_t cudot_error_ = ::cudot::cuda::checked(call);                                         \
        if (cudot_error_ != cudaSuccess) return ::cudot::cuda::cuda_fail(err, cudot_error_, name);       \
    } while (0)

#define CUDOT_CUDA_TRY(err, call)                                                                       \
    do {                                                                                                \
        cudaError_t cudot_error_ = ::cudot::cuda::checked(call);                                         \
        if (cudot_error_ != cudaSuccess) return ::cudot::cuda::cuda_fail(err, cudot_error_, #call);      \
    } while (0)
