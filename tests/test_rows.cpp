// test_rows.cpp - cudot_dot_rows on host memory (the CPU path, which runs everywhere): each row's result
// has the bits of cudot_dot_arrays on that row alone, whatever the layout, the batch, the row's place in
// it and the strides; re-batched at random thousands of times; and every bad request gets a status and a
// message with the results left untouched.
#include <catch2/catch.hpp>

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

#include "cpu/thread_pool.hpp"
#include "own_arrays.hpp"
#include "reference.hpp"
#include "rows_call.hpp"

using test::bits;
using test::dot_rows;

namespace {

// The dot of one row alone: the bits every batch must give that row.
double alone(std::size_t n, int32_t xd, const void *x, std::int64_t sx, int32_t yd, const void *y, std::int64_t sy) {
    const cudot_arrays a = test::arrays_of(n, xd, x, sx, yd, y, sy);
    double r = -1;
    const cudot_status s = cudot_dot_arrays(&a, &r);
    INFO(cudot_last_error(nullptr));
    REQUIRE(s == CUDOT_OK);
    return r;
}

cudot_rows strided(std::size_t count, std::size_t n, int32_t xd, const void *x, std::int64_t xrow, int32_t yd,
                   const void *y, std::int64_t yrow) {
    cudot_rows r = CUDOT_ROWS_INIT;
    r.layout = CUDOT_ROWS_STRIDED;
    r.count = count;
    r.n = n;
    r.x.data = x;
    r.x.dtype = xd;
    r.y.data = y;
    r.y.dtype = yd;
    r.x_row_stride = xrow;
    r.y_row_stride = yrow;
    return r;
}

cudot_rows pointers(std::size_t count, std::size_t n, int32_t xd, const void *const *xs, int32_t yd,
                    const void *const *ys) {
    cudot_rows r = CUDOT_ROWS_INIT;
    r.layout = CUDOT_ROWS_POINTERS;
    r.count = count;
    r.n = n;
    r.x.dtype = xd;
    r.y.dtype = yd;
    r.x_rows = xs;
    r.y_rows = ys;
    return r;
}

cudot_rows segmented(std::size_t count, const std::int64_t *offsets, int32_t xd, const void *x, int32_t yd,
                     const void *y) {
    cudot_rows r = CUDOT_ROWS_INIT;
    r.layout = CUDOT_ROWS_SEGMENTED;
    r.count = count;
    r.offsets = offsets;
    r.x.data = x;
    r.x.dtype = xd;
    r.y.data = y;
    r.y.dtype = yd;
    return r;
}

const unsigned char *at(const std::vector<unsigned char> &v, std::size_t element, std::size_t size) {
    return v.data() + element * size;
}

}  // namespace

TEST_CASE("rows: strided batches, every pair, each row with its own dot's bits", "[rows][api]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(100), std::size_t(8193)}) {
                const std::size_t count = 5, sx = test::dtype_size(xd), sy = test::dtype_size(yd);
                const std::size_t pad = 3, row = n + pad;  // rows with a gap between them
                const std::vector<unsigned char> xv = test::random_values(xd, count * row, 11 + n);
                const std::vector<unsigned char> yv = test::random_values(yd, count * row, 12 + n);
                INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n);
                // Rows one after the other, with gaps; x read backwards from its last row; one x for every y.
                const std::int64_t r = static_cast<std::int64_t>(row);
                struct Case {
                    const void *x;
                    std::int64_t xrow;
                };
                for (const Case c : {Case{xv.data(), r}, Case{at(xv, (count - 1) * row, sx), -r}, Case{xv.data(), 0}}) {
                    const std::vector<double> got = dot_rows(strided(count, n, xd, c.x, c.xrow, yd, yv.data(), r));
                    for (std::size_t i = 0; i < count; ++i) {
                        const void *xi = static_cast<const unsigned char *>(c.x) + static_cast<std::ptrdiff_t>(i) * c.xrow *
                                                                                     static_cast<std::ptrdiff_t>(sx);
                        CHECK(bits(got[i]) == bits(alone(n, xd, xi, 1, yd, at(yv, i * row, sy), 1)));
                    }
                }
            }
}

TEST_CASE("rows: element strides inside rows, and rows long enough to share the pool", "[rows][api]") {
    const int32_t xd = CUDOT_F32, yd = CUDOT_F64;
    const std::size_t count = 3, n = 150000;  // 1.8 MB a row: above the pool's threshold
    const std::vector<unsigned char> xv = test::random_values(xd, 2 * count * n, 5);
    const std::vector<unsigned char> yv = test::random_values(yd, count * n, 6);
    cudot_rows r = strided(count, n, xd, xv.data(), 2 * static_cast<std::int64_t>(n), yd, yv.data(),
                           static_cast<std::int64_t>(n));
    r.x.stride = 2;  // every other element of x
    const std::vector<double> got = dot_rows(r);
    for (std::size_t i = 0; i < count; ++i)
        CHECK(bits(got[i]) == bits(alone(n, xd, at(xv, 2 * i * n, 4), 2, yd, at(yv, i * n, 8), 1)));
}

