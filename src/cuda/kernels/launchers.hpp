// launchers.hpp - the dot kernel's launches without their element types: what the host code builds for
// a launch (LaunchArgs), the launch made ready for a stream or a CUDA graph node (KernelCall), and the
// typed functions of one pair of element types (Launcher). The instantiations live in dot_kernels.cu and
// strided_kernels.cu beside this file.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "dot_kernel.cuh"

namespace cudot {
namespace cuda {

// One launch of the dot kernel, without its element types.
struct LaunchArgs {
    const void *x, *y;              // element 0 of the dot, as the GPU sees it
    std::size_t n;                  // elements of the whole dot
    std::size_t tiles = 0;          // tiles of the launch, from tile 0
    unsigned blocks = 1;            // grid size
    void *partials = nullptr;       // one partial per tile
    unsigned *ticket = nullptr;
    Completion *done = nullptr;     // nullptr: partials only
    void *exact_partial = nullptr;  // the exact kernel: its sum goes there unrounded (exact::Partial)
    // Views that are not dense (strided_dot_kernel): byte strides from element i to i + 1, and whether
    // each view's elements are aligned to their type.
    bool dense = true;
    long long x_stride = 0, y_stride = 0;
    bool x_aligned = true, y_aligned = true;
};

// One launch's kernel and arguments, in storage of its own, as a CUDA graph's kernel node takes them
// (node.kernelParams points into it: do not copy a KernelCall after prepare()).
struct KernelCall {
    alignas(16) unsigned char params[192];  // the pair's DotParams, or a batch's RowsParams
    StridedView x, y;                      // strided_dot_kernel's views
    void *args[3];
    cudaKernelNodeParams node;
};

// The typed functions of one pair of element types.
struct Launcher {
    void (*prepare)(const LaunchArgs &args, KernelCall &call) = nullptr;
    cudaError_t (*occupancy)(int *blocks_per_sm) = nullptr;  // dot_kernel's, at kThreads threads
    std::size_t partial_bytes = 0;  // one partial of the pair's kind, packed
};
Launcher launcher_for(int32_t x_dtype, int32_t y_dtype);
// The pair's strided_dot_kernel (strided_kernels.cu).
void *strided_kernel_for(int32_t x_dtype, int32_t y_dtype);
// A batch's launch (rows_kernels.cu): the pair's kernel of that kind on `blocks` blocks of kThreads
// threads, and how many of its blocks a multiprocessor holds (the staged kernel's shared memory allowed
// first, which rows_occupancy does on each GPU before its first launch).
struct RowsParams;
enum class RowsKernel { Tile, Short, Staged };
void prepare_rows(const RowsParams &params, int32_t x_dtype, int32_t y_dtype, RowsKernel kind, unsigned blocks,
                  KernelCall &call);
cudaError_t rows_occupancy(int32_t x_dtype, int32_t y_dtype, RowsKernel kind, int *blocks_per_sm);
void *rows_short_kernel_for(int32_t x_dtype, int32_t y_dtype);   // rows_short_kernels.cu
void *rows_tile_kernel_for(int32_t x_dtype, int32_t y_dtype);    // rows_tile_kernels.cu
void *rows_staged_kernel_for(int32_t x_dtype, int32_t y_dtype);  // rows_staged_kernels.cu: nullptr for
                                                                 // pairs other than float and double
// The exact mode's launch (exact_kernels.cu): exact_dot_kernel of the pair on at most LaunchArgs::blocks
// blocks; LaunchArgs::ticket is the workspace's head of kExactHeadBytes, zero between launches,
// LaunchArgs::partials room for kExactSlotBytes a block, and LaunchArgs::done where the result goes, or
// LaunchArgs::exact_partial where the unrounded sum goes instead (kExactPartialBytes, 8-byte aligned).
constexpr std::size_t kExactHeadBytes = 2048;
constexpr std::size_t kExactSlotBytes = 3 * sizeof(double);
constexpr std::size_t kExactPartialBytes = 1120;
struct ExactLauncher {
    void (*prepare)(const LaunchArgs &args, KernelCall &call) = nullptr;
    cudaError_t (*occupancy)(int *blocks_per_sm) = nullptr;
};
ExactLauncher exact_launcher_for(int32_t x_dtype, int32_t y_dtype);
// A batch's launch in the exact mode (exact_rows_kernels.cu): the pair's exact_group_rows_kernel (where
// RowsParams::group > 0) or exact_part_rows_kernel on `blocks` blocks. RowsParams::partials holds a slot of kExactRowSlotBytes per item and then, where rows have
// several parts, a spill slot of kExactRowSpillBytes per item.
constexpr std::size_t kExactRowSlotBytes = 4 * sizeof(double);
constexpr std::size_t kExactRowSpillBytes = 138 * sizeof(long long);
void prepare_exact_rows(const RowsParams &params, int32_t x_dtype, int32_t y_dtype, unsigned blocks, KernelCall &call);
cudaError_t exact_rows_occupancy(int32_t x_dtype, int32_t y_dtype, bool groups, int *blocks_per_sm);
void *exact_group_rows_kernel_for(int32_t x_dtype, int32_t y_dtype);  // exact_group_rows_kernels.cu
// Whether the current device can run this build's kernels (loads one of them).
cudaError_t kernels_load();

}  // namespace cuda
}  // namespace cudot
