// host_tiles.cpp - experiment (issue 24, target 3): the AVX2 copy's tile loops for F32 x F32 (Double
// kind) and F64 x F64 (Dot2), one thread, against OpenBLAS dsdot / ddot, at n = 2^10 .. 2^16. Each
// variant's result is checked bit for bit against the library's loop (src/cpu/tile_kernels.inc, compiled
// into this file) before it is timed; the rows of a size alternate, one batch of calls each per round.
//   lib     the library's loop: row order (src/cpu/row_order_tiles.inc)
//   old     cudot 1.8.0's: blocks of 32 lanes kept in registers over the 8 rows (16 streams)
//   B       attempt 1: register blocks whose lanes are laid out so that the tree is vertical adds
//   stream  the arithmetic's ceiling: a plain loop with the same operations in no fixed order
//   rowo    (built for AVX-512 only) the AVX-512 copy with row order; lib and old are then that copy's
//           own loops
//   usage: host_tiles [rounds=301] [offset of the inputs past a page start, bytes = 0]
//
// Build (from the repository root):
//   g++ -O2 -std=c++17 -mavx2 -mfma -mf16c -ffp-contract=off -Iinclude -Isrc \
//       -I/usr/include/x86_64-linux-gnu/openblas-pthread bench/experiments/host_tiles.cpp src/order.cpp \
//       /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a -lpthread -lgfortran -o build/host_tiles
// For AVX-512 add -mavx512f -mavx512bw -mavx512dq -mavx512vl (and -static-libgfortran -static-libstdc++ to
// run it on a machine without Debian's runtime libraries, such as the GPU hosts).
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <cblas.h>

#include "cpu/tile_kernels.hpp"
#define CUDOT_TILE_NS lib
#include "cpu/tile_kernels.inc"
#undef CUDOT_TILE_NS
#if defined(__AVX512F__)
// Built for AVX-512, "lib" is the library's AVX-512 copy (its own loops); "rowo" is the same copy with
// the AVX2 copy's row order for F32 and F64 pairs, to find out whether it should take it too.
#define CUDOT_ROW_ORDER_IN_AVX512 1
#define CUDOT_TILE_NS rowo
#include "cpu/tile_kernels.inc"
#undef CUDOT_TILE_NS
#endif

extern "C" void openblas_set_num_threads(int);

using namespace cudot;
using order::kLanes;
using order::kTile;

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- the library's path: partials of every tile (by a copy's tile_partials), then the join ----------
template <class T> double copy_dot(cpu::PartialsFn partials_of, const T *x, const T *y, std::size_t n, void *partials) {
    const std::size_t tiles = order::tile_count(n);
    partials_of(x, y, n, 0, tiles, partials);
    return order::join_packed_partials(types::kind_of<T, T>(), partials, tiles);
}
template <class T> double lib_dot(const T *x, const T *y, std::size_t n, void *partials) {
    return copy_dot<T>(cpu::lib::tile_partials<T, T>, x, y, n, partials);
}
#if defined(__AVX512F__)
template <class T> double rowo_dot(const T *x, const T *y, std::size_t n, void *partials) {
    return copy_dot<T>(cpu::rowo::tile_partials<T, T>, x, y, n, partials);
}
#endif

inline void transpose4(__m256d &a, __m256d &b, __m256d &c, __m256d &d) {
    const __m256d t0 = _mm256_unpacklo_pd(a, b), t1 = _mm256_unpackhi_pd(a, b);
    const __m256d t2 = _mm256_unpacklo_pd(c, d), t3 = _mm256_unpackhi_pd(c, d);
    a = _mm256_permute2f128_pd(t0, t2, 0x20);
    b = _mm256_permute2f128_pd(t1, t3, 0x20);
    c = _mm256_permute2f128_pd(t0, t2, 0x31);
    d = _mm256_permute2f128_pd(t1, t3, 0x31);
}
inline __m256d cvt(const float *p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }

