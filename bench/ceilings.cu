// ceilings.cu - the ceilings measured on the GPU (copy bandwidths, launch latency) and on the host
// (multi-threaded read bandwidth), plus the cuBLAS peer. Every CUDA call is checked; on failure the
// measurement reports 0 and the table says "n/a".
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <cstdio>
#include <thread>
#include <vector>

#include "ceilings.hpp"
#include "host_read.hpp"

namespace bench {

#define BENCH_CUDA(call)                                                                         \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "bench: %s failed: %s\n", #call, cudaGetErrorString(e_));        \
            return {};                                                                           \
        }                                                                                        \
    } while (0)

__global__ void empty_kernel() {}

void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)> &fn) {
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    if (n < (1u << 16)) threads = 1;
    std::vector<std::thread> pool;
    std::size_t chunk = (n + threads - 1) / threads;
    for (unsigned t = 0; t < threads; ++t) {
        std::size_t b = t * chunk, e = std::min(n, b + chunk);
        if (b < e) pool.emplace_back(fn, b, e);
    }
    for (auto &th : pool) th.join();
}

// Host read bandwidth of two arrays of `bytes` bytes each (host_read.hpp), median of `reps` reads.
static double host_read_GBps(unsigned threads, std::size_t bytes, int reps) {
    const std::size_t words = bytes / 8;
    std::unique_ptr<std::uint64_t[]> a_mem(new std::uint64_t[words + 8]), b_mem(new std::uint64_t[words + 8]);
    auto aligned = [](std::uint64_t *p) {
        return reinterpret_cast<std::uint64_t *>((reinterpret_cast<std::uintptr_t>(p) + 63) / 64 * 64);
    };
    std::uint64_t *a = aligned(a_mem.get()), *b = aligned(b_mem.get());
    parallel_for(words, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] = i * 0x9e3779b97f4a7c15ULL;
    });
    std::vector<double> times;
    for (int r = 0; r < reps + 1; ++r) {
        double t0 = now_us();
        host_read(a, 8, b, 8, words, threads);
        if (r > 0) times.push_back(now_us() - t0);
    }
    return 2.0 * words * 8 / (summarize(times).median_us * 1e3);
}

static Ceilings gpu_ceilings(Ceilings c) {
    cudaDeviceProp prop;
    BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    c.gpu_name = prop.name;
    cudaStream_t s;
    BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const std::size_t bytes = std::size_t(256) << 20;
    void *h = nullptr, *d1 = nullptr, *d2 = nullptr;
    BENCH_CUDA(cudaHostAlloc(&h, bytes, cudaHostAllocDefault));
    BENCH_CUDA(cudaMalloc(&d1, bytes));
    BENCH_CUDA(cudaMalloc(&d2, bytes));
    std::memset(h, 1, bytes);
    BENCH_CUDA(cudaMemset(d1, 1, bytes));
    auto copy = [&](void *dst, const void *src, cudaMemcpyKind kind) {
        return time_calls(3, 20, nullptr, [&] {
            return cudaMemcpyAsync(dst, src, bytes, kind, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess;
        });
    };
    c.h2d_GBps = bytes / (copy(d1, h, cudaMemcpyHostToDevice).median_us * 1e3);
    c.d2d_GBps = 2.0 * bytes / (copy(d2, d1, cudaMemcpyDeviceToDevice).median_us * 1e3);
    Stats launch = time_calls(100, 2000, nullptr, [&] {
        empty_kernel<<<1, 1, 0, s>>>();
        return cudaStreamSynchronize(s) == cudaSuccess;
    });
    c.launch_us = launch.median_us;
    cudaFreeHost(h);
    cudaFree(d1);
    cudaFree(d2);
    cudaStreamDestroy(s);
    c.gpu = true;
    return c;
}

Ceilings measure_ceilings(bool with_gpu, bool quick) {
    Ceilings c;
    // Two arrays of 256 MiB each (64 MiB in --quick): far larger than any cache.
    std::size_t bytes = quick ? (std::size_t(64) << 20) : (std::size_t(256) << 20);
    c.host_read_GBps = host_read_GBps(0, bytes, quick ? 5 : 15);
    c.host_read_1t_GBps = host_read_GBps(1, bytes, quick ? 3 : 5);
    if (with_gpu) {
        Ceilings g = gpu_ceilings(c);
        if (g.gpu) c = g;
    }
    return c;
}

// ---- cuBLAS: device-resident data, host pointer mode (the call blocks until the result is back) ----
Stats cublas_dot(int dtype, std::size_t n, int reps) {
    static cublasHandle_t handle = nullptr;
    if (!handle && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return {};
    const std::size_t es = dtype == 2 ? 8 : 4;
    void *x = nullptr, *y = nullptr;
    BENCH_CUDA(cudaMalloc(&x, n * es));
    BENCH_CUDA(cudaMalloc(&y, n * es));
    BENCH_CUDA(cudaMemset(x, 0x3c, n * es));  // bytes of 0x3c: small finite values in both types
    BENCH_CUDA(cudaMemset(y, 0x3c, n * es));
    int m = static_cast<int>(n);
    bool ok = true;
    Stats st = time_calls(5, reps, nullptr, [&] {
        if (dtype == 2) {
            double r;
            return cublasDdot(handle, m, static_cast<double *>(x), 1, static_cast<double *>(y), 1, &r) ==
                   CUBLAS_STATUS_SUCCESS;
        }
        float r;
        return cublasSdot(handle, m, static_cast<float *>(x), 1, static_cast<float *>(y), 1, &r) ==
               CUBLAS_STATUS_SUCCESS;
    }, &ok);
    cudaFree(x);
    cudaFree(y);
    return ok ? st : Stats{};
}

}  // namespace bench
