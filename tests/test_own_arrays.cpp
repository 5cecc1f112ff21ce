// test_own_arrays.cpp - cudot_dot_arrays and its kin on host memory (the CPU path, which runs
// everywhere): every pair, stride and alignment gives the bits of a HOST context holding the same values,
// and every bad request gets a clear status.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#if !defined(_WIN32)
#include <sys/mman.h>
#endif

#include "own_arrays.hpp"
#include "reference.hpp"
#include "windows_h.hpp"

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

namespace {

// Pages of our own whose access the tests change: read-write at first; a page made unreadable stands for
// a freed array (unmapped) or a device address, which the process cannot read either.
struct Pages {
    static constexpr std::size_t kPage = 4096;
    unsigned char *start = nullptr;
    std::size_t count;
    explicit Pages(std::size_t pages) : count(pages) {
#if defined(_WIN32)
        start = static_cast<unsigned char *>(
            VirtualAlloc(nullptr, pages * kPage, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE));
#else
        void *p = mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        start = p == MAP_FAILED ? nullptr : static_cast<unsigned char *>(p);
#endif
        REQUIRE(start);
    }
    ~Pages() {
#if defined(_WIN32)
        VirtualFree(start, 0, MEM_RELEASE);
#else
        munmap(start, count * kPage);
#endif
    }
    unsigned char *page(std::size_t i) const { return start + i * kPage; }
    void make_unreadable(std::size_t i) const {
#if defined(_WIN32)
        DWORD old;
        REQUIRE(VirtualProtect(page(i), kPage, PAGE_NOACCESS, &old));
#else
        REQUIRE(mprotect(page(i), kPage, PROT_NONE) == 0);
#endif
    }
    void unmap(std::size_t i) const {  // as a free that gives the pages back to the system does
#if defined(_WIN32)
        REQUIRE(VirtualFree(page(i), kPage, MEM_DECOMMIT));
#else
        REQUIRE(munmap(page(i), kPage) == 0);
#endif
    }
};

}  // namespace

