// test_gpu_paths.cpp - the ways a GPU dot can be cut, launched and waited for change nothing of its
// result: slices of tiles, grid sizes, a CUDA graph or a plain launch, polling the result's word or
// synchronizing the stream, PINNED copying or reading in place, MANAGED migrating or reading in place,
// and AUTO's choice of path. Every combination must give HOST's bits. Without a usable GPU each case
// exits with 77 (CTest: "skipped").
#include <catch2/catch.hpp>

#include <cstring>

#include "checks.hpp"
#include "cuda/cuda_backend.hpp"
#include "testing.hpp"

using test::Ctx;

namespace {

// A HOST context and a GPU context of the same pair, filled with the same random values.
struct SamePair {
    Ctx host, gpu;
    double expected = 0;
    SamePair(std::size_t n, int32_t xd, int32_t yd, int32_t memory, std::uint64_t seed)
        : host(n, xd, CUDOT_MEMORY_HOST, 0, yd), gpu(n, xd, memory, 0, yd) {
        REQUIRE(host.status == CUDOT_OK);
        REQUIRE(gpu.status == CUDOT_OK);
        void *hx, *hy, *gx, *gy;
        cudot_get_inputs(host.ctx, &hx, &hy);
        cudot_get_inputs(gpu.ctx, &gx, &gy);
        test::fill_random_any(xd, hx, n, seed);
        test::fill_random_any(yd, hy, n, seed + 1);
        std::memcpy(gx, hx, n * test::dtype_size(xd));
        std::memcpy(gy, hy, n * test::dtype_size(yd));
        expected = host.dot();
    }
    void tune(unsigned slices, bool stream_sync, bool graph = true, unsigned pinned_mode = 0, int managed_mode = 0) {
        cudot::cuda::GpuTuning t;
        t.slices = slices;
        t.stream_sync = stream_sync;
        t.no_graph = !graph;
        t.pinned_mode = pinned_mode;
        t.managed_mode = managed_mode;
        cudot::cuda::tune(*gpu.ctx, t);
    }
};

}  // namespace

TEST_CASE("GPU: slices of tiles, grid sizes and the wait leave every pair's bits alone", "[gpu][determinism]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(4096), std::size_t(8193),
                                  std::size_t(8192 * 5 + 7), std::size_t(8192 * 40)}) {
                SamePair p(n, xd, yd, CUDOT_MEMORY_MANAGED, 3 * n + 7 * xd + yd);
                for (unsigned slices : {0u, 1u, 2u, 4u, 8u})
                    for (unsigned blocks : {0u, 1u, 3u})
                        for (bool stream_sync : {false, true}) {
                            p.tune(slices, stream_sync, blocks != 3);
                            cudot::testing::set_gpu_blocks(p.gpu.ctx, blocks);
                            INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n << " slices="
                                                      << slices << " blocks=" << blocks << " sync=" << stream_sync);
                            CHECK(test::bits(p.gpu.dot()) == test::bits(p.expected));
                            CHECK(test::bits(p.gpu.dot_n(n - n / 3)) == test::bits(p.host.dot_n(n - n / 3)));
                        }
            }
}

TEST_CASE("GPU: MAPPED reads with slices as HOST computes", "[gpu][determinism]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_I8})
        for (std::size_t n : {std::size_t(777), std::size_t(8192 * 3 + 1), std::size_t((1 << 20) + 3)}) {
            SamePair p(n, dtype, dtype, CUDOT_MEMORY_MAPPED, n + dtype);
            for (unsigned slices : {0u, 1u, 8u}) {
                p.tune(slices, false);
                INFO(test::dtype_name(dtype) << " n=" << n << " slices=" << slices);
                CHECK(test::bits(p.gpu.dot()) == test::bits(p.expected));
            }
        }
}

TEST_CASE("GPU: PINNED copying or reading in place, graph or launch: the same bits", "[gpu][determinism]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_BF16, CUDOT_U8})
        for (std::size_t n : {std::size_t(5), std::size_t(8192 * 17 + 5), std::size_t((1 << 20) + 3)}) {
            SamePair p(n, dtype, dtype, CUDOT_MEMORY_PINNED, 5 * n + dtype);
            for (unsigned mode : {0u, 1u, 2u})
                for (bool graph : {true, false}) {
                    p.tune(0, false, graph, mode);
                    INFO(test::dtype_name(dtype) << " n=" << n << " pinned mode=" << mode << " graph=" << graph);
                    for (int call = 0; call < 3; ++call) CHECK(test::bits(p.gpu.dot()) == test::bits(p.expected));
                    CHECK(test::bits(p.gpu.dot_n(n / 2 + 1)) == test::bits(p.host.dot_n(n / 2 + 1)));
                }
        }
}

// The strategies whose dots may be replayed from a graph must see every rewrite of the inputs.
TEST_CASE("GPU: replayed dots see what the host last wrote, on every path", "[gpu]") {
    const std::size_t n = (std::size_t(1) << 21) + 9;  // large enough for MANAGED to adapt
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED})
        for (int mode : {0, 1, 2}) {
            Ctx h(n, CUDOT_F32, CUDOT_MEMORY_HOST), g(n, CUDOT_F32, memory);
            REQUIRE(h.status == CUDOT_OK);
            REQUIRE(g.status == CUDOT_OK);
            cudot::cuda::GpuTuning t;
            if (memory == CUDOT_MEMORY_PINNED) t.pinned_mode = static_cast<unsigned>(mode);
            if (memory == CUDOT_MEMORY_MANAGED) t.managed_mode = mode;
            cudot::cuda::tune(*g.ctx, t);
            for (int round = 0; round < 40; ++round) {
                if (round % 8 < 5) {  // rewritten, then resident for a while: MANAGED switches both ways
                    test::fill_random(h.x<float>(), h.y<float>(), n, 900 + round);
                    std::memcpy(g.x<float>(), h.x<float>(), n * sizeof(float));
                    std::memcpy(g.y<float>(), h.y<float>(), n * sizeof(float));
                }
                INFO(test::memory_name(memory) << " mode " << mode << " round " << round);
                CHECK(test::bits(g.dot()) == test::bits(h.dot()));
            }
        }
}

TEST_CASE("GPU: AUTO keeps HOST's bits while it tries and picks its paths", "[gpu][determinism]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64})
        for (std::size_t n : {std::size_t(1000), std::size_t((1 << 14) + 1), std::size_t((1 << 18) + 5),
                              std::size_t((1 << 22) + 3)}) {
            SamePair p(n, dtype, dtype, CUDOT_MEMORY_AUTO, 17 * n + dtype);
            for (int call = 0; call < 80; ++call) {  // past the tries and two re-checks of each path
                INFO(test::dtype_name(dtype) << " n=" << n << " call " << call);
                CHECK(test::bits(p.gpu.dot()) == test::bits(p.expected));
            }
            CHECK(test::bits(p.gpu.dot_n(n / 2 + 1)) == test::bits(p.host.dot_n(n / 2 + 1)));
        }
}
