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

#define CUDOT_TILE_NS avx512
#include "tile_kernels.inc"
#include "exact_loop.inc"
#undef CUDOT_TILE_NS

// The tables tile_kernels.cpp builds from this copy (fill_table in tile_kernels.inc says why no other).
namespace cudot::cpu::avx512 {
template void fill_table<false>(PartialsFn (&)[kTypes][kTypes]);
template void fill_table<true>(PartialsFn (&)[kTypes][kTypes]);
}  // namespace cudot::cpu::avx512
