// test_gpu_own_arrays.cpp - cudot_dot_arrays and its kin on GPU memory: device, managed, page-locked and
// registered operands, every pair, stride and alignment, the caller's streams (ordering, other streams'
// writes, per-thread streams, several threads), the asynchronous form and CUDA graphs, and bad requests.
// Every result must be the bits of a HOST context holding the same values. Without a usable GPU the
// program exits with 77 (CTest: "skipped").
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "current_device.hpp"
#include "isolation.hpp"
#include "knobs.hpp"
#include "own_arrays.hpp"
#include "reference.hpp"
#include "testing.hpp"

using test::bits;

namespace {

void repeat_first(std::vector<unsigned char> &v, std::size_t size, std::size_t n) {
    for (std::size_t i = 1; i < n; ++i) std::memcpy(&v[i * size], v.data(), size);
}

// One operand in GPU-visible memory of a given kind, laid out as asked.
enum class Kind { Device, Managed, Pinned };
struct GpuOperand {
    void *base = nullptr;
    const unsigned char *element0 = nullptr;
    Kind kind;
    GpuOperand(Kind k, const void *values, std::size_t size, std::size_t n, test::Layout layout) : kind(k) {
        const test::Placement p = test::place(size, n, layout);
        std::vector<unsigned char> host(p.bytes + 1);
        test::scatter(values, size, n, layout, host.data());
        const std::size_t bytes = p.bytes + 1;
        if (k == Kind::Device) REQUIRE(cudaMalloc(&base, bytes) == cudaSuccess);
        if (k == Kind::Managed) REQUIRE(cudaMallocManaged(&base, bytes) == cudaSuccess);
        if (k == Kind::Pinned) REQUIRE(cudaMallocHost(&base, bytes) == cudaSuccess);
        REQUIRE(cudaMemcpy(base, host.data(), bytes, cudaMemcpyDefault) == cudaSuccess);
        element0 = static_cast<unsigned char *>(base) + p.element0;
    }
    ~GpuOperand() {
        if (kind == Kind::Pinned) cudaFreeHost(base);
        else cudaFree(base);
    }
    GpuOperand(const GpuOperand &) = delete;
    GpuOperand &operator=(const GpuOperand &) = delete;
};

double dot_arrays(const cudot_arrays &a) {
    double r = -1;
    const cudot_status s = cudot_dot_arrays(&a, &r);
    INFO(cudot_last_error(nullptr));
    REQUIRE(s == CUDOT_OK);
    return r;
}

// The asynchronous form into a device double, read back.
double dot_arrays_async(const cudot_arrays &a) {
    double *d = nullptr;
    REQUIRE(cudaMalloc(&d, sizeof(double)) == cudaSuccess);
    const cudot_status s = cudot_dot_arrays_async(&a, d);
    INFO(cudot_last_error(nullptr));
    REQUIRE(s == CUDOT_OK);
    double r = -1;
    REQUIRE(cudaMemcpy(&r, d, sizeof r, cudaMemcpyDeviceToHost) == cudaSuccess);  // after the stream's work
    cudaFree(d);
    return r;
}

void check_kinds(Kind kx, Kind ky, int32_t xd, int32_t yd, std::size_t n, test::Layout lx, test::Layout ly,
                 std::uint64_t seed, bool async = false) {
    const std::size_t sx = test::dtype_size(xd), sy = test::dtype_size(yd);
    std::vector<unsigned char> xv = test::random_values(xd, n, seed), yv = test::random_values(yd, n, seed + 1);
    if (lx.stride == 0) repeat_first(xv, sx, n);
    if (ly.stride == 0) repeat_first(yv, sy, n);
    const double want = test::host_context_dot(xd, yd, xv.data(), yv.data(), n);
    GpuOperand x(kx, xv.data(), sx, n, lx), y(ky, yv.data(), sy, n, ly);
    INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n << " kinds " << int(kx) << "," << int(ky)
                              << " strides " << lx.stride << "," << ly.stride << " offsets " << lx.offset << ","
                              << ly.offset << (async ? " async" : ""));
    const cudot_arrays a = test::arrays_of(n, xd, x.element0, lx.stride, yd, y.element0, ly.stride);
    const double got = async ? dot_arrays_async(a) : dot_arrays(a);
    CHECK(bits(got) == bits(want));
}

}  // namespace

