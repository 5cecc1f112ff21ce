// test_gpu_exact_rows.cpp - batches of rows in CUDOT_MODE_EXACT on a GPU (exact_rows_kernel): every row's
// result must be the bits of the CPU's exact dot of that row alone (from a host copy of the same bytes),
// whatever the row's length (short rows to groups of threads, rows of one part, rows of many parts), the
// pair, the layout, the strides and alignment, the values (ranges no few terms can hold, cancellation,
// infinities and NaNs, which send a row down the kernel's slower roads), the batch and the row's place
// in it; the asynchronous form and a captured graph.
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "exact_rows.hpp"
#include "gpu_rows.hpp"

using test::Bed;
using test::bits;
using test::check_same;
using test::dot_rows;
using test::dot_rows_async;
using test::expected;

namespace {

// Row i of a batch (`row` elements apart from row 0 at element `first`) given values of kind
// (kind0 + i) % 4 (test::row_values), on the GPU and in the host copy.
void fill_kinds(Bed &b, std::size_t first, std::size_t count, std::size_t row, std::size_t n, std::uint64_t seed,
                std::size_t kind0 = 0) {
    for (std::size_t i = 0; i < count; ++i) {
        const std::vector<unsigned char> v = test::row_values(b.dtype, n, static_cast<int>((kind0 + i) % 4), seed + i);
        std::memcpy(b.host.data() + (first + i * row) * b.size, v.data(), n * b.size);
    }
    REQUIRE(cudaMemcpy(b.gpu, b.host.data(), b.host.size(), cudaMemcpyDefault) == cudaSuccess);
}

cudot_rows exact_request(int32_t xd, int32_t yd) {
    cudot_rows r = test::base_request(xd, yd);
    r.mode = CUDOT_MODE_EXACT;
    return r;
}

// Lengths across the kernel's roads: groups of 1..32 threads, a warp's 1024, a block's one part, two and
// many parts.
const std::size_t kLengths[] = {0, 1, 2, 5, 16, 31, 32, 33, 100, 256, 257, 1000, 1024, 1025, 3000, 8193, 20000, 70001};

}  // namespace

TEST_CASE("gpu exact rows: strided batches, every pair, every length, values of every kind", "[gpu][rows][exact]") {
    const int32_t types[] = {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_BF16, CUDOT_I8, CUDOT_U8};
    for (int32_t xd : types)
        for (int32_t yd : types) {
            const bool all = (xd == yd && (xd == CUDOT_F32 || xd == CUDOT_F64)) || (xd == CUDOT_F32 && yd == CUDOT_F64);
            for (std::size_t n : kLengths) {
                if (!all && n != 5 && n != 257 && n != 1025 && n != 20000) continue;
                const std::size_t count = n > 8192 ? 9 : 37;
                const std::size_t row = n + (n % 2);  // a gap between rows
                Bed bx(xd, count * row + 8, 11 + n), by(yd, count * row + 8, 12 + n);
                fill_kinds(bx, 0, count, row, n, 100 + n);
                fill_kinds(by, 0, count, row, n, 200 + n);
                cudot_rows r = exact_request(xd, yd);
                test::aim_strided(r, count, n, bx, by, row);
                INFO("pair " << xd << "x" << yd << ", n = " << n);
                const std::vector<double> want = expected(r, bx, by);
                check_same(dot_rows(r), want);
                check_same(dot_rows_async(r), want);
            }
        }
}

