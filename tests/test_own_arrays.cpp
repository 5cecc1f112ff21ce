// test_own_arrays.cpp - cudot_dot_arrays and its kin on host memory (the CPU path, which runs
// everywhere): every pair, stride and alignment gives the bits of a HOST context holding the same values,
// and every bad request gets a clear status.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#if !defined(_WIN32)
#include <sys/mman.h>
#endif

#include "own_arrays.hpp"
#include "reference.hpp"

using test::bits;

namespace {

// n copies of element 0 of v (what a stride of 0 reads).
std::vector<unsigned char> repeated(const std::vector<unsigned char> &v, std::size_t size, std::size_t n) {
    std::vector<unsigned char> r(std::max<std::size_t>(n, 1) * size);
    for (std::size_t i = 0; i < n; ++i) std::memcpy(&r[i * size], v.data(), size);
    return r;
}

double dot_arrays(const cudot_arrays &a) {
    double r = -1;
    const cudot_status s = cudot_dot_arrays(&a, &r);
    INFO(cudot_last_error(nullptr));
    REQUIRE(s == CUDOT_OK);
    return r;
}

// The dot of x and y laid out as given equals a HOST context's dot of the same values, bit for bit.
void check_layouts(int32_t xd, int32_t yd, std::size_t n, test::Layout lx, test::Layout ly, std::uint64_t seed) {
    const std::size_t sx = test::dtype_size(xd), sy = test::dtype_size(yd);
    std::vector<unsigned char> xv = test::random_values(xd, n, seed), yv = test::random_values(yd, n, seed + 1);
    if (lx.stride == 0) xv = repeated(xv, sx, n);
    if (ly.stride == 0) yv = repeated(yv, sy, n);
    const double want = test::host_context_dot(xd, yd, xv.data(), yv.data(), n);
    const test::LaidOut x = test::lay_out(xv.data(), sx, n, lx), y = test::lay_out(yv.data(), sy, n, ly);
    INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n << " strides " << lx.stride << ", "
                              << ly.stride << " offsets " << lx.offset << ", " << ly.offset);
    const double got = dot_arrays(test::arrays_of(n, xd, x.element0, lx.stride, yd, y.element0, ly.stride));
    CHECK(bits(got) == bits(want));
}

}  // namespace

TEST_CASE("own arrays: every pair, contiguous, gives a HOST context's bits", "[own][api]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(8191), std::size_t(8193), std::size_t(100000)})
                check_layouts(xd, yd, n, {1, 0}, {1, 0}, 7 * n + xd * 10 + yd);
}

TEST_CASE("own arrays: strides -1, 0, 3 and -5, and addresses not aligned to the type", "[own][api][slow-under-checkers]") {
    const std::vector<test::Layout> layouts = {{-1, 0}, {0, 0}, {3, 0}, {-5, 0}, {1, 1}, {2, 3}, {-1, 5}};
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : {CUDOT_F32, CUDOT_F64, CUDOT_BF16, CUDOT_U8})
            for (const test::Layout &l : layouts)
                for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(20000)}) {
                    check_layouts(xd, yd, n, l, {1, 0}, n + xd);
                    check_layouts(xd, yd, n, {1, 0}, l, n + yd);
                    check_layouts(xd, yd, n, l, l, n * 3);
                }
}

TEST_CASE("own arrays: large dots on the pool, strided and not", "[own][api][threads][slow-under-checkers]") {
    for (int32_t d : {CUDOT_F32, CUDOT_F64, CUDOT_I8}) {
        check_layouts(d, d, std::size_t(1) << 21, {1, 0}, {1, 0}, 11);
        check_layouts(d, d, (std::size_t(1) << 20) + 77, {-2, 0}, {1, 4}, 12);
    }
}

