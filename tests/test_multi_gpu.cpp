// test_multi_gpu.cpp - contexts on several GPUs (config->device = CUDOT_DEVICE_ALL) and GPU tile partials:
// every result bitwise equal to HOST. Runs on any GPU machine: besides every visible GPU, each case also
// runs with device 0 listed three times (a test hook), so the split over several GPUs, its streams and
// the host-side join are exercised on a machine with one GPU too. Without a usable GPU, every case
// exits with 77 (CTest: skipped).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "checks.hpp"
#include "knobs.hpp"
#include "testing.hpp"

using test::Ctx;

namespace {

const int32_t kStrategies[] = {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO};

int visible_gpus() {
    // Counted through the public API (no CUDA header here): ordinals are tried until init refuses one.
    int count = 0;
    for (int d = 0; d < 64; ++d) {
        Ctx c(1, CUDOT_F32, CUDOT_MEMORY_PINNED, d);
        if (c.status != CUDOT_OK) break;
        ++count;
    }
    return count;
}

// The device lists an ALL context is tested with: the real one, and device 0 three times.
struct DeviceLists {
    std::vector<std::vector<int>> lists;
    DeviceLists() {
        lists.push_back({});  // every visible GPU
        lists.push_back({0, 0, 0});
        if (visible_gpus() >= 2) lists.push_back({1, 0});  // reversed order: GPU 1 takes the first run
    }
};

std::string list_name(const std::vector<int> &list) {
    if (list.empty()) return "every visible GPU";
    std::string s = "GPUs";
    for (int d : list) s += " " + std::to_string(d);
    return s;
}

using test::ForcedDevices;

// A HOST context with random inputs of the pair, and its dot.
struct HostCase {
    Ctx host;
    double expected;
    HostCase(int32_t xd, int32_t yd, std::size_t n, std::uint64_t seed) : host(n, xd, CUDOT_MEMORY_HOST, 0, yd) {
        REQUIRE(host.status == CUDOT_OK);
        test::fill_random_any(xd, host.x(), n, seed);
        test::fill_random_any(yd, host.y(), n, seed + 1);
        expected = host.dot();
    }
};

void copy_inputs(const Ctx &from, const Ctx &to, int32_t xd, int32_t yd, std::size_t n) {
    std::memcpy(to.x(), from.x(), n * test::dtype_size(xd));
    std::memcpy(to.y(), from.y(), n * test::dtype_size(yd));
}

std::size_t tiles_of(std::size_t n) { return (n + CUDOT_TILE_ELEMENTS - 1) / CUDOT_TILE_ELEMENTS; }

}  // namespace

TEST_CASE("multi-GPU: every pair on every strategy equals HOST bit for bit", "[gpu][multigpu][determinism]") {
    static const DeviceLists lists;
    for (const auto &list : lists.lists) {
        ForcedDevices forced(list);
        for (int32_t xd : test::all_dtypes())
            for (int32_t yd : test::all_dtypes())
                for (std::size_t n : {std::size_t(1), std::size_t(8193), std::size_t(2 * 8192 + 5),
                                      std::size_t(3 * 8192 * 5 + 11)}) {
                    HostCase h(xd, yd, n, 31 * n + 7 * xd + yd);
                    for (int32_t memory : kStrategies) {
                        Ctx g(n, xd, memory, CUDOT_DEVICE_ALL, yd);
                        INFO(list_name(list) << " " << test::dtype_name(xd) << " x " << test::dtype_name(yd)
                                             << " n=" << n << " " << test::memory_name(memory) << " " << g.init_error);
                        REQUIRE(g.status == CUDOT_OK);
                        copy_inputs(h.host, g, xd, yd, n);
                        if (memory == CUDOT_MEMORY_AUTO) cudot::testing::set_hybrid_share(g.ctx, 0.7);
                        CHECK(test::bits(g.dot()) == test::bits(h.expected));
                    }
                }
    }
}