// With at least two rows a pool thread, rows above the pool's threshold are computed whole, each on one
// thread (up to 128 tiles), rather than each shared with the pool in turn; longer rows still are.
TEST_CASE("rows: many rows above the pool's threshold, each on one thread, and a row too long for that",
          "[rows][api]") {
    const std::size_t threads = cudot::cpu::ThreadPool::instance().threads();
    const std::size_t count = 2 * threads + 1, n = 150000;  // 1.2 MB a row of f32 pairs: above the threshold
    const std::size_t long_row = 129 * 8192 + 3;             // 130 tiles: shared with the pool
    for (int mode : {CUDOT_MODE_CANONICAL, CUDOT_MODE_EXACT})
        for (const auto &pair : {std::pair<int32_t, int32_t>{CUDOT_F32, CUDOT_F32}, {CUDOT_F64, CUDOT_F64},
                                 {CUDOT_F32, CUDOT_F64}}) {
            const int32_t xd = pair.first, yd = pair.second;
            const std::size_t sx = test::dtype_size(xd), sy = test::dtype_size(yd), row = n + 5;
            const std::size_t total = count * row + long_row;
            const std::vector<unsigned char> xv = test::random_values(xd, total, 41 + xd);
            const std::vector<unsigned char> yv = test::random_values(yd, total, 42 + yd);
            auto own = [&](std::size_t from, std::size_t len) {
                cudot_arrays a = test::arrays_of(len, xd, at(xv, from, sx), 1, yd, at(yv, from, sy), 1);
                a.mode = mode;
                double r = -1;
                REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
                return r;
            };
            INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " mode " << mode << ", " << count << " rows");
            cudot_rows r = strided(count, n, xd, xv.data(), static_cast<std::int64_t>(row), yd, yv.data(),
                                   static_cast<std::int64_t>(row));
            r.mode = mode;
            const std::vector<double> got = dot_rows(r);
            for (std::size_t i = 0; i < count; ++i) CHECK(bits(got[i]) == bits(own(i * row, n)));
            // The same rows and, last, one of 130 tiles, as segments.
            std::vector<std::int64_t> offsets;
            for (std::size_t i = 0; i <= count; ++i) offsets.push_back(static_cast<std::int64_t>(i * row));
            offsets.push_back(static_cast<std::int64_t>(total));
            cudot_rows seg = segmented(count + 1, offsets.data(), xd, xv.data(), yd, yv.data());
            seg.mode = mode;
            const std::vector<double> segs = dot_rows(seg);
            for (std::size_t i = 0; i < count; ++i) CHECK(bits(segs[i]) == bits(own(i * row, row)));
            CHECK(bits(segs[count]) == bits(own(count * row, long_row)));
        }
}

TEST_CASE("rows: segmented rows of any length, empty ones included", "[rows][api]") {
    for (int32_t xd : {CUDOT_F32, CUDOT_F64, CUDOT_BF16, CUDOT_I8})
        for (int32_t yd : {CUDOT_F32, CUDOT_F64, CUDOT_U8}) {
            const std::vector<std::int64_t> offsets{7, 7, 8, 8200, 8200, 30000, 30001, 200000};
            const std::size_t count = offsets.size() - 1, total = static_cast<std::size_t>(offsets.back());
            const std::vector<unsigned char> xv = test::random_values(xd, total, 21);
            const std::vector<unsigned char> yv = test::random_values(yd, total, 22);
            INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd));
            const std::vector<double> got = dot_rows(segmented(count, offsets.data(), xd, xv.data(), yd, yv.data()));
            for (std::size_t i = 0; i < count; ++i) {
                const std::size_t from = static_cast<std::size_t>(offsets[i]), len = static_cast<std::size_t>(offsets[i + 1]) - from;
                const double want = len == 0 ? 0.0 : alone(len, xd, at(xv, from, test::dtype_size(xd)), 1, yd,
                                                            at(yv, from, test::dtype_size(yd)), 1);
                CHECK(bits(got[i]) == bits(want));
            }
        }
}

