// rows_gpu_bench.cu - cudot-bench-rows-gpu: batches of rows in GPU memory (cudot_dot_rows) against the
// ceilings and peers of the same run, with the verdict lines of the GPU rows targets:
//   B1  device rows, strided, 256 MiB an operand, rows of 32 .. 2^20, f32 and f64, results in device
//       memory (the asynchronous form, then a stream sync): >= 0.85 of the
//       device-copy ceiling (the bytes of x and y, read once)
//   B2  100 rows x 1024 f32, blocking: <= 1.0 x (empty launch + sync); 10^4 x 1024: <= 1.1 x
//       (launch + sync + bytes / device-copy ceiling)
//   B3  at every B1 shape, >= 1.0 x the fastest peer measured here: cuBLAS's batched GEMM with m = n = 1
//       and CUB's segmented reduce over the products (torch and CuPy: bindings/python/bench/rows_peers.py)
//   B4  one x against k = 8 and 32 y's of 2^20 .. 2^24 (row stride 0): >= 0.85 of the ceiling with x
//       counted once, and >= 1.0 x cuBLAS gemv on the same data
//   B5  segmented, row lengths drawn from 1 .. 65536, 256 MiB an operand: >= 0.8 of the ceiling
//   X5  the B1 shapes in the exact mode (cudot_rows.mode = CUDOT_MODE_EXACT): >= 0.8 of the ceiling
// Ratios "of ceiling" are cudot-bench's: (bytes / device-copy ceiling + empty launch + sync) / time.
// Every timed batch's results are checked, on sampled rows, against cudot_dot_arrays on that row alone.
// Usage: cudot-bench-rows-gpu [--quick] [--exact]   (--quick: 16 MiB operands and few rounds, a smoke
// test; --exact: the X5 lines alone)
#include <cublas_v2.h>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ceilings.hpp"
#include "cudot.h"
#include "measure.hpp"
#include "targets.hpp"

using namespace bench;

namespace {

bool ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) std::printf("CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

const char *name(int32_t d) { return d == CUDOT_F64 ? "f64" : "f32"; }
std::size_t size_of(int32_t d) { return d == CUDOT_F64 ? 8 : 4; }

// Values in [-1, 1) from a hash of the index: no host copy of hundreds of MiB.
template <class T> __global__ void fill(T *p, std::size_t n, unsigned seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = static_cast<T>(static_cast<int>(h >> 8) - (1 << 23)) / static_cast<T>(1 << 23);
    }
}

bool fill_values(int32_t d, void *p, std::size_t n, unsigned seed) {
    if (d == CUDOT_F64) fill<<<1024, 256>>>(static_cast<double *>(p), n, seed);
    else fill<<<1024, 256>>>(static_cast<float *>(p), n, seed);
    return ok(cudaDeviceSynchronize(), "fill");
}

// Sampled rows (first, last, and every stride-th) against each row's own dot.
bool rows_have_their_own_bits(const cudot_rows &r, const std::vector<double> &results) {
    const std::size_t step = std::max<std::size_t>(1, r.count / 64);
    for (std::size_t i = 0; i < r.count; i = (i + step < r.count || i == r.count - 1) ? i + step : r.count - 1) {
        cudot_arrays a = CUDOT_ARRAYS_INIT;
        const std::size_t sx = size_of(r.x.dtype), sy = size_of(r.y.dtype);
        if (r.layout == CUDOT_ROWS_SEGMENTED) {
            a.n = static_cast<std::size_t>(r.offsets[i + 1] - r.offsets[i]);
            a.x.data = static_cast<const char *>(r.x.data) + r.offsets[i] * sx;
            a.y.data = static_cast<const char *>(r.y.data) + r.offsets[i] * sy;
        } else {
            a.n = r.n;
            a.x.data = static_cast<const char *>(r.x.data) + static_cast<std::int64_t>(i) * r.x_row_stride * sx;
            a.y.data = static_cast<const char *>(r.y.data) + static_cast<std::int64_t>(i) * r.y_row_stride * sy;
        }
        a.x.dtype = r.x.dtype;
        a.y.dtype = r.y.dtype;
        a.stream = r.stream;
        a.mode = r.mode;
        double want = 0;
        if (cudot_dot_arrays(&a, &want) != CUDOT_OK || std::memcmp(&want, &results[i], sizeof want) != 0) {
            std::printf("row %zu: %.17g, its own dot %.17g\n", i, results[i], want);
            return false;
        }
        if (i == r.count - 1) break;
    }
    return true;
}

