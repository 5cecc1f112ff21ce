// tile_kernels_avx512_rows.cpp - the AVX-512 copy of the CPU inner loop with the AVX2 copy's row order
// for F32 and F64 pairs (src/cpu/row_order_tiles.inc), built with the AVX-512 copy's flags.
// On AMD processors tile_kernels.cpp takes its F32 x F32 entry into the AVX-512 table: on an AMD EPYC
// with AVX-512 (this project's CI and development machine) that entry took 0.69-0.79 of the AVX-512
// loops' time at 2^10-2^16 elements, while its F64 entries took 1.06-1.46 x theirs
// (bench/experiments/tile_copies.cpp, docs/PERFORMANCE.md, issue 24's twelfth session). The tests
// compare the whole copy's bits with the others'.
#if defined(__GNUC__) && !defined(__clang__)  // GCC bug 105593, as in tile_kernels_avx512.cpp
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "tile_kernels.hpp"

#define CUDOT_ROW_ORDER_IN_AVX512 1
#define CUDOT_TILE_NS avx512_rows
#include "tile_kernels.inc"
#undef CUDOT_TILE_NS