// ---- variant B: both kinds, lanes laid out so that the tree is vertical, for tiles of >= kLanes elements --
// Lane l = 4g + r + 256 s. A block holds G values of g and all four s: 4G vectors of 4 adjacent lanes.
// After the rows, 4 x 4 transposes put r in the register index and s in the vector lane, so the tree's
// levels over bits 0..7 of the lane are vertical merges; bits 8..9 are the last two levels.
struct DblV {  // the Double kind
    __m256d s;
    static DblV first(__m256d x, __m256d y) { return {_mm256_mul_pd(x, y)}; }  // no +0: see tile_f32_A
    static DblV add(DblV a, __m256d x, __m256d y) { return {_mm256_fmadd_pd(x, y, a.s)}; }  // exact product: fused == unfused
    static DblV merge(DblV a, DblV b) { return {_mm256_add_pd(a.s, b.s)}; }
    static void transpose(DblV &a, DblV &b, DblV &c, DblV &d) { transpose4(a.s, b.s, c.s, d.s); }
    static DblV lane(const DblV &v, int k) { return {_mm256_set1_pd(v.s[k])}; }
    static double finish_partial(DblV v) { return v.s[0] + 0.0; }  // -0 -> +0 (see tile_f32_A)
};
struct Dot2V {
    __m256d s, c;
    static __m256d two_sum(__m256d a, __m256d b, __m256d &e) {
        const __m256d s = _mm256_add_pd(a, b), bb = _mm256_sub_pd(s, a);
        e = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb));
        return s;
    }
    // The first product of a lane: 0 + p in the canonical order is p with -0 made +0, and its error
    // term 0 + (ep + es) is ep + 0 for finite p (TwoSum(0, p) is exact) and NaN for Inf or NaN p: both
    // are ep + (p - p).
    static Dot2V first(__m256d x, __m256d y) {
        const __m256d p = _mm256_mul_pd(x, y), ep = _mm256_fmsub_pd(x, y, p);
        return {_mm256_add_pd(p, _mm256_setzero_pd()), _mm256_add_pd(ep, _mm256_sub_pd(p, p))};
    }
    static Dot2V add(Dot2V a, __m256d x, __m256d y) {
        const __m256d p = _mm256_mul_pd(x, y), ep = _mm256_fmsub_pd(x, y, p);
        __m256d es;
        const __m256d s = two_sum(a.s, p, es);
        return {s, _mm256_add_pd(a.c, _mm256_add_pd(ep, es))};
    }
    static Dot2V merge(Dot2V a, Dot2V b) {
        __m256d e;
        const __m256d s = two_sum(a.s, b.s, e);
        return {s, _mm256_add_pd(_mm256_add_pd(a.c, b.c), e)};
    }
    static void transpose(Dot2V &a, Dot2V &b, Dot2V &c, Dot2V &d) {
        transpose4(a.s, b.s, c.s, d.s);
        transpose4(a.c, b.c, c.c, d.c);
    }
    static Dot2V lane(const Dot2V &v, int k) { return {_mm256_set1_pd(v.s[k]), _mm256_set1_pd(v.c[k])}; }
};

inline __m256d widen4(const float *p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
inline __m256d widen4(const double *p) { return _mm256_loadu_pd(p); }
inline __m256d widen4_masked(const float *p, std::size_t k) {
    const __m128i m = _mm_cmpgt_epi32(_mm_set1_epi32(int(k)), _mm_setr_epi32(0, 1, 2, 3));
    return _mm256_cvtps_pd(_mm_maskload_ps(p, m));
}
inline __m256d widen4_masked(const double *p, std::size_t k) {
    const __m256i m = _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(k)), _mm256_setr_epi64x(0, 1, 2, 3));
    return _mm256_maskload_pd(p, m);
}

template <class V, int G, bool kFull, class T>
V tile_B(const T *x, const T *y, std::size_t count) {
    constexpr int kBlocks = 64 / G;
    const std::size_t rows = kFull ? order::kSteps : (count + kLanes - 1) / kLanes;  // count >= kLanes
    V nodes[kBlocks];
    for (int b = 0; b < kBlocks; ++b) {
        V a[4 * G];  // a[4 h + s]: lanes 4 (G b + h) + 256 s + 0..3
        for (int h = 0; h < G; ++h)
            for (int s = 0; s < 4; ++s) {
                const std::size_t l = 4 * (G * b + h) + 256 * s;
                a[4 * h + s] = V::first(widen4(x + l), widen4(y + l));
            }
        for (std::size_t j = 1; j < rows; ++j)
            for (int h = 0; h < G; ++h)
                for (int s = 0; s < 4; ++s) {
                    const std::size_t i = j * kLanes + 4 * (G * b + h) + 256 * s;
                    if (kFull || i + 4 <= count) {
                        a[4 * h + s] = V::add(a[4 * h + s], widen4(x + i), widen4(y + i));
                    } else {
                        const std::size_t k = i < count ? count - i : 0;  // masked lanes add +0 * +0
                        a[4 * h + s] = V::add(a[4 * h + s], widen4_masked(x + i, k), widen4_masked(y + i, k));
                    }
                }
        for (int h = 0; h < G; ++h) V::transpose(a[4 * h], a[4 * h + 1], a[4 * h + 2], a[4 * h + 3]);
        // a[4 h + r]: lanes 4 (G b + h) + r + 256 s; merge r (2 levels), then h
        V t[G];
        for (int h = 0; h < G; ++h) t[h] = V::merge(V::merge(a[4 * h], a[4 * h + 1]), V::merge(a[4 * h + 2], a[4 * h + 3]));
        for (int w = G; w > 1; w /= 2)
            for (int i = 0; i < w / 2; ++i) t[i] = V::merge(t[2 * i], t[2 * i + 1]);
        nodes[b] = t[0];
    }
    for (int w = kBlocks; w > 1; w /= 2)
        for (int i = 0; i < w / 2; ++i) nodes[i] = V::merge(nodes[2 * i], nodes[2 * i + 1]);
    return V::merge(V::merge(V::lane(nodes[0], 0), V::lane(nodes[0], 1)), V::merge(V::lane(nodes[0], 2), V::lane(nodes[0], 3)));
}

