// read_sum.cuh - for the experiments: a kernel that reads two float arrays once (16-byte loads,
// grid-stride), as a dot would, and keeps nothing but the reads.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

__global__ void read_sum(const float4 *x, const float4 *y, std::size_t n4, float *out) {
    float s = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const float4 a = x[i], b = y[i];
        s += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
    if (s == 12345.0f) *out = s;  // keeps the reads; never true for the experiments' inputs
}
