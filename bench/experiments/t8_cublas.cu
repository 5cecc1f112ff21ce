// t8_cublas.cu - issue 24, T8 "managed resident 2^26 vs cuBLAS": cudot-bench times cuBLAS in a block of
// its own, on buffers of its own, and MANAGED in rounds shared with every other strategy; at f64 2^26 the
// two are 1-3 % apart (0.955-0.970 in the latest records). Here the same calls alternate round by round
// in one process, on the same data: cuBLAS (host pointer mode, the call blocks) and cudot_dot_arrays on
// one pair of device arrays, each slice choice of cudot's kernel (1, 2, 4, 8 per tile, and the library's
// own), and a MANAGED context with its inputs in GPU memory, again with each slice choice. Medians (p10)
// in microseconds and GB/s of input read; whether every cudot variant gave the same bits.
// Build (from the repository root, after the CUDA build in build/):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc bench/experiments/t8_cublas.cu build/libcudot_static.a \
//        -lcublas -lpthread -ldl -o build/experiments/t8_cublas
// Usage: t8_cublas [rounds = 101]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cuda/cuda_backend.hpp"
#include "context.hpp"
#include "cudot.h"
#include "testing.hpp"

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Variant {
    std::string name;
    std::function<bool(double *)> call;  // false: the call failed
    std::vector<double> us;
    double result = 0;
    bool ok = true;
};

void run(int32_t dtype, std::size_t n, int rounds, cublasHandle_t handle) {
    const std::size_t es = dtype == CUDOT_F64 ? 8 : 4;
    void *x = nullptr, *y = nullptr;
    if (cudaMalloc(&x, n * es) != cudaSuccess || cudaMalloc(&y, n * es) != cudaSuccess) {
        std::printf("cudaMalloc failed\n");
        return;
    }
    cudaMemset(x, 0x3c, n * es);  // bytes of 0x3c: small finite values in both types, as cudot-bench's cuBLAS row
    cudaMemset(y, 0x3c, n * es);
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaDeviceSynchronize();

    cudot_config config = CUDOT_CONFIG_INIT;
    config.dtype = dtype;
    config.memory = CUDOT_MEMORY_MANAGED;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &config) != CUDOT_OK) {
        std::printf("cudot_init_config (MANAGED) failed\n");
        return;
    }
    void *mx = nullptr, *my = nullptr;
    cudot_get_inputs(ctx, &mx, &my);
    std::memset(mx, 0x3c, n * es);
    std::memset(my, 0x3c, n * es);

    std::vector<Variant> vs;
    vs.push_back({"cuBLAS (device arrays)", [&](double *r) {
                      if (dtype == CUDOT_F64)
                          return cublasDdot(handle, int(n), static_cast<double *>(x), 1, static_cast<double *>(y), 1, r) ==
                                 CUBLAS_STATUS_SUCCESS;
                      float f = 0;
                      const bool ok = cublasSdot(handle, int(n), static_cast<float *>(x), 1, static_cast<float *>(y), 1,
                                                 &f) == CUBLAS_STATUS_SUCCESS;
                      *r = f;
                      return ok;
                  }});
    cudot_arrays a = CUDOT_ARRAYS_INIT;  // the device arrays, for every slice choice
    a.n = n;
    a.x.data = x;
    a.y.data = y;
    a.x.dtype = a.y.dtype = dtype;
    a.stream = stream;
    for (unsigned slices : {0u, 1u, 2u, 4u, 8u}) {
        const std::string label = slices ? std::to_string(slices) : std::string("own choice");
        vs.push_back({"arrays, slices " + label, [&, slices](double *r) {
                          cudot::testing::set_stream_slices(slices);
                          return cudot_dot_arrays(&a, r) == CUDOT_OK;
                      }});
    }
    for (unsigned slices : {0u, 1u, 2u, 4u, 8u}) {
        const std::string label = slices ? std::to_string(slices) : std::string("own choice");
        vs.push_back({"MANAGED, slices " + label, [&, slices](double *r) {
                          cudot::cuda::GpuTuning tuning;
                          tuning.slices = slices;
                          cudot::cuda::tune(*ctx, tuning);
                          return cudot_dot(ctx, r) == CUDOT_OK;
                      }});
    }
    for (int round = -5; round < rounds; ++round)
        for (std::size_t k = 0; k < vs.size(); ++k) {
            Variant &v = vs[(k + std::size_t(round + 5)) % vs.size()];  // the order rotates
            if (!v.ok) continue;
            const double t0 = now_us();
            v.ok = v.call(&v.result);
            if (round >= 0) v.us.push_back(now_us() - t0);
        }
    cudot::testing::set_stream_slices(0);
    cudot::cuda::tune(*ctx, cudot::cuda::GpuTuning{});

    const double bytes = 2.0 * n * es;
    std::printf("\n%s n=2^%d, %d rounds (rotated):\n", dtype == CUDOT_F64 ? "f64" : "f32", __builtin_ctzll(n), rounds);
    for (Variant &v : vs) {
        if (!v.ok || v.us.empty()) {
            std::printf("  %-26s failed: %s\n", v.name.c_str(), cudot_last_error(ctx));
            continue;
        }
        std::sort(v.us.begin(), v.us.end());
        const double median = v.us[v.us.size() / 2], p10 = v.us[v.us.size() / 10];
        std::printf("  %-26s %9.1f us (p10 %9.1f)  %7.0f GB/s  cuBLAS/this %.3f\n", v.name.c_str(), median, p10,
                    bytes / median / 1e3, vs[0].us.empty() ? 0.0 : vs[0].us[vs[0].us.size() / 2] / median);
    }
    bool same = true;
    for (std::size_t k = 2; k < vs.size(); ++k) same = same && std::memcmp(&vs[k].result, &vs[1].result, 8) == 0;
    std::printf("  every cudot variant the same bits: %s (cuBLAS %.17g, cudot %.17g)\n", same ? "yes" : "NO", vs[0].result,
                vs[1].result);
    cudot_deinit(ctx);
    cudaStreamDestroy(stream);
    cudaFree(x);
    cudaFree(y);
}

}  // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(11, std::atoi(argv[1])) : 101;
    cublasHandle_t handle = nullptr;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
        std::printf("cublasCreate failed\n");
        return 1;
    }
    for (int32_t dtype : {CUDOT_F64, CUDOT_F32})
        for (int log2 : {26, 24}) run(dtype, std::size_t(1) << log2, rounds, handle);
    cublasDestroy(handle);
    cudot::testing::release_own_array_state();
    return 0;
}
