// tile_kernels_avx512_amd.cpp - the AVX-512 copy of the CPU inner loop as AMD processors take it, built
// with the AVX-512 copy's flags; tile_kernels.cpp gives it to them. It differs from tile_kernels_avx512.cpp
// in speed only, not in bits (the tests compare them): Dot2 tiles give half their additions to the fma
// units (CUDOT_ADDS_ON_FMA; add_on_fma in tile_kernels.inc says why AMD's processors only).
#if defined(__GNUC__) && !defined(__clang__)  // GCC bug 105593, as in tile_kernels_avx512.cpp
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "tile_kernels.hpp"

#define CUDOT_ADDS_ON_FMA 1
#define CUDOT_TILE_NS avx512_amd
#include "tile_kernels.inc"
#include "exact_loop.inc"
#undef CUDOT_TILE_NS

// The only table tile_kernels.cpp builds from this copy (fill_table in tile_kernels.inc says why no other).
namespace cudot::cpu::avx512_amd {
template void fill_table<true>(PartialsFn (&)[kTypes][kTypes]);
}  // namespace cudot::cpu::avx512_amd