TEST_CASE("gpu own arrays: device memory, every pair, contiguous and strided", "[gpu][own]") {
    const std::vector<test::Layout> layouts = {{1, 0}, {-1, 0}, {0, 0}, {3, 0}, {1, 4}, {-2, 1}};
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(8193), std::size_t(100000)}) {
                check_kinds(Kind::Device, Kind::Device, xd, yd, n, {1, 0}, {1, 0}, n + 10 * xd + yd);
                const test::Layout &l = layouts[(xd * 6 + yd + n) % layouts.size()];
                check_kinds(Kind::Device, Kind::Device, xd, yd, n, l, {1, 0}, n + xd);
                check_kinds(Kind::Device, Kind::Device, xd, yd, n, {1, 0}, l, n + yd);
            }
    for (const test::Layout &l : layouts)
        for (int32_t d : {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_I8})
            check_kinds(Kind::Device, Kind::Device, d, d, 3 * 8192 + 5, l, l, 99);
}

TEST_CASE("gpu own arrays: managed, page-locked and mixed operands", "[gpu][own]") {
    for (int32_t d : {CUDOT_F32, CUDOT_F64, CUDOT_BF16, CUDOT_U8})
        for (std::size_t n : {std::size_t(1000), std::size_t(1) << 20, (std::size_t(1) << 21) + 3}) {
            check_kinds(Kind::Managed, Kind::Managed, d, d, n, {1, 0}, {1, 0}, n);
            check_kinds(Kind::Pinned, Kind::Pinned, d, d, n, {1, 0}, {-1, 0}, n);
            check_kinds(Kind::Device, Kind::Pinned, d, CUDOT_F32, n, {1, 0}, {1, 0}, n);
            check_kinds(Kind::Managed, Kind::Device, d, CUDOT_F64, n, {2, 0}, {1, 0}, n);
        }
}

// Blocking dots of dense page-locked host arrays go through the copy engines from 2^22 elements
// (host_pipeline.cu): chunks of 2^20 elements copied into two slots of staging, partials joined on the
// host. Forced at any size here, with chunk counts 1 to 4, a last tile cut short and addresses that are
// not aligned to the type, and compared with the in-place read (forced off) and a HOST context.
TEST_CASE("gpu own arrays: page-locked host arrays through the copy engines, every pair", "[gpu][own][pipeline]") {
    const std::size_t chunk = std::size_t(1) << 20;
    for (int mode : {2, 1}) {
        const test::HostPipeline pipeline(mode);
        INFO("pipeline mode " << mode);
        for (int32_t xd : test::all_dtypes())
            for (int32_t yd : test::all_dtypes()) {
                const std::size_t n = (xd * 6 + yd) % 3 == 0 ? 1000 : (xd * 6 + yd) % 3 == 1 ? 2 * chunk + 8195 : 3 * chunk;
                check_kinds(Kind::Pinned, Kind::Pinned, xd, yd, n, {1, 0}, {1, 0}, n + xd * 7 + yd);
            }
        for (int32_t d : {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_I8}) {
            check_kinds(Kind::Pinned, Kind::Pinned, d, d, 4 * chunk - 1, {1, 1}, {1, 3}, 41);  // misaligned
            check_kinds(Kind::Pinned, Kind::Pinned, d, CUDOT_F32, 1, {1, 0}, {1, 0}, 42);
        }
    }
    // The size threshold alone: below it in place, from it the pipeline; the same bits either way.
    for (std::size_t n : {(std::size_t(1) << 22) - 1, (std::size_t(1) << 22) + 5})
        check_kinds(Kind::Pinned, Kind::Pinned, CUDOT_F64, CUDOT_F64, n, {1, 0}, {1, 0}, n);
}