Contender rows_contender(const cudot_rows &r, std::vector<double> &results) {
    return Contender{nullptr, [&r, &results] {
        const bool good = cudot_dot_rows(&r, results.data()) == CUDOT_OK;
        if (!good) std::printf("cudot_dot_rows: %s\n", cudot_last_error(nullptr));
        return good;
    }};
}

// The asynchronous form into device memory, then the stream's sync: a batch whose results stay on the GPU.
Contender async_contender(const cudot_rows &r, double *device_results) {
    return Contender{nullptr, [&r, device_results] {
        const bool good = cudot_dot_rows_async(&r, device_results) == CUDOT_OK;
        if (!good) std::printf("cudot_dot_rows_async: %s\n", cudot_last_error(nullptr));
        return good && cudaStreamSynchronize(static_cast<cudaStream_t>(r.stream)) == cudaSuccess;
    }};
}

// The ratio every bandwidth target uses (cudot-bench's): the time the ceiling allows (bytes at the
// ceiling, plus an empty launch + sync) over the time taken.
double of_ceiling(double bytes, double us, const Ceilings &c) {
    return us > 0 ? (bytes / (c.d2d_GBps * 1e3) + c.launch_us) / us : 0;
}

// cuBLAS's batched GEMM with m = n = 1: C_i = x_i^T y_i, the usual detour to a batched dot.
Contender gemm_contender(cublasHandle_t h, cudaStream_t s, int32_t d, const void *x, const void *y, std::size_t n,
                         std::size_t count, void *c) {
    return Contender{nullptr, [=] {
        cublasStatus_t st;
        const int k = static_cast<int>(n);
        if (d == CUDOT_F64) {
            const double one = 1, zero = 0;
            st = cublasDgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, k, &one, static_cast<const double *>(x), k,
                                           static_cast<long long>(n), static_cast<const double *>(y), k,
                                           static_cast<long long>(n), &zero, static_cast<double *>(c), 1, 1,
                                           static_cast<int>(count));
        } else {
            const float one = 1, zero = 0;
            st = cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, k, &one, static_cast<const float *>(x), k,
                                           static_cast<long long>(n), static_cast<const float *>(y), k,
                                           static_cast<long long>(n), &zero, static_cast<float *>(c), 1, 1,
                                           static_cast<int>(count));
        }
        return st == CUBLAS_STATUS_SUCCESS && cudaStreamSynchronize(s) == cudaSuccess;
    }};
}

template <class T> struct Product {
    const T *x, *y;
    __host__ __device__ T operator()(long long i) const { return x[i] * y[i]; }
};
struct RowStart {
    long long n;
    __host__ __device__ long long operator()(long long i) const { return i * n; }
};

// CUB's segmented reduce over the products x[i] * y[i], the rows' offsets computed on the fly.
template <class T> struct CubSegmented {
    void *temp = nullptr;
    std::size_t temp_bytes = 0;
    T *out = nullptr;
    bool run(const T *x, const T *y, std::size_t n, std::size_t count, cudaStream_t s, bool sizing) {
        thrust::counting_iterator<long long> index(0);
        auto products = thrust::make_transform_iterator(index, Product<T>{x, y});
        auto starts = thrust::make_transform_iterator(index, RowStart{static_cast<long long>(n)});
        auto ends = thrust::make_transform_iterator(thrust::counting_iterator<long long>(1), RowStart{static_cast<long long>(n)});
        return cub::DeviceSegmentedReduce::Sum(sizing ? nullptr : temp, temp_bytes, products, out,
                                               static_cast<int>(count), starts, ends, s) == cudaSuccess;
    }
};

