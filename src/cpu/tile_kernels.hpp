// tile_kernels.hpp - the CPU inner loops, in one copy per instruction set, and the pick between them.
#pragma once

#include <cstddef>

#include "../order.hpp"

namespace cudot {
namespace cpu {

constexpr int kTypes = 6;  // CUDOT_F32 .. CUDOT_U8

// Computes the partials of tiles [first, last) of an n-element dot into out[first..last) (partials of
// the pair's accumulator type).
using PartialsFn = void (*)(const void *x, const void *y, std::size_t n, std::size_t first, std::size_t last,
                            void *out);

struct TileKernels {
    PartialsFn table[kTypes][kTypes];  // [dtype - 1][y_dtype - 1]
    const char *isa;
    PartialsFn get(int32_t x_dtype, int32_t y_dtype) const { return table[x_dtype - 1][y_dtype - 1]; }
};

// The table this processor runs (decided once): the widest copy it supports; on AMD processors with
// AVX-512, the AVX-512 copy built for them (tile_kernels_avx512_amd.cpp). All copies return identical
// bits.
const TileKernels &tile_kernels();
// Every copy built into the library that this processor can run (tests compare them).
int tile_kernel_variants(const TileKernels **out, int max);

}  // namespace cpu
}  // namespace cudot
