// test_exact_rows.cpp - batches of rows in CUDOT_MODE_EXACT on host memory (the CPU computes them): every
// row's result must be the bits of that row's own exact dot (cudot_dot_arrays in the exact mode, itself
// checked against MPFR in test_exact.cpp), whatever the layout, the batch, the strides or the values;
// exact contexts' rows (cudot_dot_each_row); the request's mode field; and the rounding of three terms
// that the GPU's batch kernel uses, against the fixed-point sum's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "core/exact_sum.hpp"
#include "exact_rows.hpp"
#include "rows_call.hpp"

using test::bits;
using test::dot_rows;
using test::exact_alone;
using test::exact_rows_request;
using test::row_values;

namespace {

const unsigned char *at(const std::vector<unsigned char> &v, std::size_t element, std::size_t size) {
    return v.data() + element * size;
}

// Rows of kinds 0..3 (row_values), row i of kind i % 4, laid one after the other with a gap of `pad`.
struct Batch {
    std::vector<unsigned char> x, y;
    std::size_t row;  // elements from one row's start to the next
};
Batch batch_of(int32_t xd, int32_t yd, std::size_t count, std::size_t n, std::size_t pad, std::uint64_t seed) {
    Batch b{std::vector<unsigned char>((count * (n + pad) + 1) * test::dtype_size(xd)),
            std::vector<unsigned char>((count * (n + pad) + 1) * test::dtype_size(yd)), n + pad};
    for (std::size_t i = 0; i < count; ++i) {
        const std::vector<unsigned char> xr = row_values(xd, n, static_cast<int>(i % 4), seed + 2 * i);
        const std::vector<unsigned char> yr = row_values(yd, n, static_cast<int>(i % 4 == 3 ? 0 : i % 4), seed + 2 * i + 1);
        std::memcpy(b.x.data() + i * b.row * test::dtype_size(xd), xr.data(), n * test::dtype_size(xd));
        std::memcpy(b.y.data() + i * b.row * test::dtype_size(yd), yr.data(), n * test::dtype_size(yd));
    }
    return b;
}

// A canonical double as a sum of terms the way an expansion leaves it: `terms` values of exponents
// within [lo, hi], or tuned to sit on and around rounding ties.
double random_double(std::mt19937_64 &rng, int lo, int hi) {
    std::uniform_int_distribution<int> e(lo, hi);
    std::uniform_real_distribution<double> m(1.0, 2.0);
    return std::ldexp(m(rng), e(rng)) * (rng() & 1 ? -1.0 : 1.0);
}

double fixed_point_rounding(double a, double b, double c) {
    cudot::exact::Sum s;
    cudot::exact::clear(s);
    cudot::exact::add_double(s, a);
    cudot::exact::add_double(s, b);
    cudot::exact::add_double(s, c);
    return cudot::exact::round(s);
}

}  // namespace

TEST_CASE("exact rows: three terms rounded by rounding to odd equal the fixed-point sum rounded", "[exact][rows]") {
    std::mt19937_64 rng(20261129);
    std::size_t mismatches = 0, ties = 0;
    const int order[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int it = 0; it < 600000; ++it) {
        double t[3];
        switch (it % 5) {
            case 0:  // nearby magnitudes
                for (double &v : t) v = random_double(rng, -30, 30);
                break;
            case 1: {  // a, an exact half unit in a's last place (a tie), and something below or nothing
                t[0] = random_double(rng, -10, 10);
                int e;
                std::frexp(t[0], &e);
                t[1] = std::ldexp(rng() & 1 ? 1.0 : -1.0, e - 54);
                t[2] = rng() % 3 == 0 ? 0.0 : std::ldexp(random_double(rng, 0, 0), e - 56 - static_cast<int>(rng() % 80));
                break;
            }
            case 2: {  // near-cancellation
                t[0] = random_double(rng, -5, 5);
                t[1] = -(t[0] - std::ldexp(random_double(rng, 0, 0), -40));
                t[2] = random_double(rng, -200, -90);
                break;
            }
            case 3:  // the subnormal range
                for (double &v : t) v = std::ldexp(random_double(rng, 0, 0), -1074 + static_cast<int>(rng() % 60));
                break;
            default:  // large values, far from each other
                t[0] = random_double(rng, 900, 999);
                t[1] = random_double(rng, 840, 999);
                t[2] = random_double(rng, -10, 900);
        }
        const int *o = order[rng() % 6];
        const double want = fixed_point_rounding(t[0], t[1], t[2]);
        const double got = cudot::exact::round_three(t[o[0]], t[o[1]], t[o[2]]);
        if (it % 5 == 1 && t[2] == 0) ++ties;
        if (bits(got) != bits(want)) {
            if (mismatches < 5) WARN(t[0] << " " << t[1] << " " << t[2]);
            ++mismatches;
        }
    }
    CHECK(ties > 10000);
    CHECK(mismatches == 0);
    // Two terms: one IEEE addition is the exact sum rounded once.
    cudot::exact::Expansion<2> two{{1.0, std::ldexp(1.0, -53)}};
    CHECK(bits(cudot::exact::round_terms(two)) == bits(1.0));  // the tie goes to the even 1.0
    two.a[1] = std::ldexp(3.0, -54);
    CHECK(bits(cudot::exact::round_terms(two)) == bits(1.0 + std::ldexp(1.0, -52)));
}