template <class T>
Contender cub_contender(CubSegmented<T> &c, const void *x, const void *y, std::size_t n, std::size_t count,
                        cudaStream_t s) {
    c.run(static_cast<const T *>(x), static_cast<const T *>(y), n, count, s, true);
    if (!ok(cudaMalloc(&c.temp, std::max<std::size_t>(c.temp_bytes, 1)), "cudaMalloc") ||
        !ok(cudaMalloc(&c.out, count * sizeof(T)), "cudaMalloc"))
        return Contender{nullptr, [] { return false; }};
    return Contender{nullptr, [&c, x, y, n, count, s] {
        return c.run(static_cast<const T *>(x), static_cast<const T *>(y), n, count, s, false) &&
               cudaStreamSynchronize(s) == cudaSuccess;
    }};
}

double gbps(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0; }

}  // namespace

// X5: the B1 shapes in the exact mode, each beside the canonical mode's batch in the same rounds.
bool exact_rows(Ceilings &c, cudaStream_t s, void *x, void *y, std::size_t operand_bytes, int reps,
                double *device_results) {
    Target x5_f32 = at_least("X5 f32 exact device rows vs device copy", "of ceiling (worst row length)", 0.8);
    Target x5_f64 = at_least("X5 f64 exact device rows vs device copy", "of ceiling (worst row length)", 0.8);
    Target bits = at_most("every sampled exact row bit-equal to its own exact dot", "batches that differ", 0.0);
    std::printf("\nX5: exact rows, device results (cudot_dot_rows_async + stream sync; 'ratio' is of the ceiling)\n");
    std::printf("%-4s %-5s %9s %9s %11s %9s %7s %12s %9s %s\n", "", "type", "row", "rows", "exact_us", "GB/s", "ratio",
                "canonical_us", "exact/can", "check");
    for (int32_t d : {CUDOT_F32, CUDOT_F64}) {
        const std::size_t elements = operand_bytes / size_of(d);
        if (!fill_values(d, x, elements, 5) || !fill_values(d, y, elements, 6)) return false;
        for (std::size_t n : {std::size_t(32), std::size_t(256), std::size_t(1024), std::size_t(8192),
                              std::size_t(1) << 16, std::size_t(1) << 20}) {
            const std::size_t count = elements / n;
            cudot_rows r = CUDOT_ROWS_INIT;
            r.count = count;
            r.n = n;
            r.x.data = x;
            r.y.data = y;
            r.x.dtype = r.y.dtype = d;
            r.x_row_stride = r.y_row_stride = static_cast<std::int64_t>(n);
            r.stream = s;
            cudot_rows e = r;
            e.mode = CUDOT_MODE_EXACT;
            std::vector<Contender> cs;
            cs.push_back(async_contender(e, device_results));
            cs.push_back(async_contender(r, device_results + count));
            time_interleaved(3, reps, cs, 0, false, Order::kShuffled);
            std::vector<double> results(count);
            const bool copied = ok(cudaMemcpy(results.data(), device_results, count * 8, cudaMemcpyDeviceToHost), "copy");
            const bool good = cs[0].ok && cs[1].ok && copied && rows_have_their_own_bits(e, results);
            const double us = summarize(cs[0].samples).median_us, canonical = summarize(cs[1].samples).median_us;
            const double bytes = 2.0 * elements * size_of(d), ratio = of_ceiling(bytes, us, c);
            std::printf("%-4s %-5s %9zu %9zu %11.1f %9.1f %7.3f %12.1f %9.2f %s\n", "X5", name(d), n, count, us,
                        gbps(bytes, us), ratio, canonical, canonical > 0 ? us / canonical : 0.0, good ? "ok" : "MISMATCH");
            (d == CUDOT_F64 ? x5_f64 : x5_f32).see(ratio, where(n, "rows"));
            bits.see(good ? 0 : 1, where(n, "rows"));
        }
    }
    remeasure_ceilings(c, "end of X5", operand_bytes < (std::size_t(256) << 20));
    print_targets({x5_f32, x5_f64, bits}, "exact rows target (GPU)");
    return true;
}

