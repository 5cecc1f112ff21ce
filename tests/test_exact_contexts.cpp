// test_exact_contexts.cpp - CUDOT_MODE_EXACT beyond one call on host arrays: contexts made with
// cudot_config.mode, and exact partials (cudot_tile_partials, cudot_tile_partials_arrays,
// cudot_join_exact_partials). Every result must be the bits of cudot_dot_arrays in the exact mode on the
// same elements (itself checked against MPFR in test_exact.cpp), whatever the strategy, the cut into
// partials, their order, or the element types. Contexts here are AUTO and HOST: on a machine with a GPU,
// AUTO computes on the CPU threads, the GPU, or both (test_gpu_exact.cpp covers every GPU strategy).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "own_arrays.hpp"
#include "reference.hpp"

using test::bits;
using test::exact_request;
using test::wide_values;

namespace {

using Partial = std::vector<unsigned char>;

cudot_ctx *exact_context(std::size_t n, int32_t xd, int32_t yd, int32_t memory) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = xd;
    cfg.y_dtype = yd;
    cfg.memory = memory;
    cfg.mode = CUDOT_MODE_EXACT;
    cudot_ctx *ctx = nullptr;
    INFO(cudot_last_error(nullptr));
    REQUIRE(cudot_init(&ctx, n, &cfg) == CUDOT_OK);
    return ctx;
}

// Random bytes that make finite values of every type (doubles of a wide range for F64).
void fill(void *p, int32_t dtype, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    if (dtype == CUDOT_F64) {
        const std::vector<double> v = wide_values(n, -300, 300, seed);
        std::memcpy(p, v.data(), n * 8);
    } else if (dtype == CUDOT_F32) {
        std::uniform_real_distribution<float> u(-1e6f, 1e6f);
        for (std::size_t i = 0; i < n; ++i) static_cast<float *>(p)[i] = u(rng) * (i % 7 == 0 ? 1e20f : 1.0f);
    } else if (dtype == CUDOT_F16 || dtype == CUDOT_BF16) {
        for (std::size_t i = 0; i < n; ++i) static_cast<std::uint16_t *>(p)[i] = static_cast<std::uint16_t>(rng() & 0x7bff);
    } else {
        for (std::size_t i = 0; i < n; ++i) static_cast<std::uint8_t *>(p)[i] = static_cast<std::uint8_t>(rng());
    }
}

double exact_arrays(std::size_t n, int32_t xd, const void *x, int32_t yd, const void *y) {
    const cudot_arrays a = exact_request(n, xd, x, 1, yd, y, 1);
    double r = -1;
    INFO(cudot_last_error(nullptr));
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    return r;
}

Partial partial_of_arrays(std::size_t n, int32_t xd, const void *x, int32_t yd, const void *y) {
    const cudot_arrays a = exact_request(n, xd, x, 1, yd, y, 1);
    Partial p(CUDOT_EXACT_PARTIAL_BYTES);
    INFO(cudot_last_error(nullptr));
    REQUIRE(cudot_tile_partials_arrays(&a, p.data()) == CUDOT_OK);
    return p;
}

double join(const std::vector<Partial> &parts) {
    Partial all;
    for (const Partial &p : parts) all.insert(all.end(), p.begin(), p.end());
    double r = -1;
    INFO(cudot_last_error(nullptr));
    REQUIRE(cudot_join_exact_partials(all.data(), parts.size(), &r) == CUDOT_OK);
    return r;
}

const int32_t kTypes[] = {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_BF16, CUDOT_I8, CUDOT_U8};

}  // namespace

