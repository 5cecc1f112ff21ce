// arrays_bench.cu - cudot-bench-arrays: dots of the caller's own arrays (cudot_dot_arrays) against the
// ceilings and peers of the same run, with the verdict of each own-array target (A..F):
//   A  device arrays, blocking, n <= 2^20: median <= 1.0 x (empty launch + stream sync)
//   B  device arrays, n = 2^26, f32 and f64: >= 0.95 of the device-copy ceiling, faster than cuBLAS and CUB
//   C  asynchronous, one stream, n = 2^12: <= 3 us a dot, 1000 back to back and as a replayed graph
//   D  host arrays, unregistered, n >= 2^24: >= 0.9 x the speed of an AUTO context (fresh data each dot)
//   E  host arrays, n <= 2^16: <= 1.1 x a HOST context's time
//   F  registered host arrays, n >= 2^24: >= 0.9 x the host->device copy ceiling
// Usage: cudot-bench-arrays [--json PATH] [--quick]
#include <cublas_v2.h>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ceilings.hpp"
#include "cudot.h"
#include "measure.hpp"

using namespace bench;

namespace {

struct Row {
    std::string target, what;
    double value = 0, limit = 0;  // the measured figure and the target's bound
    bool lower_is_better = true;
    std::string detail;
    bool met() const { return lower_is_better ? value <= limit : value >= limit; }
};
std::vector<Row> rows;

void report(const Row &r) {
    rows.push_back(r);
    std::printf("%-2s %-58s %8.3f (target %s %.3f) %s  %s\n", r.target.c_str(), r.what.c_str(), r.value,
                r.lower_is_better ? "<=" : ">=", r.limit, r.met() ? "met" : "MISSED", r.detail.c_str());
    std::fflush(stdout);
}

bool ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) std::printf("CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

cudot_arrays arrays(int32_t dtype, const void *x, const void *y, std::size_t n, cudaStream_t stream) {
    cudot_arrays a = CUDOT_ARRAYS_INIT;
    a.n = n;
    a.x.data = x;
    a.y.data = y;
    a.x.dtype = a.y.dtype = dtype;
    a.stream = stream;
    return a;
}

Stats time_arrays(const cudot_arrays &a, int reps, const std::function<void(int)> &prepare = nullptr) {
    bool good = true;
    Stats s = time_calls(10, reps, prepare, [&] {
        double r;
        return cudot_dot_arrays(&a, &r) == CUDOT_OK;
    }, &good);
    if (!good) std::printf("cudot_dot_arrays failed: %s\n", cudot_last_error(nullptr));
    return s;
}

template <class T> struct Product {
    const T *x, *y;
    __device__ T operator()(int i) const { return x[i] * y[i]; }
};

// CUB's device-wide transform-reduce of x[i] * y[i] (in T, as cuBLAS sums), synchronised.
template <class T> Stats cub_dot(const T *x, const T *y, std::size_t n, cudaStream_t s, int reps) {
    T *out = nullptr;
    void *temp = nullptr;
    std::size_t temp_bytes = 0;
    thrust::counting_iterator<int> index(0);
    cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, index, out, static_cast<int>(n), cuda::std::plus<T>{},
                                       Product<T>{x, y}, T(0), s);
    if (!ok(cudaMalloc(&out, sizeof(T)), "cudaMalloc") || !ok(cudaMalloc(&temp, temp_bytes), "cudaMalloc")) return {};
    Stats st = time_calls(10, reps, nullptr, [&] {
        cub::DeviceReduce::TransformReduce(temp, temp_bytes, index, out, static_cast<int>(n), cuda::std::plus<T>{},
                                           Product<T>{x, y}, T(0), s);
        T r;
        return cudaMemcpyAsync(&r, out, sizeof r, cudaMemcpyDeviceToHost, s) == cudaSuccess &&
               cudaStreamSynchronize(s) == cudaSuccess;
    });
    cudaFree(out);
    cudaFree(temp);
    return st;
}

Stats cublas_same_pointers(cublasHandle_t h, int32_t dtype, const void *x, const void *y, std::size_t n, int reps) {
    return time_calls(10, reps, nullptr, [&] {
        if (dtype == CUDOT_F64) {
            double r;
            return cublasDdot(h, static_cast<int>(n), static_cast<const double *>(x), 1, static_cast<const double *>(y), 1,
                              &r) == CUBLAS_STATUS_SUCCESS;
        }
        float r;
        return cublasSdot(h, static_cast<int>(n), static_cast<const float *>(x), 1, static_cast<const float *>(y), 1,
                          &r) == CUBLAS_STATUS_SUCCESS;
    });
}

