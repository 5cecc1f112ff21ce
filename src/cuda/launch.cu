// launch.cu - see launch.hpp.
#include "launch.hpp"

#include <atomic>

#include "../core/seams.hpp"
#include "cuda_check.hpp"

namespace cudot {
namespace cuda {

namespace {
constexpr int kMaxDevices = 256;
constexpr int kPairs = 36;  // element-type pairs (types.hpp: six types each side)
std::atomic<unsigned> resident[kMaxDevices][kPairs];  // 0: not asked yet
}  // namespace

cudot_status resident_blocks(int device, int32_t x_dtype, int32_t y_dtype, unsigned *blocks, ErrorSink err) {
    std::atomic<unsigned> *known = device >= 0 && device < kMaxDevices
                                       ? &resident[device][(x_dtype - 1) * 6 + (y_dtype - 1)]
                                       : nullptr;
    if (known && (*blocks = known->load(std::memory_order_relaxed)) != 0) return CUDOT_OK;
    int sms = 0, per_sm = 0;
    CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDOT_CUDA_TRY(err, launcher_for(x_dtype, y_dtype).occupancy(&per_sm));
    *blocks = static_cast<unsigned>(std::max(1, sms) * std::max(1, per_sm));
    if (known) known->store(*blocks, std::memory_order_relaxed);  // two threads asking at once agree
    return CUDOT_OK;
}

cudot_status launch(const KernelCall &call, int device, cudaStream_t stream, ErrorSink err) {
    CUDOT_TEST_SEAM(seams::before_launch(device, stream));
    (void)device;
    // cudaLaunchKernel returns this launch's own error: not one that the caller's code (or an earlier
    // call of cudot's) left pending in CUDA's per-thread last error.
    void **args = const_cast<void **>(call.args);  // CUDA's signature; it only reads them
    CUDOT_CUDA_TRY_AS(err, cudaLaunchKernel(call.node.func, call.node.gridDim, call.node.blockDim, args, 0, stream),
                      "dot_kernel launch");
    return CUDOT_OK;
}

}  // namespace cuda
}  // namespace cudot
