// test_gpu_paths.cpp - the ways a GPU dot can be cut, launched and waited for change nothing of its
// result: slices of tiles, grid sizes, a CUDA graph or a plain launch, polling the result's word or
// synchronizing the stream, PINNED copying or reading in place, MANAGED migrating or reading in place,
// and AUTO's choice of path. Every combination must give HOST's bits. Without a usable GPU each case
// exits with 77 (CTest: "skipped").
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "cuda/cuda_backend.hpp"
#include "isolation.hpp"
#include "core/order.hpp"
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
};

}  // namespace

// Each grid size is launched, then captured into a graph and replayed (a dot of the same shape twice
// in a row), and a shorter dot in between changes the shape.
TEST_CASE("GPU: grid sizes, launches and graph replays leave every pair's bits alone", "[gpu][determinism]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(4096), std::size_t(8193),
                                  std::size_t(8192 * 5 + 7), std::size_t(8192 * 40)}) {
                SamePair p(n, xd, yd, CUDOT_MEMORY_MANAGED, 3 * n + 7 * xd + yd);
                for (unsigned blocks : {1u, 3u, 0u}) {
                    cudot::testing::set_gpu_blocks(p.gpu.ctx, blocks);
                    INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n << " blocks=" << blocks);
                    for (int call = 0; call < 3; ++call) CHECK(test::bits(p.gpu.dot()) == test::bits(p.expected));
                    CHECK(test::bits(p.gpu.dot_n(n - n / 3)) == test::bits(p.host.dot_n(n - n / 3)));
                }
            }
}

TEST_CASE("GPU: MAPPED reads as HOST computes", "[gpu][determinism]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_I8})
        for (std::size_t n : {std::size_t(777), std::size_t(8192 * 3 + 1), std::size_t((1 << 20) + 3)}) {
            SamePair p(n, dtype, dtype, CUDOT_MEMORY_MAPPED, n + dtype);
            INFO(test::dtype_name(dtype) << " n=" << n);
            for (int call = 0; call < 3; ++call) CHECK(test::bits(p.gpu.dot()) == test::bits(p.expected));
        }
}

// PINNED measures both ways to its inputs (copied, or read in place) at each size before it settles on
// one, so a run of dots of one size takes both, launched and then replayed from a graph.
TEST_CASE("GPU: PINNED copying or reading in place, graph or launch: the same bits", "[gpu][determinism]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_BF16, CUDOT_U8})
        for (std::size_t n : {std::size_t(5), std::size_t(8192 * 17 + 5), std::size_t((1 << 20) + 3)}) {
            SamePair p(n, dtype, dtype, CUDOT_MEMORY_PINNED, 5 * n + dtype);
            INFO(test::dtype_name(dtype) << " n=" << n);
            for (int call = 0; call < 12; ++call) CHECK(test::bits(p.gpu.dot()) == test::bits(p.expected));
            CHECK(test::bits(p.gpu.dot_n(n / 2 + 1)) == test::bits(p.host.dot_n(n / 2 + 1)));
        }
}

// The strategies whose dots may be replayed from a graph must see every rewrite of the inputs.
TEST_CASE("GPU: replayed dots see what the host last wrote, on every path", "[gpu]") {
    const std::size_t n = (std::size_t(1) << 21) + 9;  // large enough for MANAGED to adapt
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED}) {
        Ctx h(n, CUDOT_F32, CUDOT_MEMORY_HOST), g(n, CUDOT_F32, memory);
        REQUIRE(h.status == CUDOT_OK);
        REQUIRE(g.status == CUDOT_OK);
        for (int round = 0; round < 40; ++round) {
            if (round % 8 < 5) {  // rewritten, then resident for a while: MANAGED switches both ways
                test::fill_random(h.x<float>(), h.y<float>(), n, 900 + round);
                std::memcpy(g.x<float>(), h.x<float>(), n * sizeof(float));
                std::memcpy(g.y<float>(), h.y<float>(), n * sizeof(float));
            }
            INFO(test::memory_name(memory) << " round " << round);
            CHECK(test::bits(g.dot()) == test::bits(h.dot()));
        }
    }
}