// ---- the ceiling of the arithmetic: F32 products summed in double by a plain streaming loop with 12
// accumulators (not the canonical order, so its bits differ): what two conversions and one fma per 4
// elements cost when nothing else is done.
double stream_f32(const float *x, const float *y, std::size_t n) {
    constexpr int K = 12;
    __m256d a[K];
    for (auto &v : a) v = _mm256_setzero_pd();
    std::size_t i = 0;
    for (; i + 4 * K <= n; i += 4 * K)
        for (int v = 0; v < K; ++v) a[v] = _mm256_fmadd_pd(cvt(x + i + 4 * v), cvt(y + i + 4 * v), a[v]);
    __m256d s = _mm256_setzero_pd();
    for (auto &v : a) s = _mm256_add_pd(s, v);
    double r = s[0] + s[1] + s[2] + s[3];
    for (; i < n; ++i) r += double(x[i]) * y[i];
    return r;
}

// The same for Dot2 on F64: TwoProduct and TwoSum per element into 6 independent accumulators, no tree.
double stream_f64(const double *x, const double *y, std::size_t n) {
    constexpr int K = 6;
    Dot2V a[K];
    for (auto &v : a) v = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    std::size_t i = 0;
    for (; i + 4 * K <= n; i += 4 * K)
        for (int v = 0; v < K; ++v) a[v] = Dot2V::add(a[v], _mm256_loadu_pd(x + i + 4 * v), _mm256_loadu_pd(y + i + 4 * v));
    for (int v = 1; v < K; ++v) a[0] = Dot2V::merge(a[0], a[v]);
    double r = a[0].s[0] + a[0].s[1] + a[0].s[2] + a[0].s[3] + a[0].c[0] + a[0].c[1] + a[0].c[2] + a[0].c[3];
    for (; i < n; ++i) r += x[i] * y[i];
    return r;
}

// ---- the dot from tiles computed by `tile` (count >= kLanes) or the library's loop for shorter ones -------
template <class T, class Tile> double dot_by(const T *x, const T *y, std::size_t n, double *partials, Tile tile) {
    using Acc = typename order::Pair<T, T>::Acc;
    const std::size_t tiles = order::tile_count(n);
    for (std::size_t t = 0; t < tiles; ++t) {
        const std::size_t begin = t * kTile, count = std::min(kTile, n - begin);
        if (count >= kLanes) reinterpret_cast<Acc *>(partials)[t] = tile(x + begin, y + begin, count);
        else cpu::lib::tile_partials<T, T>(x, y, n, t, t + 1, partials);
    }
    return order::join_packed_partials(types::kind_of<T, T>(), partials, tiles);
}

// Before row order (cudot 1.8.0's AVX2 copy): F32 full tiles by blocks of 32 lanes over 8 rows in
// registers, everything else by simd_tile_partial.
template <class T> typename order::Pair<T, T>::Acc old_tile(const T *x, const T *y, std::size_t count) {
    if constexpr (std::is_same<T, float>::value)
        if (count == kTile) return cpu::lib::tuned_full_tile_partial<T, T>(x, y);
    return cpu::lib::other_tile_partial<T, T>(x, y, count);
}
// Attempt 1 (variant B): registers, with the vertical tree.
order::SumDouble b_tile_f32(const float *x, const float *y, std::size_t count) {
    const DblV v = count == kTile ? tile_B<DblV, 2, true>(x, y, count) : tile_B<DblV, 2, false>(x, y, count);
    return {DblV::finish_partial(v)};
}
order::SumF64 b_tile_f64(const double *x, const double *y, std::size_t count) {
    const Dot2V v = count == kTile ? tile_B<Dot2V, 1, true>(x, y, count) : tile_B<Dot2V, 1, false>(x, y, count);
    return {v.s[0], v.c[0]};
}