TEST_CASE("gpu exact rows: broadcasts, strides, reversed rows, misaligned starts and row pointers",
          "[gpu][rows][exact]") {
    for (std::size_t n : kLengths) {
        const std::size_t count = n > 8192 ? 5 : 23;
        Bed bx(CUDOT_F32, 3 * count * (n + 3) + 16, 21 + n), by(CUDOT_F64, 3 * count * (n + 3) + 16, 22 + n);
        fill_kinds(bx, 0, count, n + 3, n, 300 + n);
        fill_kinds(by, 0, count, n + 3, n, 400 + n);
        INFO("n = " << n);
        cudot_rows r = exact_request(CUDOT_F32, CUDOT_F64);
        r.count = count;
        r.n = n;
        r.x.data = bx.gpu;
        r.y.data = by.gpu;
        r.y_row_stride = static_cast<std::int64_t>(n + 3);  // one x against every row of y
        check_same(dot_rows(r), expected(r, bx, by));
        r.x.stride = 2;  // x every other element, y's rows read backwards
        r.x_row_stride = 2 * static_cast<std::int64_t>(n) + 1;
        r.y.stride = -1;
        r.y.data = by.gpu + (count * (n + 1) + n) * by.size;
        r.y_row_stride = -static_cast<std::int64_t>(n + 1);
        check_same(dot_rows(r), expected(r, bx, by));
        cudot_rows m = exact_request(CUDOT_F32, CUDOT_F32);  // off the 16-byte grid, and off the element grid
        Bed b2(CUDOT_F32, count * (n + 3) + 16, 23 + n);
        m.count = count;
        m.n = n;
        m.x.data = bx.gpu + 4;
        m.y.data = b2.gpu + 1;
        m.x_row_stride = static_cast<std::int64_t>(n) + 1;
        m.y_row_stride = static_cast<std::int64_t>(n) + 2;
        check_same(dot_rows(m), expected(m, bx, b2));
        std::vector<const void *> xs(count), ys(count);  // row pointers, in reverse order
        for (std::size_t i = 0; i < count; ++i) {
            xs[i] = bx.gpu + (count - 1 - i) * (n + 3) * bx.size;
            ys[i] = by.gpu + i * (n + 3) * by.size;
        }
        cudot_rows p = exact_request(CUDOT_F32, CUDOT_F64);
        p.layout = CUDOT_ROWS_POINTERS;
        p.count = count;
        p.n = n;
        p.x_rows = xs.data();
        p.y_rows = ys.data();
        const std::vector<double> want = expected(p, bx, by);
        check_same(dot_rows(p), want);
        check_same(dot_rows_async(p), want);
    }
}

TEST_CASE("gpu exact rows: segmented rows of any length, on and off the 16-byte grid", "[gpu][rows][exact]") {
    std::mt19937_64 rng(91);
    for (int32_t xd : {CUDOT_F32, CUDOT_F64, CUDOT_BF16})
        for (std::size_t longest : {std::size_t(40), std::size_t(3000), std::size_t(150000)}) {
            const std::size_t count = longest > 10000 ? 30 : 300;
            std::vector<std::int64_t> offsets(count + 1);
            offsets[0] = static_cast<std::int64_t>(rng() % 7);
            for (std::size_t i = 0; i < count; ++i)
                offsets[i + 1] = offsets[i] + (rng() % 5 == 0 ? 0 : static_cast<std::int64_t>(rng() % (longest + 1)));
            const std::size_t total = static_cast<std::size_t>(offsets[count]) + 1;
            Bed bx(xd, total, 41 + longest), by(CUDOT_F32, total, 42 + longest);
            for (std::size_t i = 0; i < count; ++i) {  // each row's values of its kind
                const std::size_t len = static_cast<std::size_t>(offsets[i + 1] - offsets[i]);
                fill_kinds(bx, static_cast<std::size_t>(offsets[i]), 1, 0, len, 500 + i, i);
            }
            INFO("dtype " << xd << ", rows up to " << longest);
            cudot_rows r = exact_request(xd, CUDOT_F32);
            r.layout = CUDOT_ROWS_SEGMENTED;
            r.count = count;
            r.offsets = offsets.data();
            r.x.data = bx.gpu;
            r.y.data = by.gpu;
            const std::vector<double> want = expected(r, bx, by);
            check_same(dot_rows(r), want);
            check_same(dot_rows_async(r), want);
        }
}

TEST_CASE("gpu exact rows: a batch split at random into sub-batches, rows permuted, keeps every row's bits",
          "[gpu][rows][exact][rebatch]") {
    std::mt19937_64 rng(61);
    for (std::size_t n : {std::size_t(37), std::size_t(1024), std::size_t(40000)}) {
        const std::size_t count = n > 8192 ? 40 : 600;
        Bed bx(CUDOT_F64, count * n + 1, 71 + n, true), by(CUDOT_F64, count * n + 1, 72 + n);  // x managed
        fill_kinds(bx, 0, count, n, n, 600 + n);
        fill_kinds(by, 0, count, n, n, 700 + n);
        cudot_rows whole = exact_request(CUDOT_F64, CUDOT_F64);
        whole.count = count;
        whole.n = n;
        whole.x.data = bx.gpu;
        whole.y.data = by.gpu;
        whole.x_row_stride = whole.y_row_stride = static_cast<std::int64_t>(n);
        const std::vector<double> want = expected(whole, bx, by);
        check_same(dot_rows(whole), want);
        std::vector<const void *> xs(count), ys(count);
        std::vector<std::size_t> order(count);
        std::size_t checked = 0;
        for (int round = 0; round < (n > 8192 ? 60 : 200); ++round) {
            std::iota(order.begin(), order.end(), 0);
            std::shuffle(order.begin(), order.end(), rng);
            for (std::size_t at = 0; at < count;) {
                const std::size_t take = std::min<std::size_t>(count - at, 1 + rng() % (count / 4 + 1));
                for (std::size_t k = 0; k < take; ++k) {
                    xs[k] = bx.gpu + order[at + k] * n * 8;
                    ys[k] = by.gpu + order[at + k] * n * 8;
                }
                cudot_rows p = exact_request(CUDOT_F64, CUDOT_F64);
                p.layout = CUDOT_ROWS_POINTERS;
                p.count = take;
                p.n = n;
                p.x_rows = xs.data();
                p.y_rows = ys.data();
                const std::vector<double> got = dot_rows(p);
                for (std::size_t k = 0; k < take; ++k, ++checked) REQUIRE(bits(got[k]) == bits(want[order[at + k]]));
                at += take;
            }
        }
        CHECK(checked >= 60 * count);
    }
}