TEST_CASE("exact contexts: HOST and AUTO give cudot_dot_arrays' exact bits, every pair", "[exact][api]") {
    for (int32_t memory : {CUDOT_MEMORY_HOST, CUDOT_MEMORY_AUTO})
        for (int32_t xd : kTypes)
            for (int32_t yd : kTypes)
                for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(5000), std::size_t(100003)}) {
                    if (n == 100003 && !(xd == yd || xd == CUDOT_F64)) continue;  // the long ones: some pairs
                    CAPTURE(memory, xd, yd, n);
                    cudot_ctx *ctx = exact_context(n, xd, yd, memory);
                    void *x = nullptr, *y = nullptr;
                    REQUIRE(cudot_get_inputs(ctx, &x, &y) == CUDOT_OK);
                    fill(x, xd, n, 11 * n + xd);
                    fill(y, yd, n, 13 * n + yd);
                    int32_t mode = -1;
                    CHECK(cudot_get_mode(ctx, &mode) == CUDOT_OK);
                    CHECK(mode == CUDOT_MODE_EXACT);
                    double whole = -1, first = -1;
                    INFO(cudot_last_error(ctx));
                    REQUIRE(cudot_dot(ctx, &whole) == CUDOT_OK);
                    CHECK(bits(whole) == bits(exact_arrays(n, xd, x, yd, y)));
                    REQUIRE(cudot_dot_n(ctx, n / 2, &first) == CUDOT_OK);
                    CHECK(bits(first) == bits(exact_arrays(n / 2, xd, x, yd, y)));
                    // The partial of the whole buffers joins to the same bits.
                    Partial p(CUDOT_EXACT_PARTIAL_BYTES);
                    REQUIRE(cudot_tile_partials(ctx, 0, n, p.data()) == CUDOT_OK);
                    CHECK(bits(join({p})) == bits(whole));
                    CHECK(cudot_deinit(ctx) == CUDOT_OK);
                }
}

TEST_CASE("exact contexts: the issue's known answers, where the canonical mode is off", "[exact][api]") {
    // f32 [1e16, 1, -1e16] x 100 then [3], against ones: exactly 103.
    std::vector<float> v;
    for (int i = 0; i < 100; ++i) v.insert(v.end(), {1e16f, 1.0f, -1e16f});
    v.push_back(3.0f);
    cudot_ctx *ctx = exact_context(v.size(), CUDOT_F32, CUDOT_F32, CUDOT_MEMORY_HOST);
    void *x = nullptr, *y = nullptr;
    REQUIRE(cudot_get_inputs(ctx, &x, &y) == CUDOT_OK);
    std::memcpy(x, v.data(), v.size() * 4);
    std::fill_n(static_cast<float *>(y), v.size(), 1.0f);
    double r = -1;
    REQUIRE(cudot_dot(ctx, &r) == CUDOT_OK);
    CHECK(r == 103.0);
    CHECK(cudot_deinit(ctx) == CUDOT_OK);
    // f64 [1e300, 1e300, -1e300] . [1e10] x 3: exactly 1e310, rounded: +inf; [1e308, 1e308] . [10, -10]: +0.0.
    ctx = exact_context(3, CUDOT_F64, CUDOT_F64, CUDOT_MEMORY_HOST);
    REQUIRE(cudot_get_inputs(ctx, &x, &y) == CUDOT_OK);
    const double big[3] = {1e300, 1e300, -1e300}, ten[3] = {1e10, 1e10, 1e10};
    std::memcpy(x, big, sizeof big);
    std::memcpy(y, ten, sizeof ten);
    REQUIRE(cudot_dot(ctx, &r) == CUDOT_OK);
    CHECK(r == std::numeric_limits<double>::infinity());
    const double a[2] = {1e308, 1e308}, b[2] = {10, -10};
    std::memcpy(x, a, sizeof a);
    std::memcpy(y, b, sizeof b);
    REQUIRE(cudot_dot_n(ctx, 2, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(0.0));
    CHECK(cudot_deinit(ctx) == CUDOT_OK);
}

TEST_CASE("exact partials: any cut, in any order, joins to the bits of the whole", "[exact][api]") {
    std::mt19937_64 rng(2027);
    for (int32_t xd : {CUDOT_F32, CUDOT_F64, CUDOT_BF16})
        for (int32_t yd : {CUDOT_F32, CUDOT_F64, CUDOT_I8}) {
            const std::size_t n = 30000 + rng() % 70000;
            std::vector<unsigned char> x(n * test::dtype_size(xd)), y(n * test::dtype_size(yd));
            fill(x.data(), xd, n, rng());
            fill(y.data(), yd, n, rng());
            const double whole = exact_arrays(n, xd, x.data(), yd, y.data());
            cudot_ctx *ctx = exact_context(n, xd, yd, CUDOT_MEMORY_HOST);
            void *cx = nullptr, *cy = nullptr;
            REQUIRE(cudot_get_inputs(ctx, &cx, &cy) == CUDOT_OK);
            std::memcpy(cx, x.data(), x.size());
            std::memcpy(cy, y.data(), y.size());
            for (int trial = 0; trial < 40; ++trial) {
                CAPTURE(xd, yd, n, trial);
                std::vector<std::size_t> cuts = {0, n};
                for (int k = static_cast<int>(rng() % 9); k > 0; --k) cuts.push_back(rng() % (n + 1));
                std::sort(cuts.begin(), cuts.end());
                std::vector<Partial> parts;
                for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
                    const std::size_t at = cuts[i], count = cuts[i + 1] - at;  // empty pieces too
                    if (i % 2 == 0) {  // from the context, any start (no tile boundaries in this mode)
                        Partial p(CUDOT_EXACT_PARTIAL_BYTES);
                        REQUIRE(cudot_tile_partials(ctx, at, count, p.data()) == CUDOT_OK);
                        parts.push_back(p);
                    } else {  // from the caller's arrays
                        parts.push_back(partial_of_arrays(count, xd, x.data() + at * test::dtype_size(xd), yd,
                                                          y.data() + at * test::dtype_size(yd)));
                    }
                }
                std::shuffle(parts.begin(), parts.end(), rng);
                CHECK(bits(join(parts)) == bits(whole));
            }
            CHECK(cudot_deinit(ctx) == CUDOT_OK);
        }
}

