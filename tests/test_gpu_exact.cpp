// test_gpu_exact.cpp - CUDOT_MODE_EXACT on arrays a GPU holds (exact_dot_kernel): every result must be
// the bits of the CPU's exact mode on the same values, itself MPFR's exact sum rounded once
// (test_exact.cpp), whatever the pair, stride, alignment, memory, grid or order of the elements; IEEE's
// special values; the asynchronous form, a CUDA graph, and a stream's next dots after an exact one.
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gendot.hpp"
#include "knobs.hpp"
#include "own_arrays.hpp"
#include "reference.hpp"
#include "testing.hpp"

using test::bits;
using test::exact_request;
using test::wide_values;

namespace {

// Bytes in GPU memory (device or managed), `offset` bytes into the allocation.
struct GpuBytes {
    void *base = nullptr;
    unsigned char *at = nullptr;
    GpuBytes(const void *host, std::size_t bytes, std::size_t offset = 0, bool managed = false) {
        const std::size_t total = bytes + offset + 16;
        REQUIRE((managed ? cudaMallocManaged(&base, total) : cudaMalloc(&base, total)) == cudaSuccess);
        at = static_cast<unsigned char *>(base) + offset;
        REQUIRE(cudaMemcpy(at, host, bytes, cudaMemcpyDefault) == cudaSuccess);
    }
    ~GpuBytes() { cudaFree(base); }
    GpuBytes(const GpuBytes &) = delete;
    GpuBytes &operator=(const GpuBytes &) = delete;
};


double dot_of(const cudot_arrays &a) {
    double r = -1;
    const cudot_status s = cudot_dot_arrays(&a, &r);
    INFO(cudot_last_error(nullptr));
    REQUIRE(s == CUDOT_OK);
    return r;
}

// The exact dot of n elements of each type from host bytes: on the CPU (host arrays), and on the GPU
// from device memory dense, misaligned by one element (read one element at a time) and with stride 3.
struct Both {
    double cpu, dense, misaligned, strided;
};
Both exact_both(int32_t xd, const std::vector<unsigned char> &x, int32_t yd, const std::vector<unsigned char> &y,
                std::size_t n) {
    Both b;
    b.cpu = dot_of(exact_request(n, xd, x.data(), 1, yd, y.data(), 1));
    const std::size_t sx = test::dtype_size(xd), sy = test::dtype_size(yd);
    {
        GpuBytes gx(x.data(), n * sx), gy(y.data(), n * sy);
        b.dense = dot_of(exact_request(n, xd, gx.at, 1, yd, gy.at, 1));
    }
    {
        GpuBytes gx(x.data(), n * sx, sx), gy(y.data(), n * sy, 16 + sy);
        b.misaligned = dot_of(exact_request(n, xd, gx.at, 1, yd, gy.at, 1));
    }
    std::vector<unsigned char> x3(3 * n * sx), y3(3 * n * sy);
    for (std::size_t i = 0; i < n; ++i) {
        std::memcpy(&x3[3 * i * sx], &x[i * sx], sx);
        std::memcpy(&y3[3 * i * sy], &y[i * sy], sy);
    }
    GpuBytes gx(x3.data(), x3.size()), gy(y3.data(), y3.size());
    b.strided = dot_of(exact_request(n, xd, gx.at, 3, yd, gy.at, 3));
    return b;
}

std::vector<unsigned char> bytes_of(const std::vector<double> &v) {
    std::vector<unsigned char> b(v.size() * 8);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

void check_f64(const std::vector<double> &x, const std::vector<double> &y, bool against_mpfr = true) {
    const Both b = exact_both(CUDOT_F64, bytes_of(x), CUDOT_F64, bytes_of(y), x.size());
    CHECK(bits(b.dense) == bits(b.cpu));
    CHECK(bits(b.misaligned) == bits(b.cpu));
    CHECK(bits(b.strided) == bits(b.cpu));
    if (against_mpfr) CHECK(bits(b.cpu) == bits(test::exact_dot(x.data(), y.data(), x.size()).value));
}

double exact_on_gpu(const std::vector<double> &x, const std::vector<double> &y) {
    GpuBytes gx(x.data(), x.size() * 8), gy(y.data(), y.size() * 8);
    return dot_of(exact_request(x.size(), CUDOT_F64, gx.at, 1, CUDOT_F64, gy.at, 1));
}


const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("gpu exact: every pair, dense, misaligned and strided, gives the CPU's exact bits", "[gpu][exact]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(5000), std::size_t(100003)}) {
                const std::vector<unsigned char> x = test::random_values(xd, n, 10 + xd + n),
                                                 y = test::random_values(yd, n, 20 + yd + n);
                INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << ", n " << n);
                const Both b = exact_both(xd, x, yd, y, n);
                CHECK(bits(b.dense) == bits(b.cpu));
                CHECK(bits(b.misaligned) == bits(b.cpu));
                CHECK(bits(b.strided) == bits(b.cpu));
            }
}

