// tile_kernels_avx512.cpp - the AVX-512 copy of the CPU inner loop (built with -mavx512f -mavx512bw
// -mavx512dq -mavx512vl plus AVX2/FMA/F16C). Only ever called after tile_kernels.cpp has checked that
// the processor and the operating system support all of them.
// GCC 12 warns that the _mm512_undefined_*() inside _mm512_cvtps_pd and _mm512_cvtep[iu]8_epi64 "is" or
// "may be used uninitialized" (GCC bug 105593, fixed in 13): a false positive inside the compiler's own
// header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "tile_kernels.hpp"

// Dots of at most one tile (8192 elements) read F32 x F32 tiles row by row, as AMD's copy does at every
// size. On an H100 host's Xeon (issue 24; f32, one thread, median us per call) with other work between
// calls, as a program's dots mostly come (bench/experiments/thread_cost.cpp, its seven modes), the
// row-order loop took 0.64-0.98 of this copy's own loops' time at 2^10-2^13 elements and 0.93-1.09 at
// 2^14. Repeated back to back (tile_copies.cpp) it took 0.82-0.92 at 2^10-2^11 but 1.20-1.29 x at
// 2^12-2^13. The loops below slow down after any pause (their 512-bit units, most likely); it far less.
#define CUDOT_ROW_ORDER_IN_AVX512 1
#define CUDOT_ROW_ORDER_MAX_N kTile
#define CUDOT_TILE_NS avx512
#include "tile_kernels.inc"
#undef CUDOT_TILE_NS