TEST_CASE("gpu own arrays: registered host memory", "[gpu][own][register]") {
    const std::size_t n = (std::size_t(1) << 21) + 17;
    std::vector<float> x(n), y(n);
    test::fill_random_any(CUDOT_F32, x.data(), n, 1);
    test::fill_random_any(CUDOT_F32, y.data(), n, 2);
    const double want = test::host_context_dot(CUDOT_F32, CUDOT_F32, x.data(), y.data(), n);
    const cudot_arrays a = test::arrays_of(n, CUDOT_F32, x.data(), 1, CUDOT_F32, y.data(), 1);
    CHECK(bits(dot_arrays(a)) == bits(want));  // pageable: the CPU
    REQUIRE(cudot_register_host(x.data(), n * sizeof(float)) == CUDOT_OK);
    REQUIRE(cudot_register_host(y.data(), n * sizeof(float)) == CUDOT_OK);
    cudaPointerAttributes attributes{};
    REQUIRE(cudaPointerGetAttributes(&attributes, x.data()) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeHost);
    CHECK(bits(dot_arrays(a)) == bits(want));        // page-locked: a GPU reads it in place
    CHECK(bits(dot_arrays_async(a)) == bits(want));  // which the asynchronous form needs
    CHECK(cudot_unregister_host(x.data()) == CUDOT_OK);
    CHECK(cudot_unregister_host(y.data()) == CUDOT_OK);
    REQUIRE(cudaPointerGetAttributes(&attributes, x.data()) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeUnregistered);
}

