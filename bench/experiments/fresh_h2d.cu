// fresh_h2d.cu - why PINNED's and MAPPED's dots of fresh data (targets T6 and T8 of docs/PERFORMANCE.md) run
// below the host-to-device copy ceiling: is the shortfall the library's, or the cost of reading pages the
// CPU has just written? Page-locked f32 buffers x and y, rewritten before a call exactly as cudot-bench's
// fresh rows rewrite theirs (bench/inputs.hpp, every element, all threads), and timed in turn, call by call,
// medians of the rounds:
//   copy:        both arrays copied to the GPU (cudaMemcpyAsync, one stream), inputs untouched since the
//                last round: the h2d ceiling of these bytes, as cudot-bench measures it
//   copy fresh:  the same right after the rewrite
//   copy flushed: after the rewrite, every line written back and evicted (clflush, untimed), then copied
//   read ...:    the same three, with a kernel reading the page-locked arrays in place over the bus
//   flush+copy / flush+read / clwb+copy fresh: after the rewrite, the lines flushed (CLFLUSH) or written
//                back (CLWB) inside the timed call, as a library would have to, then copied or read
//   flush alone: only that flush, to see its cost
//   PINNED/MAPPED/MANAGED fresh: a cudot context's dot on its own buffers, rewritten the same way
//   managed ...:          MANAGED's fresh case by raw CUDA on cudaMallocManaged arrays rewritten the
//                         same way: "in place" advised to stay on the host and read by the GPU over the bus
//                         (what a MANAGED context does once it sees fresh data); "prefetch" not advised,
//                         moved to the GPU by cudaMemPrefetchAsync inside the call and read there (the other
//                         design: one bulk migration per dot)
// If "fresh" is slower than "flushed", the CPU's caches (dirty lines the bus must fetch from them) cost
// the difference, and cudot's fresh rows can only approach "fresh", not the untouched ceiling, unless
// flushing inside the call pays (docs/perf/h100-fresh-h2d.txt: it costs far more than it saves).
// Uses only the public API (include/cudot.h), the CUDA runtime and the benchmark's helpers (bench/); x86-64
// only (CLFLUSH, CLWB). Built by CMake with -DCUDOT_BUILD_EXPERIMENTS=ON (bench/experiments/CMakeLists.txt)
// as build/experiments/fresh_h2d; run it as `fresh_h2d [ROUNDS]` (default 15, at least 5). By hand:
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Ibench bench/experiments/fresh_h2d.cu bench/measure.cpp \
//        -Lbuild -lcudot -Xlinker -rpath -Xlinker $PWD/build -lpthread -o fresh_h2d
#include <cuda_runtime.h>
#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cudot.h"
#include "inputs.hpp"
#include "measure.hpp"
#include "read_sum.cuh"

namespace {

bool ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) std::printf("CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

void flush(const void *p, std::size_t bytes) {
    const char *c = static_cast<const char *>(p);
    bench::parallel_for(bytes / 64, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) _mm_clflush(c + i * 64);
    });
    _mm_mfence();
}

