// test_gpu_rows.cpp - cudot_dot_rows and cudot_dot_rows_async on rows in GPU memory: every row's result
// must be the bits of cudot_dot_arrays on that row alone (computed here from a host copy of the same
// bytes, by the CPU), whatever the layout, the row's length (short rows several to a warp, rows of one
// tile, rows of many tiles), the pair, the strides and alignment, the batch it is in and its place
// there; re-batched at random thousands of times; then streams, graphs, threads and bad requests.
// Without a usable GPU the program exits with 77 (CTest: "skipped").
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "context_rows.hpp"
#include "gpu_rows.hpp"
#include "current_device.hpp"
#include "isolation.hpp"
#include "own_arrays.hpp"
#include "reference.hpp"

using test::base_request;
using test::Bed;
using test::bits;
using test::check_same;
using test::dot_rows;
using test::dot_rows_async;
using test::expected;

namespace {

// Lengths that cross every boundary of the kernel: groups of 1..32 threads with 4 or 8 lanes, one step,
// one tile, several tiles.
const std::size_t kLengths[] = {0, 1, 3, 4, 5, 31, 32, 33, 100, 128, 129, 200, 256, 257, 1000, 1024, 1025, 3000,
                                8191, 8192, 8193, 20000, 70001};

}  // namespace

TEST_CASE("gpu rows: strided batches of device rows, every pair, every length class", "[gpu][rows]") {
    const int32_t types[] = {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_BF16, CUDOT_I8, CUDOT_U8};
    for (int32_t xd : types)
        for (int32_t yd : types) {
            // Few lengths for most pairs, all for the commonest.
            const bool all = (xd == yd && (xd == CUDOT_F32 || xd == CUDOT_F64)) || (xd == CUDOT_F32 && yd == CUDOT_F64);
            for (std::size_t n : kLengths) {
                if (!all && n != 5 && n != 128 && n != 257 && n != 1024 && n != 8193) continue;
                const std::size_t count = n > 8192 ? 9 : 37;
                const std::int64_t row = static_cast<std::int64_t>(n) + (n % 2);  // a gap between rows
                Bed bx(xd, count * row + 8, 11 + n), by(yd, count * row + 8, 12 + n);
                if (n % 3 == 0) {
                    bx.spice(n);
                    by.spice(n + 1);
                }
                cudot_rows r = base_request(xd, yd);
                r.count = count;
                r.n = n;
                r.x.data = bx.gpu;
                r.y.data = by.gpu;
                r.x_row_stride = row;
                r.y_row_stride = row;
                INFO("pair " << xd << "x" << yd << ", n = " << n);
                const std::vector<double> want = expected(r, bx, by);
                check_same(dot_rows(r), want);
                check_same(dot_rows_async(r), want);
            }
        }
}

TEST_CASE("gpu rows: strides, broadcasts, reversed rows and misaligned starts", "[gpu][rows]") {
    for (std::size_t n : kLengths) {
        const std::size_t count = n > 8192 ? 5 : 23;
        Bed bx(CUDOT_F32, 3 * count * (n + 3) + 16, 21 + n), by(CUDOT_F64, 3 * count * (n + 3) + 16, 22 + n);
        INFO("n = " << n);
        SECTION("one x against every row of y (row stride 0)") {
            cudot_rows r = base_request(CUDOT_F32, CUDOT_F64);
            r.count = count;
            r.n = n;
            r.x.data = bx.gpu;
            r.y.data = by.gpu;
            r.y_row_stride = static_cast<std::int64_t>(n);
            check_same(dot_rows(r), expected(r, bx, by));
        }
        SECTION("element strides 2 and -1, a negative row stride") {
            cudot_rows r = base_request(CUDOT_F32, CUDOT_F64);
            r.count = count;
            r.n = n;
            r.x.stride = 2;
            r.x.data = bx.gpu;
            r.x_row_stride = 2 * static_cast<std::int64_t>(n) + 1;
            r.y.stride = -1;  // each row read backwards from its element 0
            r.y.data = by.gpu + (count * (n + 1) + n) * by.size;
            r.y_row_stride = -static_cast<std::int64_t>(n + 1);
            check_same(dot_rows(r), expected(r, bx, by));
        }
        SECTION("rows starting off the 16-byte grid, and off the element grid") {
            cudot_rows r = base_request(CUDOT_F32, CUDOT_F32);
            Bed b2(CUDOT_F32, count * (n + 3) + 16, 23 + n);
            r.count = count;
            r.n = n;
            r.x.data = bx.gpu + 4;  // aligned to its type only
            r.y.data = b2.gpu + 1;  // not even to its type
            r.x_row_stride = static_cast<std::int64_t>(n) + 1;
            r.y_row_stride = static_cast<std::int64_t>(n) + 2;
            check_same(dot_rows(r), expected(r, bx, b2));
        }
    }
}