int main(int argc, char **argv) {
    bool quick = false, exact_only = false;
    for (int i = 1; i < argc; ++i) {
        quick = quick || std::string(argv[i]) == "--quick";
        exact_only = exact_only || std::string(argv[i]) == "--exact";
    }
    Ceilings c = measure_ceilings(true, quick);
    std::printf("cudot %s  cudot-bench-rows-gpu%s  %s\n", cudot_version_string(), quick ? " --quick" : "",
                c.gpu_name.c_str());
    if (!c.gpu) {
        std::printf("no usable GPU: nothing measured\n");
        return 0;
    }
    std::printf("ceilings: device copy %.1f GB/s, launch + sync %.2f us\n", c.d2d_GBps, c.launch_us);
    const std::size_t operand_bytes = quick ? std::size_t(16) << 20 : std::size_t(256) << 20;
    const int reps = quick ? 5 : 30;
    cudaStream_t s;
    cublasHandle_t h;
    if (!ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream") || cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        return 1;
    cublasSetStream(h, s);
    void *x = nullptr, *y = nullptr, *peer_out = nullptr;
    const std::size_t b4_n = std::size_t(1) << (quick ? 20 : 24);  // B4: x of b4_n f32, and 32 y's
    if (!ok(cudaMalloc(&x, std::max(operand_bytes, 4 * b4_n)), "cudaMalloc") ||
        !ok(cudaMalloc(&y, std::max(operand_bytes, 32 * 4 * b4_n)), "cudaMalloc") ||
        !ok(cudaMalloc(&peer_out, (operand_bytes / 4 + 1) * 8), "cudaMalloc"))
        return 1;
    double *device_results = nullptr;
    if (!ok(cudaMalloc(&device_results, (operand_bytes / 4 + 1) * 8), "cudaMalloc")) return 1;
    if (exact_only) {
        const bool done = exact_rows(c, s, x, y, operand_bytes, reps, device_results);
        cudaFree(x), cudaFree(y), cudaFree(peer_out), cudaFree(device_results);
        return done ? 0 : 1;
    }

    Target b1_f32 = at_least("B1 f32 device rows and results vs device copy", "of ceiling (worst row length)", 0.85);
    Target b1_f64 = at_least("B1 f64 device rows and results vs device copy", "of ceiling (worst row length)", 0.85);
    Target b2_small = at_most("B2 100 x 1024 f32 blocking vs launch + sync", "time / (launch + sync)", 1.0);
    Target b2_large = at_most("B2 10^4 x 1024 f32 vs launch + sync + bytes", "time / (launch + sync + bytes/copy)", 1.1);
    Target b3 = at_least("B3 vs the fastest peer here (cuBLAS batched GEMM, CUB)", "peer time / cudot time (worst)", 1.0);
    Target b4_ceiling = at_least("B4 one x vs k y's, x counted once, vs device copy", "of ceiling (worst)", 0.85);
    Target b4_gemv = at_least("B4 one x vs k y's vs cuBLAS gemv", "gemv time / cudot time (worst)", 1.0);
    Target b5 = at_least("B5 segmented rows of 1..65536 vs device copy", "of ceiling", 0.8);
    Target bits = at_most("every sampled row bit-equal to its own dot", "batches that differ", 0.0);

    std::printf("\nB1: device results (cudot_dot_rows_async + stream sync; 'ratio' is of the ceiling, launch + sync\n"
                "included) and host results (cudot_dot_rows, blocking); peers write device results and sync\n");
    std::printf("%-4s %-5s %9s %9s %11s %9s %7s %11s %11s %11s %8s %s\n", "", "type", "row", "rows", "cudot_us", "GB/s",
                "ratio", "blocking_us", "gemm_us", "cub_us", "vs_best", "check");
    for (int32_t d : {CUDOT_F32, CUDOT_F64}) {
        const std::size_t elements = operand_bytes / size_of(d);
        if (!fill_values(d, x, elements, 1) || !fill_values(d, y, elements, 2)) return 1;
        for (std::size_t n : {std::size_t(32), std::size_t(256), std::size_t(1024), std::size_t(8192),
                              std::size_t(1) << 16, std::size_t(1) << 20}) {
            const std::size_t count = elements / n;
            if (count == 0) continue;
            cudot_rows r = CUDOT_ROWS_INIT;
            r.count = count;
            r.n = n;
            r.x.data = x;
            r.y.data = y;
            r.x.dtype = r.y.dtype = d;
            r.x_row_stride = r.y_row_stride = static_cast<std::int64_t>(n);
            r.stream = s;
            std::vector<double> results(count), blocking(count);
            CubSegmented<float> cub_f;
            CubSegmented<double> cub_d;
            std::vector<Contender> cs;
            cs.push_back(async_contender(r, device_results));
            cs.push_back(rows_contender(r, blocking));
            cs.push_back(gemm_contender(h, s, d, x, y, n, count, peer_out));
            cs.push_back(d == CUDOT_F64 ? cub_contender(cub_d, x, y, n, count, s) : cub_contender(cub_f, x, y, n, count, s));
            time_interleaved(3, reps, cs, 0, false, Order::kShuffled);
            const bool copied = ok(cudaMemcpy(results.data(), device_results, count * 8, cudaMemcpyDeviceToHost), "copy");
            const bool good = cs[0].ok && cs[1].ok && copied && results == blocking && rows_have_their_own_bits(r, results);
            const double us = summarize(cs[0].samples).median_us, bytes = 2.0 * elements * size_of(d);
            const double blocking_us = summarize(cs[1].samples).median_us;
            const double gemm = cs[2].ok ? summarize(cs[2].samples).median_us : 0;
            const double cub = cs[3].ok ? summarize(cs[3].samples).median_us : 0;
            double best = 0;
            for (double t : {gemm, cub})
                if (t > 0 && (best == 0 || t < best)) best = t;
            const double ratio = of_ceiling(bytes, us, c);
            std::printf("%-4s %-5s %9zu %9zu %11.1f %9.1f %7.3f %11.1f %11.1f %11.1f %8.2f %s\n", "B1", name(d), n, count,
                        us, gbps(bytes, us), ratio, blocking_us, gemm, cub, us > 0 && best > 0 ? best / us : 0.0,
                        good ? "ok" : "MISMATCH");
            const std::string at = where(n, "rows");
            (d == CUDOT_F64 ? b1_f64 : b1_f32).see(ratio, at);
            if (best > 0) b3.see(best / us, std::string(name(d)) + " " + at);
            bits.see(good ? 0 : 1, at);
            cudaFree(cub_f.temp), cudaFree(cub_f.out), cudaFree(cub_d.temp), cudaFree(cub_d.out);
        }
    }

    // B2: small batches against an empty launch + sync, timed in the same rounds.
    if (!fill_values(CUDOT_F32, x, 10000 * 1024, 3) || !fill_values(CUDOT_F32, y, 10000 * 1024, 4)) return 1;
    for (std::size_t count : {std::size_t(100), std::size_t(10000)}) {
        cudot_rows r = CUDOT_ROWS_INIT;
        r.count = count;
        r.n = 1024;
        r.x.data = x;
        r.y.data = y;
        r.x_row_stride = r.y_row_stride = 1024;
        r.stream = s;
        std::vector<double> results(count);
        LaunchProbe probe;
        std::vector<Contender> cs;
        cs.push_back(rows_contender(r, results));
        cs.push_back(Contender{nullptr, [&probe] { return probe.once(); }});
        time_interleaved(20, quick ? 200 : 2000, cs, 0, false, Order::kShuffled);
        const bool good = cs[0].ok && rows_have_their_own_bits(r, results);
        const double us = summarize(cs[0].samples).median_us, launch = summarize(cs[1].samples).median_us;
        const double bytes = 2.0 * count * 1024 * 4, bound = launch + bytes / (c.d2d_GBps * 1e3);
        std::printf("B2   f32 %zu x 1024: cudot %.2f us, launch + sync %.2f us (same rounds), + bytes %.2f us  %s\n",
                    count, us, launch, bound, good ? "ok" : "MISMATCH");
        if (count == 100) b2_small.see(us / launch, "100 rows");
        else b2_large.see(us / bound, "10^4 rows");
        bits.see(good ? 0 : 1, "B2");
    }

    // B4: one x against k y's (x's row stride 0), against cuBLAS gemv (y as an n x k column-major matrix).
    for (int k : {8, 32})
        for (int lg : {20, 22, 24}) {
            const std::size_t n = std::size_t(1) << lg;
            if (quick && lg > 20) continue;
            if (!fill_values(CUDOT_F32, x, n, 5) || !fill_values(CUDOT_F32, y, n * k, 6)) return 1;
            cudot_rows r = CUDOT_ROWS_INIT;
            r.count = static_cast<std::size_t>(k);
            r.n = n;
            r.x.data = x;
            r.y.data = y;
            r.x_row_stride = 0;
            r.y_row_stride = static_cast<std::int64_t>(n);
            r.stream = s;
            std::vector<double> results(k);
            std::vector<Contender> cs;
            cs.push_back(rows_contender(r, results));
            cs.push_back(Contender{nullptr, [&] {
                const float one = 1, zero = 0;
                return cublasSgemv(h, CUBLAS_OP_T, static_cast<int>(n), k, &one, static_cast<const float *>(y),
                                   static_cast<int>(n), static_cast<const float *>(x), 1, &zero,
                                   static_cast<float *>(peer_out), 1) == CUBLAS_STATUS_SUCCESS &&
                       cudaStreamSynchronize(s) == cudaSuccess;
            }});
            time_interleaved(3, reps, cs, 0, false, Order::kShuffled);
            const bool good = cs[0].ok && rows_have_their_own_bits(r, results);
            const double us = summarize(cs[0].samples).median_us, gemv = summarize(cs[1].samples).median_us;
            const double bytes = 4.0 * n * (k + 1), ratio = of_ceiling(bytes, us, c);
            std::printf("B4   f32 k=%d n=2^%d: cudot %.1f us (%.1f GB/s, %.3f of copy), gemv %.1f us (%.2fx)  %s\n", k,
                        lg, us, gbps(bytes, us), ratio, gemv, us > 0 ? gemv / us : 0.0, good ? "ok" : "MISMATCH");
            const std::string at = "k=" + std::to_string(k) + " " + where(n, "");
            b4_ceiling.see(ratio, at);
            b4_gemv.see(us > 0 ? gemv / us : 0, at);
            bits.see(good ? 0 : 1, at);
        }

    // B5: segmented, row lengths drawn from 1 .. 65536.
    {
        const std::size_t elements = operand_bytes / 4;
        if (!fill_values(CUDOT_F32, x, elements, 7) || !fill_values(CUDOT_F32, y, elements, 8)) return 1;
        std::mt19937_64 rng(9);
        std::vector<std::int64_t> offsets{0};
        while (true) {
            const std::int64_t len = 1 + static_cast<std::int64_t>(rng() % 65536);
            if (offsets.back() + len > static_cast<std::int64_t>(elements)) break;
            offsets.push_back(offsets.back() + len);
        }
        cudot_rows r = CUDOT_ROWS_INIT;
        r.layout = CUDOT_ROWS_SEGMENTED;
        r.count = offsets.size() - 1;
        r.offsets = offsets.data();
        r.x.data = x;
        r.y.data = y;
        r.stream = s;
        std::vector<double> results(r.count);
        std::vector<Contender> cs;
        cs.push_back(rows_contender(r, results));
        time_interleaved(3, reps, cs);
        const bool good = cs[0].ok && rows_have_their_own_bits(r, results);
        const double us = summarize(cs[0].samples).median_us, bytes = 2.0 * offsets.back() * 4;
        std::printf("B5   f32 %zu segments, %lld elements: cudot %.1f us, %.1f GB/s, %.3f of copy  %s\n", r.count,
                    static_cast<long long>(offsets.back()), us, gbps(bytes, us), of_ceiling(bytes, us, c),
                    good ? "ok" : "MISMATCH");
        b5.see(of_ceiling(bytes, us, c), "segmented");
        bits.see(good ? 0 : 1, "B5");
    }
    remeasure_ceilings(c, "end", quick);
    std::printf("\nceilings (best of rounds): device copy %.1f GB/s, launch + sync %.2f us\n", c.d2d_GBps, c.launch_us);
    print_targets({b1_f32, b1_f64, b2_small, b2_large, b3, b4_ceiling, b4_gemv, b5, bits}, "rows target (GPU)");
    if (!exact_rows(c, s, x, y, operand_bytes, reps, device_results)) return 1;
    cublasDestroy(h);
    cudaFree(x);
    cudaFree(y);
    cudaFree(peer_out);
    cudaFree(device_results);
    cudaStreamDestroy(s);
    return 0;
}
