// stream_slices.cu - dense dots of device arrays (cudot_dot_arrays, blocking) with each tile cut into 1,
// 2, 4 or 8 slices, and with the library's own choice: medians in microseconds, and whether every
// variant gave the same bits. Links the static library for its test knob (src/testing.hpp).
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc bench/experiments/stream_slices.cu \
//          build/libcudot_static.a -lpthread -ldl -o build/experiments/stream_slices
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cudot.h"
#include "testing.hpp"

int main() {
    const std::size_t largest = std::size_t(1) << 20;
    void *x = nullptr, *y = nullptr;
    cudaMalloc(&x, largest * 8);
    cudaMalloc(&y, largest * 8);
    std::vector<unsigned char> fill(largest * 8);
    for (std::size_t i = 0; i < fill.size(); ++i) fill[i] = static_cast<unsigned char>(0x30 + (i * 7919 % 13));
    cudaMemcpy(x, fill.data(), fill.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(y, fill.data(), fill.size(), cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    std::printf("%-4s %8s %9s %9s %9s %9s %9s  %s\n", "type", "n", "auto", "1", "2", "4", "8", "same bits");
    for (int32_t d : {CUDOT_F32, CUDOT_F64}) {
        for (int k = 10; k <= 20; k += 2) {
            cudot_arrays a = CUDOT_ARRAYS_INIT;
            a.n = std::size_t(1) << k;
            a.x.data = x;
            a.y.data = y;
            a.x.dtype = a.y.dtype = d;
            a.stream = s;
            double medians[5], results[5];
            const unsigned forced[5] = {0, 1, 2, 4, 8};
            for (int v = 0; v < 5; ++v) {
                cudot::testing::set_stream_slices(forced[v]);
                std::vector<double> t(3000);
                for (int i = 0; i < 200; ++i) cudot_dot_arrays(&a, &results[v]);
                for (double &ti : t) {
                    const auto t0 = std::chrono::steady_clock::now();
                    cudot_dot_arrays(&a, &results[v]);
                    ti = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                }
                std::sort(t.begin(), t.end());
                medians[v] = t[t.size() / 2];
            }
            bool same = true;
            for (int v = 1; v < 5; ++v) same = same && std::memcmp(&results[v], &results[0], sizeof(double)) == 0;
            std::printf("%-4s %8zu %9.2f %9.2f %9.2f %9.2f %9.2f  %s\n", d == CUDOT_F64 ? "f64" : "f32", a.n, medians[0],
                        medians[1], medians[2], medians[3], medians[4], same ? "yes" : "NO");
        }
    }
    cudot::testing::set_stream_slices(0);
    return 0;
}
