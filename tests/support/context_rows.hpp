// context_rows.hpp - the checks of a context with rows (cudot_dot_each_row) for one strategy: every row's
// result has the bits of cudot_dot_arrays on a host copy of that row, for any count of rows and any
// prefix of their elements, after the host rewrites the buffers too; bad calls get a status and a
// message with the results untouched. test_context_rows.cpp runs them on HOST, test_gpu_rows.cpp on
// every GPU strategy.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "own_arrays.hpp"
#include "reference.hpp"

namespace test {

// The dot of a host copy of the first n elements of row r of ctx's buffers, in `mode`: the bits each row
// must have.
inline double row_alone(int32_t xd, int32_t yd, const unsigned char *x, const unsigned char *y, std::size_t row_length,
                        std::size_t r, std::size_t n, int32_t mode = CUDOT_MODE_CANONICAL) {
    const std::size_t sx = dtype_size(xd), sy = dtype_size(yd);
    std::vector<unsigned char> cx(x + r * row_length * sx, x + (r * row_length + n) * sx);
    std::vector<unsigned char> cy(y + r * row_length * sy, y + (r * row_length + n) * sy);
    cudot_arrays a = arrays_of(n, xd, cx.data(), 1, yd, cy.data(), 1);
    a.mode = mode;
    double out = -1;
    REQUIRE(cudot_dot_arrays(&a, &out) == CUDOT_OK);
    return out;
}

struct RowsContext {
    cudot_ctx *ctx = nullptr;
    int32_t xd, yd;
    std::size_t rows, n;
    int32_t mode;
    unsigned char *x = nullptr, *y = nullptr;
    RowsContext(int32_t memory, int32_t device, int32_t x_dtype, int32_t y_dtype, std::size_t r, std::size_t length,
                int32_t m = CUDOT_MODE_CANONICAL)
        : xd(x_dtype), yd(y_dtype), rows(r), n(length), mode(m) {
        cudot_config c = CUDOT_CONFIG_INIT;
        c.dtype = xd;
        c.y_dtype = yd;
        c.memory = memory;
        c.device = device;
        c.rows = rows;
        c.mode = mode;
        const cudot_status s = cudot_init(&ctx, n, &c);
        INFO(cudot_last_error(nullptr));
        REQUIRE(s == CUDOT_OK);
        void *px = nullptr, *py = nullptr;
        REQUIRE(cudot_get_inputs(ctx, &px, &py) == CUDOT_OK);
        x = static_cast<unsigned char *>(px);
        y = static_cast<unsigned char *>(py);
    }
    ~RowsContext() { cudot_deinit(ctx); }
    RowsContext(const RowsContext &) = delete;
    RowsContext &operator=(const RowsContext &) = delete;

