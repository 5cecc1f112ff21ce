// auto_probe.cu - issue 24, T5: how small can AUTO's sentinel be? AUTO (opted in to managed buffers)
// moves a few tiles of the inputs into GPU memory after a dot, and the next dot tells from the GPU's
// time on them whether the host left the inputs alone (they are still there) or rewrote them (the
// host's writes faulted them back). A failed probe costs the move, the move back, and the host's faults
// in the caller's fill; a small sentinel costs less, but the GPU's read of it must still tell HBM from
// the bus. Timed here, on managed pages advised as AUTO advises them (preferred location: the host;
// accessed by GPU 0), for sentinels of 1-32 tiles (8192 elements each) of f32 and f64, medians of
// alternated rounds:
//   move      prefetch of just-written pages to the GPU, and wait (what placing the sentinel costs)
//   back      prefetch of pages the host wrote since the move back to the host, and wait
//   read HBM  the GPU's kernel time (CUDA events, no launch cost) reading pages still in GPU memory
//   read bus  the same read after the host rewrote the pages (they moved back; read over the bus)
//   fill GPU  the host's rewrite of pages that are in GPU memory (faults) / fill host: of pages on the host
// and a second table: the GPU's read (kernel time, the whole GPU) of inputs moved into GPU memory, with
// the advice AUTO keeps (preferred location the host, accessed by the GPU), with the preferred location
// unset before the move, and with no advice at all (as MANAGED's resident inputs), each right after the
// last read and after a kernel that reads 2 GB of other memory in between (as other work would).
// Build (from the repository root):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ibench/experiments bench/experiments/auto_probe.cu -o build/experiments/auto_probe
//   usage: auto_probe [rounds = 41]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "read_sum.cuh"

