// exact_bench.cu - cudot-bench-exact: the exact mode (CUDOT_MODE_EXACT) against the ceilings and the
// canonical mode of the same run, with the verdict of each exact-mode target it covers:
//   X1  device arrays and managed arrays resident on the GPU, f32 and f64, n >= 2^24: >= 0.9 of the
//       device-copy ceiling
//   X2  contexts: PINNED, MAPPED, MANAGED and AUTO with data the host rewrites before each dot
//       ("fresh"), f32 and f64, n = 2^24: the exact mode >= 0.95 x the canonical mode's speed (the time
//       of a canonical context's dot / the time of an exact one's, the same data, timed in turn)
//   X3  device arrays, n <= 2^20: <= 1.1 x the canonical mode's time
//   X4  host arrays, n >= 2^20: >= 0.8 of the host-read ceiling (same buffers, read warm by both);
//       n <= 2^12: <= 2 x the canonical mode's time
// Inputs are random values of mixed signs over a few binades (uniform in [-1, 1]), the exact mode's
// common case; sets made to break it are the tests' business, not the benchmark's.
// Usage: cudot-bench-exact [--quick] [--contexts]   (--contexts: the X2 lines only)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ceilings.hpp"
#include "cudot.h"
#include "host_read.hpp"
#include "measure.hpp"

using namespace bench;

namespace {

void report(const char *target, const std::string &what, double value, double limit, bool lower_is_better,
            const std::string &detail) {
    const bool met = lower_is_better ? value <= limit : value >= limit;
    std::printf("%-2s %-62s %8.3f (target %s %.3f) %s  %s\n", target, what.c_str(), value, lower_is_better ? "<=" : ">=",
                limit, met ? "met" : "MISSED", detail.c_str());
    std::fflush(stdout);
}

bool ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) std::printf("CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

const char *name(int32_t d) { return d == CUDOT_F64 ? "f64" : "f32"; }
std::size_t size_of(int32_t d) { return d == CUDOT_F64 ? 8 : 4; }

cudot_arrays arrays(int32_t dtype, const void *x, const void *y, std::size_t n, int32_t mode) {
    cudot_arrays a = CUDOT_ARRAYS_INIT;
    a.n = n;
    a.x.data = x;
    a.y.data = y;
    a.x.dtype = a.y.dtype = dtype;
    a.mode = mode;
    return a;
}

// Uniform random values in [-1, 1] of dtype, n of them.
std::vector<unsigned char> random_bytes(int32_t dtype, std::size_t n, unsigned seed) {
    std::vector<unsigned char> b(n * size_of(dtype));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
        const double v = u(rng);
        if (dtype == CUDOT_F64) std::memcpy(&b[8 * i], &v, 8);
        else {
            const float f = static_cast<float>(v);
            std::memcpy(&b[4 * i], &f, 4);
        }
    }
    return b;
}

// Exact and canonical dots of the same arrays, timed in turn call by call.
struct Pair {
    Stats exact, canonical;
    bool ok = true;
};
Pair time_modes(int32_t d, const void *x, const void *y, std::size_t n, int reps) {
    const cudot_arrays e = arrays(d, x, y, n, CUDOT_MODE_EXACT), c = arrays(d, x, y, n, CUDOT_MODE_CANONICAL);
    std::vector<Contender> both = {{nullptr, [&] {
                                        double r;
                                        return cudot_dot_arrays(&e, &r) == CUDOT_OK;
                                    }},
                                   {nullptr, [&] {
                                        double r;
                                        return cudot_dot_arrays(&c, &r) == CUDOT_OK;
                                    }}};
    time_interleaved(10, reps, both);
    Pair p;
    p.ok = both[0].ok && both[1].ok;
    if (!p.ok) std::printf("a dot failed: %s\n", cudot_last_error(nullptr));
    p.exact = summarize(both[0].samples);
    p.canonical = summarize(both[1].samples);
    return p;
}