TEST_CASE("rows: re-batched at random thousands of times, every row keeps its bits", "[rows][api]") {
    std::mt19937_64 rng(20261128);
    for (int32_t xd : {CUDOT_F32, CUDOT_F64, CUDOT_F16})
        for (int32_t yd : {CUDOT_F32, CUDOT_F64}) {
            const std::size_t count = 48, sx = test::dtype_size(xd), sy = test::dtype_size(yd);
            for (std::size_t n : {std::size_t(33), std::size_t(1000), std::size_t(9000)}) {
                const std::vector<unsigned char> xv = test::random_values(xd, count * n, n + 1);
                const std::vector<unsigned char> yv = test::random_values(yd, count * n, n + 2);
                const std::int64_t row = static_cast<std::int64_t>(n);
                const std::vector<double> whole = dot_rows(strided(count, n, xd, xv.data(), row, yd, yv.data(), row));
                std::vector<std::uint64_t> want(count);
                for (std::size_t i = 0; i < count; ++i) {
                    want[i] = bits(alone(n, xd, at(xv, i * n, sx), 1, yd, at(yv, i * n, sy), 1));
                    REQUIRE(bits(whole[i]) == want[i]);
                }
                std::vector<std::size_t> order(count);
                std::iota(order.begin(), order.end(), std::size_t(0));
                std::size_t mismatches = 0, checked = 0;
                for (int round = 0; round < 400; ++round) {
                    std::shuffle(order.begin(), order.end(), rng);
                    // Cut the permuted rows into sub-batches of random sizes; each goes as row pointers.
                    for (std::size_t first = 0; first < count;) {
                        const std::size_t take = std::min<std::size_t>(count - first, 1 + rng() % 17);
                        std::vector<const void *> xs(take), ys(take);
                        for (std::size_t k = 0; k < take; ++k) {
                            xs[k] = at(xv, order[first + k] * n, sx);
                            ys[k] = at(yv, order[first + k] * n, sy);
                        }
                        const std::vector<double> got = dot_rows(pointers(take, n, xd, xs.data(), yd, ys.data()));
                        for (std::size_t k = 0; k < take; ++k, ++checked)
                            if (bits(got[k]) != want[order[first + k]]) ++mismatches;
                        first += take;
                    }
                    // And a contiguous run of rows as a segmented batch.
                    const std::size_t lo = rng() % count, hi = lo + 1 + rng() % (count - lo);
                    std::vector<std::int64_t> offsets;
                    for (std::size_t i = lo; i <= hi; ++i) offsets.push_back(static_cast<std::int64_t>(i * n));
                    const std::vector<double> seg = dot_rows(segmented(hi - lo, offsets.data(), xd, xv.data(), yd, yv.data()));
                    for (std::size_t i = lo; i < hi; ++i, ++checked)
                        if (bits(seg[i - lo]) != want[i]) ++mismatches;
                }
                INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n << ": " << checked << " rows");
                CHECK(checked > 10000);
                CHECK(mismatches == 0);
            }
        }
}

TEST_CASE("rows: NaN, infinities and count 0", "[rows][api]") {
    std::vector<double> x{1.0, std::nan(""), 3.0, std::numeric_limits<double>::infinity(), 2.0, 2.0};
    std::vector<double> y{1.0, 1.0, 1.0, 0.0, 0.5, 0.5};
    const std::vector<double> got = dot_rows(strided(3, 2, CUDOT_F64, x.data(), 2, CUDOT_F64, y.data(), 2));
    CHECK(std::isnan(got[0]));
    CHECK(bits(got[0]) == bits(alone(2, CUDOT_F64, x.data(), 1, CUDOT_F64, y.data(), 1)));
    CHECK(bits(got[1]) == bits(alone(2, CUDOT_F64, x.data() + 2, 1, CUDOT_F64, y.data() + 2, 1)));
    CHECK(got[2] == 2.0);
    cudot_rows none = strided(0, 2, CUDOT_F64, x.data(), 2, CUDOT_F64, y.data(), 2);
    CHECK(cudot_dot_rows(&none, nullptr) == CUDOT_OK);  // nothing is written
}