const char *name(int32_t d) { return d == CUDOT_F64 ? "f64" : "f32"; }
std::size_t size_of(int32_t d) { return d == CUDOT_F64 ? 8 : 4; }

void device_rows(const Ceilings &c, cublasHandle_t h, cudaStream_t s, bool quick) {
    const int reps = quick ? 200 : 2000;
    const std::size_t largest = std::size_t(1) << 26;
    for (int32_t d : {CUDOT_F32, CUDOT_F64}) {
        void *x = nullptr, *y = nullptr;
        if (!ok(cudaMalloc(&x, largest * size_of(d)), "cudaMalloc") || !ok(cudaMalloc(&y, largest * size_of(d)), "cudaMalloc"))
            return;
        cudaMemset(x, 0x3c, largest * size_of(d));
        cudaMemset(y, 0x3c, largest * size_of(d));
        cudaDeviceSynchronize();
        for (int k : {10, 12, 14, 16, 18, 20}) {
            const std::size_t n = std::size_t(1) << k;
            const Stats mine = time_arrays(arrays(d, x, y, n, s), reps);
            const Stats blas = cublas_same_pointers(h, d, x, y, n, reps);
            const Stats cub = d == CUDOT_F64 ? cub_dot(static_cast<double *>(x), static_cast<double *>(y), n, s, reps)
                                             : cub_dot(static_cast<float *>(x), static_cast<float *>(y), n, s, reps);
            char detail[200];
            std::snprintf(detail, sizeof detail, "cudot %.2f us, launch+sync %.2f us; cuBLAS %.2f us, CUB %.2f us",
                          mine.median_us, c.launch_us, blas.median_us, cub.median_us);
            report({"A", std::string("device ") + name(d) + " n=2^" + std::to_string(k) + ": cudot / (launch+sync)",
                    mine.median_us / c.launch_us, 1.0, true, detail});
        }
        const std::size_t n = largest;
        const Stats mine = time_arrays(arrays(d, x, y, n, s), quick ? 20 : 100);
        const Stats blas = cublas_same_pointers(h, d, x, y, n, quick ? 20 : 100);
        const Stats cub = d == CUDOT_F64 ? cub_dot(static_cast<double *>(x), static_cast<double *>(y), n, s, 50)
                                         : cub_dot(static_cast<float *>(x), static_cast<float *>(y), n, s, 50);
        const double ceiling_us = 2.0 * n * size_of(d) / (c.d2d_GBps * 1e3);
        char detail[240];
        std::snprintf(detail, sizeof detail, "cudot %.1f us (%.0f GB/s), ceiling %.1f us (%.0f GB/s); cuBLAS %.1f us, CUB %.1f us",
                      mine.median_us, 2.0 * n * size_of(d) / (mine.median_us * 1e3), ceiling_us, c.d2d_GBps,
                      blas.median_us, cub.median_us);
        report({"B", std::string("device ") + name(d) + " n=2^26: device-copy ceiling / cudot", ceiling_us / mine.median_us,
                0.95, false, detail});
        report({"B", std::string("device ") + name(d) + " n=2^26: cudot / fastest peer", mine.median_us /
                std::min(blas.median_us, cub.median_us), 1.0, true, ""});
        cudaFree(x);
        cudaFree(y);
    }
}