TEST_CASE("gpu own arrays: the asynchronous form, every pair", "[gpu][own][async]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes()) {
            check_kinds(Kind::Device, Kind::Device, xd, yd, 20000, {1, 0}, {1, 0}, xd * 7 + yd, true);
            check_kinds(Kind::Device, Kind::Managed, xd, yd, 9000, {-1, 0}, {2, 2}, xd * 5 + yd, true);
        }
    // n = 0 writes +0.0 in stream order.
    double *d = nullptr;
    REQUIRE(cudaMalloc(&d, sizeof(double)) == cudaSuccess);
    REQUIRE(cudaMemset(d, 0xff, sizeof(double)) == cudaSuccess);
    cudot_arrays a = CUDOT_ARRAYS_INIT;
    const cudot_status empty = cudot_dot_arrays_async(&a, d);
    INFO(cudot_last_error(nullptr));
    REQUIRE(empty == CUDOT_OK);
    double r = -1;
    REQUIRE(cudaMemcpy(&r, d, sizeof r, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(bits(r) == bits(0.0));
    cudaFree(d);
}

namespace {

// n floats on the device holding `values`, and a HOST context's dot of them with themselves.
struct DeviceVector {
    std::vector<float> host;
    float *device = nullptr;
    explicit DeviceVector(std::size_t n, std::uint64_t seed) : host(n) {
        test::fill_random_any(CUDOT_F32, host.data(), n, seed);
        REQUIRE(cudaMalloc(&device, n * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaMemcpy(device, host.data(), n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    }
    ~DeviceVector() { cudaFree(device); }
    double expected() const { return test::host_context_dot(CUDOT_F32, CUDOT_F32, host.data(), host.data(), host.size()); }
    cudot_arrays self_dot(void *stream) const {
        cudot_arrays a = test::arrays_of(host.size(), CUDOT_F32, device, 1, CUDOT_F32, device, 1);
        a.stream = stream;
        return a;
    }
};

}  // namespace

TEST_CASE("gpu own arrays: the dot runs after the stream's earlier work, and after x_ready's", "[gpu][own][streams]") {
    const std::size_t n = std::size_t(1) << 24;
    DeviceVector v(n, 3);
    std::vector<float> fresh(n);
    test::fill_random_any(CUDOT_F32, fresh.data(), n, 4);
    const double want_fresh = test::host_context_dot(CUDOT_F32, CUDOT_F32, fresh.data(), fresh.data(), n);
    float *pinned = nullptr;
    REQUIRE(cudaMallocHost(&pinned, n * sizeof(float)) == cudaSuccess);
    std::memcpy(pinned, fresh.data(), n * sizeof(float));
    cudaStream_t writer, reader;
    REQUIRE(cudaStreamCreateWithFlags(&writer, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking) == cudaSuccess);
    SECTION("same stream") {
        REQUIRE(cudaMemcpyAsync(v.device, pinned, n * sizeof(float), cudaMemcpyHostToDevice, writer) == cudaSuccess);
        CHECK(bits(dot_arrays(v.self_dot(writer))) == bits(want_fresh));
    }
    SECTION("another stream, named in x_ready and y_ready") {
        REQUIRE(cudaMemcpyAsync(v.device, pinned, n * sizeof(float), cudaMemcpyHostToDevice, writer) == cudaSuccess);
        cudot_arrays a = v.self_dot(reader);
        a.x_ready = writer;
        a.y_ready = writer;
        CHECK(bits(dot_arrays(a)) == bits(want_fresh));
    }
    SECTION("the legacy and per-thread default streams") {
        REQUIRE(cudaMemcpyAsync(v.device, pinned, n * sizeof(float), cudaMemcpyHostToDevice, cudaStreamPerThread) ==
                cudaSuccess);
        CHECK(bits(dot_arrays(v.self_dot(cudaStreamPerThread))) == bits(want_fresh));
        CHECK(bits(dot_arrays(v.self_dot(nullptr))) == bits(want_fresh));
        CHECK(bits(dot_arrays(v.self_dot(cudaStreamLegacy))) == bits(want_fresh));
    }
    REQUIRE(cudaStreamSynchronize(writer) == cudaSuccess);
    cudaStreamDestroy(writer);
    cudaStreamDestroy(reader);
    cudaFreeHost(pinned);
}

TEST_CASE("gpu own arrays: threads on their own streams and on per-thread streams", "[gpu][own][streams][threads]") {
    DeviceVector small(5000, 5), large(3 * 100000 + 1, 6);
    const double want_small = small.expected(), want_large = large.expected();
    // 8 threads of 40 rounds: 320 dots in all, enough to mix the two sizes on every stream kind; even
    // threads on streams of their own, odd ones on cudaStreamPerThread. The environment can change the mix:
    // CUDOT_TEST_THREAD_ROUNDS (rounds a thread), CUDOT_TEST_THREADS (1 to 8) and CUDOT_TEST_THREAD_STREAMS
    // ("own": every thread on a stream of its own; "per-thread": every thread on cudaStreamPerThread).
    // compute-sanitizer runs the two forms apart: the mix, in one process under the tool, finishes every
    // dot right and then hangs in the driver's cuStreamDestroy (docs/RELIABILITY.md).
    auto setting = [](const char *name, int fallback) {
        const char *text = std::getenv(name);
        return text ? std::max(1, std::atoi(text)) : fallback;
    };
    const int rounds = setting("CUDOT_TEST_THREAD_ROUNDS", 40), count = std::min(8, setting("CUDOT_TEST_THREADS", 8));
    const char *streams_text = std::getenv("CUDOT_TEST_THREAD_STREAMS");
    // CUDOT_TEST_THREAD_TRACE=1 prints each dot's start and end (thread, round, status, ms since the
    // case began) to stderr, to tell a slow run under a tool from a stuck one.
    const bool trace = std::getenv("CUDOT_TEST_THREAD_TRACE") != nullptr;
    const auto began = std::chrono::steady_clock::now();
    auto ms = [&] {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
    };
    const std::string streams = streams_text ? streams_text : "mixed";
    std::vector<int> wrong(8, 0);
    std::vector<std::string> why(8);  // each thread's first failure
    std::vector<std::thread> threads;
    for (int t = 0; t < count; ++t)
        threads.emplace_back([&, t] {
            cudaStream_t s = cudaStreamPerThread;
            const bool own = streams == "own" || (streams != "per-thread" && t % 2 == 0);
            if (own && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
                wrong[t] = -1;
                return;
            }
            for (int i = 0; i < rounds; ++i) {
                const DeviceVector &v = (i + t) % 2 ? small : large;
                double r = 0;
                cudot_arrays a = v.self_dot(s);
                if (trace) std::fprintf(stderr, "trace: thread %d round %d n %zu start %.1f ms\n", t, i, v.host.size(), ms());
                const cudot_status status = cudot_dot_arrays(&a, &r);
                if (trace) std::fprintf(stderr, "trace: thread %d round %d status %d end %.1f ms\n", t, i, status, ms());
                if (status != CUDOT_OK && why[t].empty()) why[t] = cudot_last_error(nullptr);
                if (status != CUDOT_OK || bits(r) != bits(&v == &small ? want_small : want_large)) ++wrong[t];
            }
            if (own) cudaStreamDestroy(s);
        });
    for (std::thread &th : threads) th.join();
    for (int t = 0; t < count; ++t) {
        INFO("thread " << t << ": " << why[t]);
        CHECK(wrong[t] == 0);
    }
}

// A context's dots, partials and rows take the own arrays' queue on its GPUs' own streams: each stream
// keeps one workspace while the context lives (made at init), and the context gives it back when it goes.
TEST_CASE("gpu contexts: each GPU stream of a context keeps one workspace, given back at deinit", "[gpu][streams]") {
    cudot::testing::release_own_array_state();  // (no dot is running between cases)
    REQUIRE(cudot::testing::kept_stream_workspaces(0) == 0);
    const std::size_t n = 100003;
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED})
        for (std::size_t gpus : {std::size_t(1), std::size_t(2)}) {
            INFO(test::memory_name(memory) << ", " << gpus << " stream(s) on GPU 0");
            const test::ForcedDevices forced(std::vector<int>(gpus, 0));
            {
                test::Ctx c(n, CUDOT_F32, memory, gpus == 1 ? 0 : CUDOT_DEVICE_ALL);
                REQUIRE(c.status == CUDOT_OK);
                CHECK(cudot::testing::kept_stream_workspaces(0) == gpus);
                std::fill(c.x<float>(), c.x<float>() + n, 1.0f);
                std::fill(c.y<float>(), c.y<float>() + n, 2.0f);
                CHECK(c.dot() == 2.0 * n);
                std::vector<unsigned char> partials(CUDOT_PARTIAL_BYTES * 40);
                CHECK(cudot_tile_partials(c.ctx, 1, 9000, partials.data()) == CUDOT_OK);
                CHECK(c.dot() == 2.0 * n);
                CHECK(cudot::testing::kept_stream_workspaces(0) == gpus);
            }
            CHECK(cudot::testing::kept_stream_workspaces(0) == 0);
        }
}

TEST_CASE("gpu own arrays: streams made for one dot each give their workspaces back", "[gpu][own][streams]") {
    // A caller that makes a stream per blocking dot: beyond 64 kept workspaces, a new stream's replaces
    // the least recently used idle one, so the count stays bounded; a stream that stays (its workspace
    // given back meanwhile) still gets right results.
    DeviceVector small(5000, 8), large(3 * 100000 + 1, 9);
    const double want_small = small.expected(), want_large = large.expected();
    cudaStream_t stays;
    REQUIRE(cudaStreamCreateWithFlags(&stays, cudaStreamNonBlocking) == cudaSuccess);
    double r = 0;
    cudot_arrays a = large.self_dot(stays);
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(want_large));
    const std::size_t before = cudot::testing::kept_stream_workspaces(0);
    for (int i = 0; i < 300; ++i) {
        cudaStream_t s;
        REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
        const DeviceVector &v = i % 2 ? small : large;
        a = v.self_dot(s);
        REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
        CHECK(bits(r) == bits(&v == &small ? want_small : want_large));
        REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
    }
    const std::size_t after = cudot::testing::kept_stream_workspaces(0);
    INFO("workspaces before " << before << ", after " << after);
    CHECK(after <= std::max<std::size_t>(64, before + 1));
    a = small.self_dot(stays);
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(want_small));
    a = large.self_dot(stays);
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(want_large));
    REQUIRE(cudaStreamDestroy(stays) == cudaSuccess);
}