TEST_CASE("gpu exact rows: a captured asynchronous batch replays with the same bits", "[gpu][rows][exact][streams]") {
    for (std::size_t n : {std::size_t(100), std::size_t(50000)}) {
        const std::size_t count = n > 8192 ? 6 : 300;
        Bed bx(CUDOT_F32, count * n, 81 + n), by(CUDOT_F32, count * n, 82 + n);
        fill_kinds(bx, 0, count, n, n, 800 + n);
        cudot_rows r = exact_request(CUDOT_F32, CUDOT_F32);
        test::aim_strided(r, count, n, bx, by, n);
        const std::vector<double> want = expected(r, bx, by);
        cudaStream_t s;
        REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
        r.stream = s;
        double *d = nullptr;
        REQUIRE(cudaMalloc(&d, count * sizeof(double)) == cudaSuccess);
        cudaGraph_t graph;
        REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
        const cudot_status st = cudot_dot_rows_async(&r, d);
        INFO(cudot_last_error(nullptr));
        REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
        REQUIRE(st == CUDOT_OK);
        cudaGraphExec_t exec;
        REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
        for (int k = 0; k < 3; ++k) {  // each replay's tickets and slots start as the first's did
            REQUIRE(cudaMemsetAsync(d, 0xff, count * sizeof(double), s) == cudaSuccess);
            REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
            REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
            std::vector<double> got(count);
            REQUIRE(cudaMemcpy(got.data(), d, count * sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess);
            check_same(got, want);
        }
        check_same(dot_rows(r), want);  // and the stream's next blocking batch
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        cudaFree(d);
        cudaStreamDestroy(s);
    }
}

TEST_CASE("gpu exact rows: exact zeros among the factors, beside products that underflow, give the exact sum",
          "[gpu][rows][exact]") {
    // Every row's exact dot is the least subnormal (test::zeros_and_underflow): on the roads of groups,
    // of a warp's row done again, of one part and of many parts, with x as F64 and y as F64 or F32.
    const double tiny = std::numeric_limits<double>::denorm_min();
    for (int32_t yd : {CUDOT_F64, CUDOT_F32})
        for (std::size_t n : {std::size_t(4), std::size_t(32), std::size_t(256), std::size_t(1000),
                              std::size_t(8194), std::size_t(70002), (std::size_t(1) << 20) + 2}) {
            const std::size_t count = n > 8192 ? 5 : 33;
            Bed bx(CUDOT_F64, count * n, 1), by(yd, count * n, 2);
            for (std::size_t i = 0; i < count; ++i) {
                std::vector<double> x, y;
                test::zeros_and_underflow(n, 300 + 17 * n + i, x, y);
                for (std::size_t k = 0; k < n; ++k) {
                    test::set_value(CUDOT_F64, bx.host.data(), i * n + k, x[k]);
                    test::set_value(yd, by.host.data(), i * n + k, y[k]);
                }
            }
            REQUIRE(cudaMemcpy(bx.gpu, bx.host.data(), bx.host.size(), cudaMemcpyDefault) == cudaSuccess);
            REQUIRE(cudaMemcpy(by.gpu, by.host.data(), by.host.size(), cudaMemcpyDefault) == cudaSuccess);
            cudot_rows r = exact_request(CUDOT_F64, yd);
            test::aim_strided(r, count, n, bx, by, n);
            INFO("y " << test::dtype_name(yd) << ", n = " << n);
            const std::vector<double> want = expected(r, bx, by);
            for (double w : want) CHECK(bits(w) == bits(tiny));
            check_same(dot_rows(r), want);
            check_same(dot_rows_async(r), want);
        }
}