void async_rows(const Ceilings &c, cudaStream_t s) {
    const std::size_t n = 4096;
    float *x = nullptr;
    double *results = nullptr;
    if (!ok(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc") || !ok(cudaMalloc(&results, 1000 * sizeof(double)), "cudaMalloc"))
        return;
    cudaMemset(x, 0x3c, n * sizeof(float));
    const cudot_arrays a = arrays(CUDOT_F32, x, x, n, s);
    for (int i = 0; i < 100; ++i) cudot_dot_arrays_async(&a, results);  // warm-up
    cudaStreamSynchronize(s);
    std::vector<double> per_dot;
    for (int round = 0; round < 7; ++round) {
        const double t0 = now_us();
        for (int i = 0; i < 1000; ++i) cudot_dot_arrays_async(&a, results + i);
        cudaStreamSynchronize(s);
        per_dot.push_back((now_us() - t0) / 1000);
    }
    char detail[160];
    std::snprintf(detail, sizeof detail, "launch+sync %.2f us", c.launch_us);
    report({"C", "async f32 n=2^12, 1000 back to back: us per dot", summarize(per_dot).median_us, 3.0, true, detail});

    // The same 1000 dots captured into one graph, replayed: the work of a caller that captures its loop.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    if (!ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "capture")) return;
    for (int i = 0; i < 1000; ++i) cudot_dot_arrays_async(&a, results + i);
    if (!ok(cudaStreamEndCapture(s, &graph), "end capture") || !ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate"))
        return;
    std::vector<double> per_dot_graph;
    for (int round = 0; round < 7; ++round) {
        const double t0 = now_us();
        cudaGraphLaunch(exec, s);
        cudaStreamSynchronize(s);
        per_dot_graph.push_back((now_us() - t0) / 1000);
    }
    report({"C", "async f32 n=2^12, 1000 dots captured in a graph, replayed: us per dot",
            summarize(per_dot_graph).median_us, 3.0, true, ""});
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaFree(x);
    cudaFree(results);
}

// A context of n elements of dtype with its buffers filled like the arrays (0x3c bytes).
struct Context {
    cudot_ctx *ctx = nullptr;
    void *x = nullptr, *y = nullptr;
    Context(std::size_t n, int32_t dtype, int32_t memory) {
        cudot_config cfg = CUDOT_CONFIG_INIT;
        cfg.dtype = dtype;
        cfg.memory = memory;
        if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) return;
        cudot_get_inputs(ctx, &x, &y);
        std::memset(x, 0x3c, n * size_of(dtype));
        std::memset(y, 0x3c, n * size_of(dtype));
    }
    ~Context() { cudot_deinit(ctx); }
    Stats time(int reps, const std::function<void(int)> &prepare = nullptr) {
        return time_calls(10, reps, prepare, [&] {
            double r;
            return cudot_dot(ctx, &r) == CUDOT_OK;
        });
    }
};

// Host bytes on a 4096-byte boundary, filled like the arrays (0x3c).
struct AlignedBytes {
    unsigned char *data;
    explicit AlignedBytes(std::size_t bytes)
        : data(static_cast<unsigned char *>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096))) {
        std::memset(data, 0x3c, bytes);
    }
    ~AlignedBytes() { std::free(data); }
};

// Rewrites every cache line of the two arrays (the "fresh" data of a caller that produces it each time).
void touch(void *x, void *y, std::size_t bytes, int round) {
    unsigned char *px = static_cast<unsigned char *>(x), *py = static_cast<unsigned char *>(y);
    for (std::size_t i = 0; i < bytes; i += 64) {
        px[i] = static_cast<unsigned char>(0x3c + (round & 1));
        py[i] = static_cast<unsigned char>(0x3c + (round & 1));
    }
}

