// cuda_backend.hpp - the GPU strategies (PINNED, MAPPED, MANAGED): allocation, copies, the launch.
// Built from cuda_backend.cu, or from no_cuda.cpp when the library is configured without CUDA.
#pragma once

#include <cstddef>

#include "../context.hpp"

namespace cudot {
namespace cuda {

// Whether a usable GPU with this ordinal exists. On false, writes why into err (status returned:
// NO_DEVICE, or INVALID_ARGUMENT for an ordinal beyond the devices present).
cudot_status probe(int32_t device, ErrorSink err);
// The strategy AUTO resolves to on this device (after a successful probe).
int32_t auto_strategy(int32_t device);
// Allocates the buffers and device state for ctx.memory on ctx.device; on failure frees what it took.
cudot_status create(cudot_ctx &ctx, ErrorSink err);
// Frees everything create took; reports the first CUDA error, if any, but always finishes.
cudot_status destroy(cudot_ctx &ctx, ErrorSink err);
// The canonical dot of the first n elements (1 <= n <= capacity), in one kernel launch; for a hybrid
// (AUTO) context, split between CPU threads and the GPU.
cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result);
// The GPU's share of the next hybrid dot (tests).
double current_hybrid_share(const cudot_ctx &ctx);
// Tests: make this thread's calls_before-th next checked CUDA call report cuda_error (0: cancel).
void inject_fault(unsigned calls_before, int cuda_error);
// Tests: whether the injected fault has not fired yet.
bool fault_pending();

}  // namespace cuda
}  // namespace cudot
