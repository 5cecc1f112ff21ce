// testing_cuda.hpp - the testing unit's GPU half (testing_cuda.cu; without CUDA, testing.cpp's stand-ins).
#pragma once

struct cudot_ctx;

namespace cudot {
namespace testing_cuda {
// Every GPU of ctx launches at most `blocks` blocks (0: as many as stay resident, the normal grid).
void set_gpu_blocks(cudot_ctx &ctx, unsigned blocks);
// While on, kernels queued from then on GPU `device` (-1: every GPU) do not finish; off lets them end.
void hold_kernels(int device, bool on);
bool any_kernels_held();
}  // namespace testing_cuda
}  // namespace cudot
