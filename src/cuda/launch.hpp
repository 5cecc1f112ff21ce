// launch.hpp - the one launch layer of every GPU dot, a context's and the caller's own arrays' alike:
// the launch a dot of two views gets, the grid, and the two ways to queue it: a launch, or a replay of
// a CUDA graph kept for that shape of dot. (How long cudot then waits: device_health.hpp.)
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../core/context.hpp"
#include "../core/operands.hpp"
#include "kernels/launchers.hpp"

namespace cudot {
namespace cuda {

// The head of a launch's workspace: the join's ticket and the exact mode's digits (kernels/exact_kernel.cuh),
// both zero between launches, which leave them so; the partials follow it.
constexpr std::size_t kHeadBytes = kExactHeadBytes;
constexpr std::size_t kLoadAlign = 16;  // the kernel's widest load

// Blocks of dot_kernel (or exact_dot_kernel) that GPU `device` holds at once for the pair (occupancy
// times multiprocessors): asked once per device and pair, then remembered for the process. The
// device's context must be current.
cudot_status resident_blocks(int device, int32_t x_dtype, int32_t y_dtype, unsigned *blocks, ErrorSink err,
                             bool exact = false);

// The grid of a launch of `tiles` tiles: as many blocks as stay resident, never more than there are tiles.
// Every grid gives the same bits (dot_kernel.cuh); this one keeps the GPU full without a second wave.
inline unsigned grid_blocks(unsigned resident, std::size_t tiles) {
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(resident, tiles)));
}

// Whether a view's GPU address and stride let dot_kernel's vector loads read it.
inline bool dense_on_gpu(const void *gpu_data, std::int64_t stride) {
    return stride == 1 && reinterpret_cast<std::uintptr_t>(gpu_data) % kLoadAlign == 0;
}

// The launch of a dot of `ops`, read where a GPU sees them (gpu_data), whatever holds them: a context's
// buffers, a pipeline's staged chunk, a caller's arrays. Every tile of the ops.n elements, on a grid of
// at most `resident` blocks, one partial per tile at `partials`; with `done`, the last block joins the
// partials (taking `ticket`) and writes the result there, without it the partials are the result.
// Views that dot_kernel cannot read with vector loads go to strided_dot_kernel.
LaunchArgs dot_launch(const Operands &ops, unsigned resident, void *partials, unsigned *ticket = nullptr,
                      Completion *done = nullptr);

// The exact kernel's launch of a dot of `ops` (kernels/exact_kernel.cuh), on at most `resident` blocks (the
// kernel's own, whatever the tiles): `workspace` holds kHeadBytes and then a slot per block; the result
// goes to `done`, or the unrounded sum to `partial` (an exact::Partial the GPU can write) where set.
LaunchArgs exact_launch(const Operands &ops, unsigned resident, void *workspace, Completion *done, void *partial);

// One input's copy to the GPU, queued before a dot's kernel (a PINNED context copying its buffers, or a
// context's staging of a misaligned start).
struct InputCopy {
    void *to = nullptr;
    const void *from = nullptr;
    std::size_t bytes = 0;
};

// The one cache of CUDA graphs: one per stream that cudot's dots take (the caller's, or a context's GPU's),
// kept with its workspace (stream_dot.cu). It holds a graph for each shape of dot that came (its kernel,
// and whether input copies go first), built the first time and re-aimed at each later call's arguments
// in place. Replaying a graph reaches the GPU
// sooner than a launch does, and copies and kernel go as one submission. Not copyable: it owns the graphs.
class DotGraphs {
public:
    DotGraphs() = default;
    DotGraphs(const DotGraphs &) = delete;
    DotGraphs &operator=(const DotGraphs &) = delete;
    DotGraphs(DotGraphs &&) = default;
    DotGraphs &operator=(DotGraphs &&) = default;
    // Queues the copies (none, or one per input) and then the kernel on `stream`.
    cudaError_t replay(const KernelCall &call, const InputCopy *copies, unsigned count, cudaStream_t stream);
    // Destroys the graphs (one still running is freed when it ends); the first failure, if any.
    cudaError_t clear();

private:
    struct Graph {
        const void *kernel = nullptr;
        unsigned copies = 0;
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        cudaGraphNode_t kernel_node = nullptr, copy_nodes[2] = {};
        KernelCall last;  // the arguments it holds now (compared, never launched)
        InputCopy last_copies[2];
    };
    std::vector<Graph> graphs_;
};

// Queues `call` on `stream` (on GPU `device`), after the `count` input copies: through `graphs` where
// given, else as a launch (a stream being captured). A failure names the launch.
cudot_status launch(const KernelCall &call, int device, cudaStream_t stream, ErrorSink err,
                    DotGraphs *graphs = nullptr, const InputCopy *copies = nullptr, unsigned count = 0);

}  // namespace cuda
}  // namespace cudot