TEST_CASE("exact rows: every layout and pair, each row with its own exact dot's bits", "[exact][rows]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(37), std::size_t(1025), std::size_t(9000)}) {
                const std::size_t count = 8, sx = test::dtype_size(xd), sy = test::dtype_size(yd);
                const Batch b = batch_of(xd, yd, count, n, 3, 100 * n + static_cast<std::uint64_t>(xd * 7 + yd));
                INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n);
                std::vector<double> want(count);
                for (std::size_t i = 0; i < count; ++i)
                    want[i] = exact_alone(n, xd, at(b.x, i * b.row, sx), 1, yd, at(b.y, i * b.row, sy), 1);
                const std::int64_t row = static_cast<std::int64_t>(b.row);
                cudot_rows r = exact_rows_request(CUDOT_ROWS_STRIDED, count, n, xd, b.x.data(), yd, b.y.data());
                r.x_row_stride = r.y_row_stride = row;
                std::vector<double> got = dot_rows(r);
                for (std::size_t i = 0; i < count; ++i) CHECK(bits(got[i]) == bits(want[i]));
                // Row pointers, in reverse order.
                std::vector<const void *> xs(count), ys(count);
                for (std::size_t i = 0; i < count; ++i) {
                    xs[i] = at(b.x, (count - 1 - i) * b.row, sx);
                    ys[i] = at(b.y, (count - 1 - i) * b.row, sy);
                }
                r = exact_rows_request(CUDOT_ROWS_POINTERS, count, n, xd, nullptr, yd, nullptr);
                r.x_rows = xs.data();
                r.y_rows = ys.data();
                got = dot_rows(r);
                for (std::size_t i = 0; i < count; ++i) CHECK(bits(got[i]) == bits(want[count - 1 - i]));
                // One x against every y (row stride 0), and x's elements every other one.
                r = exact_rows_request(CUDOT_ROWS_STRIDED, count / 2, n / 2, xd, b.x.data(), yd, b.y.data());
                r.x.stride = 2;
                r.y_row_stride = row;
                got = dot_rows(r);
                for (std::size_t i = 0; i < count / 2; ++i)
                    CHECK(bits(got[i]) == bits(exact_alone(n / 2, xd, b.x.data(), 2, yd, at(b.y, i * b.row, sy), 1)));
            }
}

TEST_CASE("exact rows: segmented rows of any length, empty ones included, and values of every kind", "[exact][rows]") {
    for (int32_t xd : {CUDOT_F32, CUDOT_F64, CUDOT_BF16, CUDOT_I8})
        for (int32_t yd : {CUDOT_F32, CUDOT_F64, CUDOT_U8}) {
            const std::vector<std::int64_t> offsets{5, 5, 6, 40, 1100, 1100, 9300, 40000, 40001, 150000};
            const std::size_t count = offsets.size() - 1, total = static_cast<std::size_t>(offsets.back());
            std::vector<unsigned char> xv(total * test::dtype_size(xd)), yv(total * test::dtype_size(yd));
            for (std::size_t i = 0; i < count; ++i) {  // row i of kind i % 4
                const std::size_t from = static_cast<std::size_t>(offsets[i]), len = static_cast<std::size_t>(offsets[i + 1]) - from;
                const std::vector<unsigned char> xr = row_values(xd, len, static_cast<int>(i % 4), 31 + i);
                const std::vector<unsigned char> yr = row_values(yd, len, static_cast<int>(i % 4 == 3 ? 0 : i % 4), 57 + i);
                std::memcpy(xv.data() + from * test::dtype_size(xd), xr.data(), len * test::dtype_size(xd));
                std::memcpy(yv.data() + from * test::dtype_size(yd), yr.data(), len * test::dtype_size(yd));
            }
            INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd));
            cudot_rows r = exact_rows_request(CUDOT_ROWS_SEGMENTED, count, 0, xd, xv.data(), yd, yv.data());
            r.offsets = offsets.data();
            const std::vector<double> got = dot_rows(r);
            for (std::size_t i = 0; i < count; ++i) {
                const std::size_t from = static_cast<std::size_t>(offsets[i]), len = static_cast<std::size_t>(offsets[i + 1]) - from;
                CHECK(bits(got[i]) == bits(exact_alone(len, xd, at(xv, from, test::dtype_size(xd)), 1, yd,
                                                       at(yv, from, test::dtype_size(yd)), 1)));
            }
        }
}

