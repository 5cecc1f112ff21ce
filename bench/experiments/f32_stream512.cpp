// f32_stream512.cpp - issue 24, T3 on the CPU-only machine: how fast can exact F32 products summed in
// double go here, 4 or 8 lanes an instruction, against OpenBLAS's cblas_dsdot (one thread)? A ceiling,
// not cudot's order: plain loops with independent accumulators (12 of 4 lanes, 8 of 8 lanes), inputs
// converted to double before the fma (exact products). 301 rounds, each a batch of calls of each in turn;
// medians in us per call.
// Build (from the repository root; any x86-64 processor with AVX2 and FMA runs it, the 8-lane loop only
// where AVX-512 F/DQ is there: "-" otherwise):
//   g++ -O2 -mavx2 -mfma -I/usr/include/x86_64-linux-gnu/openblas-pthread \
//       bench/experiments/f32_stream512.cpp /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a -lpthread \
//       -lgfortran -o build/experiments/f32_stream512
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
static double now_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
__attribute__((noinline)) double s256(const float *x, const float *y, size_t n) {
    constexpr int K = 12; __m256d a[K]; for (auto &v : a) v = _mm256_setzero_pd();
    size_t i = 0;
    for (; i + 4 * K <= n; i += 4 * K) for (int v = 0; v < K; ++v) a[v] = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * v)), _mm256_cvtps_pd(_mm_loadu_ps(y + i + 4 * v)), a[v]);
    __m256d s = _mm256_setzero_pd(); for (auto &v : a) s = _mm256_add_pd(s, v);
    double r = s[0] + s[1] + s[2] + s[3]; for (; i < n; ++i) r += double(x[i]) * y[i]; return r;
}
__attribute__((noinline, target("avx512f,avx512dq"))) double s512(const float *x, const float *y, size_t n) {
    constexpr int K = 8; __m512d a[K]; for (auto &v : a) v = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 8 * K <= n; i += 8 * K) for (int v = 0; v < K; ++v) a[v] = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8 * v)), _mm512_cvtps_pd(_mm256_loadu_ps(y + i + 8 * v)), a[v]);
    __m512d s = _mm512_setzero_pd(); for (auto &v : a) s = _mm512_add_pd(s, v);
    double r = _mm512_reduce_add_pd(s); for (; i < n; ++i) r += double(x[i]) * y[i]; return r;
}
int main() {
    openblas_set_num_threads(1);
    for (int lg : {10, 12, 14, 16}) {
        size_t n = size_t(1) << lg;
        float *x = (float*)aligned_alloc(4096, n * 4), *y = (float*)aligned_alloc(4096, n * 4);
        for (size_t i = 0; i < n; ++i) { x[i] = (i % 17) * 0.25f; y[i] = (i % 13) * 0.5f; }
        std::vector<double> t[3]; volatile double sink = 0; int reps = std::max(1, (1 << 18) >> lg);
        const bool has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
        for (int r = 0; r < 301; ++r) for (int k = 0; k < 3; ++k) {
            if (k == 1 && !has512) { t[k].push_back(0); continue; }
            double t0 = now_us();
            for (int c = 0; c < reps; ++c) sink = sink + (k == 0 ? s256(x, y, n) : k == 1 ? s512(x, y, n) : cblas_dsdot((int)n, x, 1, y, 1));
            t[k].push_back((now_us() - t0) / reps);
        }
        for (auto &v : t) std::sort(v.begin(), v.end());
        char s512[16] = "-";
        if (has512) std::snprintf(s512, sizeof s512, "%.3f", t[1][150]);
        std::printf("2^%d stream256 %.3f stream512 %s dsdot %.3f\n", lg, t[0][150], s512, t[2][150]);
    }
}