struct Row {
    std::string name;
    std::function<double()> call;
    std::vector<double> t;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void run(std::vector<Row> &rows, int rounds, int inner) {
    for (int r = 0; r < rounds; ++r)
        for (auto &row : rows) {
            volatile double sink = 0;
            const double t0 = now_us();
            for (int k = 0; k < inner; ++k) sink = sink + row.call();
            row.t.push_back((now_us() - t0) / inner);
        }
}

}  // namespace

int main(int argc, char **argv) {
    openblas_set_num_threads(1);
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 301;
    const std::size_t offset = argc > 2 ? std::size_t(std::atoi(argv[2])) : 0;  // bytes past a page start
    const std::size_t nmax = std::size_t(1) << 16;
    // Page-aligned (plus offset), as a context's own buffers are.
    auto page = [&](std::size_t bytes) { return static_cast<unsigned char *>(std::aligned_alloc(4096, bytes + 4096)) + offset; };
    float *xf = reinterpret_cast<float *>(page(nmax * 4)), *yf = reinterpret_cast<float *>(page(nmax * 4));
    double *xd = reinterpret_cast<double *>(page(nmax * 8)), *yd = reinterpret_cast<double *>(page(nmax * 8));
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> u(-1, 1);
    for (std::size_t i = 0; i < nmax; ++i) {
        xf[i] = float(u(rng) * std::ldexp(1.0, int(i % 17) - 8));
        yf[i] = float(u(rng));
        xd[i] = u(rng) * std::ldexp(1.0, int(i % 37) - 18);
        yd[i] = u(rng);
    }
    std::vector<double> partials(2 * (nmax / kTile + 1));
    double *p = partials.data();
    auto old32 = [=](std::size_t n) { return dot_by(xf, yf, n, p, old_tile<float>); };
    auto b32 = [=](std::size_t n) { return dot_by(xf, yf, n, p, b_tile_f32); };
    auto old64 = [=](std::size_t n) { return dot_by(xd, yd, n, p, old_tile<double>); };
    auto b64 = [=](std::size_t n) { return dot_by(xd, yd, n, p, b_tile_f64); };
    bool all_ok = true;
    for (int lg : {10, 12, 13, 14, 16}) {
        const std::size_t n = std::size_t(1) << lg;
        for (std::size_t m : {n, n - 3, n + 5}) {  // the bits, on odd sizes too
            if (m > nmax) continue;
            const double r32 = lib_dot(xf, yf, m, p), r64 = lib_dot(xd, yd, m, p);
#if defined(__AVX512F__)
            const double got[] = {old32(m), b32(m), old64(m), b64(m), rowo_dot(xf, yf, m, p), rowo_dot(xd, yd, m, p)};
            const double want[] = {r32, r32, r64, r64, r32, r64};
#else
            const double got[] = {old32(m), b32(m), old64(m), b64(m)};
            const double want[] = {r32, r32, r64, r64};
#endif
            for (std::size_t k = 0; k < sizeof got / sizeof got[0]; ++k)
                if (std::memcmp(&got[k], &want[k], 8)) {
                    std::printf("MISMATCH variant %zu n=%zu: %.17g against %.17g\n", k, m, got[k], want[k]);
                    all_ok = false;
                }
        }
        std::vector<Row> rows = {
            {"f32 lib", [=] { return lib_dot(xf, yf, n, p); }},
            {"f32 old", [=] { return old32(n); }},
            {"f32 B", [=] { return b32(n); }},
            {"f32 stream", [=] { return stream_f32(xf, yf, n); }},
            {"dsdot", [=] { return cblas_dsdot(int(n), xf, 1, yf, 1); }},
            {"sdot", [=] { return double(cblas_sdot(int(n), xf, 1, yf, 1)); }},
            {"f64 lib", [=] { return lib_dot(xd, yd, n, p); }},
            {"f64 old", [=] { return old64(n); }},
            {"f64 B", [=] { return b64(n); }},
            {"f64 stream", [=] { return stream_f64(xd, yd, n); }},
            {"ddot", [=] { return cblas_ddot(int(n), xd, 1, yd, 1); }},
        };
#if defined(__AVX512F__)
        rows.push_back({"f32 rowo", [=] { return rowo_dot(xf, yf, n, p); }});
        rows.push_back({"f64 rowo", [=] { return rowo_dot(xd, yd, n, p); }});
#endif
        run(rows, rounds, std::max(1, 64 >> (lg - 10)));
        std::printf("n=2^%d", lg);
        for (auto &r : rows) std::printf("  %s %.3f", r.name.c_str(), median(r.t));
        std::printf("  (us)\n");
    }
    std::printf(all_ok ? "bits: every variant equals the library\n" : "bits: MISMATCH\n");
    return all_ok ? 0 : 1;
}