TEST_CASE("gpu rows: segmented rows of any length, and row pointers", "[gpu][rows]") {
    std::mt19937_64 rng(31);
    for (int32_t xd : {CUDOT_F32, CUDOT_F64, CUDOT_BF16})
        for (std::size_t longest : {std::size_t(40), std::size_t(3000), std::size_t(70000)}) {
            const std::size_t count = longest > 10000 ? 40 : 300;
            std::vector<std::int64_t> offsets(count + 1);
            offsets[0] = static_cast<std::int64_t>(rng() % 7);
            for (std::size_t i = 0; i < count; ++i)
                offsets[i + 1] = offsets[i] + (rng() % 5 == 0 ? 0 : static_cast<std::int64_t>(rng() % (longest + 1)));
            const std::size_t total = static_cast<std::size_t>(offsets[count]) + 1;
            Bed bx(xd, total, 41 + longest), by(CUDOT_F32, total, 42 + longest);
            bx.spice(longest);
            INFO("dtype " << xd << ", rows up to " << longest);
            cudot_rows r = base_request(xd, CUDOT_F32);
            r.layout = CUDOT_ROWS_SEGMENTED;
            r.count = count;
            r.offsets = offsets.data();
            r.x.data = bx.gpu;
            r.y.data = by.gpu;
            const std::vector<double> want = expected(r, bx, by);
            check_same(dot_rows(r), want);
            check_same(dot_rows_async(r), want);

            // The same rows given by pointers (their lengths differ, so in groups of one length).
            std::vector<const void *> xs, ys;
            const std::size_t n = static_cast<std::size_t>(offsets[1] - offsets[0]);
            for (std::size_t i = 0; i < count; ++i)
                if (offsets[i] + static_cast<std::int64_t>(n) <= offsets[count]) {
                    xs.push_back(bx.gpu + offsets[i] * bx.size);
                    ys.push_back(by.gpu + offsets[i] * by.size);
                }
            cudot_rows p = base_request(xd, CUDOT_F32);
            p.layout = CUDOT_ROWS_POINTERS;
            p.count = xs.size();
            p.n = n;
            p.x_rows = xs.data();
            p.y_rows = ys.data();
            check_same(dot_rows(p), expected(p, bx, by));
        }
}

