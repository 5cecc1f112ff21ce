// tile_kernels_avx512_amd.cpp - the AVX-512 copy of the CPU inner loop as AMD processors take it, built
// with the AVX-512 copy's flags; tile_kernels.cpp gives it to them. Same bits as every other copy (the
// tests compare them); two changes of speed, each measured on an AMD EPYC with AVX-512 (this project's CI
// and development machine; bench/experiments/tile_copies.cpp, docs/PERFORMANCE.md, issue 24):
//   - F32 x F32 tiles read row by row, as the AVX2 copy reads them (src/cpu/row_order_tiles.inc): 0.69-0.79
//     of the AVX-512 loops' time at 2^10-2^16 elements. F64 pairs keep the loops: row order took
//     1.06-1.46 x their time.
//   - Dot2 tiles (pairs with an F64) give half their additions to the fma units (CUDOT_ADDS_ON_FMA;
//     add_on_fma in tile_kernels.inc): 0.81-0.91 of the time at 2^10-2^16. On an H100 host's Xeon the same mix ran
//     slower than additions alone, so Intel processors keep the plain AVX-512 copy.
#if defined(__GNUC__) && !defined(__clang__)  // GCC bug 105593, as in tile_kernels_avx512.cpp
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "tile_kernels.hpp"

#define CUDOT_ROW_ORDER_IN_AVX512 1
#define CUDOT_ADDS_ON_FMA 1
#define CUDOT_TILE_NS avx512_amd
#include "tile_kernels.inc"
#undef CUDOT_TILE_NS
