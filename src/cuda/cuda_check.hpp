// cuda_check.hpp - how the CUDA backend checks its calls: one macro that names the failing call, turns
// CUDA's error into a status and a message on the context, and the test-only fault injector that can
// make any checked call look as if it failed.
#pragma once

#include <cuda_runtime.h>

#include "../context.hpp"
#include "caller_state.hpp"

namespace cudot {
namespace cuda {

// Test-only (src/testing.hpp): returns `result`, unless a fault was injected on this thread and this is
// the call it waits for; then returns the injected error (the call itself was really made, so the
// clean-up paths also see whatever it took).
cudaError_t pass_or_inject(cudaError_t result);

// Records a failed CUDA call on the sink, naming the call and CUDA's own words. Returns OUT_OF_MEMORY
// for allocation failures, CUDA otherwise.
cudot_status cuda_fail(ErrorSink err, cudaError_t error, const char *call);

}  // namespace cuda
}  // namespace cudot

// The same for a call whose failure should be named otherwise (a wrapper's, by the CUDA call it makes).
#define CUDOT_CUDA_TRY_AS(err, call, name)                                                               \
    do {                                                                                                 \
        cudaError_t cudot_error_ = ::cudot::cuda::pass_or_inject(call);                                  \
        if (cudot_error_ != cudaSuccess) return ::cudot::cuda::cuda_fail(err, cudot_error_, name);       \
    } while (0)

#define CUDOT_CUDA_TRY(err, call)                                                                        \
    do {                                                                                                 \
        cudaError_t cudot_error_ = ::cudot::cuda::pass_or_inject(call);                                  \
        if (cudot_error_ != cudaSuccess) return ::cudot::cuda::cuda_fail(err, cudot_error_, #call);      \
    } while (0)
