// ceilings.cu - the ceilings measured on the GPU (copy bandwidths, launch latency) and on the host
// (multi-threaded read bandwidth), in rounds whose best is kept (ceilings.hpp), plus the cuBLAS peer.
// Every CUDA call is checked; on failure the round reports 0 and the header says "n/a".
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <cstdio>
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

LaunchProbe::LaunchProbe() {
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) stream_ = s;
    else std::fprintf(stderr, "bench: launch probe stream: %s\n", cudaGetErrorString(cudaGetLastError()));
}

LaunchProbe::~LaunchProbe() {
    if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

bool LaunchProbe::once() {
    cudaStream_t s = static_cast<cudaStream_t>(stream_);
    empty_kernel<<<1, 1, 0, s>>>();
    const cudaError_t e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) std::fprintf(stderr, "bench: empty kernel launch + sync: %s\n", cudaGetErrorString(e));
    return e == cudaSuccess;
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

// One round of the GPU ceilings into r; false (r's GPU fields left 0) if a CUDA call fails.
static bool gpu_round(CeilingRound &r) {
    cudaStream_t s;
    BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const std::size_t bytes = std::size_t(256) << 20;
    void *h = nullptr, *d1 = nullptr, *d2 = nullptr;
    auto release = [&] {
        cudaFreeHost(h);
        cudaFree(d1);
        cudaFree(d2);
        cudaStreamDestroy(s);
    };
    if (cudaHostAlloc(&h, bytes, cudaHostAllocDefault) != cudaSuccess || cudaMalloc(&d1, bytes) != cudaSuccess ||
        cudaMalloc(&d2, bytes) != cudaSuccess || cudaMemset(d1, 1, bytes) != cudaSuccess) {
        std::fprintf(stderr, "bench: ceiling buffers: %s\n", cudaGetErrorString(cudaGetLastError()));
        release();
        return false;
    }
    std::memset(h, 1, bytes);
    bool ok = true;
    auto copy = [&](void *dst, const void *src, cudaMemcpyKind kind) {
        bool good = false;
        Stats st = time_calls(3, 20, nullptr, [&] {
            return cudaMemcpyAsync(dst, src, bytes, kind, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess;
        }, &good);
        ok = ok && good;
        return st.median_us;
    };
    const double h2d_us = copy(d1, h, cudaMemcpyHostToDevice);
    const double d2d_us = copy(d2, d1, cudaMemcpyDeviceToDevice);
    LaunchProbe probe;
    bool launched = false;
    Stats launch = time_calls(100, 2000, nullptr, [&] { return probe.ok() && probe.once(); }, &launched);
    release();
    if (!ok || !launched) {
        std::fprintf(stderr, "bench: a ceiling measurement failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return false;
    }
    r.h2d_GBps = bytes / (h2d_us * 1e3);
    r.d2d_GBps = 2.0 * bytes / (d2d_us * 1e3);
    r.launch_us = launch.median_us;
    return true;
}

// Folds a round into the best values: bandwidths keep their highest round, launch + sync its lowest.
static void keep_best(Ceilings &c, const CeilingRound &r) {
    c.h2d_GBps = std::max(c.h2d_GBps, r.h2d_GBps);
    c.d2d_GBps = std::max(c.d2d_GBps, r.d2d_GBps);
    if (r.launch_us > 0) c.launch_us = c.launch_us > 0 ? std::min(c.launch_us, r.launch_us) : r.launch_us;
    c.host_read_GBps = std::max(c.host_read_GBps, r.host_read_GBps);
    c.host_read_1t_GBps = std::max(c.host_read_1t_GBps, r.host_read_1t_GBps);
    c.rounds.push_back(r);
}

void remeasure_ceilings(Ceilings &c, const char *when, bool quick) {
    CeilingRound r;
    r.when = when;
    // Two arrays of 256 MiB each (64 MiB in --quick): far larger than any cache.
    const std::size_t bytes = quick ? (std::size_t(64) << 20) : (std::size_t(256) << 20);
    r.host_read_GBps = host_read_GBps(0, bytes, quick ? 5 : 15);
    r.host_read_1t_GBps = host_read_GBps(1, bytes, quick ? 3 : 5);
    if (c.gpu) gpu_round(r);
    keep_best(c, r);
}

Ceilings measure_ceilings(bool with_gpu, bool quick) {
    Ceilings c;
    cudaDeviceProp prop;
    if (with_gpu && cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
        c.gpu = true;
        c.gpu_name = prop.name;
    }
    remeasure_ceilings(c, "start", quick);
    if (c.gpu && c.rounds.back().h2d_GBps == 0) {  // the GPU did not answer: treat the run as host-only
        c.gpu = false;
        c.gpu_name.clear();
    }
    return c;
}

Spread spread_of(const Ceilings &c, double CeilingRound::*field) {
    Spread s;
    bool any = false;
    for (const CeilingRound &r : c.rounds) {
        const double v = r.*field;
        if (v <= 0) continue;
        s.lo = any ? std::min(s.lo, v) : v;
        s.hi = any ? std::max(s.hi, v) : v;
        any = true;
    }
    return s;
}

// ---- cuBLAS: device-resident data, host pointer mode (the call blocks until the result is back) ----
CublasPeer::CublasPeer(int dtype, std::size_t n) : dtype_(dtype), n_(n) {
    static cublasHandle_t handle = nullptr;  // one for the process, as a user keeps one
    if (!handle && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return;
    const std::size_t bytes = n * (dtype == 2 ? 8 : 4);
    if (cudaMalloc(&x_, bytes) != cudaSuccess || cudaMalloc(&y_, bytes) != cudaSuccess ||
        cudaMemset(x_, 0x3c, bytes) != cudaSuccess ||  // bytes of 0x3c: small finite values in both types
        cudaMemset(y_, 0x3c, bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
        std::fprintf(stderr, "bench: cuBLAS peer: no device arrays of %zu bytes\n", bytes);
        return;
    }
    handle_ = handle;
}

CublasPeer::~CublasPeer() {
    if (x_) cudaFree(x_);
    if (y_) cudaFree(y_);
}

bool CublasPeer::dot() {
    const int m = static_cast<int>(n_);
    auto handle = static_cast<cublasHandle_t>(handle_);
    if (dtype_ == 2) {
        double r;
        return cublasDdot(handle, m, static_cast<double *>(x_), 1, static_cast<double *>(y_), 1, &r) == CUBLAS_STATUS_SUCCESS;
    }
    float r;
    return cublasSdot(handle, m, static_cast<float *>(x_), 1, static_cast<float *>(y_), 1, &r) == CUBLAS_STATUS_SUCCESS;
}

DeviceCopyPeer::DeviceCopyPeer(int dtype, std::size_t n) : bytes_(n * (dtype == 2 ? 8 : 4)) {
    cudaStream_t s = nullptr;
    if (cudaMalloc(&from_, bytes_) != cudaSuccess || cudaMalloc(&to_, bytes_) != cudaSuccess ||
        cudaMemset(from_, 1, bytes_) != cudaSuccess || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
        std::fprintf(stderr, "bench: device copy peer: no device arrays of %zu bytes\n", bytes_);
        if (s) cudaStreamDestroy(s);
        return;
    }
    stream_ = s;
}

DeviceCopyPeer::~DeviceCopyPeer() {
    if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
    if (from_) cudaFree(from_);
    if (to_) cudaFree(to_);
}

bool DeviceCopyPeer::copy() {
    auto s = static_cast<cudaStream_t>(stream_);
    return cudaMemcpyAsync(to_, from_, bytes_, cudaMemcpyDeviceToDevice, s) == cudaSuccess &&
           cudaStreamSynchronize(s) == cudaSuccess;
}

}  // namespace bench
