// tile_kernels.hpp - the CPU inner loops, in one copy per instruction set, and the pick between them.
#pragma once

#include <cstddef>

#include "../core/order.hpp"
#include "exact_lanes.hpp"

namespace cudot {
namespace cpu {

constexpr int kTypes = 6;  // CUDOT_F32 .. CUDOT_U8

// Dots of at most this many elements may take other loops than larger ones (tile_kernels.cpp says
// which, and why).
constexpr std::size_t kSmallDot = 2048;

// Computes the partials of tiles [first, last) of an n-element dot into out[first..last) (partials of
// the pair's accumulator type).
using PartialsFn = void (*)(const void *x, const void *y, std::size_t n, std::size_t first, std::size_t last,
                            void *out);

// Dots of `count` equal dense rows of n (1..order::kLanes) elements each, row i at x + i * x_row_bytes
// (likewise y), into results[0..count): each the bits of that row's own dot, its NaN not yet canonical.
using ShortRowsFn = void (*)(const void *x, const void *y, std::size_t n, std::size_t count,
                             std::ptrdiff_t x_row_bytes, std::ptrdiff_t y_row_bytes, double *results);
// One copy's functions, indexed by [dtype - 1][y_dtype - 1]. Which loop reads which tiles is decided
// when the table is built, by processor and, for small dots, by size; a dot picks its function once.
struct TileKernels {
    PartialsFn table[kTypes][kTypes];        // dots of more than kSmallDot elements
    PartialsFn small_table[kTypes][kTypes];  // dots of at most kSmallDot elements
    ExactFn exact_table[kTypes][kTypes];     // the exact mode's loop (exact_loop.inc)
    ShortRowsFn short_rows_table[kTypes][kTypes];  // batches of short rows (float and double pairs; else null)
    const char *isa;
    // The function for an n-element dot.
    PartialsFn get(int32_t x_dtype, int32_t y_dtype, std::size_t n) const {
        return (n <= kSmallDot ? small_table : table)[x_dtype - 1][y_dtype - 1];
    }
    ExactFn exact(int32_t x_dtype, int32_t y_dtype) const { return exact_table[x_dtype - 1][y_dtype - 1]; }
    ShortRowsFn short_rows(int32_t x_dtype, int32_t y_dtype) const { return short_rows_table[x_dtype - 1][y_dtype - 1]; }
};

// The table this processor runs (decided once): the widest copy it supports; on AMD processors with
// AVX-512, the AVX-512 copy built for them (tile_kernels_avx512_amd.cpp). All copies return identical
// bits.
const TileKernels &tile_kernels();
// Every copy built into the library that this processor can run (tests compare them).
int tile_kernel_variants(const TileKernels **out, int max);

}  // namespace cpu
}  // namespace cudot
