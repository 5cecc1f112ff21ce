// test_partials.cpp - cudot_tile_partials and cudot_join_partials: a vector cut into tile-aligned pieces
// held by separate contexts gives, joined, the same bits as one context holding it all.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "checks.hpp"

using test::Ctx;

namespace {

std::size_t tiles_of(std::size_t n) { return (n + CUDOT_TILE_ELEMENTS - 1) / CUDOT_TILE_ELEMENTS; }

// The dot of x, y (whole) recomputed from pieces [cuts[i], cuts[i+1]) held by contexts of their own.
double joined_from_pieces(int32_t xd, int32_t yd, const unsigned char *x, const unsigned char *y, std::size_t n,
                          const std::vector<std::size_t> &cuts) {
    const std::size_t sx = test::dtype_size(xd), sy = test::dtype_size(yd);
    std::vector<unsigned char> partials(tiles_of(n) * CUDOT_PARTIAL_BYTES);
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        const std::size_t begin = cuts[i], count = cuts[i + 1] - cuts[i];
        Ctx piece(count, xd, CUDOT_MEMORY_HOST, 0, yd);
        REQUIRE(piece.status == CUDOT_OK);
        std::memcpy(piece.x(), x + begin * sx, count * sx);
        std::memcpy(piece.y(), y + begin * sy, count * sy);
        REQUIRE(cudot_tile_partials(piece.ctx, 0, count, partials.data() + begin / CUDOT_TILE_ELEMENTS *
                                                                               CUDOT_PARTIAL_BYTES) == CUDOT_OK);
    }
    double r = -1;
    REQUIRE(cudot_join_partials(xd, yd, partials.data(), tiles_of(n), &r) == CUDOT_OK);
    return r;
}

}  // namespace

TEST_CASE("partials: tile-aligned pieces joined give the bits of one context, every pair", "[api][partials]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(8192), std::size_t(5 * 8192 + 77), std::size_t(40 * 8192 + 1)}) {
                Ctx whole(n, xd, CUDOT_MEMORY_HOST, 0, yd);
                REQUIRE(whole.status == CUDOT_OK);
                test::fill_random_any(xd, whole.x(), n, 11 + n + xd);
                test::fill_random_any(yd, whole.y(), n, 13 + n + yd);
                const double expected = whole.dot();
                INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n);
                // The whole vector's partials, straight from the same context.
                std::vector<unsigned char> partials(tiles_of(n) * CUDOT_PARTIAL_BYTES);
                REQUIRE(cudot_tile_partials(whole.ctx, 0, n, partials.data()) == CUDOT_OK);
                double r = -1;
                REQUIRE(cudot_join_partials(xd, yd, partials.data(), tiles_of(n), &r) == CUDOT_OK);
                CHECK(test::bits(r) == test::bits(expected));
                // Uneven tile-aligned pieces in separate contexts.
                std::vector<std::size_t> cuts{0};
                for (std::size_t c = 3 * 8192; c < n; c += 8192 * (cuts.size() % 3 + 1)) cuts.push_back(c);
                cuts.push_back(n);
                const auto *x = static_cast<const unsigned char *>(whole.x());
                const auto *y = static_cast<const unsigned char *>(whole.y());
                CHECK(test::bits(joined_from_pieces(xd, yd, x, y, n, cuts)) == test::bits(expected));
            }
}

TEST_CASE("partials: an offset start, special values, and y_dtype 0", "[api][partials]") {
    const std::size_t n = 3 * 8192 + 5, offset = 1000;
    Ctx big(n + offset, CUDOT_F32, CUDOT_MEMORY_HOST);
    Ctx exact(n, CUDOT_F32, CUDOT_MEMORY_HOST);
    REQUIRE(big.status == CUDOT_OK);
    REQUIRE(exact.status == CUDOT_OK);
    test::fill_random(big.x<float>(), big.y<float>(), n + offset, 5);
    big.x<float>()[offset + 9000] = std::numeric_limits<float>::infinity();
    std::memcpy(exact.x(), big.x<float>() + offset, n * sizeof(float));
    std::memcpy(exact.y(), big.y<float>() + offset, n * sizeof(float));
    std::vector<unsigned char> partials(tiles_of(n) * CUDOT_PARTIAL_BYTES);
    REQUIRE(cudot_tile_partials(big.ctx, offset, n, partials.data()) == CUDOT_OK);
    double r = -1;
    REQUIRE(cudot_join_partials(CUDOT_F32, 0, partials.data(), tiles_of(n), &r) == CUDOT_OK);
    CHECK(test::bits(r) == test::bits(exact.dot()));
}

TEST_CASE("partials: bad arguments get a status and a message", "[api][partials]") {
    Ctx c(100, CUDOT_F64, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    unsigned char out[CUDOT_PARTIAL_BYTES];
    CHECK(cudot_tile_partials(nullptr, 0, 1, out) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_tile_partials(c.ctx, 50, 51, out) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(c.ctx)).find("beyond the capacity") != std::string::npos);
    CHECK(cudot_tile_partials(c.ctx, SIZE_MAX, 2, out) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_tile_partials(c.ctx, 0, 10, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_tile_partials(c.ctx, 100, 0, nullptr) == CUDOT_OK);  // nothing to write
    double r = -1;
    CHECK(cudot_join_partials(CUDOT_F32, 0, nullptr, 0, &r) == CUDOT_OK);
    CHECK(test::bits(r) == test::bits(0.0));
    CHECK(cudot_join_partials(9, 0, out, 1, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("element types") != std::string::npos);
    CHECK(cudot_join_partials(CUDOT_F32, -3, out, 1, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_join_partials(CUDOT_F32, 0, nullptr, 1, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_join_partials(CUDOT_F32, 0, out, 1, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("result is NULL") != std::string::npos);
}
