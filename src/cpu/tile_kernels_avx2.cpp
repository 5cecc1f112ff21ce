// tile_kernels_avx2.cpp - the AVX2+FMA+F16C copy of the CPU inner loop (built with -mavx2 -mfma -mf16c).
// Only ever called after tile_kernels.cpp has checked that the processor has all three.
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "tile_kernels.hpp"

#define CUDOT_TILE_NS avx2
#include "tile_kernels.inc"
#include "exact_loop.inc"
#undef CUDOT_TILE_NS

// The only table tile_kernels.cpp builds from this copy (fill_table in tile_kernels.inc says why no other).
namespace cudot::cpu::avx2 {
template void fill_table<true>(PartialsFn (&)[kTypes][kTypes]);
}  // namespace cudot::cpu::avx2