TEST_CASE("gpu rows: a batch split at random into sub-batches, rows permuted, gives every row the same bits",
          "[gpu][rows][rebatch]") {
    std::mt19937_64 rng(51);
    for (std::size_t n : {std::size_t(37), std::size_t(256), std::size_t(1024), std::size_t(20000)}) {
        const std::size_t count = n > 8192 ? 64 : 1000;
        Bed bx(CUDOT_F64, count * n + 1, 61 + n, true), by(CUDOT_F64, count * n + 1, 62 + n);  // x managed
        cudot_rows whole = base_request(CUDOT_F64, CUDOT_F64);
        test::aim_strided(whole, count, n, bx, by, n);
        const std::vector<double> want = expected(whole, bx, by);
        check_same(dot_rows(whole), want);
        std::vector<const void *> xs(count), ys(count);
        std::vector<std::size_t> order(count);
        const int rounds = n > 8192 ? 200 : 1000;
        for (int round = 0; round < rounds; ++round) {
            std::iota(order.begin(), order.end(), 0);
            std::shuffle(order.begin(), order.end(), rng);
            std::size_t at = 0;
            while (at < count) {
                const std::size_t take = std::min<std::size_t>(count - at, 1 + rng() % (count / 4 + 1));
                for (std::size_t k = 0; k < take; ++k) {
                    xs[k] = bx.gpu + order[at + k] * n * 8;
                    ys[k] = by.gpu + order[at + k] * n * 8;
                }
                cudot_rows p = base_request(CUDOT_F64, CUDOT_F64);
                p.layout = CUDOT_ROWS_POINTERS;
                p.count = take;
                p.n = n;
                p.x_rows = xs.data();
                p.y_rows = ys.data();
                const std::vector<double> got = dot_rows(p);
                for (std::size_t k = 0; k < take; ++k) REQUIRE(bits(got[k]) == bits(want[order[at + k]]));
                at += take;
            }
        }
    }
}