// The same with CLWB (write each dirty line back, keep it cached, clean) where the processor has it,
// and CLFLUSHOPT otherwise: the variants a library could afford in a call, timed inside the call below.
bool has_clwb() {
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 24));
}
void write_back(const void *p, std::size_t bytes) {
    const char *c = static_cast<const char *>(p);
    bench::parallel_for(bytes / 64, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) asm volatile("clwb %0" : : "m"(*(c + i * 64)) : "memory");
    });
    _mm_sfence();
}

}  // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(5, std::atoi(argv[1])) : 15;
    int sms = 0;
    if (!ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute")) return 1;
    const unsigned blocks = 4 * sms, threads = 512;
    cudaStream_t s;
    float *sums = nullptr;
    if (!ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate") ||
        !ok(cudaMalloc(&sums, sizeof(float)), "cudaMalloc"))
        return 1;
    const bool clwb = has_clwb();
    std::printf("fresh_h2d: %d rounds per row, medians in us; GB/s of both arrays\n", rounds);
    std::printf("%-24s %10s %10s %10s %9s %s\n", "what", "n", "median_us", "p10_us", "GB/s", "vs copy");
    for (int lg : {20, 22, 24}) {
        const std::size_t n = std::size_t(1) << lg, bytes = n * sizeof(float);
        float *x = nullptr, *y = nullptr, *dx = nullptr, *dy = nullptr;
        if (!ok(cudaHostAlloc(&x, bytes, cudaHostAllocMapped), "cudaHostAlloc") ||
            !ok(cudaHostAlloc(&y, bytes, cudaHostAllocMapped), "cudaHostAlloc") ||
            !ok(cudaMalloc(&dx, bytes), "cudaMalloc") || !ok(cudaMalloc(&dy, bytes), "cudaMalloc"))
            return 1;
        bench::rewrite(x, y, n, 0);
        float *mx = nullptr, *my = nullptr;
        cudaHostGetDevicePointer(&mx, x, 0);
        cudaHostGetDevicePointer(&my, y, 0);
        auto copy = [&] {
            return ok(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, s), "copy") &&
                   ok(cudaMemcpyAsync(dy, y, bytes, cudaMemcpyHostToDevice, s), "copy") &&
                   ok(cudaStreamSynchronize(s), "sync");
        };
        auto read = [&] {
            read_sum<<<blocks, threads, 0, s>>>(reinterpret_cast<const float4 *>(mx), reinterpret_cast<const float4 *>(my),
                                                 n / 4, sums);
            return ok(cudaGetLastError(), "launch") && ok(cudaStreamSynchronize(s), "sync");
        };
        auto fresh = [&](int round) { bench::rewrite(x, y, n, round + 1); };
        auto flushed = [&](int round) {
            bench::rewrite(x, y, n, round + 1);
            flush(x, bytes);
            flush(y, bytes);
        };
        // Managed arrays: a pair read in place (advised to the host), a pair migrated per call.
        float *ax = nullptr, *ay = nullptr, *px = nullptr, *py = nullptr;
        if (!ok(cudaMallocManaged(&ax, bytes), "cudaMallocManaged") || !ok(cudaMallocManaged(&ay, bytes), "cudaMallocManaged") ||
            !ok(cudaMallocManaged(&px, bytes), "cudaMallocManaged") || !ok(cudaMallocManaged(&py, bytes), "cudaMallocManaged"))
            return 1;
        cudaMemLocation host_loc{}, gpu_loc{};
        host_loc.type = cudaMemLocationTypeHost;
        gpu_loc.type = cudaMemLocationTypeDevice;
        gpu_loc.id = 0;
        for (float *a : {ax, ay})
            if (!ok(cudaMemAdvise(a, bytes, cudaMemAdviseSetPreferredLocation, host_loc), "cudaMemAdvise") ||
                !ok(cudaMemAdvise(a, bytes, cudaMemAdviseSetAccessedBy, gpu_loc), "cudaMemAdvise"))
                return 1;
        bench::rewrite(ax, ay, n, 0);
        bench::rewrite(px, py, n, 0);
        auto read_of = [&](const float *a, const float *b) {
            read_sum<<<blocks, threads, 0, s>>>(reinterpret_cast<const float4 *>(a), reinterpret_cast<const float4 *>(b),
                                                 n / 4, sums);
            return ok(cudaGetLastError(), "launch") && ok(cudaStreamSynchronize(s), "sync");
        };
        auto prefetch_read = [&] {
            return ok(cudaMemPrefetchAsync(px, bytes, gpu_loc, 0, s), "cudaMemPrefetchAsync") &&
                   ok(cudaMemPrefetchAsync(py, bytes, gpu_loc, 0, s), "cudaMemPrefetchAsync") && read_of(px, py);
        };
        // cudot's own fresh rows, on contexts of the same n.
        cudot_ctx *ctx[3] = {nullptr, nullptr, nullptr};
        void *cx[3], *cy[3];
        const int32_t kinds[3] = {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED};
        for (int k = 0; k < 3; ++k) {
            cudot_config cfg = CUDOT_CONFIG_INIT;
            cfg.memory = kinds[k];
            if (cudot_init(&ctx[k], n, &cfg) != CUDOT_OK || cudot_get_inputs(ctx[k], &cx[k], &cy[k]) != CUDOT_OK) {
                std::printf("cudot_init: %s\n", cudot_last_error(nullptr));
                return 1;
            }
        }
        double r = 0;
        std::vector<bench::Contender> cs = {
            {nullptr, copy},
            {fresh, copy},
            {flushed, copy},
            {nullptr, read},
            {fresh, read},
            {flushed, read},
            {fresh, [&] { flush(x, bytes); flush(y, bytes); return copy(); }},
            {fresh, [&] { flush(x, bytes); flush(y, bytes); return read(); }},
            {fresh, [&] { if (clwb) { write_back(x, bytes); write_back(y, bytes); } return copy(); }},
            {fresh, [&] { flush(x, bytes); flush(y, bytes); return true; }},
            {[&](int round) { bench::rewrite(CUDOT_F32, cx[0], cy[0], n, round); },
             [&] { return cudot_dot(ctx[0], &r) == CUDOT_OK; }},
            {[&](int round) { bench::rewrite(CUDOT_F32, cx[1], cy[1], n, round); },
             [&] { return cudot_dot(ctx[1], &r) == CUDOT_OK; }},
            {[&](int round) { bench::rewrite(CUDOT_F32, cx[2], cy[2], n, round); },
             [&] { return cudot_dot(ctx[2], &r) == CUDOT_OK; }},
            {[&](int round) { bench::rewrite(ax, ay, n, round + 1); }, [&] { return read_of(ax, ay); }},
            {[&](int round) { bench::rewrite(px, py, n, round + 1); }, prefetch_read},
        };
        const char *names[] = {"copy",         "copy fresh",  "copy flushed",  "read in place",
                               "read in place fresh", "read in place flushed", "flush+copy fresh",
                               "flush+read fresh", clwb ? "clwb+copy fresh" : "(no clwb) copy fresh",
                               "flush alone, fresh", "PINNED fresh", "MAPPED fresh", "MANAGED fresh",
                               "managed in place fresh", "managed prefetch fresh"};
        bench::time_interleaved(3, rounds, cs);
        const double base = bench::summarize(cs[0].samples).median_us;
        for (std::size_t k = 0; k < cs.size(); ++k) {
            const bench::Stats t = bench::summarize(cs[k].samples);
            std::printf("%-24s %10zu %10.1f %10.1f %9.2f %.3f%s\n", names[k], n, t.median_us, t.p10_us,
                        2.0 * bytes / (t.median_us * 1e3), base / t.median_us, cs[k].ok ? "" : "  (failed)");
        }
        for (cudot_ctx *c : ctx) cudot_deinit(c);
        cudaFreeHost(x);
        cudaFreeHost(y);
        cudaFree(dx);
        cudaFree(dy);
        for (float *a : {ax, ay, px, py}) cudaFree(a);
    }
    cudaFree(sums);
    cudaStreamDestroy(s);
    return 0;
}
