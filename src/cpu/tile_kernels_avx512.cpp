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

// Dots of at most 2048 elements read F32 x F32 tiles row by row, as AMD's copy does at every size: on the
// H100 hosts' Xeons (issue 24; f32, one thread) the row-order loop was the faster one there by every
// measure: back to back (bench/experiments/tile_copies.cpp, 0.82-0.92 of this copy's own loops' time at
// 2^10-2^11), with other calls between (thread_cost.cpp, 0.64-0.89) and in cudot-bench's rounds (HOST
// 2^10: 0.36-0.51 us resident against 0.49-0.74 before). At 2^12-2^13 the measures part: 1.20-1.29 x
// back to back, 1.1-1.8 x in cudot-bench's rounds (HOST 2^12, runs against runs), 0.70-0.98 with other
// calls between. The loops below slow down after any pause (their 512-bit units, most likely); the
// row-order loop far less.
#define CUDOT_ROW_ORDER_IN_AVX512 1
#define CUDOT_ROW_ORDER_MAX_N 2048
#define CUDOT_TILE_NS avx512
#include "tile_kernels.inc"
#undef CUDOT_TILE_NS
