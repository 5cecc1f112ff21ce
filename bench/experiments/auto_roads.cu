// auto_roads.cu - issue 24, T5 fresh: at f32 2^22 AUTO (both variants) took 1.09-1.29 x HOST's time in
// all three interleaved runs of cudot-bench, the one size that missed every time. Which road did its
// dots take, and is its CPU road slower than HOST's dot of the same size?
// Fresh inputs (rewritten before every call, untimed), as in cudot-bench, timed in turn in the same
// rounds, each after a spun 2 ms pause: a plain read of HOST's buffers (cudot-bench's ceiling for HOST,
// with its own rewrite) and HOST's dot right after it, as cudot-bench orders them; AUTO; AUTO on managed
// buffers (CUDOT_AUTO_MANAGED=1); MAPPED; and a second HOST context with nothing of its own before it.
// For each AUTO variant: the median of all its dots, then of the dots on each road (the CPU, the GPUs,
// both) with their count, and the chooser's estimates at the end (cudot::testing::auto_counts). Each
// context's last result is checked against a plain host reference of its own last inputs.
// Build (from the repository root, after the CUDA build in build/; links the static library for the
// testing counters):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc -Ibench -Ibench/experiments bench/experiments/auto_roads.cu bench/measure.cpp \
//        bench/host_read.cpp \
//        build/libcudot_static.a -lpthread -ldl -o build/experiments/auto_roads
//   usage: auto_roads [rounds = 101] [log2 sizes = 20 22 24]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cudot.h"
#include "host_read.hpp"
#include "inputs.hpp"
#include "measure.hpp"
#include "open_ctx.hpp"
#include "testing.hpp"

namespace {

constexpr int kWarmup = 3, kSettleUs = 2000;
volatile unsigned long long read_sink;  // keeps the plain reads from being optimized away

struct Ctx {
    cudot_ctx *ctx = nullptr;
    void *x = nullptr, *y = nullptr;
    double last = 0;
    std::vector<int> roads;  // the road of each call (-1: none counted: a resident or sentinel dot)
    Ctx(int memory, int dtype, std::size_t n, bool auto_managed) {
        ctx = open_ctx(memory, dtype, n, auto_managed);
        cudot_get_inputs(ctx, &x, &y);
    }
    ~Ctx() { cudot_deinit(ctx); }
    Ctx(const Ctx &) = delete;
    Ctx &operator=(const Ctx &) = delete;
    bool dot() {
        int road = -1;
        const bool ok = dot_on_road(ctx, &last, &road);
        roads.push_back(road);
        return ok;
    }
};

double median(std::vector<double> v) { return v.empty() ? 0 : bench::summarize(std::move(v)).median_us; }

// "all / cpu (count) / gpu (count) / split (count)" for one AUTO contender's timed calls.
void print_auto(const char *name, const Ctx &c, const bench::Contender &k) {
    std::vector<double> by_road[3];
    for (std::size_t i = 0; i < k.samples.size(); ++i) {
        const int road = c.roads[kWarmup + i];
        if (road >= 0) by_road[road].push_back(k.samples[i]);
    }
    const cudot::AutoCounts a = cudot::testing::auto_counts(c.ctx);
    std::printf("  %-13s %8.1f | cpu %8.1f (%3zu) | gpu %8.1f (%3zu) | split %8.1f (%3zu) | estimates %.1f / %.1f / %.1f\n",
                name, median(k.samples), median(by_road[0]), by_road[0].size(), median(by_road[1]), by_road[1].size(),
                median(by_road[2]), by_road[2].size(), a.road_us[0], a.road_us[1], a.road_us[2]);
}

}  // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(11, std::atoi(argv[1])) : 101;
    std::printf("auto_roads: fresh inputs, medians of %d interleaved rounds in us\n", rounds);
    std::vector<int> sizes;
    for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {20, 22, 24};
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg : sizes) {
            const std::size_t n = std::size_t(1) << lg;
            Ctx host(CUDOT_MEMORY_HOST, dtype, n, false), au(CUDOT_MEMORY_AUTO, dtype, n, false),
                am(CUDOT_MEMORY_AUTO, dtype, n, true), mapped(CUDOT_MEMORY_MAPPED, dtype, n, false),
                host2(CUDOT_MEMORY_HOST, dtype, n, false);
            auto fill = [dtype, n](Ctx *c) {
                return [c, dtype, n](int round) { bench::rewrite(dtype, c->x, c->y, n, round); };
            };
            const std::size_t size = bench::size_of(dtype);
            std::vector<bench::Contender> cs{{fill(&host), [&] {
                                                  read_sink = bench::host_read(host.x, size, host.y, size, n);
                                                  return true;
                                              }}};
            for (Ctx *c : {&host, &au, &am, &mapped, &host2}) cs.push_back({fill(c), [c] { return c->dot(); }});
            bench::time_interleaved(kWarmup, rounds, cs, kSettleUs, true);
            bool same = true;
            for (Ctx *c : {&host, &au, &am, &mapped, &host2})
                same = same && bench::same_bits(c->last, bench::host_reference(dtype, c->x, c->y, n));
            std::printf("%s 2^%d: read %.1f, HOST after it %.1f, HOST alone %.1f, MAPPED %.1f; results %s\n",
                        dtype == CUDOT_F32 ? "f32" : "f64", lg, median(cs[0].samples), median(cs[1].samples),
                        median(cs[5].samples), median(cs[4].samples), same ? "bit-equal to the host's" : "DIFFER");
            print_auto("auto", au, cs[2]);
            print_auto("auto-managed", am, cs[3]);
        }
    return 0;
}