namespace {

bool ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) std::printf("CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

double us_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(5, std::atoi(argv[1])) : 41;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    float *sink = nullptr;
    if (!ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate") ||
        !ok(cudaEventCreate(&e0), "cudaEventCreate") || !ok(cudaEventCreate(&e1), "cudaEventCreate") ||
        !ok(cudaMalloc(&sink, sizeof(float)), "cudaMalloc"))
        return 1;
    cudaMemLocation gpu{}, host{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = 0;
    host.type = cudaMemLocationTypeHost;
    const std::size_t kTile = 8192, kMax = std::size_t(1) << 20;
    std::printf("auto_probe: managed pages advised to the host and accessed by GPU 0; %d rounds, medians in us\n", rounds);
    std::printf("%-5s %6s %9s %9s %9s %10s %10s %9s %10s %11s\n", "type", "tiles", "KB/array", "move", "back", "read_HBM",
                "read_bus", "bus/HBM", "fill_GPU", "fill_host");
    for (std::size_t size : {sizeof(float), sizeof(double)}) {
        const std::size_t bytes_all = kMax * size;
        char *x = nullptr, *y = nullptr;
        if (!ok(cudaMallocManaged(&x, bytes_all), "cudaMallocManaged") || !ok(cudaMallocManaged(&y, bytes_all), "cudaMallocManaged"))
            return 1;
        for (char *p : {x, y}) {
            if (!ok(cudaMemAdvise(p, bytes_all, cudaMemAdviseSetPreferredLocation, host), "cudaMemAdvise") ||
                !ok(cudaMemAdvise(p, bytes_all, cudaMemAdviseSetAccessedBy, gpu), "cudaMemAdvise"))
                return 1;
            std::memset(p, 0, bytes_all);
        }
        for (std::size_t tiles : {1, 2, 4, 8, 16, 32}) {
            const std::size_t bytes = tiles * kTile * size;
            int value = 1;
            auto fill = [&] {
                ++value;
                std::memset(x, value & 0x3f, bytes);
                std::memset(y, value & 0x3f, bytes);
            };
            auto move = [&](const cudaMemLocation &where) {
                return ok(cudaMemPrefetchAsync(x, bytes, where, 0, s), "cudaMemPrefetchAsync") &&
                       ok(cudaMemPrefetchAsync(y, bytes, where, 0, s), "cudaMemPrefetchAsync") && ok(cudaStreamSynchronize(s), "sync");
            };
            auto read = [&](double *ms_out) {
                cudaEventRecord(e0, s);
                // One block of 1024 threads per 32 KB of each array (a tile of f32), as a dot reads its tiles.
                read_sum<<<static_cast<unsigned>(tiles * size / 4), 1024, 0, s>>>(
                    reinterpret_cast<const float4 *>(x), reinterpret_cast<const float4 *>(y), bytes / 16, sink);
                cudaEventRecord(e1, s);
                float ms = 0;
                const bool good = ok(cudaGetLastError(), "launch") && ok(cudaStreamSynchronize(s), "sync") &&
                                  ok(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
                *ms_out = ms * 1000.0;
                return good;
            };
            std::vector<double> t_move, t_back, t_hbm, t_bus, t_fill_gpu, t_fill_host;
            for (int r = 0; r < rounds + 2; ++r) {
                const bool keep = r >= 2;
                double us = 0;
                // move: just-written pages (on the host) to the GPU
                fill();
                auto t = std::chrono::steady_clock::now();
                if (!move(gpu)) return 1;
                if (keep) t_move.push_back(us_since(t));
                // read HBM: the pages stayed
                if (!read(&us)) return 1;
                if (keep) t_hbm.push_back(us);
                // fill GPU: the host rewrites pages in GPU memory (they fault back)
                t = std::chrono::steady_clock::now();
                fill();
                if (keep) t_fill_gpu.push_back(us_since(t));
                // read bus: after the host's rewrite
                if (!read(&us)) return 1;
                if (keep) t_bus.push_back(us);
                // back: move to the host pages the host rewrote (already there, or mostly)
                t = std::chrono::steady_clock::now();
                if (!move(host)) return 1;
                if (keep) t_back.push_back(us_since(t));
                // fill host: the host rewrites pages on the host
                t = std::chrono::steady_clock::now();
                fill();
                if (keep) t_fill_host.push_back(us_since(t));
            }
            const double hbm = median(t_hbm), bus = median(t_bus);
            std::printf("%-5s %6zu %9zu %9.1f %9.1f %10.2f %10.2f %9.2f %10.1f %11.1f\n", size == 4 ? "f32" : "f64", tiles,
                        bytes >> 10, median(t_move), median(t_back), hbm, bus, hbm > 0 ? bus / hbm : 0, median(t_fill_gpu),
                        median(t_fill_host));
        }
        cudaFree(x);
        cudaFree(y);
    }
    // Resident reads: the whole GPU reads a pair moved into GPU memory under three kinds of advice.
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const std::size_t other_bytes = std::size_t(2) << 30;
    float *other = nullptr;
    if (!ok(cudaMalloc(&other, other_bytes), "cudaMalloc")) return 1;
    cudaMemsetAsync(other, 0, other_bytes, s);
    std::printf("\nresident reads: f32 pairs in GPU memory, kernel time in us (median of %d)\n", rounds);
    std::printf("%-10s %-34s %10s %14s\n", "n", "advice", "back2back", "after_2GB_read");
    const char *advice_names[3] = {"preferred host, accessed by GPU", "accessed by GPU only", "none"};
    for (int lg : {18, 20, 22, 24}) {
        const std::size_t n = std::size_t(1) << lg, bytes = n * sizeof(float);
        for (int advice = 0; advice < 3; ++advice) {
            char *x = nullptr, *y = nullptr;
            if (!ok(cudaMallocManaged(&x, bytes), "cudaMallocManaged") || !ok(cudaMallocManaged(&y, bytes), "cudaMallocManaged"))
                return 1;
            for (char *p : {x, y}) {
                if (advice <= 1 && !ok(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu), "cudaMemAdvise")) return 1;
                if (advice == 0 && !ok(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, host), "cudaMemAdvise"))
                    return 1;
                std::memset(p, 1, bytes);
                if (!ok(cudaMemPrefetchAsync(p, bytes, gpu, 0, s), "cudaMemPrefetchAsync")) return 1;
            }
            if (!ok(cudaStreamSynchronize(s), "sync")) return 1;
            auto timed_read = [&](const float4 *a, const float4 *b, std::size_t n4, unsigned blocks, double *us) {
                cudaEventRecord(e0, s);
                read_sum<<<blocks, 1024, 0, s>>>(a, b, n4, sink);
                cudaEventRecord(e1, s);
                float ms = 0;
                const bool good = ok(cudaStreamSynchronize(s), "sync") && ok(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
                *us = ms * 1000.0;
                return good;
            };
            std::vector<double> warm, cold;
            const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(4 * sms, bytes / 16 / 1024 + 1));
            for (int r = 0; r < rounds + 2; ++r) {
                double us = 0, ignored = 0;
                if (!timed_read(reinterpret_cast<const float4 *>(x), reinterpret_cast<const float4 *>(y), bytes / 16, blocks, &us))
                    return 1;
                if (r >= 2) warm.push_back(us);
                if (!timed_read(reinterpret_cast<const float4 *>(other), reinterpret_cast<const float4 *>(other) + other_bytes / 32,
                                other_bytes / 32, 4 * sms, &ignored) ||
                    !timed_read(reinterpret_cast<const float4 *>(x), reinterpret_cast<const float4 *>(y), bytes / 16, blocks, &us))
                    return 1;
                if (r >= 2) cold.push_back(us);
            }
            std::printf("2^%-8d %-34s %10.2f %14.2f\n", lg, advice_names[advice], median(warm), median(cold));
            cudaFree(x);
            cudaFree(y);
        }
    }
    cudaFree(other);
    cudaFree(sink);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(s);
    return 0;
}