namespace {

// An AUTO pair on managed buffers: the opt-in (CUDOT_AUTO_MANAGED=1, cudot.h) is read at init, so it is
// set only while the pair is made.
std::unique_ptr<SamePair> auto_managed_pair(std::size_t n, int32_t dtype, std::uint64_t seed) {
    const test::EnvVar opt_in("CUDOT_AUTO_MANAGED", "1");
    std::unique_ptr<SamePair> pair(new SamePair(n, dtype, dtype, CUDOT_MEMORY_AUTO, seed));
    int32_t memory = -1, device = -1;
    REQUIRE(cudot_get_memory(pair->gpu.ctx, &memory, &device) == CUDOT_OK);
    REQUIRE(memory == CUDOT_MEMORY_MANAGED);
    return pair;
}

}  // namespace

// AUTO on managed buffers moves inputs the host leaves alone into GPU memory, and back to the host when
// a dot below the GPU's sizes needs them there or when the host writes them (auto_dot.cpp); every dot,
// whatever it found where, has HOST's bits. Asserted, both ways:
//  - there: any resident run of 60 dots at 2^22 elements moves them (a GPU dot reads them in HBM at
//    10-20x the host's speed), and so does a second run after they came back;
//  - back for a small dot: the CPU's dot brings them back first;
//  - back when the host rewrites all of them before every dot: each dot then reads the whole inputs over
//    the bus, no faster than the GPU road, which the roads' best estimate already matches or beats, and
//    two slower dots in a row send them back (40 dots allowed);
//  - and after that way back they stay on the host while the host keeps writing them (a move needs a dot
//    with the bits of the last one), every dot seeing the writes.
// Which way AUTO goes under a mix of resident and partly rewritten inputs is timing: reported.
TEST_CASE("GPU: AUTO moves resident inputs into GPU memory and back, with HOST's bits", "[gpu][determinism]") {
    const std::size_t n = (std::size_t(1) << 22) + 3;
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64}) {
        const auto pair = auto_managed_pair(n, dtype, 41 + dtype);
        SamePair &p = *pair;
        const std::size_t bytes = n * test::dtype_size(dtype);
        std::size_t most = 0;
        for (int dot = 0; dot < 60; ++dot) {  // resident
            INFO(test::dtype_name(dtype) << " resident dot " << dot);
            CHECK(test::bits(p.gpu.dot()) == test::bits(p.expected));
            most = std::max(most, cudot::testing::auto_on_gpus(p.gpu.ctx));
        }
        CHECK(most == n);
        // While the inputs are in GPU memory: a smaller dot, the partials, a dot below the GPU's sizes.
        CHECK(test::bits(p.gpu.dot_n(n / 3)) == test::bits(p.host.dot_n(n / 3)));
        std::vector<unsigned char> hp(cudot::order::tile_count(n / 2) * CUDOT_PARTIAL_BYTES), gp(hp.size());
        REQUIRE(cudot_tile_partials(p.host.ctx, 5 * cudot::order::kTile, n / 2, hp.data()) == CUDOT_OK);
        REQUIRE(cudot_tile_partials(p.gpu.ctx, 5 * cudot::order::kTile, n / 2, gp.data()) == CUDOT_OK);
        CHECK(hp == gp);
        CHECK(test::bits(p.gpu.dot_n(1000)) == test::bits(p.host.dot_n(1000)));
        CHECK(cudot::testing::auto_on_gpus(p.gpu.ctx) == 0);  // the CPU's dot brought them back first

        // Resident again until they move, then the host rewrites all of them before every dot, with two
        // sets of values in turn, A (as filled) and B, so that no dot has the last one's values.
        void *hx, *hy, *gx, *gy;
        cudot_get_inputs(p.host.ctx, &hx, &hy);
        cudot_get_inputs(p.gpu.ctx, &gx, &gy);
        std::vector<unsigned char> ax(bytes), ay(bytes), bx(bytes), by(bytes);
        std::memcpy(ax.data(), hx, bytes);
        std::memcpy(ay.data(), hy, bytes);
        test::fill_random_any(dtype, bx.data(), n, 700 + dtype);
        test::fill_random_any(dtype, by.data(), n, 800 + dtype);
        std::memcpy(hx, bx.data(), bytes);
        std::memcpy(hy, by.data(), bytes);
        const double expected[2] = {p.expected, p.host.dot()};
        std::size_t on_gpus = 0;
        for (int dot = 0; dot < 120 && on_gpus < n; ++dot) {
            INFO(test::dtype_name(dtype) << " resident again, dot " << dot);
            CHECK(test::bits(p.gpu.dot()) == test::bits(expected[0]));
            on_gpus = cudot::testing::auto_on_gpus(p.gpu.ctx);
        }
        {
            INFO(test::dtype_name(dtype) << ": elements in GPU memory after a second resident run");
            CHECK(on_gpus == n);
        }
        if (on_gpus != n) continue;  // nothing there to come back
        int set = 0, back_after = 0;
        auto rewrite = [&] {
            set = 1 - set;
            std::memcpy(gx, set ? bx.data() : ax.data(), bytes);
            std::memcpy(gy, set ? by.data() : ay.data(), bytes);
        };
        for (int dot = 1; dot <= 40 && back_after == 0; ++dot) {
            rewrite();
            INFO(test::dtype_name(dtype) << " rewritten while in GPU memory, dot " << dot);
            CHECK(test::bits(p.gpu.dot()) == test::bits(expected[set]));
            if (cudot::testing::auto_on_gpus(p.gpu.ctx) == 0) back_after = dot;
        }
        {
            INFO(test::dtype_name(dtype) << ": the way back, within 40 dots of rewritten inputs");
            CHECK(back_after > 0);
        }
        if (back_after == 0) continue;
        const unsigned long long sentinels = cudot::testing::auto_counts(p.gpu.ctx).sentinels;
        for (int dot = 0; dot < 20; ++dot) {
            rewrite();
            INFO(test::dtype_name(dtype) << " back after " << back_after << " rewritten dots; rewritten since: " << dot);
            CHECK(test::bits(p.gpu.dot()) == test::bits(expected[set]));
            CHECK(cudot::testing::auto_on_gpus(p.gpu.ctx) == 0);
        }
        {
            INFO(test::dtype_name(dtype) << ": sentinels moved while the host kept rewriting");
            CHECK(cudot::testing::auto_counts(p.gpu.ctx).sentinels == sentinels);
        }
        std::memcpy(gx, hx, bytes);  // both contexts hold B for what follows
        std::memcpy(gy, hy, bytes);

        // Rewritten before every dot, then resident again, then rewritten in part.
        unsigned moves = 0, backs = 0;
        std::size_t was = cudot::testing::auto_on_gpus(p.gpu.ctx);
        for (int round = 0; round < 120; ++round) {
            const int phase = round / 40;
            if (phase != 1) {
                const std::size_t count = phase == 0 ? n : n / 7;
                test::fill_random_any(dtype, hx, count, 1000 + round);
                std::memcpy(gx, hx, count * test::dtype_size(dtype));
            }
            INFO(test::dtype_name(dtype) << " round " << round);
            CHECK(test::bits(p.gpu.dot()) == test::bits(p.host.dot()));
            const std::size_t now = cudot::testing::auto_on_gpus(p.gpu.ctx);
            moves += now > was;
            backs += now < was;
            was = now;
        }
        WARN(test::dtype_name(dtype) << " (" << bytes << " bytes per input): back to the host after " << back_after
                                     << " wholly rewritten dots; then " << moves << " moves into GPU memory, " << backs
                                     << " back, in 120 dots (40 rewritten, 40 resident, 40 rewritten in part)");
    }
}

