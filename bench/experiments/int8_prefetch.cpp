// int8_prefetch.cpp - would a software prefetch speed up HOST's exact I8 x I8 loop (the vpmaddwd loop
// of src/cpu/tile_kernels.inc)? Threads claim tasks of tiles as the pool does, each tile summed with
// and without prefetching D bytes ahead, against an F32 stream of the same bytes. Results and the
// decision: docs/PERFORMANCE.md ("Narrow and mixed element types").
// Build: g++ -O2 -std=c++17 -mavx512f -mavx512bw -mavx512vl -mavx512dq -pthread int8_prefetch.cpp
// Run:   ./a.out [threads [huge]]   (threads default: every hardware thread; "huge": madvise the
//        buffers MADV_HUGEPAGE, to see whether 4 KiB pages are what makes far prefetches cost)
#include <immintrin.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <sys/mman.h>
using clk = std::chrono::steady_clock;
constexpr size_t kTile = 8192;
template <int D, int HINT>
static int32_t tile(const int8_t *x, const int8_t *y) {
    __m512i acc = _mm512_setzero_si512();
    for (size_t i = 0; i < kTile; i += 64) {
        if (D) { _mm_prefetch((const char *)(x + i + D), (_mm_hint)HINT); _mm_prefetch((const char *)(y + i + D), (_mm_hint)HINT); }
        for (int h = 0; h < 64; h += 32) {
            __m512i a = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(x + i + h)));
            __m512i b = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(y + i + h)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(a, b));
        }
    }
    return _mm512_reduce_add_epi32(acc);
}
static int64_t tile_f32(const float *x, const float *y) {  // reference: 8 bytes/element stream
    __m512d acc = _mm512_setzero_pd();
    for (size_t i = 0; i < kTile; i += 8)
        acc = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)), _mm512_cvtps_pd(_mm256_loadu_ps(y + i)), acc);
    return (int64_t)_mm512_reduce_add_pd(acc);
}
int main(int argc, char **argv) {
    const int threads = argc > 1 ? atoi(argv[1]) : (int)std::thread::hardware_concurrency();
    const size_t bytes = size_t(1) << 29;  // per pair: 512 MiB read per dot
    const bool huge = argc > 2 && std::strcmp(argv[2], "huge") == 0;
    int8_t *x = (int8_t *)aligned_alloc(size_t(2) << 20, bytes / 2), *y = (int8_t *)aligned_alloc(size_t(2) << 20, bytes / 2);
    if (huge && (madvise(x, bytes / 2, MADV_HUGEPAGE) != 0 || madvise(y, bytes / 2, MADV_HUGEPAGE) != 0))
        std::printf("madvise(MADV_HUGEPAGE) failed\n");
    const size_t n8 = bytes / 2;
    std::vector<std::thread> pool;
    auto parallel = [&](auto fn) {  // fn(thread index)
        pool.clear();
        for (int t = 0; t < threads; ++t) pool.emplace_back(fn, t);
        for (auto &th : pool) th.join();
    };
    auto rewrite = [&](int round) {
        parallel([&](int t) { size_t a = n8 * t / threads, b = n8 * (t + 1) / threads;
                              memset(x + a, round & 0x7f, b - a); memset(y + a, 3, b - a); });
    };
    auto run = [&](const char *name, auto tilefn, size_t elem, size_t tiles_per_task) {
        const size_t tiles = n8 / elem / kTile;
        std::vector<double> us;
        int64_t check = 0;
        for (int rep = 0; rep < 12; ++rep) {
            rewrite(rep);
            std::atomic<size_t> next{0};
            std::atomic<int64_t> total{0};
            auto t0 = clk::now();
            parallel([&](int) {
                int64_t s = 0;
                for (;;) {
                    size_t f = next.fetch_add(tiles_per_task);
                    if (f >= tiles) break;
                    size_t l = std::min(tiles, f + tiles_per_task);
                    for (size_t t = f; t < l; ++t) s += tilefn((const char *)x + t * kTile * elem, (const char *)y + t * kTile * elem);
                }
                total += s;
            });
            us.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count());
            check = total;
        }
        std::sort(us.begin(), us.end());
        printf("%-28s median %8.0f us  %6.1f GB/s  (min %6.1f GB/s)  check %lld\n", name, us[6], bytes / us[6] / 1e3,
               bytes / us[0] / 1e3, (long long)check);
    };
    auto i8 = [](auto f) { return [f](const char *a, const char *b) { return (int64_t)f((const int8_t *)a, (const int8_t *)b); }; };
    auto f32 = [](const char *a, const char *b) { return tile_f32((const float *)a, (const float *)b); };
    printf("threads %d, %zu MiB read per dot (thread start-up included in each time)%s\n", threads, bytes >> 20,
           huge ? ", buffers madvised MADV_HUGEPAGE" : "");
    for (int pass = 0; pass < 2; ++pass) {
        run("f32 (reference)", f32, 4, 8);
        run("i8 no prefetch (as now)", i8(tile<0, 3>), 1, 32);
        run("i8 prefetch 512 T0", i8(tile<512, 3>), 1, 32);
        run("i8 prefetch 1024 T0", i8(tile<1024, 3>), 1, 32);
        run("i8 prefetch 2048 T0", i8(tile<2048, 3>), 1, 32);
        run("i8 prefetch 4096 T0", i8(tile<4096, 3>), 1, 32);
        run("i8 prefetch 1024 T2", i8(tile<1024, 1>), 1, 32);
        run("i8 prefetch 2048 T1", i8(tile<2048, 2>), 1, 32);
        run("i8 prefetch 4096 T1", i8(tile<4096, 2>), 1, 32);
        run("i8 no prefetch, 8 tiles/task", i8(tile<0, 3>), 1, 8);
        run("i8 no prefetch, 128 tiles/task", i8(tile<0, 3>), 1, 128);
    }
}