TEST_CASE("exact rows: re-batched at random, rows permuted, every row keeps its bits", "[exact][rows]") {
    std::mt19937_64 rng(20261129);
    for (int32_t xd : {CUDOT_F32, CUDOT_F64})
        for (std::size_t n : {std::size_t(29), std::size_t(3000)}) {
            const std::size_t count = 40, s = test::dtype_size(xd);
            const Batch b = batch_of(xd, xd, count, n, 0, 900 + n);
            std::vector<std::uint64_t> want(count);
            for (std::size_t i = 0; i < count; ++i)
                want[i] = bits(exact_alone(n, xd, at(b.x, i * n, s), 1, xd, at(b.y, i * n, s), 1));
            std::vector<std::size_t> order(count);
            std::iota(order.begin(), order.end(), std::size_t(0));
            std::size_t mismatches = 0, checked = 0;
            for (int round = 0; round < 150; ++round) {
                std::shuffle(order.begin(), order.end(), rng);
                for (std::size_t first = 0; first < count;) {
                    const std::size_t take = std::min<std::size_t>(count - first, 1 + rng() % 13);
                    std::vector<const void *> xs(take), ys(take);
                    for (std::size_t k = 0; k < take; ++k) {
                        xs[k] = at(b.x, order[first + k] * n, s);
                        ys[k] = at(b.y, order[first + k] * n, s);
                    }
                    cudot_rows r = exact_rows_request(CUDOT_ROWS_POINTERS, take, n, xd, nullptr, xd, nullptr);
                    r.x_rows = xs.data();
                    r.y_rows = ys.data();
                    const std::vector<double> got = dot_rows(r);
                    for (std::size_t k = 0; k < take; ++k, ++checked)
                        if (bits(got[k]) != want[order[first + k]]) ++mismatches;
                    first += take;
                }
            }
            INFO(test::dtype_name(xd) << " n=" << n << ": " << checked << " rows");
            CHECK(checked == 150 * count);
            CHECK(mismatches == 0);
        }
}

TEST_CASE("exact rows: the request's mode: an older size gets the canonical mode; bad modes are refused", "[exact][rows][errors]") {
    // The f32 case: [1e16, 1, -1e16] x 100, then [3], against ones: exact 103, canonical 4.
    std::vector<float> x;
    for (int i = 0; i < 100; ++i) x.insert(x.end(), {1e16f, 1.0f, -1e16f});
    x.push_back(3.0f);
    const std::vector<float> y(x.size(), 1.0f);
    cudot_rows r = exact_rows_request(CUDOT_ROWS_STRIDED, 1, x.size(), CUDOT_F32, x.data(), CUDOT_F32, y.data());
    CHECK(dot_rows(r)[0] == 103.0);
    const std::uint32_t older = static_cast<std::uint32_t>(offsetof(cudot_rows, mode));
    CHECK(older == 136);
    r.size = older;  // a caller built with 1.13's header: the bytes from `mode` on are not read
    CHECK(dot_rows(r)[0] == 4.0);  // the canonical mode's
    double out = -7.0;
    for (std::uint32_t size : {older - 1, older + 1, older + 4, static_cast<std::uint32_t>(sizeof(cudot_rows)) - 1}) {
        r.size = size;
        CHECK(cudot_dot_rows(&r, &out) == CUDOT_ERROR_INVALID_ARGUMENT);
    }
    r.size = sizeof(cudot_rows);
    r.mode = 2;
    CHECK(cudot_dot_rows(&r, &out) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("mode") != std::string::npos);
    r.mode = CUDOT_MODE_EXACT;
    r.reserved = 1;
    CHECK(cudot_dot_rows(&r, &out) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(bits(out) == bits(-7.0));
}

TEST_CASE("exact rows: exact HOST and AUTO contexts dot each row exactly", "[exact][rows][context]") {
    for (int32_t memory : {CUDOT_MEMORY_HOST, CUDOT_MEMORY_AUTO})
        for (int32_t xd : {CUDOT_F32, CUDOT_F64}) {
            const std::size_t rows = 12, n = 3000, s = test::dtype_size(xd);
            cudot_config cfg = CUDOT_CONFIG_INIT;
            cfg.dtype = cfg.y_dtype = xd;
            cfg.memory = memory;
            cfg.rows = rows;
            cfg.mode = CUDOT_MODE_EXACT;
            cudot_ctx *ctx = nullptr;
            INFO(cudot_last_error(nullptr));
            REQUIRE(cudot_init(&ctx, n, &cfg) == CUDOT_OK);
            void *x = nullptr, *y = nullptr;
            REQUIRE(cudot_get_inputs(ctx, &x, &y) == CUDOT_OK);
            const Batch b = batch_of(xd, xd, rows, n, 0, 4000 + static_cast<std::uint64_t>(memory));
            std::memcpy(x, b.x.data(), rows * n * s);
            std::memcpy(y, b.y.data(), rows * n * s);
            for (std::size_t m : {n, std::size_t(1000), std::size_t(0)}) {
                std::vector<double> got(rows, -7.0);
                INFO(test::memory_name(memory) << " " << test::dtype_name(xd) << " m=" << m);
                REQUIRE(cudot_dot_each_row(ctx, rows - 1, m, got.data()) == CUDOT_OK);
                for (std::size_t i = 0; i + 1 < rows; ++i)
                    CHECK(bits(got[i]) == bits(exact_alone(m, xd, at(b.x, i * n, s), 1, xd, at(b.y, i * n, s), 1)));
                CHECK(bits(got[rows - 1]) == bits(-7.0));
            }
            CHECK(cudot_deinit(ctx) == CUDOT_OK);
        }
}