// The benchmark's pattern (cudot-bench's "fresh" then "resident" rows on one context): 33 dots of
// inputs rewritten with new values before each, then 35 dots of the same inputs. AUTO on managed buffers
// must move the inputs into GPU memory in the second phase (from 2^20 elements a GPU dot there is
// several times faster than any road) and never on the first; the counts of its decisions are reported.
TEST_CASE("GPU: AUTO moves inputs that stop changing into GPU memory, at the benchmark's sizes", "[gpu][determinism]") {
    const std::pair<int32_t, int> sizes[] = {{CUDOT_F32, 16}, {CUDOT_F32, 20}, {CUDOT_F32, 22}, {CUDOT_F32, 26},
                                             {CUDOT_F64, 16}, {CUDOT_F64, 20}, {CUDOT_F64, 22}};
    for (const auto &size : sizes) {
        const int32_t dtype = size.first;
        const std::size_t n = std::size_t(1) << size.second, bytes = n * test::dtype_size(dtype);
        const auto pair = auto_managed_pair(n, dtype, 77 + size.second);
        SamePair &p = *pair;
        void *hx, *hy, *gx, *gy;
        cudot_get_inputs(p.host.ctx, &hx, &hy);
        cudot_get_inputs(p.gpu.ctx, &gx, &gy);
        // Two sets of inputs, A (as filled) and B, written in turn: every fresh dot has new values.
        std::vector<unsigned char> ax(bytes), ay(bytes), bx(bytes), by(bytes);
        std::memcpy(ax.data(), hx, bytes);
        std::memcpy(ay.data(), hy, bytes);
        test::fill_random_any(dtype, bx.data(), n, 500 + size.second);
        test::fill_random_any(dtype, by.data(), n, 600 + size.second);
        std::memcpy(hx, bx.data(), bytes);
        std::memcpy(hy, by.data(), bytes);
        const double expected[2] = {p.expected, p.host.dot()};
        INFO(test::dtype_name(dtype) << " n=2^" << size.second);
        int set = 0;
        for (int dot = 0; dot < 33; ++dot) {  // fresh
            set = 1 - set;
            std::memcpy(gx, set ? bx.data() : ax.data(), bytes);
            std::memcpy(gy, set ? by.data() : ay.data(), bytes);
            CHECK(test::bits(p.gpu.dot()) == test::bits(expected[set]));
        }
        const cudot::AutoCounts fresh = cudot::testing::auto_counts(p.gpu.ctx);
        CHECK(fresh.sentinels == 0);  // never a move while the values change
        std::size_t most = 0;
        for (int dot = 0; dot < 35; ++dot) {  // resident
            CHECK(test::bits(p.gpu.dot()) == test::bits(expected[set]));
            most = std::max(most, cudot::testing::auto_on_gpus(p.gpu.ctx));
        }
        const cudot::AutoCounts c = cudot::testing::auto_counts(p.gpu.ctx);
        WARN(test::dtype_name(dtype) << " n=2^" << size.second << ": sentinels " << c.sentinels << " (stayed "
                                     << c.stayed << ", written " << c.not_stayed << "), resident dots kept "
                                     << c.resident_kept << " (noisy " << c.resident_noisy << "), left "
                                     << c.resident_left << "; sentinel us " << c.reference_us << " / last "
                                     << c.last_check_us << "; resident us " << c.resident_us << " / last "
                                     << c.last_resident_us << " / roads " << c.best_road_us);
        if (size.second >= 20) CHECK(most == n);
    }
}

