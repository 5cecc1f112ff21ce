// cuda_check.hpp - how the CUDA backend checks its calls: one macro that names the failing call, turns
// CUDA's error into a status and a message on the context, and the test-only fault injector that can
// make any checked call look as if it failed.
#pragma once

#include <cuda_runtime.h>

#include "../context.hpp"

namespace cudot {
namespace cuda {

// Test-only (src/testing.hpp): returns `result`, unless a fault was injected on this thread and this is
// the call it waits for; then returns the injected error (the call itself was really made, so the
// clean-up paths also see whatever it took).
cudaError_t pass_or_inject(cudaError_t result);

// Records a failed CUDA call on the sink, naming the call and CUDA's own words. Returns OUT_OF_MEMORY
// for allocation failures, CUDA otherwise.
cudot_status cuda_fail(ErrorSink err, cudaError_t error, const char *call);

// The calling thread's CUDA state as the caller left it, restored when cudot's call ends: every entry
// point of the CUDA backend holds one. The current device is set back if cudot changed it (only
// then: cudaSetDevice costs). CUDA keeps one "last error" per thread: if the caller had one pending,
// cudot leaves it alone (a failing cudot call overwrites it, as any failing CUDA call does); if not,
// whatever cudot's own failed calls left there is cleared, so the caller never sees it.
class CallerCudaState {
   public:
    CallerCudaState() {
        pending_ = cudaPeekAtLastError();  // first: cudaGetDevice may fail and set an error itself
        has_device_ = cudaGetDevice(&device_) == cudaSuccess;
    }
    ~CallerCudaState() {
        int now = 0;
        if (has_device_ && cudaGetDevice(&now) == cudaSuccess && now != device_) (void)cudaSetDevice(device_);
        if (pending_ == cudaSuccess) (void)cudaGetLastError();
    }
    CallerCudaState(const CallerCudaState &) = delete;
    CallerCudaState &operator=(const CallerCudaState &) = delete;

   private:
    cudaError_t pending_ = cudaSuccess;
    bool has_device_ = false;
    int device_ = 0;
};

}  // namespace cuda
}  // namespace cudot

#define CUDOT_CUDA_TRY(err, call)                                                                        \
    do {                                                                                                 \
        cudaError_t cudot_error_ = ::cudot::cuda::pass_or_inject(call);                                  \
        if (cudot_error_ != cudaSuccess) return ::cudot::cuda::cuda_fail(err, cudot_error_, #call);      \
    } while (0)