void device_rows(const Ceilings &c, bool quick) {
    const std::size_t largest = std::size_t(1) << 26;
    for (int32_t d : {CUDOT_F32, CUDOT_F64}) {
        const std::size_t bytes = largest * size_of(d);
        const std::vector<unsigned char> hx = random_bytes(d, largest, 1), hy = random_bytes(d, largest, 2);
        void *x = nullptr, *y = nullptr;
        if (!ok(cudaMalloc(&x, bytes), "cudaMalloc") || !ok(cudaMalloc(&y, bytes), "cudaMalloc")) return;
        cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice);
        cudaMemcpy(y, hy.data(), bytes, cudaMemcpyHostToDevice);
        for (int k : {10, 12, 14, 16, 18, 20}) {
            const std::size_t n = std::size_t(1) << k;
            const Pair p = time_modes(d, x, y, n, quick ? 200 : 2000);
            char detail[160];
            std::snprintf(detail, sizeof detail, "exact %.2f us, canonical %.2f us, launch+sync %.2f us",
                          p.exact.median_us, p.canonical.median_us, c.launch_us);
            report("X3", std::string("device ") + name(d) + " n=2^" + std::to_string(k) + ": exact / canonical",
                   p.exact.median_us / p.canonical.median_us, 1.1, true, detail);
        }
        for (int k : {24, 26}) {
            const std::size_t n = std::size_t(1) << k;
            const Pair p = time_modes(d, x, y, n, quick ? 20 : 100);
            const double ceiling_us = 2.0 * n * size_of(d) / (c.d2d_GBps * 1e3);
            char detail[200];
            std::snprintf(detail, sizeof detail, "exact %.1f us (%.0f GB/s), canonical %.1f us; ceiling %.1f us (%.0f GB/s)",
                          p.exact.median_us, 2.0 * n * size_of(d) / (p.exact.median_us * 1e3), p.canonical.median_us,
                          ceiling_us, c.d2d_GBps);
            report("X1", std::string("device ") + name(d) + " n=2^" + std::to_string(k) + ": ceiling / exact",
                   ceiling_us / p.exact.median_us, 0.9, false, detail);
        }
        cudaFree(x);
        cudaFree(y);
        // Managed arrays prefetched to the GPU: resident, as a MANAGED context's buffers are after a first dot.
        const std::size_t n = std::size_t(1) << 24, mbytes = n * size_of(d);
        void *mx = nullptr, *my = nullptr;
        if (!ok(cudaMallocManaged(&mx, mbytes), "cudaMallocManaged") || !ok(cudaMallocManaged(&my, mbytes), "cudaMallocManaged"))
            return;
        std::memcpy(mx, hx.data(), mbytes);
        std::memcpy(my, hy.data(), mbytes);
        int device = 0;
        cudaGetDevice(&device);
        cudaMemLocation where{};
        where.type = cudaMemLocationTypeDevice;
        where.id = device;
        cudaMemPrefetchAsync(mx, mbytes, where, 0, nullptr);
        cudaMemPrefetchAsync(my, mbytes, where, 0, nullptr);
        cudaDeviceSynchronize();
        const Pair p = time_modes(d, mx, my, n, quick ? 20 : 100);
        const double ceiling_us = 2.0 * mbytes / (c.d2d_GBps * 1e3);
        char detail[200];
        std::snprintf(detail, sizeof detail, "exact %.1f us, canonical %.1f us; ceiling %.1f us", p.exact.median_us,
                      p.canonical.median_us, ceiling_us);
        report("X1", std::string("managed resident ") + name(d) + " n=2^24: ceiling / exact", ceiling_us / p.exact.median_us,
               0.9, false, detail);
        cudaFree(mx);
        cudaFree(my);
    }
}

// Rewrites every element of a context's buffers (the host's fresh data), values in [-1, 1) that differ
// by round.
void rewrite(int32_t d, void *x, void *y, std::size_t n, int round) {
    parallel_for(n, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) {
            const double a = static_cast<double>((i * 2654435761u + round) % 1000) * 0.002 - 1.0;
            const double b = static_cast<double>((i * 40503u + 7 * round) % 999) * 0.002 - 1.0;
            if (d == CUDOT_F64) {
                static_cast<double *>(x)[i] = a;
                static_cast<double *>(y)[i] = b;
            } else {
                static_cast<float *>(x)[i] = static_cast<float>(a);
                static_cast<float *>(y)[i] = static_cast<float>(b);
            }
        }
    });
}

cudot_ctx *context_of(int32_t memory, int32_t d, std::size_t n, int32_t mode) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.memory = memory;
    cfg.dtype = d;
    cfg.mode = mode;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) std::printf("cudot_init: %s\n", cudot_last_error(nullptr));
    return ctx;
}