// At 2^14 elements a dot from GPU memory (a launch and a wait: 9-10 us on an H100 host) does not beat
// the CPU (5 us). A move there finds no host write to blame; the next one waits kMoveWaitNoGain (64) dots
// of the size, not 2, 4, 8... (before: six moves in 100 resident dots, each a migration there and back).
// Where the GPU does win at this size, AUTO stays and leaves no time.
TEST_CASE("GPU: AUTO on managed buffers stops moving inputs where GPU memory does not pay", "[gpu][determinism]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64}) {
        const std::size_t n = std::size_t(1) << 14;
        const auto pair = auto_managed_pair(n, dtype, 300 + dtype);
        SamePair &p = *pair;
        for (int dot = 0; dot < 100; ++dot) {
            INFO(test::dtype_name(dtype) << " dot " << dot);
            CHECK(test::bits(p.gpu.dot()) == test::bits(p.expected));
        }
        const cudot::AutoCounts c = cudot::testing::auto_counts(p.gpu.ctx);
        WARN(test::dtype_name(dtype) << " n=2^14, 100 resident dots: sentinels " << c.sentinels << " (stayed " << c.stayed
                                     << ", written " << c.not_stayed << "), resident dots kept " << c.resident_kept
                                     << ", left " << c.resident_left << "; resident us " << c.resident_us
                                     << " / roads " << c.best_road_us);
        CHECK(c.resident_left <= 2);
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
            // Every dot the chooser served counted on its road; below 2^14 the CPU serves without it. Each
            // usable road had its tries (the split needs 16 tiles), and the roads' estimates are times.
            const cudot::AutoCounts c = cudot::testing::auto_counts(p.gpu.ctx);
            const bool chosen = n >= (std::size_t(1) << 14), split = n >= 16 * cudot::order::kTile;
            INFO(test::dtype_name(dtype) << " n=" << n << ": roads " << c.roads[0] << " / " << c.roads[1] << " / "
                                         << c.roads[2] << ", us " << c.road_us[0] << " / " << c.road_us[1] << " / "
                                         << c.road_us[2]);
            CHECK(c.roads[0] + c.roads[1] + c.roads[2] == (chosen ? 80u : 0u));
            if (chosen) {
                CHECK(c.roads[0] >= 2);
                CHECK(c.roads[1] >= 2);
                if (split) CHECK(c.roads[2] >= 2);
                else CHECK(c.roads[2] == 0);
                CHECK(c.road_us[0] > 0);
                CHECK(c.road_us[1] > 0);
                CHECK((c.road_us[2] > 0) == split);
            }
            CHECK(test::bits(p.gpu.dot_n(n / 2 + 1)) == test::bits(p.host.dot_n(n / 2 + 1)));
        }
}