TEST_CASE("gpu rows: streams, x_ready, threads, and a captured graph replayed after its tables are gone",
          "[gpu][rows][streams]") {
    const std::size_t n = 3000, count = 200;
    Bed bx(CUDOT_F32, count * n, 71), by(CUDOT_F32, count * n, 72);
    std::vector<std::int64_t> offsets(count + 1);
    for (std::size_t i = 0; i <= count; ++i) offsets[i] = static_cast<std::int64_t>(i * n - (i % 2 ? 100 : 0));
    offsets[count] = static_cast<std::int64_t>(count * n);
    cudot_rows r = base_request(CUDOT_F32, CUDOT_F32);
    r.layout = CUDOT_ROWS_SEGMENTED;
    r.count = count;
    r.offsets = offsets.data();
    r.x.data = bx.gpu;
    r.y.data = by.gpu;
    const std::vector<double> want = expected(r, bx, by);

    SECTION("after the stream's earlier work and x_ready's") {
        cudaStream_t s, producer;
        REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
        REQUIRE(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking) == cudaSuccess);
        Bed fresh(CUDOT_F32, count * n, 73);
        std::vector<unsigned char> zeros(fresh.host.size(), 0);
        REQUIRE(cudaMemcpy(fresh.gpu, zeros.data(), zeros.size(), cudaMemcpyHostToDevice) == cudaSuccess);
        // The producer writes x late; the batch must see it.
        REQUIRE(cudaMemcpyAsync(fresh.gpu, bx.host.data(), bx.host.size(), cudaMemcpyHostToDevice, producer) ==
                cudaSuccess);
        cudot_rows late = r;
        late.x.data = fresh.gpu;
        late.stream = s;
        late.x_ready = producer;
        check_same(dot_rows(late), want);
        cudaStreamDestroy(s);
        cudaStreamDestroy(producer);
    }
    SECTION("threads, each on its own stream") {
        std::vector<std::thread> threads;
        std::vector<int> ok(4, 0);
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, t] {
                cudaStream_t s;
                if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return;
                cudot_rows mine = r;
                mine.stream = s;
                std::vector<double> got(count);
                bool same = true;
                for (int k = 0; k < 50 && same; ++k) {
                    same = cudot_dot_rows(&mine, got.data()) == CUDOT_OK;
                    for (std::size_t i = 0; same && i < count; ++i) same = bits(got[i]) == bits(want[i]);
                }
                ok[t] = same;
                cudaStreamDestroy(s);
            });
        for (auto &t : threads) t.join();
        for (int t = 0; t < 4; ++t) CHECK(ok[t] == 1);
    }
    SECTION("a captured asynchronous batch replays with the same bits after its offsets are gone") {
        cudaStream_t s;
        REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
        double *d = nullptr;
        REQUIRE(cudaMalloc(&d, count * sizeof(double)) == cudaSuccess);
        cudaGraph_t graph;
        {
            std::vector<std::int64_t> transient(offsets);
            cudot_rows captured = r;
            captured.offsets = transient.data();
            captured.stream = s;
            REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
            const cudot_status st = cudot_dot_rows_async(&captured, d);
            INFO(cudot_last_error(nullptr));
            REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
            REQUIRE(st == CUDOT_OK);
            std::fill(transient.begin(), transient.end(), -1);  // then freed
        }
        cudaGraphExec_t exec;
        REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
        for (int k = 0; k < 3; ++k) {
            REQUIRE(cudaMemsetAsync(d, 0xff, count * sizeof(double), s) == cudaSuccess);
            REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
            REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
            std::vector<double> got(count);
            REQUIRE(cudaMemcpy(got.data(), d, count * sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess);
            check_same(got, want);
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        cudaFree(d);
        cudaStreamDestroy(s);
    }
    SECTION("a blocking batch inside a capture is refused") {
        cudaStream_t s;
        REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
        cudot_rows captured = r;
        captured.stream = s;
        std::vector<double> got(count, -7.0);
        REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
        const cudot_status st = cudot_dot_rows(&captured, got.data());
        cudaGraph_t graph;
        REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
        cudaGraphDestroy(graph);
        CHECK(st == CUDOT_ERROR_UNSUPPORTED);
        CHECK(bits(got[0]) == bits(-7.0));
        cudaStreamDestroy(s);
    }
}

TEST_CASE("gpu rows: bad requests get a status and a message, the results untouched", "[gpu][rows][errors]") {
    Bed bx(CUDOT_F32, 1000, 81), by(CUDOT_F32, 1000, 82);
    cudot_rows r = base_request(CUDOT_F32, CUDOT_F32);
    r.count = 10;
    r.n = 100;
    r.x.data = bx.gpu;
    r.y.data = by.gpu;
    r.x_row_stride = r.y_row_stride = 100;
    std::vector<double> out(10, -7.0);
    const auto refused = [&](const cudot_rows &req, cudot_status want, const char *text, double *results) {
        const cudot_status s = cudot_dot_rows(&req, results);
        INFO(cudot_last_error(nullptr));
        CHECK(s == want);
        CHECK(std::string(cudot_last_error(nullptr)).find(text) != std::string::npos);
        for (double v : out) CHECK(bits(v) == bits(-7.0));
    };
    SECTION("rows leaving the allocation") {
        cudot_rows bad = r;
        bad.y_row_stride = 101;
        refused(bad, CUDOT_ERROR_INVALID_ARGUMENT, "outside its allocation", out.data());
        bad = r;
        bad.x_row_stride = -100;  // row 1 before the allocation
        refused(bad, CUDOT_ERROR_INVALID_ARGUMENT, "outside the allocation", out.data());
    }
    SECTION("a row pointer past the allocation, and a NULL one") {
        std::vector<const void *> xs(10, bx.gpu), ys(10, by.gpu);
        ys[7] = by.gpu + 950 * 4;
        cudot_rows p = base_request(CUDOT_F32, CUDOT_F32);
        p.layout = CUDOT_ROWS_POINTERS;
        p.count = 10;
        p.n = 100;
        p.x_rows = xs.data();
        p.y_rows = ys.data();
        refused(p, CUDOT_ERROR_INVALID_ARGUMENT, "outside its allocation", out.data());
        ys[7] = nullptr;
        refused(p, CUDOT_ERROR_INVALID_ARGUMENT, "y_rows[7] is NULL", out.data());
    }
    SECTION("offsets in device memory") {
        std::int64_t *offsets = nullptr;
        REQUIRE(cudaMalloc(&offsets, 11 * sizeof(std::int64_t)) == cudaSuccess);
        cudot_rows s = base_request(CUDOT_F32, CUDOT_F32);
        s.layout = CUDOT_ROWS_SEGMENTED;
        s.count = 10;
        s.offsets = offsets;
        s.x.data = bx.gpu;
        s.y.data = by.gpu;
        refused(s, CUDOT_ERROR_INVALID_ARGUMENT, "must be host memory", out.data());
        cudaFree(offsets);
    }
    SECTION("results on the GPU for the blocking call; host rows beside device rows") {
        double *d = nullptr;
        REQUIRE(cudaMalloc(&d, 10 * sizeof(double)) == cudaSuccess);
        refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_dot_rows_async", d);
        cudaFree(d);
        std::vector<float> host(1000, 1.0f);
        cudot_rows mixed = r;
        mixed.y.data = host.data();
        refused(mixed, CUDOT_ERROR_UNSUPPORTED, "one place", out.data());
    }
    SECTION("the asynchronous form: results NULL, misaligned, pageable, too short, overlapping a row") {
        double *d = nullptr;
        REQUIRE(cudaMalloc(&d, 10 * sizeof(double) + 8) == cudaSuccess);
        CHECK(cudot_dot_rows_async(&r, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(cudot_dot_rows_async(&r, reinterpret_cast<double *>(reinterpret_cast<char *>(d) + 4)) ==
              CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(cudot_dot_rows_async(&r, out.data()) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(cudot_dot_rows_async(&r, d + 2) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(cudot_last_error(nullptr)).find("outside its allocation") != std::string::npos);
        CHECK(cudot_dot_rows_async(&r, reinterpret_cast<double *>(by.gpu + 40)) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(cudot_last_error(nullptr)).find("overlap") != std::string::npos);
        std::vector<float> hx(1000, 1.0f), hy(1000, 2.0f);
        cudot_rows host_rows = r;
        host_rows.x.data = hx.data();
        host_rows.y.data = hy.data();
        CHECK(cudot_dot_rows_async(&host_rows, d) == CUDOT_ERROR_UNSUPPORTED);
        cudaFree(d);
        for (double v : out) CHECK(bits(v) == bits(-7.0));
    }
    SECTION("count 0 writes nothing") {
        cudot_rows none = r;
        none.count = 0;
        CHECK(cudot_dot_rows(&none, out.data()) == CUDOT_OK);
        CHECK(cudot_dot_rows_async(&none, nullptr) == CUDOT_OK);
        for (double v : out) CHECK(bits(v) == bits(-7.0));
    }
}

TEST_CASE("gpu rows: rows on two GPUs, and a stream of another GPU, are refused", "[gpu][rows][errors]") {
    const int gpus = test::visible_gpus();
    if (gpus < 2) TEST_SKIP("needs two GPUs; " << gpus << " visible");
    Bed bx(CUDOT_F32, 1000, 91);
    float *other = nullptr;
    cudaStream_t other_stream;
    {
        const test::CurrentDevice callers;
        REQUIRE(cudaSetDevice(1) == cudaSuccess);
        REQUIRE(cudaMalloc(&other, 1000 * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaStreamCreate(&other_stream) == cudaSuccess);
    }
    cudot_rows r = base_request(CUDOT_F32, CUDOT_F32);
    r.count = 10;
    r.n = 100;
    r.x.data = bx.gpu;
    r.y.data = other;
    r.x_row_stride = r.y_row_stride = 100;
    std::vector<double> out(10, -7.0);
    CHECK(cudot_dot_rows(&r, out.data()) == CUDOT_ERROR_UNSUPPORTED);
    CHECK(std::string(cudot_last_error(nullptr)).find("GPU") != std::string::npos);
    r.y.data = bx.gpu;
    r.stream = other_stream;
    CHECK(cudot_dot_rows(&r, out.data()) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("stream belongs to GPU 1") != std::string::npos);
    for (double v : out) CHECK(bits(v) == bits(-7.0));
    // Rows on GPU 1 run there, with the same bits.
    {
        const test::CurrentDevice callers;
        REQUIRE(cudaSetDevice(1) == cudaSuccess);
        REQUIRE(cudaMemcpy(other, bx.host.data(), 1000 * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    }
    cudot_rows on1 = r;
    on1.x.data = on1.y.data = other;
    on1.stream = other_stream;
    cudot_rows on0 = r;
    on0.stream = nullptr;
    check_same(dot_rows(on1), dot_rows(on0));
    {
        const test::CurrentDevice callers;
        REQUIRE(cudaSetDevice(1) == cudaSuccess);
        cudaFree(other);
        cudaStreamDestroy(other_stream);
    }
}

TEST_CASE("gpu rows: contexts with rows, every GPU strategy, each row with its own dot's bits", "[gpu][rows]") {
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO}) {
        test::check_context_rows(memory, 0);
        test::check_context_rows_refusals(memory, 0);
    }
}

TEST_CASE("gpu rows: contexts with rows in the exact mode, every GPU strategy and every GPU", "[gpu][rows][exact]") {
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO}) {
        test::check_context_rows(memory, 0, CUDOT_MODE_EXACT);
        test::check_context_rows(memory, CUDOT_DEVICE_ALL, CUDOT_MODE_EXACT);
    }
}

TEST_CASE("gpu rows: contexts with rows on every GPU (CUDOT_DEVICE_ALL)", "[gpu][rows]") {
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO}) {
        test::check_context_rows(memory, CUDOT_DEVICE_ALL);
        // Rows longer than a GPU's share of PINNED's buffers: read in place over the bus.
        test::RowsContext c(memory, CUDOT_DEVICE_ALL, CUDOT_F32, CUDOT_F64, 3, 3 * 8192 + 5);
        c.fill(77);
        c.check(3, 3 * 8192 + 5);
        c.check(2, 8193);
    }
}

TEST_CASE("gpu rows: page-locked host rows are read in place by a GPU, with each row's own bits", "[gpu][rows]") {
    // 2^20 elements and more go to the GPU (blocking); the asynchronous form always does.
    for (std::size_t n : {std::size_t(100), std::size_t(9000)}) {
        const std::size_t count = (std::size_t(1) << 20) / n + 3;
        std::vector<unsigned char> vx = test::random_values(CUDOT_F32, count * n, n), vy = test::random_values(CUDOT_F64, count * n, n + 1);
        void *px = nullptr, *py = nullptr;
        REQUIRE(cudaMallocHost(&px, vx.size()) == cudaSuccess);
        REQUIRE(cudaMallocHost(&py, vy.size()) == cudaSuccess);
        std::memcpy(px, vx.data(), vx.size());
        std::memcpy(py, vy.data(), vy.size());
        cudot_rows r = CUDOT_ROWS_INIT;
        r.count = count;
        r.n = n;
        r.x.data = px;
        r.x.dtype = CUDOT_F32;
        r.y.data = py;
        r.y.dtype = CUDOT_F64;
        r.x_row_stride = r.y_row_stride = static_cast<std::int64_t>(n);
        std::vector<double> out(count, -7.0), back(count, -7.0);
        REQUIRE(cudot_dot_rows(&r, out.data()) == CUDOT_OK);
        double *d = nullptr;
        REQUIRE(cudaMalloc(&d, count * sizeof(double)) == cudaSuccess);
        REQUIRE(cudot_dot_rows_async(&r, d) == CUDOT_OK);
        REQUIRE(cudaMemcpy(back.data(), d, count * sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess);
        cudaFree(d);
        for (std::size_t i = 0; i < count; i += 7) {
            INFO("row " << i << " of " << n);
            const double alone = test::row_alone(CUDOT_F32, CUDOT_F64, vx.data(), vy.data(), n, i, n);
            CHECK(bits(out[i]) == bits(alone));
            CHECK(bits(back[i]) == bits(alone));
        }
        cudaFreeHost(px);
        cudaFreeHost(py);
    }
}