TEST_CASE("rows: bad requests get a status and a message, and the results are left alone", "[rows][api]") {
    std::vector<float> x(64, 1.0f), y(64, 2.0f);
    std::vector<double> results(8);
    auto refused = [&](const cudot_rows &r, cudot_status want, const char *words, double *out = nullptr) {
        if (!out) out = results.data();
        std::fill(results.begin(), results.end(), 42.0);
        const cudot_status s = cudot_dot_rows(&r, out);
        const std::string message = cudot_last_error(nullptr);
        INFO(message);
        CHECK(s == want);
        CHECK(message.find(words) != std::string::npos);
        for (double v : results) CHECK(v == 42.0);
    };
    const cudot_rows good = strided(4, 8, CUDOT_F32, x.data(), 8, CUDOT_F32, y.data(), 8);
    REQUIRE(dot_rows(good) == std::vector<double>(4, 16.0));

    CHECK(cudot_dot_rows(nullptr, results.data()) == CUDOT_ERROR_INVALID_ARGUMENT);
    cudot_rows r = good;
    r.size = 8;
    refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_rows.size");
    r = good;
    r.layout = 7;
    refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "layout 7");
    r = good;
    r.x.dtype = 9;
    refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "dtype");
    r = good;
    r.y.reserved = 1;
    refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "reserved");
    CHECK(cudot_dot_rows(&good, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    refused(good, CUDOT_ERROR_INVALID_ARGUMENT, "aligned",
            reinterpret_cast<double *>(reinterpret_cast<unsigned char *>(results.data()) + 4));
    r = good;
    r.x.data = nullptr;
    refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "x.data is NULL");
    r = good;
    r.offsets = reinterpret_cast<const std::int64_t *>(x.data());
    refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "must be NULL");
    r = good;  // count * row stride beyond the address space
    r.x_row_stride = std::numeric_limits<std::int64_t>::max() / 2;
    refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "beyond the address space");
    // Results that overlap a row: the rows would be written while they are read.
    std::vector<double> dx(64, 1.0);
    cudot_rows overlap = strided(4, 8, CUDOT_F64, dx.data(), 8, CUDOT_F32, y.data(), 8);
    std::fill(dx.begin(), dx.end(), 1.0);
    CHECK(cudot_dot_rows(&overlap, dx.data() + 10) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("overlap") != std::string::npos);
    CHECK(std::all_of(dx.begin(), dx.end(), [](double v) { return v == 1.0; }));

    const std::vector<std::int64_t> decreasing{0, 8, 4}, negative{-1, 8}, fine{0, 8, 16};
    refused(segmented(2, decreasing.data(), CUDOT_F32, x.data(), CUDOT_F32, y.data()), CUDOT_ERROR_INVALID_ARGUMENT,
            "is below offsets");
    refused(segmented(1, negative.data(), CUDOT_F32, x.data(), CUDOT_F32, y.data()), CUDOT_ERROR_INVALID_ARGUMENT,
            "below 0");
    refused(segmented(2, nullptr, CUDOT_F32, x.data(), CUDOT_F32, y.data()), CUDOT_ERROR_INVALID_ARGUMENT,
            "offsets is NULL");
    r = segmented(2, fine.data(), CUDOT_F32, x.data(), CUDOT_F32, y.data());
    r.n = 8;
    refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "must be 0");

    const void *xs[2] = {x.data(), nullptr}, *ys[2] = {y.data(), y.data() + 8};
    refused(pointers(2, 8, CUDOT_F32, xs, CUDOT_F32, ys), CUDOT_ERROR_INVALID_ARGUMENT, "x_rows[1] is NULL");
    refused(pointers(2, 8, CUDOT_F32, nullptr, CUDOT_F32, ys), CUDOT_ERROR_INVALID_ARGUMENT, "x_rows is NULL");
    r = pointers(2, 8, CUDOT_F32, xs, CUDOT_F32, ys);
    r.x.data = x.data();
    refused(r, CUDOT_ERROR_INVALID_ARGUMENT, "must be 0");

    // A size larger than this library knows: zero bytes beyond are fine, others are a newer header's.
    struct Bigger {
        cudot_rows r;
        unsigned char more[16];
    } big{};
    big.r = good;
    big.r.size = sizeof big;
    CHECK(cudot_dot_rows(&big.r, results.data()) == CUDOT_OK);
    big.more[3] = 1;
    refused(big.r, CUDOT_ERROR_UNSUPPORTED, "newer header");
}

TEST_CASE("rows: threads dotting batches at once each get their own rows' bits", "[rows][threads]") {
    const std::size_t count = 300, n = 2000;
    const std::vector<unsigned char> xv = test::random_values(CUDOT_F32, count * n, 71);
    const std::vector<unsigned char> yv = test::random_values(CUDOT_F64, count * n, 72);
    const std::int64_t row = static_cast<std::int64_t>(n);
    std::vector<std::uint64_t> want(count);
    for (std::size_t i = 0; i < count; ++i)
        want[i] = bits(alone(n, CUDOT_F32, at(xv, i * n, 4), 1, CUDOT_F64, at(yv, i * n, 8), 1));
    std::vector<std::size_t> wrong(8, 0);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < wrong.size(); ++t)
        threads.emplace_back([&, t] {
            for (int round = 0; round < 20; ++round) {
                const cudot_rows r = strided(count, n, CUDOT_F32, xv.data(), row, CUDOT_F64, yv.data(), row);
                std::vector<double> out(count);
                if (cudot_dot_rows(&r, out.data()) != CUDOT_OK) {
                    ++wrong[t];
                    continue;
                }
                for (std::size_t i = 0; i < count; ++i) wrong[t] += bits(out[i]) != want[i];
            }
        });
    for (auto &t : threads) t.join();
    CHECK(std::accumulate(wrong.begin(), wrong.end(), std::size_t(0)) == 0);
}
