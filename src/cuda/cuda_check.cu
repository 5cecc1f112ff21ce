// cuda_check.cu - see cuda_check.hpp; also the test hooks that steer which GPUs a context gets.
#include "cuda_check.hpp"

#include "cuda_backend.hpp"

namespace cudot {
namespace cuda {

// The calling thread's countdown-th checked CUDA call from now is reported as failing with fault_code.
// Negative: no fault pending. Thread-local, so a test's fault never lands in another thread's context.
static thread_local long fault_countdown = -1;
static thread_local cudaError_t fault_code = cudaSuccess;

void inject_fault(unsigned calls_before, int cuda_error) {
    fault_countdown = cuda_error ? static_cast<long>(calls_before) : -1;
    fault_code = static_cast<cudaError_t>(cuda_error);
}

bool fault_pending() { return fault_countdown >= 0; }

static thread_local bool no_concurrent_managed = false;
void pretend_no_concurrent_managed(bool on) { no_concurrent_managed = on; }
bool no_concurrent_managed_pretended() { return no_concurrent_managed; }

cudaError_t pass_or_inject(cudaError_t result) {
    if (fault_countdown < 0) return result;
    return fault_countdown-- == 0 ? fault_code : result;
}

cudot_status cuda_fail(ErrorSink err, cudaError_t error, const char *call) {
    cudot_status status = error == cudaErrorMemoryAllocation ? CUDOT_ERROR_OUT_OF_MEMORY : CUDOT_ERROR_CUDA;
    return fail(err, status, "%s failed: %s (%s)", call, cudaGetErrorString(error), cudaGetErrorName(error));
}

}  // namespace cuda
}  // namespace cudot
