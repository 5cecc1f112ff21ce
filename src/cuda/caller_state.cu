// caller_state.cu - see caller_state.hpp.
#include "caller_state.hpp"

#include <cuda.h>  // the driver API's types only: its functions are reached through the runtime

#include <atomic>
#include <mutex>

namespace cudot {
namespace cuda {

namespace {

// The driver functions cudot needs, looked up once through the runtime (no link against libcuda).
struct DriverApi {
    CUresult (*ctx_get_current)(CUcontext *) = nullptr;
    CUresult (*ctx_set_current)(CUcontext) = nullptr;
    CUresult (*device_get)(CUdevice *, int) = nullptr;
    CUresult (*primary_retain)(CUcontext *, CUdevice) = nullptr;
    cudaError_t status = cudaSuccess;  // why the lookup failed (no driver, too old a driver)
};

template <class Fn>
cudaError_t find(const char *symbol, Fn &fn) {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    // 12000: the ABI of each symbol as of CUDA 12.0, which every driver this toolkit supports has.
    const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &found);
    if (e != cudaSuccess) return e;
    if (found != cudaDriverEntryPointSuccess || !p) return cudaErrorSymbolNotFound;
    fn = reinterpret_cast<Fn>(p);
    return cudaSuccess;
}

DriverApi load_driver_api() {
    DriverApi api;
    cudaError_t e = find("cuCtxGetCurrent", api.ctx_get_current);
    if (e == cudaSuccess) e = find("cuCtxSetCurrent", api.ctx_set_current);
    if (e == cudaSuccess) e = find("cuDeviceGet", api.device_get);
    if (e == cudaSuccess) e = find("cuDevicePrimaryCtxRetain", api.primary_retain);
    api.status = e;
    return api;
}

const DriverApi &driver() {
    static const DriverApi api = load_driver_api();
    return api;
}

// CUDA's runtime error codes equal the driver's for every error these calls return (invalid device,
// invalid context, not initialised, no device, out of memory, ...).
cudaError_t as_runtime_error(CUresult r) { return static_cast<cudaError_t>(r); }

// The primary context of each device cudot has used, retained once and kept for the life of the process.
constexpr int kMaxDevices = 256;
std::atomic<CUcontext> primaries[kMaxDevices];
std::mutex retain_mutex;

cudaError_t primary_context(int device, CUcontext *out) {
    if (device < 0 || device >= kMaxDevices) return cudaErrorInvalidDevice;
    CUcontext c = primaries[device].load(std::memory_order_acquire);
    if (!c) {
        const DriverApi &api = driver();
        if (api.status != cudaSuccess) return api.status;
        std::lock_guard<std::mutex> lock(retain_mutex);
        c = primaries[device].load(std::memory_order_relaxed);
        if (!c) {
            CUdevice dev = 0;
            CUresult r = api.device_get(&dev, device);
            if (r == CUDA_SUCCESS) r = api.primary_retain(&c, dev);
            if (r != CUDA_SUCCESS) return as_runtime_error(r);
            primaries[device].store(c, std::memory_order_release);
        }
    }
    *out = c;
    return cudaSuccess;
}

struct ThreadCudaState {
    int depth = 0;              // CallerCudaState objects alive on this thread
    CUcontext caller = nullptr; // the context current when the outermost one was made
    bool caller_known = false;  // whether `caller` could be read (a driver is there)
    CUcontext active = nullptr; // the context current now (the caller's until cudot switches)
    int current = -1;           // the device whose primary context is current for cudot; -1: none yet
    bool switched = false;      // cudot made another context current than the caller's
    bool failed = false;        // a CUDA call of cudot's failed
};
thread_local ThreadCudaState thread_state;

}  // namespace

CallerCudaState::CallerCudaState() {
    ThreadCudaState &t = thread_state;
    if (t.depth++ != 0) return;
    outermost_ = true;
    t.failed = t.switched = false;
    t.current = -1;
    t.caller = nullptr;
    const DriverApi &api = driver();
    t.caller_known = api.status == cudaSuccess && api.ctx_get_current(&t.caller) == CUDA_SUCCESS;
    t.active = t.caller;
}

cudot_status CallerCudaState::restore(cudot_status status, ErrorSink err) {
    if (!outermost_ || restored_) return status;
    restored_ = true;
    ThreadCudaState &t = thread_state;
    if (t.failed) (void)cudaGetLastError();  // cudot's own error, not one the caller left pending
    cudaError_t back = cudaSuccess;
    if (t.switched && t.caller_known) back = as_runtime_error(driver().ctx_set_current(t.caller));
    t.current = -1;
    t.switched = false;
    --t.depth;
    if (back == cudaSuccess || status != CUDOT_OK) return status;
    return fail(err, CUDOT_ERROR_CUDA, "cuCtxSetCurrent (making the caller's CUDA context current again) failed: %s (%s)",
                cudaGetErrorString(back), cudaGetErrorName(back));
}

CallerCudaState::~CallerCudaState() {
    if (!outermost_) {
        --thread_state.depth;
        return;
    }
    restore(CUDOT_OK, ErrorSink{nullptr, 0});
}

cudaError_t use_primary_context(int device) {
    ThreadCudaState &t = thread_state;
    if (device == t.current && t.depth > 0) return cudaSuccess;
    CUcontext primary = nullptr;
    cudaError_t e = primary_context(device, &primary);
    if (e == cudaSuccess && primary != t.active) {  // a caller already in that primary context: no switch
        e = as_runtime_error(driver().ctx_set_current(primary));
        if (e == cudaSuccess) t.switched = true;
    }
    if (e != cudaSuccess) return note(e);
    t.active = primary;
    t.current = device;
    return cudaSuccess;
}

cudaError_t driver_entry(const char *symbol, void **fn) { return find(symbol, *fn); }

cudaError_t note(cudaError_t error) {
    if (error != cudaSuccess && error != cudaErrorNotReady) thread_state.failed = true;
    return error;
}

}  // namespace cuda
}  // namespace cudot