// Not on Windows: under Wine, ReadProcessMemory reads a PAGE_NOACCESS page of the process itself, so the
// check finds it readable and the dot's read faults.
#if !defined(_WIN32)
TEST_CASE("own arrays: host pages are checked once per thread; a thread new to them finds them unreadable",
          "[own][errors][threads]") {
    // The check of a host operand's ends costs a system call, several times a small dot, so a thread
    // makes it once per page and remembers the answer (cudot.h says what it does not detect). A thread
    // that has not met the pages makes it, and gets a status where a read would have crashed.
    Pages pages(1);
    float *x = reinterpret_cast<float *>(pages.page(0));
    for (int i = 0; i < 1024; ++i) x[i] = 0.5f;
    const std::vector<float> y(1024, 2.0f);
    const cudot_arrays a = test::arrays_of(1024, CUDOT_F32, x, 1, CUDOT_F32, y.data(), 1);
    CHECK(dot_arrays(a) == 1024.0);
    pages.make_unreadable(0);  // as a free that unmaps it would
    cudot_status other = CUDOT_OK;
    std::string message;
    double r = 12345.0;
    std::thread([&] {
        other = cudot_dot_arrays(&a, &r);
        message = cudot_last_error(nullptr);
    }).join();
    INFO(message);
    CHECK(other == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(message.find("can read") != std::string::npos);
    CHECK(r == 12345.0);
}
#endif

// On a GPU machine the CUDA driver maps memory of its own when a process first uses it, and one of those
// mappings can land in a hole that a test has just made. A registration starts the driver first.
static void start_cuda_if_any() {
    Pages warm(1);
    REQUIRE(cudot_register_host(warm.page(0), Pages::kPage) == CUDOT_OK);
    REQUIRE(cudot_unregister_host(warm.page(0)) == CUDOT_OK);
}

TEST_CASE("own arrays: cudot_register_host refuses a range the process has not mapped, whole or in part",
          "[own][register][errors]") {
    start_cuda_if_any();
    Pages pages(3);
    pages.unmap(1);
    const auto refused = [](const void *p, std::size_t bytes) {
        const cudot_status s = cudot_register_host(p, bytes);
        const std::string message = cudot_last_error(nullptr);
        INFO(message);
        CHECK(s == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(message.find("not host memory") != std::string::npos);
    };
    refused(pages.page(1), Pages::kPage);            // wholly unmapped
    refused(pages.page(0), 3 * Pages::kPage);        // a hole in the middle
    refused(pages.page(0) + 100, Pages::kPage);      // mapped start, unmapped end
    refused(pages.page(1) + Pages::kPage - 1, 2);    // unmapped start, mapped end
    // The mapped pages alone, and a range of one byte, are host memory.
    CHECK(cudot_register_host(pages.page(0), Pages::kPage) == CUDOT_OK);
    CHECK(cudot_unregister_host(pages.page(0)) == CUDOT_OK);
    CHECK(cudot_register_host(pages.page(2) + Pages::kPage - 1, 1) == CUDOT_OK);
    CHECK(cudot_unregister_host(pages.page(2) + Pages::kPage - 1) == CUDOT_OK);
    // A refused range was not recorded: nothing to unregister.
    CHECK(cudot_unregister_host(pages.page(1)) == CUDOT_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("own arrays: cudot_register_host checks every page of a large range", "[own][register]") {
    // More pages than one question to the system covers (4096 on Linux), the unmapped one last.
    const std::size_t count = 5000;
    start_cuda_if_any();
    Pages pages(count);
    pages.unmap(count - 1);
    CHECK(cudot_register_host(pages.page(0), count * Pages::kPage) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_register_host(pages.page(0), (count - 1) * Pages::kPage) == CUDOT_OK);
    CHECK(cudot_unregister_host(pages.page(0)) == CUDOT_OK);
}

TEST_CASE("F64 dots that overflow give NaN or Inf, whatever the exact value", "[own][api][accuracy]") {
    // Dot2's compensation needs every product and partial sum within the double range; past it the
    // result is the plain double sum's, which cudot.h and docs/ACCURACY.md state. These pin it, through
    // own arrays and a HOST context alike.
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    struct Case {
        std::vector<double> x, y;
        double want;
    };
    const Case cases[] = {
        {{1e300, 1e300, -1e300}, {1e10, 1e10, 1e10}, nan},  // exactly 1e310: +Inf once rounded
        {{1e308, 1e308}, {10, -10}, nan},                    // exactly 0
        {{1e308, 1e308, -1e308}, {1, 1, 1}, inf},            // exactly 1e308: a partial sum overflows
        {{1e300}, {1e10}, inf},                              // a lone overflowing product
        {{-1e300, -1e300}, {1e10, 1e10}, -inf},
    };
    for (const Case &c : cases) {
        const std::size_t n = c.x.size();
        INFO("x[0] = " << c.x[0] << ", y[0] = " << c.y[0] << ", n = " << n);
        CHECK(bits(dot_arrays(test::arrays_of(n, CUDOT_F64, c.x.data(), 1, CUDOT_F64, c.y.data(), 1))) ==
              bits(c.want));
        CHECK(bits(test::host_context_dot(CUDOT_F64, CUDOT_F64, c.x.data(), c.y.data(), n)) == bits(c.want));
    }
    // Mixed with F32: the pair is Dot2 all the same.
    const float xf[] = {3e38f, 3e38f};
    const double yd[] = {1e300, -1e300};
    CHECK(bits(dot_arrays(test::arrays_of(2, CUDOT_F32, xf, 1, CUDOT_F64, yd, 1))) == bits(nan));
}

TEST_CASE("own arrays: an n whose tile partials cannot fit in memory gets OUT_OF_MEMORY saying so",
          "[own][errors]") {
    // Two stride-0 operands read one element each, so any n is a valid request; but the CPU keeps one
    // partial per 8192 elements, and SIZE_MAX elements would need 2^51 of them.
    const float f = 1.5f;
    const double d = 1.5;
    struct Pair {
        int32_t dtype;
        const void *value;
        std::size_t partial_bytes;  // F32 pairs keep a double per tile, F64 pairs two
    };
    for (const Pair &p : {Pair{CUDOT_F32, &f, 8}, Pair{CUDOT_F64, &d, 16}}) {
        const cudot_arrays a = test::arrays_of(SIZE_MAX, p.dtype, p.value, 0, p.dtype, p.value, 0);
        const std::size_t tiles = std::size_t(1) << 51;  // ceil((2^64 - 1) / 8192)
        check_refused(&a, CUDOT_ERROR_OUT_OF_MEMORY, "tile partials");
        const std::string message = cudot_last_error(nullptr);
        CHECK(message.find("n = " + std::to_string(SIZE_MAX) + " needs " + std::to_string(tiles * p.partial_bytes) +
                           " bytes") != std::string::npos);
        unsigned char out[CUDOT_PARTIAL_BYTES] = {7};
        CHECK(cudot_tile_partials_arrays(&a, out) == CUDOT_ERROR_OUT_OF_MEMORY);
        CHECK(out[0] == 7);
    }
    // A smaller n of the same operands is computed: n copies of 1.5 * 1.5.
    CHECK(dot_arrays(test::arrays_of(std::size_t(1) << 20, CUDOT_F64, &d, 0, CUDOT_F64, &d, 0)) == 2.25 * (1 << 20));
}