    void fill(std::uint64_t seed) {
        const std::vector<unsigned char> vx = random_values(xd, rows * n, seed), vy = random_values(yd, rows * n, seed + 1);
        if (!vx.empty()) std::memcpy(x, vx.data(), vx.size());
        if (!vy.empty()) std::memcpy(y, vy.data(), vy.size());
    }
    // cudot_dot_each_row(count, m) checked row by row against each row alone.
    void check(std::size_t count, std::size_t m) {
        std::vector<double> out(count + 1, -7.0);  // one more: nothing is written past count
        const cudot_status s = cudot_dot_each_row(ctx, count, m, out.data());
        INFO(cudot_last_error(ctx));
        REQUIRE(s == CUDOT_OK);
        CHECK(bits(out[count]) == bits(-7.0));
        for (std::size_t r = 0; r < count; ++r) {
            INFO("row " << r << " of " << count << ", " << m << " of " << n << " elements");
            CHECK(bits(out[r]) == bits(row_alone(xd, yd, x, y, n, r, m, mode)));
        }
    }
};

// Every pair of element types on a few shapes: rows several to a warp, rows of one tile, rows of many;
// in the exact mode, fewer pairs.
inline void check_context_rows(int32_t memory, int32_t device, int32_t mode = CUDOT_MODE_CANONICAL) {
    struct Shape {
        std::size_t rows, n;
    };
    const Shape shapes[] = {{300, 33}, {37, 1000}, {5, 20000}};
    std::uint64_t seed = 1;
    for (int32_t xd : all_dtypes())
        for (int32_t yd : all_dtypes())
            for (const Shape &shape : shapes) {
                if (mode == CUDOT_MODE_EXACT && xd != yd && !(xd == CUDOT_F32 && yd == CUDOT_F64) &&
                    !(xd == CUDOT_I8 && yd == CUDOT_F16))
                    continue;
                INFO(memory_name(memory) << " " << dtype_name(xd) << " x " << dtype_name(yd) << ", " << shape.rows
                                         << " rows of " << shape.n << (mode == CUDOT_MODE_EXACT ? ", exact" : ""));
                RowsContext c(memory, device, xd, yd, shape.rows, shape.n, mode);
                std::size_t rows = 0, n = 0, capacity = 0;
                REQUIRE(cudot_get_rows(c.ctx, &rows, &n) == CUDOT_OK);
                REQUIRE(cudot_get_capacity(c.ctx, &capacity) == CUDOT_OK);
                CHECK(rows == shape.rows);
                CHECK(n == shape.n);
                CHECK(capacity == shape.rows * shape.n);
                c.fill(seed += 2);
                c.check(shape.rows, shape.n);
                c.check(shape.rows / 2 + 1, shape.n / 3 + 1);  // a prefix of the rows, a prefix of each
                c.check(1, shape.n);
                c.fill(seed += 2);  // fresh data: copied, migrated or read again, never a stale answer
                c.check(shape.rows, shape.n);
                c.check(shape.rows, 1);
                // The whole buffers are one vector of rows * n elements to cudot_dot.
                double whole = -1;
                REQUIRE(cudot_dot(c.ctx, &whole) == CUDOT_OK);
                CHECK(bits(whole) == bits(row_alone(xd, yd, c.x, c.y, shape.rows * shape.n, 0, shape.rows * shape.n, mode)));
            }
}

// Bad calls: a status and a message naming the problem, the results untouched.
inline void check_context_rows_refusals(int32_t memory, int32_t device) {
    RowsContext c(memory, device, CUDOT_F32, CUDOT_F32, 8, 100);
    c.fill(5);
    std::vector<double> out(9, -7.0);
    const auto refused = [&](std::size_t count, std::size_t m, double *results, const char *says) {
        const cudot_status s = cudot_dot_each_row(c.ctx, count, m, results);
        CHECK(s == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(cudot_last_error(c.ctx)).find(says) != std::string::npos);
        for (double v : out) CHECK(bits(v) == bits(-7.0));
    };
    refused(9, 100, out.data(), "exceed the context's 8 rows of 100");
    refused(8, 101, out.data(), "exceed the context's 8 rows of 100");
    refused(1, 100, nullptr, "results is NULL");
    refused(2, 100, reinterpret_cast<double *>(reinterpret_cast<unsigned char *>(out.data()) + 4), "not 8-byte aligned");
    refused(2, 100, reinterpret_cast<double *>(c.x + 8), "overlap the context's x buffer");
    refused(2, 100, reinterpret_cast<double *>(c.y + 392), "overlap the context's y buffer");
    CHECK(cudot_dot_each_row(c.ctx, 0, 100, nullptr) == CUDOT_OK);  // nothing asked, nothing written
    CHECK(cudot_dot_each_row(c.ctx, 3, 0, out.data()) == CUDOT_OK);  // empty rows: +0.0 each
    for (int i = 0; i < 3; ++i) CHECK(bits(out[i]) == bits(0.0));
    CHECK(bits(out[3]) == bits(-7.0));
    CHECK(cudot_dot_each_row(nullptr, 1, 1, out.data()) == CUDOT_ERROR_INVALID_ARGUMENT);
}

}  // namespace test
