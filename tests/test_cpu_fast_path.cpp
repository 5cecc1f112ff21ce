// test_cpu_fast_path.cpp - the HOST backend's short tiles on vectors, its calling-thread path and pool,
// and the context registry under concurrent calls.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "windows_h.hpp"
#if !defined(_WIN32)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "checks.hpp"
#include "cpu/tile_kernels.hpp"
#include "isolation.hpp"
#include "core/order.hpp"
#include "testing.hpp"

using test::Ctx;

namespace {

using cudot::order::kTile;

// Element counts of a short tile that reach every case of the vector loop: fewer lanes than one vector,
// one block, a partial block, rows with and without a short row, odd widths at every tree level.
const std::vector<std::size_t> &short_counts() {
    static const std::vector<std::size_t> counts = {1,    2,    3,    4,    5,    7,    8,    9,    15,   16,   17,
                                                    31,   33,   63,   64,   65,   100,  127,  128,  129,  255,  257,
                                                    511,  513,  999,  1000, 1023, 1024, 1025, 1100, 2047, 2048, 2049,
                                                    3000, 4095, 4096, 4097, 5000, 7000, 8191, 8192};
    return counts;
}

// What to put into x and y besides random values.
enum class Values { Random, InfAtEnd, InfInside, NaNInside, NegativeZeroProducts };

bool is_float(int32_t dtype) { return dtype != CUDOT_I8 && dtype != CUDOT_U8; }

void fill(int32_t xd, unsigned char *x, int32_t yd, unsigned char *y, std::size_t n, Values values, std::uint64_t seed) {
    test::fill_random_any(xd, x, n, seed);
    test::fill_random_any(yd, y, n, seed + 1);
    switch (values) {
        case Values::Random: break;
        case Values::InfAtEnd:  // the last lane: the lone node at some level of most trees
            if (is_float(xd)) test::set_value(xd, x, n - 1, INFINITY);
            break;
        case Values::InfInside:
            if (is_float(xd)) test::set_value(xd, x, (n * 5) / 7, -INFINITY);
            break;
        case Values::NaNInside:
            if (is_float(yd)) test::set_value(yd, y, n / 3, NAN);
            break;
        case Values::NegativeZeroProducts:  // every product -0: lanes that start at +0 stay +0
            for (std::size_t i = 0; i < n; ++i) {
                test::set_value(xd, x, i, xd == CUDOT_U8 ? 1.0 : -1.0);
                test::set_value(yd, y, i, 0.0);
            }
            break;
    }
}

// Partials of tiles [0, tiles) as doubles (two per Dot2 partial): equal bit for bit, except that two NaNs
// count as equal (x86 propagates NaN payloads in an order the copies need not share).
void require_same_partials(const std::vector<double> &got, const std::vector<double> &want, bool exact) {
    for (std::size_t i = 0; i < got.size(); ++i) {
        const bool both_nan = !exact && std::isnan(got[i]) && std::isnan(want[i]);
        if (!both_nan) REQUIRE(test::bits(got[i]) == test::bits(want[i]));
    }
}

}  // namespace

TEST_CASE("HOST: short tiles give the baseline copy's bits in every instruction-set copy", "[host][determinism][slow-under-checkers]") {
    using namespace cudot;
    const cpu::TileKernels *variants[4];
    const int count = cpu::tile_kernel_variants(variants, 4);
    if (count < 2) TEST_SKIP("one inner-loop variant here (" << cpu::tile_kernels().isa << "): nothing to compare");
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t rest : short_counts())
                for (std::size_t before : {std::size_t(0), 2 * kTile})  // alone, or the third tile of three
                    for (Values values : {Values::Random, Values::InfAtEnd, Values::InfInside, Values::NaNInside,
                                          Values::NegativeZeroProducts}) {
                        const std::size_t n = before + rest, tiles = order::tile_count(n);
                        std::vector<unsigned char> x(n * 8), y(n * 8);
                        fill(xd, x.data(), yd, y.data(), n, values, n * 7 + static_cast<std::uint64_t>(values));
                        std::vector<double> want(tiles * 2), got(tiles * 2);
                        variants[0]->get(xd, yd, n)(x.data(), y.data(), n, 0, tiles, want.data());
                        for (int v = 1; v < count; ++v) {
                            INFO(variants[v]->isa << " " << test::dtype_name(xd) << " x " << test::dtype_name(yd)
                                                  << " n=" << n << " values=" << static_cast<int>(values));
                            std::fill(got.begin(), got.end(), 0.0);
                            variants[v]->get(xd, yd, n)(x.data(), y.data(), n, 0, tiles, got.data());
                            require_same_partials(got, want, types::kind_of(xd, yd) == types::Kind::Exact);
                        }
                    }
}

