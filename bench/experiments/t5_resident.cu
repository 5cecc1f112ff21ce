// t5_resident.cu - issue 24, T5 resident with AUTO opted in to managed buffers: in cudot-bench at 782cd30
// AUTO-managed missed 1.10 x the fastest strategy only at 2^14 (two-H100 host f32: 9.11 us against
// HOST's 3.48, p10-p90 8.90-9.44, as MANAGED's resident 8.80; one-H100 host f64: 21.40 against
// MANAGED's 12.61), and the bench keeps no counters to say why. This program times, as cudot-bench does
// for one dtype and size (the same contexts first in fresh rounds, inputs rewritten before every call,
// 3 + R rounds; then in resident rounds, inputs left as the last fresh call wrote them, 5 + R rounds;
// shuffled; a spun 2 ms pause before calls of 256 KiB or more), HOST, PINNED, MAPPED, MANAGED, AUTO and
// AUTO-managed, and prints each phase's medians, AUTO-managed / the fastest other, and what AUTO-managed
// did in the phase (cudot::testing::auto_counts: the roads' dots and estimates, the moves into GPU
// memory, the resident dots, the CPU road's estimates). HOST's own read of arrays of the same size and
// (resident rounds) cuBLAS join the rounds, as in cudot-bench. Every context's last result is checked
// against a host reference. Build (from the repository root, after the CUDA build in build/):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc -Ibench -Ibench/experiments bench/experiments/t5_resident.cu \
//        bench/ceilings.cu bench/host_read.cpp bench/measure.cpp src/cpu/thread_pool.cpp src/process_limits.cpp \
//        build/libcudot_static.a -lcublas -lpthread -ldl -o build/experiments/t5_resident
//   (run with LD_LIBRARY_PATH=/usr/local/cuda/lib64 for cuBLAS)
//   usage: t5_resident [rounds = 120] [log2 sizes = 14 16 18]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "ceilings.hpp"
#include "cudot.h"
#include "host_read.hpp"
#include "inputs.hpp"
#include "measure.hpp"
#include "open_ctx.hpp"

namespace {

constexpr int kSettleUs = 2000;
constexpr double kSettleBytes = 256 << 10;

using Ctx = OpenCtx;

// What AUTO-managed did between two snapshots of its counters.
void print_counts(const cudot::AutoCounts &a, const cudot::AutoCounts &b) {
    std::printf("    auto-managed: roads cpu %llu gpu %llu split %llu (estimates %.1f / %.1f / %.1f us); sentinels %llu "
                "(stayed %llu, written %llu); resident dots kept %llu (noisy %llu), left %llu; resident us fastest "
                "%.1f, last %.1f; roads' best there %.1f; CPU road thread / pool estimates %.1f / %.1f us\n",
                b.roads[0] - a.roads[0], b.roads[1] - a.roads[1], b.roads[2] - a.roads[2], b.road_us[0], b.road_us[1],
                b.road_us[2], b.sentinels - a.sentinels, b.stayed - a.stayed, b.not_stayed - a.not_stayed,
                b.resident_kept - a.resident_kept, b.resident_noisy - a.resident_noisy,
                b.resident_left - a.resident_left, b.resident_us, b.last_resident_us, b.best_road_us, b.where_us[0],
                b.where_us[1]);
}

}  // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(11, std::atoi(argv[1])) : 120;
    std::vector<int> sizes;
    for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {14, 16, 18};
    std::printf("t5_resident: fresh then resident rounds, shuffled, %d rounds each; medians in us (p10 in brackets)\n",
                rounds);
    bool all_same = true;
    double worst[2] = {0, 0};
    const char *names[] = {"host", "pinned", "mapped", "managed", "auto", "auto-managed"};
    const int memories[] = {CUDOT_MEMORY_HOST, CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED,
                            CUDOT_MEMORY_AUTO, CUDOT_MEMORY_AUTO};
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg : sizes) {
            const std::size_t n = std::size_t(1) << lg;
            std::vector<std::unique_ptr<Ctx>> all;
            for (int k = 0; k < 6; ++k) all.push_back(std::make_unique<Ctx>(memories[k], dtype, n, k == 5));
            const double bytes = double(n) * 2 * bench::size_of(dtype);
            for (int phase = 0; phase < 2; ++phase) {
                const bool fresh = phase == 0;
                std::vector<bench::Contender> cs;
                for (auto &c : all) {
                    Ctx *p = c.get();
                    cs.push_back({fresh ? std::function<void(int)>([p, dtype, n](int round) {
                        bench::rewrite(dtype, p->x, p->y, n, round);
                    })
                                        : std::function<void(int)>(),
                                  [p] { return cudot_dot(p->ctx, &p->last) == CUDOT_OK; }});
                }
                // cudot-bench's company in the same rounds: HOST's own read, and cuBLAS beside the resident rows.
                cs.push_back(bench::read_contender(dtype, dtype, n, fresh ? [dtype, n](void *a, void *b, int round) {
                    bench::rewrite(dtype, a, b, n, round);
                } : std::function<void(void *, void *, int)>()));
                std::unique_ptr<bench::CublasPeer> cublas;
                if (!fresh) cublas = std::make_unique<bench::CublasPeer>(dtype, n);
                if (cublas && cublas->ok()) cs.push_back({nullptr, [&cublas] { return cublas->dot(); }});
                const cudot::AutoCounts before = cudot::testing::auto_counts(all[5]->ctx);
                bench::time_interleaved(fresh ? 3 : 5, rounds, cs, bytes >= kSettleBytes ? kSettleUs : 0, true,
                                        bench::Order::kShuffled);
                const cudot::AutoCounts after = cudot::testing::auto_counts(all[5]->ctx);
                double fastest_other = 0;
                std::printf("%s 2^%d %-8s:", dtype == CUDOT_F32 ? "f32" : "f64", lg, fresh ? "fresh" : "resident");
                for (int k = 0; k < 6; ++k) {
                    const bench::Stats s = bench::summarize(cs[k].samples);
                    std::printf(" %s %.2f (%.2f)", names[k], s.median_us, s.p10_us);
                    if (k < 5 && (fastest_other == 0 || s.median_us < fastest_other)) fastest_other = s.median_us;
                    all_same = all_same && cs[k].ok &&
                               bench::same_bits(all[k]->last, bench::host_reference(dtype, all[k]->x, all[k]->y, n));
                }
                const double ratio = bench::summarize(cs[5].samples).median_us / fastest_other;
                worst[phase] = std::max(worst[phase], ratio);
                std::printf(" | auto-managed / fastest other %.3f\n", ratio);
                print_counts(before, after);
                std::fflush(stdout);
            }
        }
    std::printf("worst auto-managed / fastest other: fresh %.3f, resident %.3f; results %s\n", worst[0], worst[1],
                all_same ? "bit-equal to the host's" : "DIFFER");
    return all_same ? 0 : 1;
}
