// cuda_check.cu - see cuda_check.hpp; also the test hooks that steer which GPUs a context gets.
#include "cuda_check.hpp"

#include <atomic>

#include "cuda_backend.hpp"
#include "gpu_state.hpp"

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

// Words in mapped host memory, one per device, that every launch's first thread on that device waits on
// while it is non-zero: how the tests make a GPU "hang". Allocated on the first hold call, never freed
// (kernels may read them at any time after).
constexpr int kHeldDevices = 16;
static std::atomic<unsigned *> hold_words{nullptr};
static std::atomic<unsigned *> hold_views{nullptr};

static bool allocate_hold_words() {
    if (hold_words.load()) return true;
    void *p = nullptr, *view = nullptr;
    if (cudaHostAlloc(&p, kHeldDevices * sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess ||
        cudaHostGetDevicePointer(&view, p, 0) != cudaSuccess)
        return false;
    for (int d = 0; d < kHeldDevices; ++d) static_cast<volatile unsigned *>(p)[d] = 0;
    hold_views.store(static_cast<unsigned *>(view));
    hold_words.store(static_cast<unsigned *>(p));
    return true;
}

void hold_kernels(bool on) {
    for (int d = 0; d < kHeldDevices; ++d) hold_device_kernels(d, on);
}

void hold_device_kernels(int device, bool on) {
    if (device < 0 || device >= kHeldDevices || !allocate_hold_words()) return;
    static_cast<volatile unsigned *>(hold_words.load())[device] = on ? 1u : 0u;
}

const volatile unsigned *held_word(int device) {
    unsigned *views = hold_views.load(std::memory_order_relaxed);
    return views && device >= 0 && device < kHeldDevices ? views + device : nullptr;
}

static thread_local bool no_concurrent_managed = false;
void pretend_no_concurrent_managed(bool on) { no_concurrent_managed = on; }
bool no_concurrent_managed_pretended() { return no_concurrent_managed; }

cudaError_t pass_or_inject(cudaError_t result) {
    note(result);
    if (fault_countdown < 0) return result;
    return fault_countdown-- == 0 ? fault_code : result;
}

cudot_status cuda_fail(ErrorSink err, cudaError_t error, const char *call) {
    cudot_status status = error == cudaErrorMemoryAllocation ? CUDOT_ERROR_OUT_OF_MEMORY : CUDOT_ERROR_CUDA;
    return fail(err, status, "%s failed: %s (%s)", call, cudaGetErrorString(error), cudaGetErrorName(error));
}

}  // namespace cuda
}  // namespace cudot