TEST_CASE("HOST: a short tile with every product -0 is +0, as the canonical order makes it", "[host][determinism]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_BF16})
        for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1024), std::size_t(5000)}) {
            Ctx c(n, dtype, CUDOT_MEMORY_HOST);
            REQUIRE(c.status == CUDOT_OK);
            for (std::size_t i = 0; i < n; ++i) {
                test::set_value(dtype, c.x(), i, -2.0);
                test::set_value(dtype, c.y(), i, 0.0);
            }
            INFO(test::dtype_name(dtype) << " n=" << n);
            CHECK(test::bits(c.dot()) == test::bits(0.0));
        }
}

// Two regions of `span` bytes, each followed by an inaccessible page, in one block: mmap/mprotect on
// POSIX, VirtualAlloc/VirtualProtect on Windows.
struct GuardedRegions {
    std::size_t page = 0, span = 0, size = 0;
    unsigned char *base = nullptr;

    explicit GuardedRegions(std::size_t bytes) {
#if defined(_WIN32)
        SYSTEM_INFO info;
        GetSystemInfo(&info);
        page = info.dwPageSize;
#else
        page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
#endif
        span = (bytes + page - 1) / page * page;
        size = 2 * (span + page);
#if defined(_WIN32)
        base = static_cast<unsigned char *>(VirtualAlloc(nullptr, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE));
        DWORD old;
        if (base && (!VirtualProtect(base + span, page, PAGE_NOACCESS, &old) ||
                     !VirtualProtect(base + 2 * span + page, page, PAGE_NOACCESS, &old))) {
            VirtualFree(base, 0, MEM_RELEASE);
            base = nullptr;
        }
#else
        void *block = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        base = block == MAP_FAILED ? nullptr : static_cast<unsigned char *>(block);
        if (base && (mprotect(base + span, page, PROT_NONE) != 0 || mprotect(base + 2 * span + page, page, PROT_NONE) != 0)) {
            munmap(base, size);
            base = nullptr;
        }
#endif
    }
    ~GuardedRegions() {
        if (!base) return;
#if defined(_WIN32)
        VirtualFree(base, 0, MEM_RELEASE);
#else
        munmap(base, size);
#endif
    }
    GuardedRegions(const GuardedRegions &) = delete;
    GuardedRegions &operator=(const GuardedRegions &) = delete;
    unsigned char *first_end() const { return base + span; }              // an inaccessible page starts here
    unsigned char *second_end() const { return base + 2 * span + page; }  // and here
};

TEST_CASE("HOST: a short tile reads nothing past its last element", "[host]") {
    // x and y each end exactly where an inaccessible page begins: a read past element n - 1 faults. And
    // the partial must be the one the same values give with room after them, room filled with bytes
    // that read as NaN or -1: a copy that used anything past element n - 1 would give another.
    using namespace cudot;
    const cpu::TileKernels *variants[4];
    const int count = cpu::tile_kernel_variants(variants, 4);
    for (int which = 0; which < 2; ++which) {
        GuardedRegions block(kTile * 8);  // room for one tile of F64
        REQUIRE(block.base != nullptr);
        unsigned char *x_end = block.first_end(), *y_end = block.second_end();
        for (int32_t xd : test::all_dtypes())
            for (int32_t yd : test::all_dtypes())
                for (std::size_t n : short_counts()) {
                    if (n == kTile) continue;  // a full tile reads all of itself anyway
                    unsigned char *x = x_end - n * test::dtype_size(xd), *y = y_end - n * test::dtype_size(yd);
                    test::fill_random_any(xd, x, n, n);
                    test::fill_random_any(yd, y, n, n + 1);
                    std::vector<unsigned char> roomy_x((n + kTile) * 8, 0xff), roomy_y((n + kTile) * 8, 0xff);
                    std::memcpy(roomy_x.data(), x, n * test::dtype_size(xd));
                    std::memcpy(roomy_y.data(), y, n * test::dtype_size(yd));
                    for (int v = 0; v < count; ++v) {
                        INFO(variants[v]->isa << " " << test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n);
                        alignas(16) unsigned char partial[order::kMaxPartialBytes], roomy[order::kMaxPartialBytes],
                            unwritten[order::kMaxPartialBytes];
                        std::memset(unwritten, 0xab, sizeof unwritten);
                        std::memcpy(partial, unwritten, sizeof partial);
                        std::memcpy(roomy, unwritten, sizeof roomy);
                        variants[v]->get(xd, yd, n)(x, y, n, 0, 1, partial);
                        variants[v]->get(xd, yd, n)(roomy_x.data(), roomy_y.data(), n, 0, 1, roomy);
                        CHECK(std::memcmp(partial, roomy, sizeof partial) == 0);
                        CHECK(std::memcmp(partial, unwritten, sizeof(double)) != 0);  // the partial was written
                    }
                }
    }
}

