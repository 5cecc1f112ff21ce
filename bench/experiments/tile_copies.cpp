// tile_copies.cpp - issue 24, T3 on the CPU-only machine: the library's compiled copies of the CPU inner
// loop (src/cpu/tile_kernels*.cpp, as CMake builds them: bench/experiments/host_tiles.cpp compiles the
// loops into itself with other flags, and its timings of the AVX-512 copy differ from the library's),
// side by side: every copy this processor runs (cudot::cpu::tile_kernel_variants) and the table in use
// (cudot::cpu::tile_kernels), for F32 x F32 and F64 x F64 at every power of two from 2^10 to 2^16
// elements. One thread; page-aligned inputs filled once; each round times a batch of calls of each copy
// in turn (301 rounds, medians of the time per call, in us). Every copy's partials are checked bit for
// bit against the baseline copy's.
// Build (from the repository root, after the build in build/):
//   g++ -O2 -std=c++17 -Iinclude -Isrc bench/experiments/tile_copies.cpp build/libcudot_static.a -lpthread -ldl \
//       -o build/experiments/tile_copies
//   usage: tile_copies [rounds = 301]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cpu/tile_kernels.hpp"
#include "cudot.h"
#include "order.hpp"

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class T> void fill(void *p, std::size_t n, int seed) {
    T *v = static_cast<T *>(p);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<int>((i * 7 + seed) % 2001) - 1000) * T(0.001);
}

}  // namespace

int main(int argc, char **argv) {
    using namespace cudot;
    const int rounds = argc > 1 ? std::max(11, std::atoi(argv[1])) : 301;
    const cpu::TileKernels *copies[5];
    int count = cpu::tile_kernel_variants(copies, 4);
    copies[count++] = &cpu::tile_kernels();
    std::printf("tile_copies: one thread, %d rounds, median us per call; the last column is the table in use\n", rounds);
    bool same = true;
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg : {10, 11, 12, 13, 14, 15, 16}) {
            const std::size_t n = std::size_t(1) << lg, bytes = n * (dtype == CUDOT_F32 ? 4 : 8);
            const std::size_t tiles = order::tile_count(n);
            void *x = std::aligned_alloc(4096, bytes), *y = std::aligned_alloc(4096, bytes);
            if (dtype == CUDOT_F32) fill<float>(x, n, 1), fill<float>(y, n, 2);
            else fill<double>(x, n, 1), fill<double>(y, n, 2);
            std::vector<std::vector<unsigned char>> partials(count, std::vector<unsigned char>(tiles * 64));
            std::vector<std::vector<double>> t(count);
            const int calls = std::max(1, (1 << 18) >> lg);
            for (int round = 0; round < rounds; ++round)
                for (int k = 0; k < count; ++k) {
                    const cpu::PartialsFn fn = copies[k]->get(dtype, dtype);
                    const double t0 = now_us();
                    for (int c = 0; c < calls; ++c) fn(x, y, n, 0, tiles, partials[k].data());
                    t[k].push_back((now_us() - t0) / calls);
                }
            std::printf("%s 2^%d:", dtype == CUDOT_F32 ? "f32" : "f64", lg);
            for (int k = 0; k < count; ++k) {
                std::sort(t[k].begin(), t[k].end());
                std::printf("  %s %.3f", copies[k]->isa, t[k][t[k].size() / 2]);
                same = same && std::memcmp(partials[k].data(), partials[0].data(), partials[0].size()) == 0;
            }
            std::printf("\n");
            std::free(x);
            std::free(y);
        }
    std::printf("partials %s\n", same ? "bit-equal in every copy" : "DIFFER");
    return same ? 0 : 1;
}
