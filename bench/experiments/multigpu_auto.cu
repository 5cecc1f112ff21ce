// multigpu_auto.cu - issue 24, M2: AUTO on every GPU (CUDOT_DEVICE_ALL) ran at 0.66-0.94 of AUTO on GPU 0
// in cudot-bench-multigpu (two-H100 host, fresh inputs, n = 2^24-2^26), where both could take the same
// road (the CPU's). Which roads did each take, in what order, and with which estimates?
// Fresh inputs (rewritten before every call, untimed), as in the bench. Two methods per size:
//   "bench":  cudot-bench-multigpu's method: AUTO on GPU 0 for 3 + reps calls, then AUTO on every GPU;
//   "rounds": HOST, AUTO on GPU 0 and AUTO on every GPU timed in turn in shuffled rounds.
// For each AUTO context: the median, the road of its first 12 calls (c: CPU, g: GPUs, s: split), the
// median and count of the timed dots on each road, and the chooser's estimates at the end
// (cudot::testing::auto_counts). Every context's last result is checked against a plain host reference.
// Build (from the repository root, after the CUDA build in build/; links the static library for the
// testing counters):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc -Ibench -Ibench/experiments bench/experiments/multigpu_auto.cu bench/measure.cpp \
//        build/libcudot_static.a -lpthread -ldl -o build/experiments/multigpu_auto
//   usage: multigpu_auto [reps = 30] [log2 sizes = 20 22 24 26]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudot.h"
#include "inputs.hpp"
#include "measure.hpp"
#include "open_ctx.hpp"

namespace {

constexpr int kWarmup = 3;

struct Ctx {
    cudot_ctx *ctx = nullptr;
    void *x = nullptr, *y = nullptr;
    double last = 0;
    std::string roads;  // the road of each call: c, g, s ('-': none counted)
    Ctx(int memory, int device, int dtype, std::size_t n) : ctx(open_ctx(memory, dtype, n, false, device)) {
        cudot_get_inputs(ctx, &x, &y);
    }
    ~Ctx() { cudot_deinit(ctx); }
    Ctx(const Ctx &) = delete;
    Ctx &operator=(const Ctx &) = delete;
    bool dot() {
        int road = -1;
        const bool ok = dot_on_road(ctx, &last, &road);
        roads.push_back(road < 0 ? '-' : "cgs"[road]);
        return ok;
    }
};

double median(std::vector<double> v) { return v.empty() ? 0 : bench::summarize(std::move(v)).median_us; }

void print_auto(const char *name, const Ctx &c, const std::vector<double> &samples) {
    std::vector<double> by_road[3];
    for (std::size_t i = 0; i < samples.size() && kWarmup + i < c.roads.size(); ++i) {
        const char road = c.roads[kWarmup + i];
        for (int r = 0; r < 3; ++r)
            if (road == "cgs"[r]) by_road[r].push_back(samples[i]);
    }
    const cudot::AutoCounts a = cudot::testing::auto_counts(c.ctx);
    std::printf("    %-9s %8.1f  first %-12s | cpu %8.1f (%2zu) | gpu %8.1f (%2zu) | split %8.1f (%2zu) | est %.1f / %.1f / %.1f\n",
                name, median(samples), c.roads.substr(0, 12).c_str(), median(by_road[0]), by_road[0].size(),
                median(by_road[1]), by_road[1].size(), median(by_road[2]), by_road[2].size(), a.road_us[0], a.road_us[1],
                a.road_us[2]);
}

bool checked(int dtype, std::size_t n, const Ctx &c) {
    return bench::same_bits(c.last, bench::host_reference(dtype, c.x, c.y, n));
}

}  // namespace

int main(int argc, char **argv) {
    const int reps = argc > 1 ? std::max(10, std::atoi(argv[1])) : 30;
    std::vector<int> sizes;
    for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {20, 22, 24, 26};
    std::printf("multigpu_auto: fresh inputs, %d timed calls per context, medians in us\n", reps);
    bool all_same = true;
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg : sizes) {
            const std::size_t n = std::size_t(1) << lg;
            std::printf("%s 2^%d\n", dtype == CUDOT_F32 ? "f32" : "f64", lg);
            auto fill = [dtype, n](Ctx *c) { return [c, dtype, n](int round) { bench::rewrite(dtype, c->x, c->y, n, round); }; };
            {  // the bench's method: one context after the other
                // time_interleaved with one contender is time_calls, keeping the samples
                Ctx one(CUDOT_MEMORY_AUTO, 0, dtype, n);
                std::vector<bench::Contender> a{{fill(&one), [&] { return one.dot(); }}};
                bench::time_interleaved(kWarmup, reps, a);
                Ctx all(CUDOT_MEMORY_AUTO, CUDOT_DEVICE_ALL, dtype, n);
                std::vector<bench::Contender> b{{fill(&all), [&] { return all.dot(); }}};
                bench::time_interleaved(kWarmup, reps, b);
                std::printf("  bench:  speed-up %.3f\n", median(a[0].samples) / median(b[0].samples));
                print_auto("gpu 0", one, a[0].samples);
                print_auto("all gpus", all, b[0].samples);
                all_same = all_same && checked(dtype, n, one) && checked(dtype, n, all);
            }
            {  // the same three in shuffled rounds
                Ctx host(CUDOT_MEMORY_HOST, 0, dtype, n), one(CUDOT_MEMORY_AUTO, 0, dtype, n),
                    all(CUDOT_MEMORY_AUTO, CUDOT_DEVICE_ALL, dtype, n);
                std::vector<bench::Contender> cs;
                for (Ctx *c : {&host, &one, &all}) cs.push_back({fill(c), [c] { return c->dot(); }});
                bench::time_interleaved(kWarmup, reps, cs, 0, false, bench::Order::kShuffled);
                std::printf("  rounds: speed-up %.3f, HOST %.1f\n", median(cs[1].samples) / median(cs[2].samples),
                            median(cs[0].samples));
                print_auto("gpu 0", one, cs[1].samples);
                print_auto("all gpus", all, cs[2].samples);
                all_same = all_same && checked(dtype, n, host) && checked(dtype, n, one) && checked(dtype, n, all);
            }
            std::fflush(stdout);
        }
    std::printf("results %s\n", all_same ? "bit-equal to the host's" : "DIFFER");
    return all_same ? 0 : 1;
}
