// gpu_rows.hpp - batches of rows in GPU memory for the GPU tests of cudot_dot_rows (test_gpu_rows.cpp,
// test_gpu_exact_rows.cpp): rows with a host copy of the same bytes, the results every batch must give
// (each row dotted alone by the CPU), and the blocking and asynchronous calls checked for writing nothing
// past the batch.
#pragma once

#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "own_arrays.hpp"
#include "reference.hpp"
#include "rows_call.hpp"

namespace test {

// `bytes` of random values of dtype in GPU memory (device or managed), with the same bytes on the host.
struct Bed {
    int32_t dtype;
    std::size_t size, elements;
    std::vector<unsigned char> host;
    unsigned char *gpu = nullptr;
    Bed(int32_t d, std::size_t n, std::uint64_t seed, bool managed = false)
        : dtype(d), size(dtype_size(d)), elements(n), host(random_values(d, n, seed)) {
        if (managed) REQUIRE(cudaMallocManaged(reinterpret_cast<void **>(&gpu), host.size()) == cudaSuccess);
        else REQUIRE(cudaMalloc(reinterpret_cast<void **>(&gpu), host.size()) == cudaSuccess);
        REQUIRE(cudaMemcpy(gpu, host.data(), host.size(), cudaMemcpyDefault) == cudaSuccess);
    }
    ~Bed() { cudaFree(gpu); }
    Bed(const Bed &) = delete;
    Bed &operator=(const Bed &) = delete;
    // Some values made Inf, NaN and -0 (floating types), on both copies.
    void spice(std::uint64_t seed) {
        if (dtype == CUDOT_I8 || dtype == CUDOT_U8) return;
        std::mt19937_64 rng(seed);
        for (int k = 0; k < 12 && elements > 0; ++k) {
            unsigned char *e = host.data() + (rng() % elements) * size;
            if (dtype == CUDOT_F32) {
                const float v[3] = {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), -0.0f};
                std::memcpy(e, &v[k % 3], 4);
            } else if (dtype == CUDOT_F64) {
                const double v[3] = {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(), -0.0};
                std::memcpy(e, &v[k % 3], 8);
            } else {  // F16 / BF16: Inf, NaN, -0
                const std::uint16_t f16[3] = {0x7c00, 0x7e00, 0x8000}, bf16[3] = {0x7f80, 0x7fc0, 0x8000};
                std::memcpy(e, dtype == CUDOT_F16 ? &f16[k % 3] : &bf16[k % 3], 2);
            }
        }
        REQUIRE(cudaMemcpy(gpu, host.data(), host.size(), cudaMemcpyDefault) == cudaSuccess);
    }
    // The host copy's address of a GPU address in this bed.
    const void *mirror(const void *p) const {
        return host.data() + (static_cast<const unsigned char *>(p) - gpu);
    }
};

// The request's rows, each dotted alone from the host copies (in the request's mode, by the CPU): what
// every batch must give.
inline std::vector<double> expected(const cudot_rows &r, const Bed &bx, const Bed &by) {
    std::vector<double> out(r.count);
    for (std::size_t i = 0; i < r.count; ++i) {
        const unsigned char *x = nullptr, *y = nullptr;
        std::size_t n = r.n;
        if (r.layout == CUDOT_ROWS_STRIDED) {
            x = static_cast<const unsigned char *>(r.x.data) + static_cast<std::int64_t>(i) * r.x_row_stride * bx.size;
            y = static_cast<const unsigned char *>(r.y.data) + static_cast<std::int64_t>(i) * r.y_row_stride * by.size;
        } else if (r.layout == CUDOT_ROWS_SEGMENTED) {
            n = static_cast<std::size_t>(r.offsets[i + 1] - r.offsets[i]);
            x = static_cast<const unsigned char *>(r.x.data) + r.offsets[i] * r.x.stride * static_cast<std::int64_t>(bx.size);
            y = static_cast<const unsigned char *>(r.y.data) + r.offsets[i] * r.y.stride * static_cast<std::int64_t>(by.size);
        } else {
            x = static_cast<const unsigned char *>(r.x_rows[i]);
            y = static_cast<const unsigned char *>(r.y_rows[i]);
        }
        cudot_arrays a = arrays_of(n, r.x.dtype, n ? bx.mirror(x) : nullptr, r.x.stride, r.y.dtype,
                                   n ? by.mirror(y) : nullptr, r.y.stride);
        a.mode = r.mode;
        double v = -1;
        const cudot_status s = cudot_dot_arrays(&a, &v);
        INFO(cudot_last_error(nullptr));
        REQUIRE(s == CUDOT_OK);
        out[i] = v;
    }
    return out;
}

// The asynchronous form into device memory, read back after the stream's work.
inline std::vector<double> dot_rows_async(const cudot_rows &r) {
    double *d = nullptr;
    REQUIRE(cudaMalloc(&d, (r.count + 1) * sizeof(double)) == cudaSuccess);
    const double sentinel = -7.0;
    REQUIRE(cudaMemcpy(d + r.count, &sentinel, sizeof sentinel, cudaMemcpyHostToDevice) == cudaSuccess);
    const cudot_status s = cudot_dot_rows_async(&r, d);
    INFO(cudot_last_error(nullptr));
    REQUIRE(s == CUDOT_OK);
    std::vector<double> out(r.count + 1);
    REQUIRE(cudaStreamSynchronize(static_cast<cudaStream_t>(r.stream)) == cudaSuccess);
    REQUIRE(cudaMemcpy(out.data(), d, out.size() * sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess);
    cudaFree(d);
    CHECK(bits(out[r.count]) == bits(-7.0));
    out.pop_back();
    return out;
}

inline void check_same(const std::vector<double> &got, const std::vector<double> &want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("row " << i << ": " << got[i] << " vs " << want[i]);
        REQUIRE(bits(got[i]) == bits(want[i]));
    }
}

inline cudot_rows base_request(int32_t xd, int32_t yd) {
    cudot_rows r = CUDOT_ROWS_INIT;
    r.x.dtype = xd;
    r.y.dtype = yd;
    return r;
}

// r aimed at a strided batch of bx's and by's device copies: `count` rows of `n` elements, row i from
// element i * row of each.
inline void aim_strided(cudot_rows &r, std::size_t count, std::size_t n, const Bed &bx, const Bed &by,
                        std::size_t row) {
    r.count = count;
    r.n = n;
    r.x.data = bx.gpu;
    r.y.data = by.gpu;
    r.x_row_stride = r.y_row_stride = static_cast<std::int64_t>(row);
}

}  // namespace test
