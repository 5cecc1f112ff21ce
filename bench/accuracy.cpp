// accuracy.cpp - cudot-accuracy: relative error against condition number, on the same GenDot inputs,
// for cudot (HOST and, with a GPU, MANAGED), cuBLAS dot, OpenBLAS dot and a naive loop in the input
// precision. Exact references from MPFR. Writes a table and JSON; bench/plot_accuracy.py draws it.
//
//   cudot-accuracy [--json FILE] [--n N]
#include <cblas.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudot.h"
#include "gendot.hpp"

namespace {

struct Sample {
    std::string dtype;
    double asked, condition;
    double err_cudot_host, err_cudot_gpu, err_cublas, err_openblas, err_naive;
};

double cudot_result(int32_t dtype, int32_t memory, const std::vector<double> &x, const std::vector<double> &y, bool *ok) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = dtype;
    cfg.memory = memory;
    cudot_ctx *ctx = nullptr;
    *ok = false;
    if (cudot_init(&ctx, x.size(), &cfg) != CUDOT_OK) return NAN;
    void *px, *py;
    cudot_get_inputs(ctx, &px, &py);
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (dtype == CUDOT_F32) {
            static_cast<float *>(px)[i] = static_cast<float>(x[i]);
            static_cast<float *>(py)[i] = static_cast<float>(y[i]);
        } else {
            static_cast<double *>(px)[i] = x[i];
            static_cast<double *>(py)[i] = y[i];
        }
    }
    double r = NAN;
    *ok = cudot_dot(ctx, &r) == CUDOT_OK;
    cudot_deinit(ctx);
    return r;
}

// One cuBLAS dot of the values converted to T, on device copies.
template <class T, class Dot>
double cublas_typed(cublasHandle_t handle, Dot dot, const std::vector<double> &x, const std::vector<double> &y,
                    bool *ok) {
    const int n = static_cast<int>(x.size());
    std::vector<T> hx(x.begin(), x.end()), hy(y.begin(), y.end());
    T *dx = nullptr, *dy = nullptr, out = 0;
    if (cudaMalloc(&dx, n * sizeof(T)) == cudaSuccess && cudaMalloc(&dy, n * sizeof(T)) == cudaSuccess &&
        cudaMemcpy(dx, hx.data(), n * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(dy, hy.data(), n * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess)
        *ok = dot(handle, n, dx, 1, dy, 1, &out) == CUBLAS_STATUS_SUCCESS;
    cudaFree(dx);
    cudaFree(dy);
    return *ok ? static_cast<double>(out) : NAN;
}

double cublas_result(bool f32, const std::vector<double> &x, const std::vector<double> &y, bool *ok) {
    static cublasHandle_t handle = nullptr;
    *ok = false;
    if (!handle && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return NAN;
    return f32 ? cublas_typed<float>(handle, cublasSdot, x, y, ok) : cublas_typed<double>(handle, cublasDdot, x, y, ok);
}

double relative(const std::vector<double> &x, const std::vector<double> &y, double exact, double r) {
    if (std::isnan(r)) return NAN;
    return test::exact_error(x.data(), y.data(), x.size(), r) / std::fabs(exact);
}

}  // namespace

int main(int argc, char **argv) {
    std::string json = "cudot-accuracy.json";
    std::size_t n = 10000;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json" && i + 1 < argc) json = argv[++i];
        else if (a == "--n" && i + 1 < argc) n = std::strtoull(argv[++i], nullptr, 10);
        else {
            std::fprintf(stderr, "usage: cudot-accuracy [--json FILE] [--n N]\n");
            return 2;
        }
    }
    int devices = 0;
    const bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    std::vector<Sample> samples;
    std::vector<double> x, y;
    for (bool f32 : {true, false})
        for (int e = 0; e <= 40; e += 4)
            for (std::uint64_t seed = 1; seed <= 3; ++seed) {
                const double asked = std::pow(10.0, e);
                test::gendot(n, asked, f32, seed * 1000 + e, x, y);
                const test::ExactDot exact = test::exact_dot(x.data(), y.data(), n);
                Sample s{f32 ? "f32" : "f64", asked, exact.condition, NAN, NAN, NAN, NAN, NAN};
                bool ok = false;
                const int32_t dtype = f32 ? CUDOT_F32 : CUDOT_F64;
                s.err_cudot_host = relative(x, y, exact.value, cudot_result(dtype, CUDOT_MEMORY_HOST, x, y, &ok));
                if (gpu) {
                    s.err_cudot_gpu = relative(x, y, exact.value, cudot_result(dtype, CUDOT_MEMORY_MANAGED, x, y, &ok));
                    double r = cublas_result(f32, x, y, &ok);
                    if (ok) s.err_cublas = relative(x, y, exact.value, r);
                }
                if (f32) {
                    std::vector<float> fx(x.begin(), x.end()), fy(y.begin(), y.end());
                    s.err_openblas = relative(x, y, exact.value, cblas_sdot(static_cast<int>(n), fx.data(), 1, fy.data(), 1));
                    float acc = 0;
                    for (std::size_t i = 0; i < n; ++i) acc += fx[i] * fy[i];
                    s.err_naive = relative(x, y, exact.value, acc);
                } else {
                    s.err_openblas = relative(x, y, exact.value, cblas_ddot(static_cast<int>(n), x.data(), 1, y.data(), 1));
                    double acc = 0;
                    for (std::size_t i = 0; i < n; ++i) acc += x[i] * y[i];
                    s.err_naive = relative(x, y, exact.value, acc);
                }
                samples.push_back(s);
            }
    std::printf("%-4s %10s %12s %12s %12s %12s %12s %12s\n", "type", "asked", "cond", "cudot-host", "cudot-gpu",
                "cublas", "openblas", "naive");
    for (const Sample &s : samples)
        std::printf("%-4s %10.0e %12.3e %12.3e %12.3e %12.3e %12.3e %12.3e\n", s.dtype.c_str(), s.asked, s.condition,
                    s.err_cudot_host, s.err_cudot_gpu, s.err_cublas, s.err_openblas, s.err_naive);
    FILE *f = std::fopen(json.c_str(), "w");
    if (!f) return 1;
    auto num = [](double v) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.6e", v);
        return std::isfinite(v) ? std::string(buf) : std::string("null");
    };
    std::fprintf(f, "{\"n\": %zu, \"gpu\": %s, \"samples\": [\n", n, gpu ? "true" : "false");
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const Sample &s = samples[i];
        std::fprintf(f,
                     "  {\"dtype\": \"%s\", \"asked\": %g, \"condition\": %s, \"cudot_host\": %s, \"cudot_gpu\": %s, "
                     "\"cublas\": %s, \"openblas\": %s, \"naive\": %s}%s\n",
                     s.dtype.c_str(), s.asked, num(s.condition).c_str(), num(s.err_cudot_host).c_str(), num(s.err_cudot_gpu).c_str(),
                     num(s.err_cublas).c_str(), num(s.err_openblas).c_str(), num(s.err_naive).c_str(),
                     i + 1 < samples.size() ? "," : "");
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
    std::printf("wrote %s\n", json.c_str());
    return 0;
}
