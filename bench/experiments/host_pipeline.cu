// host_pipeline.cu - target F's two designs for page-locked (registered) host arrays, alternated in one
// run: the GPU reading them in place over the bus, and the copy-engine pipeline (chunks copied into
// device staging while the previous chunk is computed). Each against the host->device copy ceiling of
// the same bytes (cudaMemcpyAsync of both arrays from page-locked memory), medians of 15 rounds, with a
// check that both designs give the same bits. Links the static library for its test knob.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc bench/experiments/host_pipeline.cu \
//          build/libcudot_static.a -lpthread -ldl -o build/experiments/host_pipeline
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cudot.h"
#include "testing.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double us_since(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

}  // namespace

int main() {
    const int rounds = 15;
    std::printf("%-4s %6s %12s %12s %12s %8s %8s  %s\n", "type", "n", "ceiling us", "in place us", "pipeline us",
                "in/ceil", "pipe/ceil", "same bits");
    for (int32_t d : {CUDOT_F32, CUDOT_F64}) {
        const std::size_t size = d == CUDOT_F64 ? 8 : 4;
        for (int k : {22, 24, 26}) {
            const std::size_t n = std::size_t(1) << k, bytes = n * size;
            void *x = nullptr, *y = nullptr, *dx = nullptr, *dy = nullptr;
            if (cudaMallocHost(&x, bytes) != cudaSuccess || cudaMallocHost(&y, bytes) != cudaSuccess ||
                cudaMalloc(&dx, bytes) != cudaSuccess || cudaMalloc(&dy, bytes) != cudaSuccess) {
                std::printf("allocation failed at n=2^%d\n", k);
                return 1;
            }
            for (std::size_t i = 0; i < bytes; ++i) {
                static_cast<unsigned char *>(x)[i] = static_cast<unsigned char>(0x30 + (i * 7919 % 13));
                static_cast<unsigned char *>(y)[i] = static_cast<unsigned char>(0x31 + (i * 104729 % 11));
            }
            cudaStream_t s;
            cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
            cudot_arrays a = CUDOT_ARRAYS_INIT;
            a.n = n;
            a.x.data = x;
            a.x.dtype = d;
            a.y.data = y;
            a.y.dtype = d;
            a.stream = s;
            std::vector<double> ceiling, in_place, pipeline;
            double r_in = 0, r_pipe = 0;
            for (int r = 0; r < rounds + 1; ++r) {  // round 0 warms every path up, and is not counted
                auto t = Clock::now();
                cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, s);
                cudaMemcpyAsync(dy, y, bytes, cudaMemcpyHostToDevice, s);
                cudaStreamSynchronize(s);
                const double c = us_since(t);
                cudot::testing::set_host_pipeline(1);
                t = Clock::now();
                const cudot_status s1 = cudot_dot_arrays(&a, &r_in);
                const double i1 = us_since(t);
                cudot::testing::set_host_pipeline(2);
                t = Clock::now();
                const cudot_status s2 = cudot_dot_arrays(&a, &r_pipe);
                const double p2 = us_since(t);
                if (s1 != CUDOT_OK || s2 != CUDOT_OK) {
                    std::printf("dot failed: %s\n", cudot_last_error(nullptr));
                    return 1;
                }
                if (r == 0) continue;
                ceiling.push_back(c);
                in_place.push_back(i1);
                pipeline.push_back(p2);
            }
            const double c = median(ceiling), i = median(in_place), p = median(pipeline);
            std::printf("%-4s   2^%d %12.1f %12.1f %12.1f %8.3f %8.3f  %s\n", d == CUDOT_F64 ? "f64" : "f32", k, c, i, p,
                        c / i, c / p, std::memcmp(&r_in, &r_pipe, sizeof r_in) == 0 ? "yes" : "NO");
            cudaStreamDestroy(s);
            cudaFreeHost(x);
            cudaFreeHost(y);
            cudaFree(dx);
            cudaFree(dy);
        }
    }
    cudot::testing::set_host_pipeline(0);
    return 0;
}
