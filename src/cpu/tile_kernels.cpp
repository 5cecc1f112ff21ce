// tile_kernels.cpp - the baseline copy of the CPU inner loop, and the run-time choice between copies.
#include "tile_kernels.hpp"

#include <type_traits>

#if !defined(_WIN32)
#include <pthread.h>
#endif

#include "../core/seams.hpp"

#if defined(CUDOT_HAVE_AVX2_KERNELS)
#include <cpuid.h>
#endif

#define CUDOT_TILE_NS baseline
#include "tile_kernels.inc"
#include "exact_loop.inc"
#undef CUDOT_TILE_NS

namespace cudot {
namespace cpu {

#if defined(CUDOT_HAVE_AVX2_KERNELS)
namespace avx2 {
template <bool kRowOrder> void fill_table(PartialsFn (&table)[kTypes][kTypes]);
void fill_exact_table(ExactFn (&table)[kTypes][kTypes]);
void fill_short_rows_table(ShortRowsFn (&table)[kTypes][kTypes]);
}
namespace avx512 {
template <bool kRowOrder> void fill_table(PartialsFn (&table)[kTypes][kTypes]);
void fill_exact_table(ExactFn (&table)[kTypes][kTypes]);
void fill_short_rows_table(ShortRowsFn (&table)[kTypes][kTypes]);
}
namespace avx512_amd {
template <bool kRowOrder> void fill_table(PartialsFn (&table)[kTypes][kTypes]);
void fill_exact_table(ExactFn (&table)[kTypes][kTypes]);
void fill_short_rows_table(ShortRowsFn (&table)[kTypes][kTypes]);
}
// F16C from CPUID leaf 1 (ECX bit 29) directly: clang before 16 does not accept "f16c" in
// __builtin_cpu_supports.
static bool cpu_has_f16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
}
static bool cpu_has_avx2_fma() {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
}
static bool cpu_has_avx512() {  // the features the AVX-512 copy is compiled for (OS support included)
    return cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}
// Which AVX-512 copy a processor takes: AMD's the one built for them (Dot2 additions half on the fma
// units: add_on_fma in tile_kernels.inc), the others (Intel's) the plain copy.
static bool amd_copy_preferred() { return __builtin_cpu_is("amd"); }
#endif

// A copy's tables for dots of more than kSmallDot elements and for smaller ones. Each copy's fill_table
// takes kRowOrder: whether the tiles it can read row by row (row_order_tiles.inc; kRowOrderPair in
// tile_kernels.inc says which pairs) are read so, rather than with its other loops. The choice:
//   - the AVX2 copy (F32 and F64 pairs) and the AVX-512 copy for AMD (F32 x F32): at every size. On AMD's
//     cores the row-order loop was the faster one at every size measured.
//   - the plain AVX-512 copy, which Intel's processors take (F32 x F32): in dots of at most kSmallDot
//     elements only. The register-block loops slow down after any pause (their 512-bit units, most
//     likely), the row-order loop far less, so in small dots the row-order loop was the faster one by
//     every measure; in larger ones the register-block loops were faster run back to back.
// (The baseline copy has no row-order loop.)
using FillFn = void (*)(PartialsFn (&)[kTypes][kTypes]);
using FillExactFn = void (*)(ExactFn (&)[kTypes][kTypes]);
using FillShortRowsFn = void (*)(ShortRowsFn (&)[kTypes][kTypes]);
static TileKernels make(FillFn fill, FillFn fill_small, FillExactFn fill_exact, FillShortRowsFn fill_short_rows,
                        const char *isa) {
    CUDOT_TEST_SEAM(seams::kernel_table_build());
    TileKernels k{};
    fill(k.table);
    fill_small(k.small_table);
    fill_exact(k.exact_table);
    fill_short_rows(k.short_rows_table);
    k.isa = isa;
    return k;
}

static const TileKernels &baseline_kernels() {
    static const TileKernels k =
        make(baseline::fill_table<false>, baseline::fill_table<false>, baseline::fill_exact_table,
             baseline::fill_short_rows_table, "baseline");
    return k;
}

#if defined(CUDOT_HAVE_AVX2_KERNELS)
static const TileKernels &avx2_kernels() {
    static const TileKernels k =
        make(avx2::fill_table<true>, avx2::fill_table<true>, avx2::fill_exact_table, avx2::fill_short_rows_table,
             "avx2+fma+f16c");
    return k;
}
static const TileKernels &avx512_kernels() {
    static const TileKernels k =
        make(avx512::fill_table<false>, avx512::fill_table<true>, avx512::fill_exact_table, avx512::fill_short_rows_table,
             "avx512 (F32 pairs row by row up to 2048)");
    return k;
}
static const TileKernels &avx512_amd_kernels() {
    static const TileKernels k = make(avx512_amd::fill_table<true>, avx512_amd::fill_table<true>,
                                      avx512_amd::fill_exact_table, avx512_amd::fill_short_rows_table,
                                      "avx512 for AMD (F32 pairs row by row, Dot2 adds on fma)");
    return k;
}
#endif

const TileKernels &tile_kernels() {
#if defined(CUDOT_HAVE_AVX2_KERNELS)
    static const bool widest = cpu_has_avx512(), wide = cpu_has_avx2_fma();
    static const bool amd = widest && amd_copy_preferred();
    if (widest) return amd ? avx512_amd_kernels() : avx512_kernels();
    if (wide) return avx2_kernels();
#endif
    return baseline_kernels();
}

int tile_kernel_variants(const TileKernels **out, int max) {
    int count = 0;
    if (count < max) out[count++] = &baseline_kernels();
#if defined(CUDOT_HAVE_AVX2_KERNELS)
    if (count < max && cpu_has_avx2_fma()) out[count++] = &avx2_kernels();
    if (count < max && cpu_has_avx512()) out[count++] = &avx512_kernels();
    if (count < max && cpu_has_avx512()) out[count++] = &avx512_amd_kernels();
#endif
    return count;
}

#if !defined(_WIN32)
namespace {
// The tables are function-local statics, built by the first dot. A fork() while another thread is
// building one would leave the child's copy marked "being built" forever, and its first dot would wait
// for it forever. So before any fork the forking thread finishes every table (waiting for a build in
// progress), and the child finds them complete.
void finish_tables_before_fork() {
    const TileKernels *all[4];
    tile_kernel_variants(all, 4);
    tile_kernels();  // the table in use (one of the variants today)
}
// Installed when the library is loaded (glibc removes it again if it is unloaded).
[[maybe_unused]] const bool fork_handler_installed = pthread_atfork(finish_tables_before_fork, nullptr, nullptr) == 0;
}  // namespace
#endif

}  // namespace cpu
}  // namespace cudot