TEST_CASE("gpu exact: sets made to break it equal MPFR's exact sum rounded once", "[gpu][exact]") {
    SECTION("ill-conditioned dots, condition numbers up to 1e300") {
        for (double condition : {1e3, 1e16, 1e32, 1e100, 1e200, 1e300})
            for (bool f32 : {false, true}) {
                if (f32 && condition > 1e32) continue;
                std::vector<double> x, y;
                test::gendot(20000, condition, f32, 78, x, y);
                INFO("condition " << condition << (f32 ? " f32" : " f64"));
                check_f64(x, y);
            }
    }
    SECTION("magnitudes from 2^-1074 to 2^1023: subnormal, huge and overflowing products, cancellation") {
        for (std::uint64_t seed = 0; seed < 24; ++seed) {
            std::vector<double> x = wide_values(3000, -1074, 1023, 500 + seed), y = wide_values(3000, -1074, 1023, 600 + seed);
            if (seed % 3 == 1)
                for (std::size_t i = 0; i + 1 < x.size(); i += 2) {
                    x[i + 1] = -x[i];
                    y[i + 1] = y[i] * (seed % 2 ? 1.0 : 1.0 + std::ldexp(1.0, -52));
                }
            INFO("seed " << seed);
            check_f64(x, y);
        }
    }
    SECTION("results in the subnormal range, and sums whose running values overflow") {
        for (std::uint64_t seed = 0; seed < 12; ++seed) {
            std::vector<double> x = wide_values(500, -560, -520, 700 + seed), y = wide_values(500, -560, -520, 800 + seed);
            INFO("seed " << seed);
            check_f64(x, y);
        }
        std::vector<double> x(3000, 1e300), y(3000, 1e10);
        for (std::size_t i = 2; i < x.size(); i += 3) x[i] = -1e300;
        check_f64(x, y);  // 1000 * 1e310: +inf
        x.push_back(-1e300);
        y.push_back(1e13);
        check_f64(x, y, false);  // ... less 1e313: exactly 0
        CHECK(bits(exact_on_gpu(x, y)) == bits(0.0));
    }
}

TEST_CASE("gpu exact: exact zeros among the factors, beside products that underflow, give the exact sum",
          "[gpu][exact]") {
    // A zero factor adds nothing and takes no slow road; the products of 2^-1075 must still count.
    const double tiny = std::numeric_limits<double>::denorm_min();
    for (std::size_t n : {std::size_t(4), std::size_t(5000), (std::size_t(1) << 22) + 2})
        for (std::uint64_t seed = 0; seed < 2; ++seed) {
            std::vector<double> x, y;
            test::zeros_and_underflow(n, 90 + seed, x, y);
            INFO("n " << n << ", seed " << seed);
            check_f64(x, y, n <= 5000);
            CHECK(bits(exact_on_gpu(x, y)) == bits(tiny));
            std::vector<float> yf(y.begin(), y.end());
            std::vector<unsigned char> yb(n * 4);
            std::memcpy(yb.data(), yf.data(), yb.size());
            const Both b = exact_both(CUDOT_F64, bytes_of(x), CUDOT_F32, yb, n);
            CHECK(bits(b.cpu) == bits(tiny));
            CHECK(bits(b.dense) == bits(tiny));
            CHECK(bits(b.misaligned) == bits(tiny));
            CHECK(bits(b.strided) == bits(tiny));
            x[n / 2] = kInf;  // a zero times an infinity among them: NaN
            y[n / 2] = 0.0;
            CHECK(std::isnan(exact_on_gpu(x, y)));
        }
}