void host_rows(const Ceilings &c, bool quick) {
    for (int32_t d : {CUDOT_F32, CUDOT_F64}) {
        for (int k : {10, 12, 14, 16}) {
            const std::size_t n = std::size_t(1) << k;
            Context host(n, d, CUDOT_MEMORY_HOST);
            // Aligned like the context's buffers, so the rows compare the two calls, not two alignments
            // (the AVX-512 loop reads misaligned arrays more slowly, whoever calls it).
            AlignedBytes x(n * size_of(d)), y(n * size_of(d));
            // Timed in turn, call by call: timed one block after the other, the two would drift apart with
            // the machine, and their ratio would measure the drift rather than the calls.
            const cudot_arrays a = arrays(d, x.data, y.data, n, nullptr);
            std::vector<Contender> both = {{nullptr, [&] {
                                                double r;
                                                return cudot_dot(host.ctx, &r) == CUDOT_OK;
                                            }},
                                           {nullptr, [&] {
                                                double r;
                                                return cudot_dot_arrays(&a, &r) == CUDOT_OK;
                                            }}};
            time_interleaved(20, quick ? 500 : 5000, both);
            if (!both[0].ok || !both[1].ok) std::printf("a HOST dot failed: %s\n", cudot_last_error(nullptr));
            const Stats base = summarize(both[0].samples), mine = summarize(both[1].samples);
            char detail[120];
            std::snprintf(detail, sizeof detail, "arrays %.3f us, HOST context %.3f us", mine.median_us, base.median_us);
            report({"E", std::string("host ") + name(d) + " n=2^" + std::to_string(k) + ": arrays / HOST context",
                    mine.median_us / base.median_us, 1.1, true, detail});
        }
        for (int k : {24, 26}) {
            const std::size_t n = std::size_t(1) << k, bytes = n * size_of(d);
            Context automatic(n, d, CUDOT_MEMORY_AUTO);
            const Stats base = automatic.time(quick ? 10 : 30, [&](int i) { touch(automatic.x, automatic.y, bytes, i); });
            std::vector<unsigned char> x(bytes, 0x3c), y(bytes, 0x3c);
            const cudot_arrays a = arrays(d, x.data(), y.data(), n, nullptr);
            const Stats mine = time_arrays(a, quick ? 10 : 30, [&](int i) { touch(x.data(), y.data(), bytes, i); });
            char detail[200];
            std::snprintf(detail, sizeof detail, "arrays %.0f us (%.0f GB/s), AUTO %.0f us; host read ceiling %.0f GB/s",
                          mine.median_us, 2.0 * bytes / (mine.median_us * 1e3), base.median_us, c.host_read_GBps);
            report({"D", std::string("host unregistered ") + name(d) + " n=2^" + std::to_string(k) +
                             ": AUTO time / arrays time (fresh)", base.median_us / mine.median_us, 0.9, false, detail});
            if (c.h2d_GBps <= 0) {  // no GPU: no bus to measure against
                std::printf("F  host registered %s n=2^%d: not run (no GPU, so no host->device ceiling)\n", name(d), k);
                continue;
            }
            if (cudot_register_host(x.data(), bytes) != CUDOT_OK || cudot_register_host(y.data(), bytes) != CUDOT_OK) {
                std::printf("cudot_register_host failed: %s\n", cudot_last_error(nullptr));
                continue;
            }
            const Stats registered = time_arrays(a, quick ? 10 : 30, [&](int i) { touch(x.data(), y.data(), bytes, i); });
            const double ceiling_us = 2.0 * bytes / (c.h2d_GBps * 1e3);
            std::snprintf(detail, sizeof detail, "registered %.0f us (%.1f GB/s), host->device ceiling %.1f GB/s",
                          registered.median_us, 2.0 * bytes / (registered.median_us * 1e3), c.h2d_GBps);
            report({"F", std::string("host registered ") + name(d) + " n=2^" + std::to_string(k) +
                             ": bus ceiling time / arrays time", ceiling_us / registered.median_us, 0.9, false, detail});
            cudot_unregister_host(x.data());
            cudot_unregister_host(y.data());
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    const char *json = nullptr;
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!std::strcmp(argv[i], "--quick")) quick = true;
    }
    Ceilings c = measure_ceilings(true, quick);
    std::printf("cudot %s; GPU %s; launch+sync %.2f us, device copy %.0f GB/s, host->device %.1f GB/s, host read %.0f GB/s\n",
                cudot_version_string(), c.gpu ? c.gpu_name.c_str() : "none", c.launch_us, c.d2d_GBps, c.h2d_GBps,
                c.host_read_GBps);
    if (c.gpu) {
        cublasHandle_t h;
        cudaStream_t s;
        if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || !ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream"))
            return 1;
        cublasSetStream(h, s);
        device_rows(c, h, s, quick);
        async_rows(c, s);
    }
    host_rows(c, quick);
    remeasure_ceilings(c, "end", quick);
    std::printf("ceilings at the end: launch+sync %.2f us, device copy %.0f GB/s, host->device %.1f GB/s\n", c.launch_us,
                c.d2d_GBps, c.h2d_GBps);
    if (json) {
        FILE *f = std::fopen(json, "w");
        if (!f) return 1;
        std::fprintf(f, "{\"launch_us\": %.3f, \"d2d_GBps\": %.1f, \"h2d_GBps\": %.2f, \"host_read_GBps\": %.1f, \"rows\": [\n",
                     c.launch_us, c.d2d_GBps, c.h2d_GBps, c.host_read_GBps);
        for (std::size_t i = 0; i < rows.size(); ++i)
            std::fprintf(f, "  {\"target\": \"%s\", \"what\": \"%s\", \"value\": %.4f, \"limit\": %.3f, \"met\": %s}%s\n",
                         rows[i].target.c_str(), rows[i].what.c_str(), rows[i].value, rows[i].limit,
                         rows[i].met() ? "true" : "false", i + 1 < rows.size() ? "," : "");
        std::fprintf(f, "]}\n");
        std::fclose(f);
    }
    return 0;
}