TEST_CASE("own arrays: NaN, Inf and the empty dot as cudot_dot gives them", "[own][api]") {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    const double xs[] = {1.0, -nan, 2.0}, ys[] = {inf, 1.0, 0.0};
    double r = 0;
    cudot_arrays a = test::arrays_of(3, CUDOT_F64, xs, 1, CUDOT_F64, ys, 1);
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(nan));
    a.n = 1;  // 1 * Inf
    CHECK(dot_arrays(a) == inf);
    a.n = 0;
    a.x.data = a.y.data = nullptr;  // nothing is read
    r = -1;
    REQUIRE(cudot_dot_arrays(&a, &r) == CUDOT_OK);
    CHECK(bits(r) == bits(0.0));
    // x and y the same array: allowed.
    const float v[] = {3.0f, 4.0f};
    CHECK(dot_arrays(test::arrays_of(2, CUDOT_F32, v, 1, CUDOT_F32, v, 1)) == 25.0);
    CHECK(dot_arrays(test::arrays_of(2, CUDOT_F32, v, 1, CUDOT_F32, v + 1, -1)) == 24.0);
}

TEST_CASE("own arrays: partials of pieces joined give the whole dot's bits", "[own][partials]") {
    const std::size_t n = 5 * CUDOT_TILE_ELEMENTS + 123;
    for (int32_t xd : {CUDOT_F32, CUDOT_F64, CUDOT_I8})
        for (std::int64_t stride : {1, -3}) {
            std::vector<unsigned char> xv = test::random_values(xd, n, 5), yv = test::random_values(CUDOT_F32, n, 6);
            const double want = test::host_context_dot(xd, CUDOT_F32, xv.data(), yv.data(), n);
            const test::LaidOut x = test::lay_out(xv.data(), test::dtype_size(xd), n, {stride, 0});
            std::vector<unsigned char> partials(6 * CUDOT_PARTIAL_BYTES);
            // Two pieces: tiles [0, 2) and [2, 6), each a cudot_arrays of its own.
            const std::size_t cut = 2 * CUDOT_TILE_ELEMENTS;
            const float *y = reinterpret_cast<const float *>(yv.data());
            cudot_arrays first = test::arrays_of(cut, xd, x.element0, stride, CUDOT_F32, y, 1);
            const unsigned char *x_cut = x.element0 + static_cast<std::ptrdiff_t>(cut) * stride *
                                                          static_cast<std::ptrdiff_t>(test::dtype_size(xd));
            cudot_arrays second = test::arrays_of(n - cut, xd, x_cut, stride, CUDOT_F32, y + cut, 1);
            REQUIRE(cudot_tile_partials_arrays(&first, partials.data()) == CUDOT_OK);
            REQUIRE(cudot_tile_partials_arrays(&second, partials.data() + 2 * CUDOT_PARTIAL_BYTES) == CUDOT_OK);
            double r = -1;
            REQUIRE(cudot_join_partials(xd, CUDOT_F32, partials.data(), 6, &r) == CUDOT_OK);
            CHECK(bits(r) == bits(want));
        }
}

namespace {

void check_refused(const cudot_arrays *a, cudot_status want, const char *words) {
    double r = 12345.0;
    const cudot_status s = cudot_dot_arrays(a, &r);
    const std::string message = cudot_last_error(nullptr);
    INFO(message);
    CHECK(s == want);
    CHECK(message.find(words) != std::string::npos);
    CHECK(r == 12345.0);  // nothing written
}

}  // namespace