TEST_CASE("HOST: small dots never touch the thread pool", "[host][threads]") {
    const std::size_t n = 4096;
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_I8}) {
        Ctx c(n, dtype, CUDOT_MEMORY_HOST);
        REQUIRE(c.status == CUDOT_OK);
        test::fill_random_any(dtype, c.x(), n, 1);
        test::fill_random_any(dtype, c.y(), n, 2);
        const unsigned long long before = cudot::testing::cpu_pool_jobs();
        for (int i = 0; i < 100; ++i) c.dot();
        CHECK(cudot::testing::cpu_pool_jobs() == before);
    }
    // And a dot above the threshold does use it, where there is more than one thread.
    const std::size_t big = 64 * kTile;
    Ctx c(big, CUDOT_F32, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    test::fill_random_any(CUDOT_F32, c.x(), big, 3);
    test::fill_random_any(CUDOT_F32, c.y(), big, 4);
    const unsigned long long before = cudot::testing::cpu_pool_jobs();
    c.dot();
    if (std::thread::hardware_concurrency() > 1) CHECK(cudot::testing::cpu_pool_jobs() == before + 1);
}

TEST_CASE("HOST: the calling-thread threshold leaves the bits alone", "[host][determinism]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_BF16, CUDOT_U8})
        for (std::size_t n : {kTile + 1, 5 * kTile - 3, 33 * kTile + 100}) {
            Ctx c(n, dtype, CUDOT_MEMORY_HOST);
            REQUIRE(c.status == CUDOT_OK);
            test::fill_random_any(dtype, c.x(), n, n);
            test::fill_random_any(dtype, c.y(), n, n + 1);
            cudot::testing::set_cpu_parallel_bytes(c.ctx, ~std::size_t(0));  // always the calling thread
            const double serial = c.dot();
            for (std::size_t bytes : {std::size_t(1), std::size_t(64) << 10, std::size_t(1) << 20}) {
                cudot::testing::set_cpu_parallel_bytes(c.ctx, bytes);
                INFO(test::dtype_name(dtype) << " n=" << n << " threshold=" << bytes);
                CHECK(test::bits(c.dot()) == test::bits(serial));
            }
        }
}

TEST_CASE("HOST: pool dots from several contexts at once, with the workers awake or asleep", "[host][threads]") {
    constexpr int kThreads = 4;
    const std::size_t n = 40 * kTile + 17;
    std::vector<double> expected(kThreads);
    for (int t = 0; t < kThreads; ++t) {  // each thread's data, computed on the calling thread alone
        Ctx c(n, t % 2 ? CUDOT_F64 : CUDOT_F32, CUDOT_MEMORY_HOST);
        REQUIRE(c.status == CUDOT_OK);
        test::fill_random_any(t % 2 ? CUDOT_F64 : CUDOT_F32, c.x(), n, 10 + t);
        test::fill_random_any(t % 2 ? CUDOT_F64 : CUDOT_F32, c.y(), n, 20 + t);
        cudot::testing::set_cpu_parallel_bytes(c.ctx, ~std::size_t(0));
        expected[t] = c.dot();
    }
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            const int32_t dtype = t % 2 ? CUDOT_F64 : CUDOT_F32;
            Ctx c(n, dtype, CUDOT_MEMORY_HOST);
            if (c.status != CUDOT_OK) {
                ++failures;
                return;
            }
            test::fill_random_any(dtype, c.x(), n, 10 + t);
            test::fill_random_any(dtype, c.y(), n, 20 + t);
            cudot::testing::set_cpu_always_parallel(c.ctx, true);
            for (int i = 0; i < 30; ++i) {
                // Now and then a pause longer than the workers' spin, so that some jobs find them asleep.
                if (i % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(3));
                double r = 0;
                if (cudot_dot(c.ctx, &r) != CUDOT_OK || test::bits(r) != test::bits(expected[t])) ++failures;
            }
        });
    for (auto &th : threads) th.join();
    CHECK(failures == 0);
}

