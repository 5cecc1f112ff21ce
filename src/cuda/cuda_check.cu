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

// A word in mapped host memory that every launch's first thread waits on while it is non-zero: how
// the tests make a GPU "hang". Allocated on the first hold_kernels call, never freed (kernels may read
// it at any time after).
static std::atomic<unsigned *> hold_word{nullptr};
static std::atomic<unsigned *> hold_view{nullptr};

void hold_kernels(bool on) {
    if (!hold_word.load()) {
        void *p = nullptr, *view = nullptr;
        if (cudaHostAlloc(&p, sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess ||
            cudaHostGetDevicePointer(&view, p, 0) != cudaSuccess)
            return;
        *static_cast<volatile unsigned *>(p) = 0;
        hold_view.store(static_cast<unsigned *>(view));
        hold_word.store(static_cast<unsigned *>(p));
    }
    *static_cast<volatile unsigned *>(hold_word.load()) = on ? 1u : 0u;
}

const volatile unsigned *held_word() { return hold_view.load(std::memory_order_relaxed); }

static thread_local bool no_concurrent_managed = false;
void pretend_no_concurrent_managed(bool on) { no_concurrent_managed = on; }
bool no_concurrent_managed_pretended() { return no_concurrent_managed; }

namespace {
struct ThreadCudaState {
    int depth = 0;            // CallerCudaState objects alive on this thread
    int caller_device = -1;   // the caller's current device (-1: unknown)
    int current = -1;         // the current device as cudot left it
    bool switched = false;    // cudot changed the current device
    bool failed = false;      // a CUDA call of cudot's failed
};
thread_local ThreadCudaState thread_state;
}  // namespace

CallerCudaState::CallerCudaState() {
    ThreadCudaState &t = thread_state;
    if (t.depth++ != 0) return;
    t.switched = t.failed = false;
    int device = -1;
    t.caller_device = t.current = note(cudaGetDevice(&device)) == cudaSuccess ? device : -1;
}

CallerCudaState::~CallerCudaState() {
    ThreadCudaState &t = thread_state;
    if (--t.depth != 0) return;
    if (t.switched && t.caller_device >= 0) note(cudaSetDevice(t.caller_device));
    if (t.failed) (void)cudaGetLastError();
}

cudaError_t set_device(int device) {
    ThreadCudaState &t = thread_state;
    if (device == t.current && t.depth > 0) return cudaSuccess;
    const cudaError_t e = note(cudaSetDevice(device));
    if (e == cudaSuccess) {
        t.current = device;
        t.switched = true;
    }
    return e;
}

cudaError_t note(cudaError_t error) {
    if (error != cudaSuccess && error != cudaErrorNotReady) thread_state.failed = true;
    return error;
}

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