TEST_CASE("gpu own arrays: back-to-back asynchronous dots and a replayed CUDA graph", "[gpu][own][async][graph]") {
    DeviceVector v(4096, 7);
    const double want = v.expected();
    cudaStream_t s;
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    double *results = nullptr;
    REQUIRE(cudaMalloc(&results, 1000 * sizeof(double)) == cudaSuccess);
    const cudot_arrays a = v.self_dot(s);
    for (int i = 0; i < 1000; ++i) REQUIRE(cudot_dot_arrays_async(&a, results + i) == CUDOT_OK);
    std::vector<double> got(1000);
    REQUIRE(cudaMemcpyAsync(got.data(), results, 1000 * sizeof(double), cudaMemcpyDeviceToHost, s) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    for (double r : got) REQUIRE(bits(r) == bits(want));

    // Captured once (in each capture mode), replayed with new values in between: each replay reads the
    // values of its time. The graph owns its workspace, freed when graph and executable are gone.
    for (cudaStreamCaptureMode mode :
         {cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeGlobal, cudaStreamCaptureModeRelaxed}) {
        INFO("capture mode " << static_cast<int>(mode));
        REQUIRE(cudaStreamBeginCapture(s, mode) == cudaSuccess);
        const cudot_status captured = cudot_dot_arrays_async(&a, results);
        const std::string why = cudot_last_error(nullptr);
        double blocked = 0;
        const cudot_status refused = cudot_dot_arrays(&a, &blocked);  // a blocking call during capture
        const std::string refusal = cudot_last_error(nullptr);
        cudaGraph_t graph = nullptr;
        const cudaError_t ended = cudaStreamEndCapture(s, &graph);  // always, so the stream stays usable
        INFO(why);
        REQUIRE(captured == CUDOT_OK);
        CHECK(refused == CUDOT_ERROR_UNSUPPORTED);
        CHECK(refusal.find("captured") != std::string::npos);
        REQUIRE(ended == cudaSuccess);
        cudaGraphExec_t exec;
        REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
        for (int replay = 0; replay < 3; ++replay) {
            std::vector<float> values(4096);
            test::fill_random_any(CUDOT_F32, values.data(), values.size(), 100 + replay + 10 * static_cast<int>(mode));
            REQUIRE(cudaMemcpyAsync(v.device, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice,
                                    s) == cudaSuccess);
            REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
            double r = -1;
            REQUIRE(cudaMemcpyAsync(&r, results, sizeof r, cudaMemcpyDeviceToHost, s) == cudaSuccess);
            REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
            CHECK(bits(r) == bits(test::host_context_dot(CUDOT_F32, CUDOT_F32, values.data(), values.data(), 4096)));
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    REQUIRE(cudot_dot_arrays_async(&a, results) == CUDOT_OK);  // frees the destroyed graphs' workspaces
    cudaFree(results);
    cudaStreamDestroy(s);
}

TEST_CASE("gpu own arrays: partials of device arrays join to the whole dot's bits", "[gpu][own][partials]") {
    const std::size_t n = 5 * CUDOT_TILE_ELEMENTS + 99;
    DeviceVector v(n, 8);
    std::vector<unsigned char> partials(6 * CUDOT_PARTIAL_BYTES);
    cudot_arrays first = v.self_dot(nullptr), second = v.self_dot(nullptr);
    first.n = 2 * CUDOT_TILE_ELEMENTS;
    second.n = n - first.n;
    second.x.data = second.y.data = v.device + first.n;
    REQUIRE(cudot_tile_partials_arrays(&first, partials.data()) == CUDOT_OK);
    REQUIRE(cudot_tile_partials_arrays(&second, partials.data() + 2 * CUDOT_PARTIAL_BYTES) == CUDOT_OK);
    double r = -1;
    REQUIRE(cudot_join_partials(CUDOT_F32, CUDOT_F32, partials.data(), 6, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(v.expected()));
}

namespace {

void check_refused(const cudot_arrays &a, cudot_status want, const char *words) {
    double r = 12345.0;
    const cudot_status s = cudot_dot_arrays(&a, &r);
    const std::string message = cudot_last_error(nullptr);
    INFO(message);
    CHECK(s == want);
    CHECK(message.find(words) != std::string::npos);
    CHECK(r == 12345.0);
}

}  // namespace

TEST_CASE("gpu own arrays: bad device operands get a status, never a crash", "[gpu][own][errors]") {
    DeviceVector v(1000, 9);
    SECTION("running past the allocation") {
        cudot_arrays a = v.self_dot(nullptr);
        a.n = 1001;
        check_refused(a, CUDOT_ERROR_INVALID_ARGUMENT, "outside its allocation");
        a.n = 500;
        a.y.stride = 3;  // reaches element 1497
        check_refused(a, CUDOT_ERROR_INVALID_ARGUMENT, "outside its allocation");
        a.y.stride = -1;  // element 0 at the start, the rest before the allocation
        check_refused(a, CUDOT_ERROR_INVALID_ARGUMENT, "outside its allocation");
    }
    SECTION("a freed device pointer") {
        float *gone = nullptr;
        REQUIRE(cudaMalloc(&gone, 1 << 20) == cudaSuccess);
        REQUIRE(cudaFree(gone) == cudaSuccess);
        cudot_arrays a = v.self_dot(nullptr);
        a.x.data = gone;
        check_refused(a, CUDOT_ERROR_INVALID_ARGUMENT, "can read");
    }
    SECTION("a pageable host operand beside a device one") {
        std::vector<float> host(1000, 1.0f);
        cudot_arrays a = v.self_dot(nullptr);
        a.y.data = host.data();
        int pageable = 0;
        REQUIRE(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0) == cudaSuccess);
        if (pageable) {  // HMM or ATS: the GPU reads it in place
            CHECK(bits(dot_arrays(a)) ==
                  bits(test::host_context_dot(CUDOT_F32, CUDOT_F32, v.host.data(), host.data(), 1000)));
        } else {
            check_refused(a, CUDOT_ERROR_UNSUPPORTED, "cannot read");
        }
    }
    SECTION("an asynchronous result in pageable memory") {
        double host_result = 0;
        const cudot_arrays a = v.self_dot(nullptr);
        CHECK(cudot_dot_arrays_async(&a, &host_result) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(cudot_last_error(nullptr)).find("device_result") != std::string::npos);
    }
}

TEST_CASE("gpu own arrays: an operand or a stream of another GPU is refused", "[gpu][own][errors]") {
    const int gpus = test::visible_gpus();
    if (gpus < 2) TEST_SKIP("needs two GPUs; " << gpus << " visible");
    DeviceVector v(1000, 9);  // on GPU 0
    float *other = nullptr;
    cudaStream_t other_stream;
    {
        const test::CurrentDevice callers;  // GPU 1 current only while its memory and stream are made
        REQUIRE(cudaSetDevice(1) == cudaSuccess);
        REQUIRE(cudaMalloc(&other, 1000 * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaStreamCreate(&other_stream) == cudaSuccess);
    }
    cudot_arrays a = v.self_dot(nullptr);
    a.y.data = other;
    check_refused(a, CUDOT_ERROR_UNSUPPORTED, "copy one");
    a = v.self_dot(other_stream);
    check_refused(a, CUDOT_ERROR_INVALID_ARGUMENT, "stream belongs to GPU 1");
    const test::CurrentDevice callers;  // and current again to free them
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    cudaStreamDestroy(other_stream);
    cudaFree(other);
}