TEST_CASE("multi-GPU: sizes, dot_n, forced grids and fresh data", "[gpu][multigpu]") {
    static const DeviceLists lists;
    for (const auto &list : lists.lists) {
        ForcedDevices forced(list);
        for (int32_t memory : kStrategies) {
            for (std::size_t n : test::awkward_sizes()) {
                INFO(list_name(list) << " " << test::memory_name(memory) << " n=" << n);
                double host32 = test::check_accuracy<float>(CUDOT_MEMORY_HOST, CUDOT_F32, n, n);
                HostCase h(CUDOT_F64, CUDOT_F64, n, n + 5);
                Ctx g32(n, CUDOT_F32, memory, CUDOT_DEVICE_ALL);
                Ctx g64(n, CUDOT_F64, memory, CUDOT_DEVICE_ALL);
                REQUIRE(g32.status == CUDOT_OK);
                REQUIRE(g64.status == CUDOT_OK);
                test::fill_random(g32.x<float>(), g32.y<float>(), n, n);
                copy_inputs(h.host, g64, CUDOT_F64, CUDOT_F64, n);
                CHECK(test::bits(g32.dot()) == test::bits(host32));
                CHECK(test::bits(g64.dot()) == test::bits(h.expected));
                for (std::size_t k : {std::size_t(1), n / 3, n / 2 + 1, n})
                    if (k >= 1 && k <= n) CHECK(test::bits(g64.dot_n(k)) == test::bits(h.host.dot_n(k)));
                if (n > 8192)
                    for (unsigned blocks : {1u, 3u, 1000u}) {
                        cudot::testing::set_gpu_blocks(g64.ctx, blocks);
                        CHECK(test::bits(g64.dot()) == test::bits(h.expected));
                    }
            }
            // Counts and fresh data: the host rewrites between dots (MANAGED migrates back and forth).
            test::check_counts<float>(memory, CUDOT_F32, 5 * 8192 + 3, CUDOT_DEVICE_ALL);
            test::check_fresh_data<double>(memory, CUDOT_F64, CUDOT_DEVICE_ALL);
            const auto special = test::check_special_values<double>(memory, CUDOT_F64, CUDOT_DEVICE_ALL);
            const auto host_special = test::check_special_values<double>(CUDOT_MEMORY_HOST, CUDOT_F64);
            REQUIRE(special.size() == host_special.size());
            for (std::size_t i = 0; i < special.size(); ++i) CHECK(test::bits(special[i]) == test::bits(host_special[i]));
        }
    }
}

TEST_CASE("multi-GPU: large fresh vectors (2^25 + 3) on every strategy", "[gpu][multigpu][large]") {
    const std::size_t n = (std::size_t(1) << 25) + 3;
    HostCase h(CUDOT_F32, CUDOT_F32, n, 99);
    for (int32_t memory : kStrategies) {
        Ctx g(n, CUDOT_F32, memory, CUDOT_DEVICE_ALL);
        INFO(test::memory_name(memory) << " " << g.init_error);
        REQUIRE(g.status == CUDOT_OK);
        for (int round = 0; round < 3; ++round) {
            copy_inputs(h.host, g, CUDOT_F32, CUDOT_F32, n);  // rewritten by the host before each dot
            CHECK(test::bits(g.dot()) == test::bits(h.expected));
        }
    }
}

TEST_CASE("multi-GPU: cudot_get_memory reports CUDOT_DEVICE_ALL, AUTO stays a GPU strategy", "[gpu][multigpu]") {
    for (int32_t memory : kStrategies) {
        Ctx g(10, CUDOT_F32, memory, CUDOT_DEVICE_ALL);
        REQUIRE(g.status == CUDOT_OK);
        int32_t m = -5, d = -5;
        REQUIRE(cudot_get_memory(g.ctx, &m, &d) == CUDOT_OK);
        CHECK(d == CUDOT_DEVICE_ALL);
        CHECK(m == (memory == CUDOT_MEMORY_AUTO ? CUDOT_MEMORY_MAPPED : memory));
    }
    Ctx below(10, CUDOT_F32, CUDOT_MEMORY_PINNED, -2);
    CHECK(below.status == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(below.init_error.find("CUDOT_DEVICE_ALL") != std::string::npos);
}

// GPU contexts compute cudot_tile_partials on their GPU(s): the same bytes as HOST's, from aligned
// starts (read in place) and from starts that misalign the kernel's loads (staged on the device).
TEST_CASE("GPU partials: every strategy, one GPU and several, equal HOST's partials", "[gpu][multigpu][partials]") {
    static const DeviceLists lists;
    const std::size_t n = 6 * 8192 + 123;
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : {CUDOT_F64, CUDOT_F16, CUDOT_I8, CUDOT_U8}) {
            HostCase h(xd, yd, n, 1000 + 10 * xd + yd);
            for (std::size_t first : {std::size_t(0), std::size_t(1), std::size_t(8192 + 3), std::size_t(16),
                                      std::size_t(n - 1)}) {
                const std::size_t count = n - first, tiles = tiles_of(count);
                std::vector<unsigned char> want(tiles * CUDOT_PARTIAL_BYTES), got(want.size());
                REQUIRE(cudot_tile_partials(h.host.ctx, first, count, want.data()) == CUDOT_OK);
                for (int32_t device : {0, CUDOT_DEVICE_ALL})
                    for (const auto &list : lists.lists) {
                        if (device == 0 && !list.empty()) continue;
                        ForcedDevices forced(list);
                        for (int32_t memory : kStrategies) {
                            Ctx g(n, xd, memory, device, yd);
                            REQUIRE(g.status == CUDOT_OK);
                            copy_inputs(h.host, g, xd, yd, n);
                            INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " first=" << first << " "
                                                      << test::memory_name(memory) << " device " << device << " "
                                                      << list_name(list));
                            std::fill(got.begin(), got.end(), 0xAB);
                            REQUIRE(cudot_tile_partials(g.ctx, first, count, got.data()) == CUDOT_OK);
                            CHECK(std::memcmp(got.data(), want.data(), want.size()) == 0);
                            // And the context still dots correctly afterwards.
                            CHECK(test::bits(g.dot()) == test::bits(h.expected));
                        }
                    }
            }
        }
}
