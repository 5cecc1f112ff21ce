// tile_kernels.cpp - the baseline copy of the CPU inner loop, and the run-time choice between copies.
#include "tile_kernels.hpp"

#define CUDOT_TILE_NS baseline
#include "tile_kernels.inc"
#undef CUDOT_TILE_NS

namespace cudot {
namespace cpu {

#if defined(CUDOT_HAVE_AVX2_KERNELS)
namespace avx2 {
void partials_f32(const float *, const float *, std::size_t, std::size_t, std::size_t, order::SumF32 *);
void partials_f64(const double *, const double *, std::size_t, std::size_t, std::size_t, order::SumF64 *);
}  // namespace avx2
static bool cpu_has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#endif

static const TileKernels kBaseline = {baseline::partials_f32, baseline::partials_f64, "baseline"};
#if defined(CUDOT_HAVE_AVX2_KERNELS)
static const TileKernels kAvx2 = {avx2::partials_f32, avx2::partials_f64, "avx2+fma"};
#endif

const TileKernels &tile_kernels() {
#if defined(CUDOT_HAVE_AVX2_KERNELS)
    static const bool wide = cpu_has_avx2_fma();
    if (wide) return kAvx2;
#endif
    return kBaseline;
}

int tile_kernel_variants(const TileKernels **out, int max) {
    int count = 0;
    if (count < max) out[count++] = &kBaseline;
#if defined(CUDOT_HAVE_AVX2_KERNELS)
    if (count < max && cpu_has_avx2_fma()) out[count++] = &kAvx2;
#endif
    return count;
}

}  // namespace cpu
}  // namespace cudot
