// t5_chooser.cu - issue 24, T5 fresh: AUTO missed 1.10 x the fastest strategy at single sizes from 2^14
// to 2^20 (one-H100 host, f32 2^16: AUTO 60.1 us median, MAPPED 50.0, HOST 61.3; both roads' p10s
// 40-44 us). AUTO's path chooser compares estimates that sit near each road's fastest times, while the
// target compares medians. This program is built once per chooser (each links its own static library)
// and run in turn; each run times, as cudot-bench's fresh rounds do (inputs rewritten before every call,
// untimed; a shuffled order; a spun 2 ms pause before calls of 256 KiB or more; 4 x 30 rounds), HOST,
// PINNED, MAPPED and AUTO, and prints per size the medians, AUTO / the fastest other, and the roads AUTO
// took (cudot::testing::auto_counts). Every context's last result is checked against a host reference.
// Build (from the repository root; LIB: a static library built with the chooser to measure):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc -Ibench -Ibench/experiments bench/experiments/t5_chooser.cu bench/measure.cpp \
//        LIB -lpthread -ldl -o build/experiments/t5_chooser_NAME
//   usage: t5_chooser [rounds = 120] [log2 sizes = 14 16 18 20]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cudot.h"
#include "inputs.hpp"
#include "measure.hpp"
#include "open_ctx.hpp"

namespace {

constexpr int kWarmup = 3, kSettleUs = 2000;
constexpr double kSettleBytes = 256 << 10;

using Ctx = OpenCtx;

double median(const std::vector<double> &v) { return v.empty() ? 0 : bench::summarize(v).median_us; }

}  // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(11, std::atoi(argv[1])) : 120;
    std::vector<int> sizes;
    for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {14, 16, 18, 20};
    std::printf("t5_chooser: fresh inputs, shuffled, %d rounds; medians in us (p10 in brackets)\n", rounds);
    bool all_same = true;
    double worst = 0;
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg : sizes) {
            const std::size_t n = std::size_t(1) << lg;
            const char *names[] = {"host", "pinned", "mapped", "auto"};
            Ctx host(CUDOT_MEMORY_HOST, dtype, n), pinned(CUDOT_MEMORY_PINNED, dtype, n),
                mapped(CUDOT_MEMORY_MAPPED, dtype, n), au(CUDOT_MEMORY_AUTO, dtype, n);
            Ctx *all[] = {&host, &pinned, &mapped, &au};
            std::vector<bench::Contender> cs;
            for (Ctx *c : all)
                cs.push_back({[c, dtype, n](int round) { bench::rewrite(dtype, c->x, c->y, n, round); },
                              [c] { return cudot_dot(c->ctx, &c->last) == CUDOT_OK; }});
            const double bytes = double(n) * 2 * bench::size_of(dtype);
            bench::time_interleaved(kWarmup, rounds, cs, bytes >= kSettleBytes ? kSettleUs : 0, true,
                                    bench::Order::kShuffled);
            double fastest_other = 0;
            std::printf("%s 2^%d:", dtype == CUDOT_F32 ? "f32" : "f64", lg);
            for (int k = 0; k < 4; ++k) {
                const bench::Stats s = bench::summarize(cs[k].samples);
                std::printf(" %s %.1f (%.1f)", names[k], s.median_us, s.p10_us);
                if (k < 3 && (fastest_other == 0 || s.median_us < fastest_other)) fastest_other = s.median_us;
                all_same = all_same && cs[k].ok &&
                           bench::same_bits(all[k]->last, bench::host_reference(dtype, all[k]->x, all[k]->y, n));
            }
            const double ratio = median(cs[3].samples) / fastest_other;
            worst = std::max(worst, ratio);
            const cudot::AutoCounts a = cudot::testing::auto_counts(au.ctx);
            std::printf(" | auto / fastest other %.3f | roads cpu %llu gpu %llu split %llu, estimates %.1f / %.1f / %.1f\n",
                        ratio, a.roads[0], a.roads[1], a.roads[2], a.road_us[0], a.road_us[1], a.road_us[2]);
            std::fflush(stdout);
        }
    std::printf("worst auto / fastest other %.3f; results %s\n", worst, all_same ? "bit-equal to the host's" : "DIFFER");
    return all_same ? 0 : 1;
}
