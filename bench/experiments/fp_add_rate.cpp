// fp_add_rate.cpp - how many 8-lane double additions per nanosecond one core of this machine issues, alone
// and with half of them written as fma(x, 1, y) (the same IEEE result), to bound HOST's Dot2 tiles from
// below (issue 24, T3 f64 at 2^10).
//
// A Dot2 tile of 1024 elements in the canonical order (src/order.hpp) is 1024 products and a tree of 1023
// merges; a merge is 8 additions or subtractions, a lane's first product 2 multiplications and 3
// additions (Dot2Lanes::first in src/cpu/tile_kernels.inc). On 8 lanes an instruction that is 1023 + 384
// additions and 256 multiplications at the least, whatever the order of the instructions.
//
// Build (from the repository root):
//   g++ -O2 -std=c++17 -mavx512f -mfma bench/experiments/fp_add_rate.cpp -o build/experiments/fp_add_rate
//   usage: fp_add_rate   (12 independent chains, 20M steps each, best of 5)
#include <immintrin.h>

#include <chrono>
#include <cstdio>

namespace {

// mode 0: every step an addition; 1: every other chain an fma(x, 1, y); 2: all fma.
double ops_per_ns(int mode) {
    __m512d a[12];
    for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_pd(i * 1e-9);
    const __m512d d = _mm512_set1_pd(1e-12), one = _mm512_set1_pd(1.0);
    constexpr long kSteps = 20000000;
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
        const auto start = std::chrono::steady_clock::now();
        for (long k = 0; k < kSteps; ++k) {
#pragma GCC unroll 12
            for (int i = 0; i < 12; ++i)
                a[i] = (mode == 0 || (mode == 1 && i % 2)) ? _mm512_add_pd(a[i], d) : _mm512_fmadd_pd(a[i], one, d);
        }
        const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
        if (ns / (kSteps * 12.0) < best) best = ns / (kSteps * 12.0);
    }
    double sink = 0;  // keeps the chains alive
    for (auto &v : a) sink += _mm512_reduce_add_pd(v);
    if (sink == 42.0) std::puts("");
    return 1.0 / best;
}

}  // namespace

int main() {
    const double adds = ops_per_ns(0), mixed = ops_per_ns(1), fmas = ops_per_ns(2);
    std::printf("8-lane double additions per ns: %.2f; half as fma(x, 1, y): %.2f; all fma: %.2f\n", adds, mixed, fmas);
    const double floor_us = (1023.0 + 384.0) / adds / 1000.0;
    std::printf("Dot2 tile of 1024 elements: 1407 additions at least -> %.3f us at that rate (multiplications not counted)\n",
                floor_us);
}