TEST_CASE("own arrays: bad requests get a status and a message, never a crash", "[own][api][errors]") {
    const float v[4] = {1, 2, 3, 4};
    cudot_arrays a = test::arrays_of(4, CUDOT_F32, v, 1, CUDOT_F32, v, 1);
    check_refused(nullptr, CUDOT_ERROR_INVALID_ARGUMENT, "NULL");
    CHECK(cudot_dot_arrays(&a, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("result is NULL") != std::string::npos);

    cudot_arrays b = a;
    b.size = 16;
    check_refused(&b, CUDOT_ERROR_INVALID_ARGUMENT, "size");
    b = a;
    b.x.dtype = 9;
    check_refused(&b, CUDOT_ERROR_INVALID_ARGUMENT, "x.dtype");
    b = a;
    b.y.data = nullptr;
    check_refused(&b, CUDOT_ERROR_INVALID_ARGUMENT, "y.data is NULL");
    b = a;
    b.reserved = 1;
    check_refused(&b, CUDOT_ERROR_INVALID_ARGUMENT, "reserved");
    b = a;
    b.n = std::size_t(1) << 62;  // n * stride * 4 bytes overflows
    b.x.stride = 8;
    check_refused(&b, CUDOT_ERROR_INVALID_ARGUMENT, "address space");
    b = a;
    b.x.stride = INT64_MIN;
    check_refused(&b, CUDOT_ERROR_INVALID_ARGUMENT, "address space");

    // A larger struct from a newer header: zero bytes past ours are fine, others are refused.
    std::vector<unsigned char> bigger(sizeof(cudot_arrays) + 16, 0);
    std::memcpy(bigger.data(), &a, sizeof a);
    cudot_arrays *big = reinterpret_cast<cudot_arrays *>(bigger.data());
    big->size = static_cast<uint32_t>(bigger.size());
    double r = 0;
    CHECK(cudot_dot_arrays(big, &r) == CUDOT_OK);
    CHECK(r == 30.0);
    bigger.back() = 1;
    check_refused(big, CUDOT_ERROR_UNSUPPORTED, "non-zero bytes");

    // The async form needs operands a GPU computes.
    double device_result = 0;
    CHECK(cudot_dot_arrays_async(&a, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    const cudot_status s = cudot_dot_arrays_async(&a, &device_result);
    CHECK((s == CUDOT_ERROR_UNSUPPORTED || s == CUDOT_ERROR_NO_DEVICE));
    CHECK(device_result == 0);
    CHECK(cudot_tile_partials_arrays(&a, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
}

#if !defined(_WIN32)
TEST_CASE("own arrays: memory the process cannot read (freed, or a device address) gets a status", "[own][errors]") {
    // An address with nothing readable behind it, as a freed array or GPU memory without a GPU is.
    void *page = mmap(nullptr, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(page != MAP_FAILED);
    const float v[4] = {1, 2, 3, 4};
    cudot_arrays a = test::arrays_of(4, CUDOT_F32, page, 1, CUDOT_F32, v, 1);
    check_refused(&a, CUDOT_ERROR_INVALID_ARGUMENT, "can read");
    // Only the last element unreadable: the first page readable, the second not.
    REQUIRE(mprotect(page, 4096, PROT_READ | PROT_WRITE) == 0);
    a.x.data = static_cast<unsigned char *>(page) + 4096 - 8;  // elements 0, 1 readable, 2 and 3 not
    check_refused(&a, CUDOT_ERROR_INVALID_ARGUMENT, "can read");
    a.n = 2;
    CHECK(dot_arrays(a) == 0.0);  // the page is zero-filled
    munmap(page, 8192);
}
#endif

TEST_CASE("own arrays: register and unregister host ranges", "[own][register]") {
    std::vector<float> buffer(1 << 16, 1.0f);
    REQUIRE(cudot_register_host(buffer.data(), buffer.size() * sizeof(float)) == CUDOT_OK);
    // Overlapping ranges are refused, and so is an unknown start.
    CHECK(cudot_register_host(buffer.data() + 100, 64) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("overlaps") != std::string::npos);
    CHECK(cudot_unregister_host(buffer.data() + 1) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(dot_arrays(test::arrays_of(buffer.size(), CUDOT_F32, buffer.data(), 1, CUDOT_F32, buffer.data(), 1)) ==
          static_cast<double>(buffer.size()));
    CHECK(cudot_unregister_host(buffer.data()) == CUDOT_OK);
    CHECK(cudot_unregister_host(buffer.data()) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_register_host(nullptr, 4) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_register_host(buffer.data(), 0) == CUDOT_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("own arrays: an unknown element type is refused even when n is 0", "[own][errors]") {
    cudot_arrays a = CUDOT_ARRAYS_INIT;
    a.x.dtype = 7;
    double r = 5;
    CHECK(cudot_dot_arrays(&a, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("x.dtype") != std::string::npos);
    a.x.dtype = CUDOT_F32;
    a.y.dtype = 0;
    CHECK(cudot_dot_arrays(&a, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(r == 5);
}