TEST_CASE("exact partials: special values and overflowing pieces join as one sum", "[exact][api]") {
    const double inf = std::numeric_limits<double>::infinity();
    // Pieces whose own rounded values overflow (+inf and -inf) while the whole is finite.
    const double x[4] = {1e308, 1e308, 1e308, 1e308}, y[4] = {10, 10, -10, -9};
    const Partial up = partial_of_arrays(2, CUDOT_F64, x, CUDOT_F64, y);
    const Partial down = partial_of_arrays(2, CUDOT_F64, x + 2, CUDOT_F64, y + 2);
    CHECK(bits(join({up})) == bits(inf));
    CHECK(bits(join({down})) == bits(-inf));
    CHECK(join({up, down}) == exact_arrays(4, CUDOT_F64, x, CUDOT_F64, y));
    CHECK(join({down, up}) == 1e308);
    // An infinity in one piece and the other sign's in another: NaN, as in one sum.
    const double xi[2] = {inf, 1.0}, yi[2] = {1.0, -inf};
    const Partial plus = partial_of_arrays(1, CUDOT_F64, xi, CUDOT_F64, yi);
    const Partial minus = partial_of_arrays(1, CUDOT_F64, xi + 1, CUDOT_F64, yi + 1);
    CHECK(bits(join({plus})) == bits(inf));
    CHECK(std::isnan(join({plus, minus})));
    CHECK(bits(join({plus, minus})) == bits(exact_arrays(2, CUDOT_F64, xi, CUDOT_F64, yi)));
    // An empty piece is an exact zero: +0.0 alone, nothing added to others.
    const Partial empty = partial_of_arrays(0, CUDOT_F64, nullptr, CUDOT_F64, nullptr);
    CHECK(bits(join({empty})) == bits(0.0));
    CHECK(bits(join({empty, up, empty, down})) == bits(1e308));
    double r = -1;
    CHECK(cudot_join_exact_partials(nullptr, 0, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(0.0));
}

TEST_CASE("exact partials and contexts: bad input gets a status and a message, nothing written", "[exact][errors]") {
    const double x[3] = {1, 2, 3}, y[3] = {4, 5, 6};
    Partial good = partial_of_arrays(3, CUDOT_F64, x, CUDOT_F64, y);
    double r = -7;
    // A partial that no cudot wrote: each kind of damage, named by its index.
    const std::size_t word = 16;  // the partial's words follow its tag, flags and reserved bytes
    for (int damage = 0; damage < 5; ++damage) {
        Partial bad = good;
        std::int64_t v;
        switch (damage) {
            case 0: bad[0] ^= 1; break;                                  // the tag
            case 1: bad[4] = 0x80; break;                                // an unknown special bit
            case 2: bad[8] = 1; break;                                   // reserved
            case 3: v = std::int64_t(1) << 32; std::memcpy(&bad[word + 8 * 5], &v, 8); break;  // a word past its digit
            default: v = std::int64_t(1) << 50; std::memcpy(&bad[word + 8 * 137], &v, 8); break;  // the top word
        }
        std::vector<unsigned char> both(good);
        both.insert(both.end(), bad.begin(), bad.end());
        CAPTURE(damage);
        CHECK(cudot_join_exact_partials(both.data(), 2, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(cudot_last_error(nullptr)).find("partial 1") != std::string::npos);
        CHECK(r == -7);
    }
    CHECK(cudot_join_exact_partials(nullptr, 1, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_join_exact_partials(good.data(), 1, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(r == -7);
    // The exact mode always writes its one partial: out NULL is refused, n = 0 included.
    cudot_arrays a = exact_request(3, CUDOT_F64, x, 1, CUDOT_F64, y, 1);
    CHECK(cudot_tile_partials_arrays(&a, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    a.n = 0;
    CHECK(cudot_tile_partials_arrays(&a, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    cudot_ctx *ctx = exact_context(3, CUDOT_F64, CUDOT_F64, CUDOT_MEMORY_HOST);
    CHECK(cudot_tile_partials(ctx, 0, 0, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_tile_partials(ctx, 2, 2, good.data()) == CUDOT_ERROR_INVALID_ARGUMENT);  // past the capacity
    // Rows beyond the context's: refused, the results untouched (test_exact_rows.cpp dots its rows).
    double results[1] = {-7};
    CHECK(cudot_dot_each_row(ctx, 2, 3, results) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(results[0] == -7);
    CHECK(cudot_get_mode(ctx, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_deinit(ctx) == CUDOT_OK);
    int32_t mode = -1;
    CHECK(cudot_get_mode(nullptr, &mode) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(mode == -1);
}

TEST_CASE("exact contexts: the config's mode, its size and its reserved field", "[exact][errors]") {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    cfg.mode = 2;
    CHECK(cudot_init(&ctx, 4, &cfg) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("mode") != std::string::npos);
    cfg.mode = -1;
    CHECK(cudot_init(&ctx, 4, &cfg) == CUDOT_ERROR_INVALID_ARGUMENT);
    cfg.mode = CUDOT_MODE_EXACT;
    cfg.reserved = 1;
    CHECK(cudot_init(&ctx, 4, &cfg) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("reserved") != std::string::npos);
    cfg.reserved = 0;
    for (std::uint32_t size = 33; size < 40; ++size) {
        cfg.size = size;
        CAPTURE(size);
        CHECK(cudot_init(&ctx, 4, &cfg) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(ctx == nullptr);
    }
    // A caller of 1.10 to 1.12 (size 32) gets the canonical mode, whatever follows its struct.
    cfg.size = 32;
    REQUIRE(cudot_init(&ctx, 4, &cfg) == CUDOT_OK);
    int32_t mode = -1;
    CHECK(cudot_get_mode(ctx, &mode) == CUDOT_OK);
    CHECK(mode == CUDOT_MODE_CANONICAL);
    CHECK(cudot_deinit(ctx) == CUDOT_OK);
    cfg.size = sizeof cfg;
    REQUIRE(cudot_init(&ctx, 4, &cfg) == CUDOT_OK);
    CHECK(cudot_get_mode(ctx, &mode) == CUDOT_OK);
    CHECK(mode == CUDOT_MODE_EXACT);
    CHECK(cudot_deinit(ctx) == CUDOT_OK);
}