void context_rows(bool quick) {
    const char *names[] = {"", "PINNED", "MAPPED", "MANAGED", ""};
    const std::size_t n = std::size_t(1) << 24;
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO})
        for (int32_t d : {CUDOT_F32, CUDOT_F64}) {
            cudot_ctx *exact = context_of(memory, d, n, CUDOT_MODE_EXACT);
            cudot_ctx *canonical = context_of(memory, d, n, CUDOT_MODE_CANONICAL);
            if (!exact || !canonical) {
                cudot_deinit(exact);
                cudot_deinit(canonical);
                continue;
            }
            void *ex = nullptr, *ey = nullptr, *cx = nullptr, *cy = nullptr;
            cudot_get_inputs(exact, &ex, &ey);
            cudot_get_inputs(canonical, &cx, &cy);
            double re = 0, rc = 0;
            std::vector<Contender> both = {
                {[&](int round) { rewrite(d, ex, ey, n, round); },
                 [&] {
                     const bool good = cudot_dot(exact, &re) == CUDOT_OK;
                     if (!good) std::printf("exact cudot_dot: %s\n", cudot_last_error(exact));
                     return good;
                 }},
                {[&](int round) { rewrite(d, cx, cy, n, round); },
                 [&] {
                     const bool good = cudot_dot(canonical, &rc) == CUDOT_OK;
                     if (!good) std::printf("canonical cudot_dot: %s\n", cudot_last_error(canonical));
                     return good;
                 }}};
            // AUTO and MANAGED learn their roads from the first dots: a dozen untimed ones.
            time_interleaved(12, quick ? 8 : 30, both);
            const Stats e = summarize(both[0].samples), c = summarize(both[1].samples);
            int32_t resolved = memory;
            cudot_get_memory(exact, &resolved, nullptr);
            const bool hybrid = memory == CUDOT_MEMORY_AUTO;
            char detail[220];
            std::snprintf(detail, sizeof detail, "exact %.0f us (%.1f GB/s), canonical %.0f us (%.1f GB/s)%s%s",
                          e.median_us, 2.0 * n * size_of(d) / (e.median_us * 1e3), c.median_us,
                          2.0 * n * size_of(d) / (c.median_us * 1e3), hybrid ? ", AUTO on " : "",
                          hybrid ? names[resolved] : "");
            report("X2", std::string(hybrid ? "AUTO" : names[memory]) + " fresh " + name(d) +
                             " n=2^24: canonical time / exact time",
                   c.median_us / e.median_us, 0.95, false, detail);
            cudot_deinit(exact);
            cudot_deinit(canonical);
        }
}

void host_rows(bool quick) {
    for (int32_t d : {CUDOT_F32, CUDOT_F64}) {
        for (int k : {8, 10, 12}) {
            const std::size_t n = std::size_t(1) << k;
            const std::vector<unsigned char> x = random_bytes(d, n, 3), y = random_bytes(d, n, 4);
            const Pair p = time_modes(d, x.data(), y.data(), n, quick ? 500 : 5000);
            char detail[120];
            std::snprintf(detail, sizeof detail, "exact %.3f us, canonical %.3f us", p.exact.median_us, p.canonical.median_us);
            report("X4", std::string("host ") + name(d) + " n=2^" + std::to_string(k) + ": exact / canonical",
                   p.exact.median_us / p.canonical.median_us, 2.0, true, detail);
        }
        for (int k : {20, 24}) {
            const std::size_t n = std::size_t(1) << k, bytes = n * size_of(d);
            std::vector<unsigned char> hx = random_bytes(d, n, 5), hy = random_bytes(d, n, 6);
            Aligned x(bytes), y(bytes);
            std::memcpy(x.p, hx.data(), bytes);
            std::memcpy(y.p, hy.data(), bytes);
            const cudot_arrays e = arrays(d, x.p, y.p, n, CUDOT_MODE_EXACT);
            unsigned long long sink = 0;
            std::vector<Contender> both = {{nullptr, [&] {
                                                double r;
                                                return cudot_dot_arrays(&e, &r) == CUDOT_OK;
                                            }},
                                           {nullptr, [&] {
                                                sink += host_read(x.p, size_of(d), y.p, size_of(d), n);
                                                return true;
                                            }}};
            time_interleaved(3, quick ? 10 : 40, both);
            if (!both[0].ok) std::printf("an exact dot failed: %s\n", cudot_last_error(nullptr));
            const Stats mine = summarize(both[0].samples), read = summarize(both[1].samples);
            char detail[200];
            std::snprintf(detail, sizeof detail, "exact %.0f us (%.1f GB/s), host read %.0f us (%.1f GB/s)%s",
                          mine.median_us, 2.0 * bytes / (mine.median_us * 1e3), read.median_us,
                          2.0 * bytes / (read.median_us * 1e3), sink == 1 ? " " : "");
            report("X4", std::string("host ") + name(d) + " n=2^" + std::to_string(k) + ": host read time / exact time",
                   read.median_us / mine.median_us, 0.8, false, detail);
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    bool quick = false, contexts_only = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--quick")) quick = true;
        if (!std::strcmp(argv[i], "--contexts")) contexts_only = true;
    }
    Ceilings c = measure_ceilings(true, quick);
    std::printf("cudot %s; GPU %s; launch+sync %.2f us, device copy %.0f GB/s, host read %.0f GB/s\n",
                cudot_version_string(), c.gpu ? c.gpu_name.c_str() : "none", c.launch_us, c.d2d_GBps, c.host_read_GBps);
    if (c.gpu && !contexts_only) device_rows(c, quick);
    if (c.gpu) context_rows(quick);
    if (!contexts_only) host_rows(quick);
    remeasure_ceilings(c, "end", quick);
    std::printf("ceilings at the end: launch+sync %.2f us, device copy %.0f GB/s\n", c.launch_us, c.d2d_GBps);
    return 0;
}
