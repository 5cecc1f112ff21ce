// tile_kernels.hpp - the CPU inner loops, in one copy per instruction set, and the pick between them.
#pragma once

#include <cstddef>

#include "../order.hpp"

namespace cudot {
namespace cpu {

// Computes the partials of tiles [first, last) of an n-element dot into out[first..last).
struct TileKernels {
    void (*f32)(const float *, const float *, std::size_t, std::size_t, std::size_t, order::SumF32 *);
    void (*f64)(const double *, const double *, std::size_t, std::size_t, std::size_t, order::SumF64 *);
    const char *isa;
};

// The widest copy this processor runs (decided once). All copies return identical bits.
const TileKernels &tile_kernels();
// Every copy built into the library that this processor can run (tests compare them).
int tile_kernel_variants(const TileKernels **out, int max);

}  // namespace cpu
}  // namespace cudot
