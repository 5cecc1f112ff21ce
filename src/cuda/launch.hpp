// launch.hpp - the one launch layer of every GPU dot, a context's and the caller's own arrays' alike:
// the grid a launch gets and the launch itself. (How long cudot then waits: device_health.hpp.)
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../core/context.hpp"
#include "kernels/launchers.hpp"

namespace cudot {
namespace cuda {

// The head of a launch's workspace: the join's ticket; 256 bytes keep the partials after it aligned.
constexpr std::size_t kTicketBytes = 256;
constexpr std::size_t kLoadAlign = 16;  // the kernel's widest load

// Blocks of dot_kernel that GPU `device` holds at once for the pair (occupancy times multiprocessors):
// asked once per device and pair, then remembered for the process. The device's context must be current.
cudot_status resident_blocks(int device, int32_t x_dtype, int32_t y_dtype, unsigned *blocks, ErrorSink err);

// The grid of a launch of `tiles` tiles: as many blocks as stay resident, never more than there are tiles.
// Every grid gives the same bits (dot_kernel.cuh); this one keeps the GPU full without a second wave.
inline unsigned grid_blocks(unsigned resident, std::size_t tiles) {
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(resident, tiles)));
}

// Queues `call` on `stream` (on GPU `device`); a failure names the launch.
cudot_status launch(const KernelCall &call, int device, cudaStream_t stream, ErrorSink err);

// Whether a view's GPU address and stride let dot_kernel's vector loads read it.
inline bool dense_on_gpu(const void *gpu_data, std::int64_t stride) {
    return stride == 1 && reinterpret_cast<std::uintptr_t>(gpu_data) % kLoadAlign == 0;
}

}  // namespace cuda
}  // namespace cudot
