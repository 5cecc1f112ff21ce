// tile_kernels_avx2.cpp - the AVX2+FMA+F16C copy of the CPU inner loop (built with -mavx2 -mfma -mf16c).
// Only ever called after tile_kernels.cpp has checked that the processor has all three.
#include <immintrin.h>

#include <type_traits>

#include "tile_kernels.hpp"

#define CUDOT_TILE_NS avx2
#include "tile_kernels.inc"
#undef CUDOT_TILE_NS