TEST_CASE("gpu exact: known answers and IEEE's special values", "[gpu][exact]") {
    std::vector<double> x, y;
    for (int k = 0; k < 100; ++k) x.insert(x.end(), {1e16, 1.0, -1e16}), y.insert(y.end(), {1.0, 1.0, 1.0});
    x.push_back(3.0), y.push_back(1.0);
    CHECK(exact_on_gpu(x, y) == 103.0);
    CHECK(exact_on_gpu({1e200, -1e200, 1.0}, {1e200, 1e200, 1.0}) == 1.0);
    CHECK(exact_on_gpu({1e308, 1e308}, {10.0, -10.0}) == 0.0);
    CHECK(exact_on_gpu({1e300, 1e300, -1e300}, {1e10, 1e10, 1e10}) == kInf);
    CHECK(exact_on_gpu({kInf, 1e308, 1e308}, {1.0, 10.0, -10.0}) == kInf);
    CHECK(exact_on_gpu({-kInf, 5.0}, {2.0, 1.0}) == -kInf);
    CHECK(bits(exact_on_gpu({kInf, -kInf}, {1.0, 1.0})) == bits(kNaN));
    CHECK(bits(exact_on_gpu({kInf, 2.0}, {0.0, 1.0})) == bits(kNaN));
    CHECK(bits(exact_on_gpu({1.0, kNaN}, {1.0, 1.0})) == bits(kNaN));
    CHECK(bits(exact_on_gpu({-1.0, 1.0}, {1.0, 1.0})) == bits(0.0));  // an exact zero is +0.0
    CHECK(exact_on_gpu({0x1p-1074, 0x1p-1074}, {0.5, 0.5}) == 0x1p-1074);  // ties to even: 2^-1074, not 0
    CHECK(exact_on_gpu({0x1p-1074, 0x1p-1074, 0x1p-1074}, {0.5, 0.5, 0.5}) == 0x1p-1073);
    // The same many times over: with more blocks than one, every block's digits meet in the workspace.
    std::vector<double> big_x, big_y;
    for (int k = 0; k < 20000; ++k) big_x.insert(big_x.end(), x.begin(), x.end()), big_y.insert(big_y.end(), y.begin(), y.end());
    CHECK(exact_on_gpu(big_x, big_y) == 103.0 * 20000);
    const double kept = big_x[12345];
    big_x[12345] = kNaN;
    CHECK(bits(exact_on_gpu(big_x, big_y)) == bits(kNaN));
    big_x[12345] = kept;  // the workspace held a NaN flag before: this dot must not see it
    CHECK(exact_on_gpu(big_x, big_y) == 103.0 * 20000);
}

TEST_CASE("gpu exact: the order of the elements and the grid change nothing", "[gpu][exact]") {
    const std::size_t n = (std::size_t(1) << 22) + 3;
    std::vector<double> x = wide_values(n, -300, 300, 11), y = wide_values(n, -300, 300, 12);
    const double want = dot_of(exact_request(n, CUDOT_F64, x.data(), 1, CUDOT_F64, y.data(), 1));
    CHECK(bits(exact_on_gpu(x, y)) == bits(want));
    std::mt19937_64 rng(13);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    for (int round = 0; round < 3; ++round) {
        std::shuffle(order.begin(), order.end(), rng);
        std::vector<double> xs(n), ys(n);
        for (std::size_t i = 0; i < n; ++i) xs[i] = x[order[i]], ys[i] = y[order[i]];
        CHECK(bits(exact_on_gpu(xs, ys)) == bits(want));
    }
    // Prefixes of every length up to a few blocks' worth, and f32 at 2^24 elements.
    for (std::size_t m : {1u, 2u, 3u, 4u, 5u, 255u, 256u, 257u, 4095u, 4096u, 4097u, 65537u, 1000001u}) {
        std::vector<double> xm(x.begin(), x.begin() + m), ym(y.begin(), y.begin() + m);
        INFO("n " << m);
        CHECK(bits(exact_on_gpu(xm, ym)) ==
              bits(dot_of(exact_request(m, CUDOT_F64, xm.data(), 1, CUDOT_F64, ym.data(), 1))));
    }
    const std::size_t n32 = std::size_t(1) << 24;
    const std::vector<unsigned char> x32 = test::random_values(CUDOT_F32, n32, 14), y32 = test::random_values(CUDOT_F32, n32, 15);
    GpuBytes gx(x32.data(), x32.size()), gy(y32.data(), y32.size());
    CHECK(bits(dot_of(exact_request(n32, CUDOT_F32, gx.at, 1, CUDOT_F32, gy.at, 1))) ==
          bits(dot_of(exact_request(n32, CUDOT_F32, x32.data(), 1, CUDOT_F32, y32.data(), 1))));
}