TEST_CASE("HOST: calls racing cudot_deinit finish or are refused, never touch freed memory", "[host][threads][slow-under-checkers]") {
    // The header forbids this race; the registry still makes it safe: a call either holds a reference
    // (deinit waits for it) or finds the handle gone (INVALID_ARGUMENT).
    for (int round = 0; round < 20; ++round) {
        const std::size_t n = 3 * kTile + 5;
        cudot_ctx *ctx = nullptr;
        REQUIRE(cudot_init(&ctx, n, nullptr) == CUDOT_OK);
        float *x, *y;
        REQUIRE(cudot_get_inputs(ctx, reinterpret_cast<void **>(&x), reinterpret_cast<void **>(&y)) == CUDOT_OK);
        for (std::size_t i = 0; i < n; ++i) x[i] = y[i] = 1.0f;
        std::atomic<int> started{0}, wrong{0};
        std::vector<std::thread> callers;
        for (int t = 0; t < 3; ++t)
            callers.emplace_back([&, t] {
                ++started;
                for (;;) {
                    double r = 0;
                    size_t capacity = 0;
                    const cudot_status s = t == 2 ? cudot_get_capacity(ctx, &capacity) : cudot_dot(ctx, &r);
                    if (s == CUDOT_ERROR_INVALID_ARGUMENT) return;
                    if (s != CUDOT_OK || (t == 2 ? capacity != n : r != static_cast<double>(n))) ++wrong;
                }
            });
        while (started < 3) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::microseconds(200 * (round % 5)));
        CHECK(cudot_deinit(ctx) == CUDOT_OK);
        for (auto &th : callers) th.join();
        CHECK(wrong == 0);
        CHECK(cudot_deinit(ctx) == CUDOT_ERROR_INVALID_ARGUMENT);
    }
}

TEST_CASE("HOST: contexts on many threads keep their own answers and getters", "[host][threads]") {
    constexpr int kThreads = 8;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            const std::size_t n = 1000 + 37 * static_cast<std::size_t>(t);
            const int32_t dtype = t % 3 == 0 ? CUDOT_F64 : t % 3 == 1 ? CUDOT_F32 : CUDOT_I8;
            for (int round = 0; round < 50; ++round) {
                Ctx c(n, dtype, CUDOT_MEMORY_HOST);
                if (c.status != CUDOT_OK) {
                    ++failures;
                    continue;
                }
                for (std::size_t i = 0; i < n; ++i) {
                    test::set_value(dtype, c.x(), i, 2.0);
                    test::set_value(dtype, c.y(), i, 3.0);
                }
                int32_t xd = 0, yd = 0, memory = -1, device = 0;
                size_t capacity = 0;
                if (cudot_get_dtypes(c.ctx, &xd, &yd) != CUDOT_OK || xd != dtype || yd != dtype) ++failures;
                if (cudot_get_memory(c.ctx, &memory, &device) != CUDOT_OK || memory != CUDOT_MEMORY_HOST) ++failures;
                if (cudot_get_capacity(c.ctx, &capacity) != CUDOT_OK || capacity != n) ++failures;
                for (int i = 0; i < 20; ++i) {
                    double r = 0;
                    if (cudot_dot(c.ctx, &r) != CUDOT_OK || r != 6.0 * static_cast<double>(n)) ++failures;
                }
            }
        });
    for (auto &th : threads) th.join();
    CHECK(failures == 0);
}
