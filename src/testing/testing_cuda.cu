// testing_cuda.cu - the testing unit's GPU half: held kernels (a GPU that hangs) and forced grids.
#include <atomic>

#include "../cuda/gpu_state.hpp"
#include "../cuda/launch.hpp"
#include "../core/seams.hpp"
#include "testing_cuda.hpp"

namespace cudot {
namespace testing_cuda {

namespace {

// Words in mapped host memory, one per device: a held device's launches first queue hold_kernel, which
// spins while its word is non-zero. Allocated on the first hold, never freed (kernels may read them at
// any time after).
constexpr int kHeldDevices = 16;
std::atomic<unsigned *> hold_words{nullptr};
std::atomic<unsigned *> hold_views{nullptr};

__global__ void hold_kernel(const volatile unsigned *word) {
    while (*word != 0) {
    }
}

bool allocate_hold_words() {
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

}  // namespace

void set_gpu_blocks(cudot_ctx &ctx, unsigned blocks) {
    if (!ctx.gpu) return;
    for (cuda::Gpu &g : ctx.gpu->gpus) {
        unsigned resident = g.blocks;  // the device's own figure, remembered since the context's init
        if (!blocks) (void)cuda::resident_blocks(g.device, ctx.dtype, ctx.y_dtype, &resident, ErrorSink{nullptr, 0});
        g.blocks = blocks ? blocks : resident;
    }
}

void hold_kernels(int device, bool on) {
    if (!allocate_hold_words()) return;
    for (int d = 0; d < kHeldDevices; ++d)
        if (device < 0 || d == device) static_cast<volatile unsigned *>(hold_words.load())[d] = on ? 1u : 0u;
}

bool any_kernels_held() {
    const unsigned *words = hold_words.load();
    if (!words) return false;
    for (int d = 0; d < kHeldDevices; ++d)
        if (static_cast<const volatile unsigned *>(words)[d] != 0) return true;
    return false;
}

}  // namespace testing_cuda

namespace seams {
// Before each launch, once a test has held kernels: a kernel that waits while the device is held. The
// launch is not a checked call (the fault walks of the tests count those), and a failure to queue it only
// leaves the dot unheld.
void before_launch(int device, void *stream) {
    const unsigned *views = testing_cuda::hold_views.load(std::memory_order_relaxed);
    if (!views || device < 0 || device >= testing_cuda::kHeldDevices) return;
    testing_cuda::hold_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(views + device);
}
}  // namespace seams

}  // namespace cudot