TEST_CASE("gpu exact: managed memory, the asynchronous form, a CUDA graph, and the stream's next dots",
          "[gpu][exact][async][graph]") {
    const std::size_t n = 300001;
    std::vector<double> x = wide_values(n, -200, 200, 21), y = wide_values(n, -200, 200, 22);
    const double want = dot_of(exact_request(n, CUDOT_F64, x.data(), 1, CUDOT_F64, y.data(), 1));
    GpuBytes mx(x.data(), n * 8, 0, true), my(y.data(), n * 8, 0, true);
    CHECK(bits(dot_of(exact_request(n, CUDOT_F64, mx.at, 1, CUDOT_F64, my.at, 1))) == bits(want));

    GpuBytes gx(x.data(), n * 8), gy(y.data(), n * 8);
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    double *d = nullptr;
    REQUIRE(cudaMalloc(&d, 4 * sizeof(double)) == cudaSuccess);
    cudot_arrays a = exact_request(n, CUDOT_F64, gx.at, 1, CUDOT_F64, gy.at, 1);
    a.stream = s;
    cudot_arrays canonical = a;
    canonical.mode = CUDOT_MODE_CANONICAL;
    const double canonical_want = dot_of(canonical);
    // Exact, canonical, exact, exact in stream order: each kernel leaves the workspace's head as it found it.
    REQUIRE(cudot_dot_arrays_async(&a, d) == CUDOT_OK);
    REQUIRE(cudot_dot_arrays_async(&canonical, d + 1) == CUDOT_OK);
    REQUIRE(cudot_dot_arrays_async(&a, d + 2) == CUDOT_OK);
    REQUIRE(cudot_dot_arrays_async(&a, d + 3) == CUDOT_OK);
    double got[4];
    REQUIRE(cudaMemcpyAsync(got, d, sizeof got, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(bits(got[0]) == bits(want));
    CHECK(bits(got[1]) == bits(canonical_want));
    CHECK(bits(got[2]) == bits(want));
    CHECK(bits(got[3]) == bits(want));
    CHECK(bits(dot_of(a)) == bits(want));

    // Captured once, replayed with new values in between: each replay reads the values of its time.
    REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    const cudot_status captured = cudot_dot_arrays_async(&a, d);
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
    INFO(cudot_last_error(nullptr));
    REQUIRE(captured == CUDOT_OK);
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    for (int replay = 0; replay < 3; ++replay) {
        std::vector<double> xr = wide_values(n, -200, 200, 30 + replay);
        REQUIRE(cudaMemcpy(gx.at, xr.data(), n * 8, cudaMemcpyHostToDevice) == cudaSuccess);
        REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
        double r = 0;
        REQUIRE(cudaMemcpyAsync(&r, d, sizeof r, cudaMemcpyDeviceToHost, s) == cudaSuccess);
        REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
        CHECK(bits(r) == bits(dot_of(exact_request(n, CUDOT_F64, xr.data(), 1, CUDOT_F64, y.data(), 1))));
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaFree(d);
    cudaStreamDestroy(s);
}

TEST_CASE("gpu exact: 2^31 products through broadcast operands", "[gpu][exact]") {
    const float x = 1.0f + std::ldexp(1.0f, -23), y = 3.0f;
    GpuBytes gx(&x, sizeof x), gy(&y, sizeof y);
    const std::size_t n = std::size_t(1) << 31;
    CHECK(dot_of(exact_request(n, CUDOT_F32, gx.at, 0, CUDOT_F32, gy.at, 0)) == 3.0 * (std::ldexp(1.0, 31) + 256.0));
}

namespace {

// Values of one type in host bytes: wide doubles for F64, floats of a wide range for F32, small integers
// (as the type's bits) otherwise.
std::vector<unsigned char> values_of(int32_t dtype, std::size_t n, std::uint64_t seed) {
    std::vector<unsigned char> b(n * test::dtype_size(dtype));
    std::mt19937_64 rng(seed);
    if (dtype == CUDOT_F64) {
        const std::vector<double> v = wide_values(n, -400, 400, seed);
        std::memcpy(b.data(), v.data(), b.size());
    } else if (dtype == CUDOT_F32) {
        for (std::size_t i = 0; i < n; ++i) {
            const float f = std::ldexp(static_cast<float>(rng() % 1000000) - 500000.0f, static_cast<int>(rng() % 120) - 60);
            std::memcpy(&b[4 * i], &f, 4);
        }
    } else if (dtype == CUDOT_F16) {
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint16_t h = static_cast<std::uint16_t>(rng() & 0xfbff);  // finite halves of both signs
            std::memcpy(&b[2 * i], &h, 2);
        }
    } else {
        for (unsigned char &c : b) c = static_cast<unsigned char>(rng());
    }
    return b;
}

// The bits cudot_dot_arrays gives in the exact mode for host arrays (the CPU).
double cpu_exact(int32_t xd, const unsigned char *x, int32_t yd, const unsigned char *y, std::size_t n) {
    return dot_of(exact_request(n, xd, x, 1, yd, y, 1));
}

}  // namespace

TEST_CASE("gpu exact: contexts of every GPU strategy give the CPU's exact bits, their partials join to them",
          "[gpu][exact]") {
    struct Pair {
        int32_t x, y;
    };
    const Pair pairs[] = {{CUDOT_F32, CUDOT_F32}, {CUDOT_F64, CUDOT_F64}, {CUDOT_F16, CUDOT_F64}, {CUDOT_I8, CUDOT_F32}};
    const std::size_t sizes[] = {1, 5000, (std::size_t(1) << 20) + 3};
    struct Way {
        int32_t memory;
        bool every_gpu;     // CUDOT_DEVICE_ALL over two "GPUs" on device 0: the several-GPU split
        double auto_share;  // AUTO: the GPUs' share of the tiles (negative: adapt)
    };
    const Way ways[] = {{CUDOT_MEMORY_PINNED, false, -1},  {CUDOT_MEMORY_MAPPED, false, -1},
                        {CUDOT_MEMORY_MANAGED, false, -1}, {CUDOT_MEMORY_AUTO, false, -1},
                        {CUDOT_MEMORY_AUTO, false, 0.5},   {CUDOT_MEMORY_AUTO, false, 1.0},
                        {CUDOT_MEMORY_PINNED, true, -1},   {CUDOT_MEMORY_MAPPED, true, -1},
                        {CUDOT_MEMORY_MANAGED, true, -1}};
    for (const Pair &pair : pairs)
        for (std::size_t n : sizes) {
            const std::vector<unsigned char> x = values_of(pair.x, n, 3 * n + pair.x);
            const std::vector<unsigned char> y = values_of(pair.y, n, 5 * n + pair.y);
            const double want = cpu_exact(pair.x, x.data(), pair.y, y.data(), n);
            const double want_half = cpu_exact(pair.x, x.data(), pair.y, y.data(), n / 2 + 1);
            for (const Way &way : ways) {
                CAPTURE(pair.x, pair.y, n, way.memory, way.every_gpu, way.auto_share);
                test::ForcedDevices two_gpus(way.every_gpu ? std::vector<int>{0, 0} : std::vector<int>{});
                cudot_config cfg = CUDOT_CONFIG_INIT;
                cfg.dtype = pair.x;
                cfg.y_dtype = pair.y;
                cfg.memory = way.memory;
                cfg.device = way.every_gpu ? CUDOT_DEVICE_ALL : 0;
                cfg.mode = CUDOT_MODE_EXACT;
                cudot_ctx *ctx = nullptr;
                INFO(cudot_last_error(nullptr));
                REQUIRE(cudot_init(&ctx, n, &cfg) == CUDOT_OK);
                if (way.auto_share >= 0) cudot::testing::set_hybrid_share(ctx, way.auto_share);
                void *cx = nullptr, *cy = nullptr;
                REQUIRE(cudot_get_inputs(ctx, &cx, &cy) == CUDOT_OK);
                std::memcpy(cx, x.data(), x.size());
                std::memcpy(cy, y.data(), y.size());
                INFO(cudot_last_error(ctx));
                for (int again = 0; again < 3; ++again) {  // AUTO learns its roads; MANAGED moves its pages
                    double r = -1;
                    REQUIRE(cudot_dot(ctx, &r) == CUDOT_OK);
                    CHECK(bits(r) == bits(want));
                }
                double half = -1;
                REQUIRE(cudot_dot_n(ctx, n / 2 + 1, &half) == CUDOT_OK);
                CHECK(bits(half) == bits(want_half));
                // Exact partials of the context at a start no vector load likes, joined with the CPU's
                // partial of the rest.
                if (n > 1) {
                    const std::size_t cut = n / 3 + 1;
                    std::vector<unsigned char> parts(2 * CUDOT_EXACT_PARTIAL_BYTES);
                    REQUIRE(cudot_tile_partials(ctx, cut, n - cut, parts.data() + CUDOT_EXACT_PARTIAL_BYTES) == CUDOT_OK);
                    const cudot_arrays head = exact_request(cut, pair.x, x.data(), 1, pair.y, y.data(), 1);
                    REQUIRE(cudot_tile_partials_arrays(&head, parts.data()) == CUDOT_OK);
                    double joined = -1;
                    REQUIRE(cudot_join_exact_partials(parts.data(), 2, &joined) == CUDOT_OK);
                    CHECK(bits(joined) == bits(want));
                }
                CHECK(cudot_deinit(ctx) == CUDOT_OK);
            }
        }
}

TEST_CASE("gpu exact: partials of device arrays join to the CPU's bits", "[gpu][exact]") {
    std::mt19937_64 rng(99);
    for (int32_t xd : {CUDOT_F32, CUDOT_F64})
        for (std::size_t n : {std::size_t(3), std::size_t(70001), std::size_t(1) << 21}) {
            const std::vector<unsigned char> x = values_of(xd, n, rng()), y = values_of(xd, n, rng());
            const double want = cpu_exact(xd, x.data(), xd, y.data(), n);
            GpuBytes gx(x.data(), x.size()), gy(y.data(), y.size());
            std::vector<std::size_t> cuts = {0, n};
            for (int k = 0; k < 5; ++k) cuts.push_back(rng() % (n + 1));
            std::sort(cuts.begin(), cuts.end());
            std::vector<unsigned char> parts;
            for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
                const std::size_t at = cuts[i], count = cuts[i + 1] - at;
                const std::size_t size = test::dtype_size(xd);
                const cudot_arrays a = exact_request(count, xd, gx.at + at * size, 1, xd, gy.at + at * size, 1);
                std::vector<unsigned char> p(CUDOT_EXACT_PARTIAL_BYTES);
                INFO(cudot_last_error(nullptr));
                REQUIRE(cudot_tile_partials_arrays(&a, p.data()) == CUDOT_OK);
                parts.insert(parts.begin(), p.begin(), p.end());  // joined in reverse order
            }
            double joined = -1;
            REQUIRE(cudot_join_exact_partials(parts.data(), cuts.size() - 1, &joined) == CUDOT_OK);
            CAPTURE(xd, n);
            CHECK(bits(joined) == bits(want));
            // The stream's next exact dot, after a partial, is still right (the workspace's head is clean).
            CHECK(bits(dot_of(exact_request(n, xd, gx.at, 1, xd, gy.at, 1))) == bits(want));
        }
}
