// resident_gap.cu - issue 24, T5 resident: in cudot-bench's interleaved rounds, AUTO's resident dots
// (opted in to managed buffers, inputs moved into GPU memory) took 5-10 us more than MANAGED's at
// 2^18-2^22 elements, while alone (tests/test_gpu_paths.cpp) they matched. Which neighbour causes it?
// Resident inputs, f32 and f64, medians of alternated rounds, through the public API:
//   alone      AUTO-managed and MANAGED each in rounds of their own, back to back
//   in turn    the two in the same rounds, one after the other
//   + spin     in turn, each call after the bench's 2 ms pause, spun through
//   + auto     in turn with a default AUTO dot (mapped buffers: the CPU pool and the bus) before each
//   + host     in turn with a HOST dot (the CPU pool) before each
//   fresh first  in turn, on two more contexts that first ran 33 dots of inputs rewritten with new values
//              before each (cudot-bench's fresh rows, on the same contexts as its resident rows)
// A second table sets the two beside cudot-bench's whole company for one size, as cudot-bench times its
// sweep (33 fresh rounds, then 35 resident ones, every call after a spun 2 ms pause, the order rotating):
//   bench set  every strategy's context (AUTO, AUTO-managed, PINNED, MAPPED, MANAGED, HOST) and the three
//              seed peers (the tutorial's design: PINNED, MAPPED, MANAGED)
//   no seeds   the same without the seed peers
//   seeds only AUTO-managed, MANAGED and the seed peers
//   - cpu      the bench set without AUTO (default) and HOST, the contexts that run on the CPU
//   - bus      the bench set without PINNED and MAPPED, the contexts that read over the bus
// Each cell: AUTO-managed's median (p10) / MANAGED's median (p10).
// Build (from the repository root, after the CUDA build in build/):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc -Ibench -Ibench/experiments bench/experiments/resident_gap.cu \
//        bench/measure.cpp bench/seed_peer.cu build/libcudot_static.a -lcupti -Xlinker -rpath -Xlinker '$ORIGIN' \
//        -lpthread -ldl -o build/experiments/resident_gap && cp /usr/local/cuda/lib64/libcupti.so.13 build/experiments/
//   usage: resident_gap [rounds = 101] [company]   (company: the second table alone, f32 2^22, seeds only;
//          for a profiler, whose trace tells each context's kernel time from its stream)
//          resident_gap [rounds] probe   (the whole program; in each company of f32 2^22, CUPTI's records
//          of both contexts' resident kernels (kernel_trace.hpp: the launching call, the wait to the
//          kernel's start, the kernel), AUTO's decisions and both contexts' deciles; after the first
//          company, its resident rounds again: unchanged, with the two contexts' places swapped, shuffled,
//          without graphs, with both graphs captured anew, with MANAGED's inputs advised as AUTO's, on new
//          streams, with the inputs traded, with AUTO's dots straight into the backend, and so with the GPU
//          states traded; then plain kernels time a read of each context's inputs, as left, prefetched
//          again and unadvised). Found: the kernels take the same time, the
//          launching call is 6-12 us longer on AUTO's stream (docs/perf/h100-x1-resident-gap-trace.txt);
//          with the two contexts' places in the rotated order swapped, on MANAGED's: the slow launch
//          belongs to the place (the call after the seed's MANAGED dot), not to the context, and a
//          shuffled order spreads it over every row (docs/perf/h100-x1-resident-gap.txt, run C).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <cstdlib>
#include <string>
#include <vector>

#include "context.hpp"
#include "cuda/gpu_state.hpp"
#include "cuda/cuda_backend.hpp"
#include "cudot.h"
#include "inputs.hpp"
#include "kernel_trace.hpp"
#include "testing.hpp"
#include "measure.hpp"
#include "open_ctx.hpp"
#include "seed_peer.hpp"

namespace {

bool first_probe = true;  // the reruns below run after the first company only

// A context of one strategy, filled once; auto_managed: AUTO created with CUDOT_AUTO_MANAGED=1.
struct Ctx {
    cudot_ctx *ctx = nullptr;
    void *x = nullptr, *y = nullptr;
    double last = 0;
    Ctx(int memory, int dtype, std::size_t n, bool auto_managed) {
        ctx = open_ctx(memory, dtype, n, auto_managed);
        cudot_get_inputs(ctx, &x, &y);
        bench::rewrite(dtype, x, y, n, 0);
    }
    ~Ctx() { cudot_deinit(ctx); }
    bool dot() {
        const cudot_status status = cudot_dot(ctx, &last);
        if (status != CUDOT_OK) std::printf("  (cudot_dot failed: %s)\n", cudot_last_error(ctx));
        return status == CUDOT_OK;
    }
};

void spin(int us) {
    const double until = bench::now_us() + us;
    while (bench::now_us() < until) {
    }
}

// Reads both inputs where they lie (the sum only keeps the loads from being dropped).
__global__ void read_kernel(const float *x, const float *y, std::size_t words, float *sink) {
    float acc = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words; i += std::size_t(gridDim.x) * blockDim.x)
        acc += x[i] * y[i];
    if (acc == 12345.f) *sink = acc;
}

// Touches a large buffer of its own: evicts the L2 and the GPU's TLB entries, as other contexts' dots do.
__global__ void thrash_kernel(float *big, std::size_t words) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words; i += std::size_t(gridDim.x) * blockDim.x)
        big[i] += 1.f;
}

// Kernel time (CUDA events) of one plain read of each context's inputs, after a thrash each time: tells a
// GPU-side difference (where the pages lie, how they are mapped) from a host-side one.
void probe_reads(const char *when, Ctx &am, Ctx &mg, std::size_t bytes) {
    static float *big = nullptr, *sink = nullptr;
    const std::size_t big_words = std::size_t(256) << 20;  // 1 GiB
    if (!big && (cudaMalloc(&big, big_words * 4) != cudaSuccess || cudaMalloc(&sink, 4) != cudaSuccess)) return;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<double> t[2];
    for (int r = 0; r < 41; ++r)
        for (int k = 0; k < 2; ++k) {
            Ctx &c = k ? mg : am;
            thrash_kernel<<<528, 256>>>(big, big_words);
            cudaEventRecord(e0);
            read_kernel<<<528, 512>>>(static_cast<const float *>(c.x), static_cast<const float *>(c.y), bytes / 4, sink);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms = 0;
            cudaEventElapsedTime(&ms, e0, e1);
            if (r > 0) t[k].push_back(ms * 1000.0);
        }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    const bench::Stats a = bench::summarize(t[0]), m = bench::summarize(t[1]);
    std::printf("  probe %-28s kernel us after a thrash: AUTO-managed %.1f (p10 %.1f) / MANAGED %.1f (p10 %.1f)\n", when,
                a.median_us, a.p10_us, m.median_us, m.p10_us);
}

// The company's contenders: each context's dot and each seed peer's, with a rewrite of the inputs before
// each call when fresh.
std::vector<bench::Contender> company(std::vector<std::unique_ptr<Ctx>> &ctxs,
                                      std::vector<std::unique_ptr<bench::SeedDot>> &peers, int dtype, std::size_t n,
                                      bool fresh) {
    std::vector<bench::Contender> cs;
    for (auto &c : ctxs) {
        Ctx *p = c.get();
        cs.push_back({fresh ? std::function<void(int)>([p, dtype, n](int r) { bench::rewrite(dtype, p->x, p->y, n, r); })
                            : nullptr,
                      [p] { return p->dot(); }});
    }
    for (auto &s : peers) {
        bench::SeedDot *p = s.get();
        cs.push_back({fresh ? std::function<void(int)>([p, dtype, n](int r) { bench::rewrite(dtype, p->x(), p->y(), n, r); })
                            : nullptr,
                      [p] {
                          double ignored;
                          return p->dot(&ignored);
                      }});
    }
    return cs;
}

// CUPTI's report of the last `rounds` kernels on AUTO-managed's and MANAGED's streams.
void report_both(const Ctx &am, const Ctx &mg, int rounds) {
    for (const Ctx *c : {&am, &mg}) {
        std::uint32_t id = 0;
        cuptiGetStreamIdEx(nullptr, c->ctx->gpu->gpus[0].stream, 0, &id);
        trace::report(c == &am ? "AUTO-managed" : "MANAGED", id, rounds);
    }
}

}  // namespace

// AUTO-managed's and MANAGED's resident medians among cudot-bench's company for one size (see the top).
void bench_like(int dtype, std::size_t n, bool cpu, bool bus, bool seeds, int rounds, bench::Stats *a, bench::Stats *m,
                bool probe = false) {
    std::vector<std::unique_ptr<Ctx>> ctxs;
    if (cpu) ctxs.push_back(std::make_unique<Ctx>(CUDOT_MEMORY_AUTO, dtype, n, false));
    ctxs.push_back(std::make_unique<Ctx>(CUDOT_MEMORY_AUTO, dtype, n, true));
    const std::size_t am = ctxs.size() - 1;
    if (bus) ctxs.push_back(std::make_unique<Ctx>(CUDOT_MEMORY_PINNED, dtype, n, false));
    if (bus) ctxs.push_back(std::make_unique<Ctx>(CUDOT_MEMORY_MAPPED, dtype, n, false));
    ctxs.push_back(std::make_unique<Ctx>(CUDOT_MEMORY_MANAGED, dtype, n, false));
    const std::size_t mg = ctxs.size() - 1;
    if (cpu) ctxs.push_back(std::make_unique<Ctx>(CUDOT_MEMORY_HOST, dtype, n, false));
    std::vector<std::unique_ptr<bench::SeedDot>> peers;
    if (seeds)
        for (bench::SeedMemory m : {bench::SeedMemory::Pinned, bench::SeedMemory::Mapped, bench::SeedMemory::Managed})
            if (auto p = bench::SeedDot::create(m, dtype == CUDOT_F64, n)) peers.push_back(std::move(p));
    for (const char *scenario : {"fresh", "resident"}) {
        const bool fresh = scenario[0] == 'f';
        const bool traced = probe && !fresh && trace::start();
        const cudot::AutoCounts before = cudot::testing::auto_counts(ctxs[am]->ctx);
        std::vector<bench::Contender> cs = company(ctxs, peers, dtype, n, fresh);
        bench::time_interleaved(fresh ? 3 : 5, fresh ? 30 : rounds, cs, 2000, true, bench::Order::kRotated);
        *a = bench::summarize(cs[am].samples);
        *m = bench::summarize(cs[mg].samples);
        if (traced) {
            trace::stop();
            std::printf("\n");
            report_both(*ctxs[am], *ctxs[mg], rounds);
            const cudot::AutoCounts c = cudot::testing::auto_counts(ctxs[am]->ctx);
            std::printf("  AUTO-managed in the resident rounds: sentinels %llu (stayed %llu, written %llu), resident dots "
                        "kept %llu (noisy %llu), left %llu; roads %llu / %llu / %llu; fastest resident %.1f us, "
                        "roads' best %.1f us\n",
                        c.sentinels - before.sentinels, c.stayed - before.stayed, c.not_stayed - before.not_stayed,
                        c.resident_kept - before.resident_kept, c.resident_noisy - before.resident_noisy,
                        c.resident_left - before.resident_left, c.roads[0] - before.roads[0],
                        c.roads[1] - before.roads[1], c.roads[2] - before.roads[2], c.resident_us, c.best_road_us);
            for (std::size_t k : {am, mg}) {
                std::vector<double> t = cs[k].samples;
                std::sort(t.begin(), t.end());
                std::printf("  %-12s deciles us:", k == am ? "AUTO-managed" : "MANAGED");
                for (int d = 0; d <= 10; ++d) std::printf(" %.1f", t[std::min(t.size() - 1, d * t.size() / 10)]);
                std::printf("\n");
            }
        }
    }
    if (probe && first_probe) {  // the same resident rounds again, each time with one thing changed
        first_probe = false;
        std::vector<bench::Contender> cs = company(ctxs, peers, dtype, n, false);
        // swap_places: AUTO-managed and MANAGED trade their places in the order (the samples stay theirs).
        auto rerun = [&](const char *label, bench::Order order = bench::Order::kRotated, bool swap_places = false) {
            for (auto &c : cs) {
                c.samples.clear();
                c.ok = true;
            }
            const bool traced = trace::start();
            if (swap_places) std::swap(cs[am], cs[mg]);
            bench::time_interleaved(5, rounds, cs, 2000, true, order);
            if (swap_places) std::swap(cs[am], cs[mg]);
            std::printf("  again, %s: AUTO-managed %.1f / MANAGED %.1f us\n", label,
                        bench::summarize(cs[am].samples).median_us, bench::summarize(cs[mg].samples).median_us);
            if (!traced) return;
            trace::stop();
            report_both(*ctxs[am], *ctxs[mg], rounds);
        };
        const std::size_t bytes = n * (dtype == CUDOT_F64 ? 8 : 4);
        auto advise = [&](Ctx &c, bool host) {
            cudaMemLocation where{}, gpu{};
            where.type = cudaMemLocationTypeHost;
            gpu.type = cudaMemLocationTypeDevice;
            gpu.id = 0;
            for (void *b : {c.x, c.y}) {
                cudaMemAdvise(b, bytes, host ? cudaMemAdviseSetPreferredLocation : cudaMemAdviseUnsetPreferredLocation, where);
                cudaMemAdvise(b, bytes, host ? cudaMemAdviseSetAccessedBy : cudaMemAdviseUnsetAccessedBy, gpu);
            }
            cudaDeviceSynchronize();
        };
        rerun("unchanged");
        // Rotated rounds keep who follows whom: does the slow launch follow AUTO's context or its place?
        rerun("the two contexts' places in the order swapped", bench::Order::kRotated, true);
        rerun("a new order every round (shuffled)", bench::Order::kShuffled);
        cudot::cuda::GpuTuning no_graph;
        no_graph.no_graph = true;
        cudot::cuda::tune(*ctxs[am]->ctx, no_graph);
        cudot::cuda::tune(*ctxs[mg]->ctx, no_graph);
        rerun("no graphs (every dot launched)");
        cudot::cuda::tune(*ctxs[am]->ctx, cudot::cuda::GpuTuning{});
        cudot::cuda::tune(*ctxs[mg]->ctx, cudot::cuda::GpuTuning{});
        // Two dots of another size make each context capture a graph of it; back at n, each captures a
        // new graph of n (MANAGED's was captured in the fresh rounds, AUTO's when its inputs had moved).
        for (std::size_t k : {am, mg})
            for (int d = 0; d < 2; ++d) cudot_dot_n(ctxs[k]->ctx, n - 16, &ctxs[k]->last);
        rerun("both graphs captured anew");
        advise(*ctxs[mg], true);
        rerun("MANAGED's inputs advised as AUTO's (to live on the host, mapped for the GPU)");
        // A new stream in place of each context's own (the graphs stay: a graph is not bound to a stream).
        auto new_stream = [&](Ctx &c) {
            cudot::cuda::Gpu &g = c.ctx->gpu->gpus[0];
            cudaStreamSynchronize(g.stream);
            cudaStreamDestroy(g.stream);
            cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking);
        };
        new_stream(*ctxs[am]);
        rerun("AUTO's stream made anew");
        new_stream(*ctxs[mg]);
        rerun("MANAGED's stream made anew too");
        // The two contexts trade inputs (both managed, of the same size and type, both in GPU memory): does
        // the slow launch follow the allocations (their history: the pool's writes, AUTO's prefetches
        // there and back) or stay with AUTO's context? Each captures a new graph of its new pointers.
        // The input buffers, as the API hands them out and as this program rewrites them.
        auto swap_buffers = [&] {
            cudot_ctx &a = *ctxs[am]->ctx, &b = *ctxs[mg]->ctx;
            std::swap(a.x, b.x);
            std::swap(a.y, b.y);
            std::swap(ctxs[am]->x, ctxs[mg]->x);
            std::swap(ctxs[am]->y, ctxs[mg]->y);
        };
        auto trade = [&] {
            cudot::cuda::Gpu &ga = ctxs[am]->ctx->gpu->gpus[0], &gb = ctxs[mg]->ctx->gpu->gpus[0];
            swap_buffers();
            std::swap(ga.d_x, gb.d_x);
            std::swap(ga.d_y, gb.d_y);
            for (std::size_t k : {am, mg})
                for (int d = 0; d < 2; ++d) cudot_dot_n(ctxs[k]->ctx, n - 16, &ctxs[k]->last);
        };
        trade();
        rerun("inputs traded: AUTO's context reads MANAGED's allocations and MANAGED's AUTO's");
        trade();  // back, before the contexts free them
        // AUTO's dots straight into the backend (what resident_dot calls), past the API and AUTO's judge;
        // both contexts' inputs prefetched to the GPU first.
        cudaMemLocation gpu0{};
        gpu0.type = cudaMemLocationTypeDevice;
        gpu0.id = 0;
        for (std::size_t k : {am, mg}) {
            cudaMemPrefetchAsync(ctxs[k]->x, bytes, gpu0, 0, 0);
            cudaMemPrefetchAsync(ctxs[k]->y, bytes, gpu0, 0, 0);
        }
        cudaDeviceSynchronize();
        Ctx *a = ctxs[am].get();
        cs[am].call = [a, n] {
            const cudot_status status = cudot::cuda::auto_gpu_dot(*a->ctx, n, false, &a->last);
            if (status != CUDOT_OK) std::printf("  (auto_gpu_dot failed: %s)\n", cudot_last_error(a->ctx));
            return status == CUDOT_OK;
        };
        rerun("AUTO-managed's dots straight into the backend (cuda::auto_gpu_dot)");
        // Still straight into the backend, the two contexts trade their GPU states (streams, graphs, partial
        // sums, result words; MANAGED's gets the two timing events AUTO's has) and inputs: what stays is
        // the cudot_ctx (AUTO's state and CPU pool). Does the slow launch follow the GPU state?
        for (cudot::cuda::Gpu &g : ctxs[mg]->ctx->gpu->gpus)
            if (!g.start) {
                cudaEventCreate(&g.start);
                cudaEventCreate(&g.stop);
            }
        auto trade_gpu = [&] {
            std::swap(ctxs[am]->ctx->gpu, ctxs[mg]->ctx->gpu);
            swap_buffers();
        };
        trade_gpu();
        rerun("GPU states traded (AUTO straight into the backend): AUTO's context drives MANAGED's GPU state");
        trade_gpu();
    }
    if (probe) {
        const std::size_t bytes = n * (dtype == CUDOT_F64 ? 8 : 4);
        std::printf("\n");
        probe_reads("as left", *ctxs[am], *ctxs[mg], bytes);
        cudaMemLocation gpu{};
        gpu.type = cudaMemLocationTypeDevice;
        gpu.id = 0;
        for (Ctx *c : {ctxs[am].get(), ctxs[mg].get()}) {
            cudaMemPrefetchAsync(c->x, bytes, gpu, 0, 0);
            cudaMemPrefetchAsync(c->y, bytes, gpu, 0, 0);
        }
        cudaDeviceSynchronize();
        probe_reads("both prefetched again", *ctxs[am], *ctxs[mg], bytes);
        for (Ctx *c : {ctxs[am].get(), ctxs[mg].get()}) {
            cudaMemAdvise(c->x, bytes, cudaMemAdviseUnsetPreferredLocation, gpu);
            cudaMemAdvise(c->y, bytes, cudaMemAdviseUnsetPreferredLocation, gpu);
            cudaMemAdvise(c->x, bytes, cudaMemAdviseUnsetAccessedBy, gpu);
            cudaMemAdvise(c->y, bytes, cudaMemAdviseUnsetAccessedBy, gpu);
        }
        cudaDeviceSynchronize();
        probe_reads("both unadvised", *ctxs[am], *ctxs[mg], bytes);
        std::swap(ctxs[am], ctxs[mg]);
        probe_reads("names swapped (a control)", *ctxs[am], *ctxs[mg], bytes);
        std::swap(ctxs[am], ctxs[mg]);
    }
}

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(11, std::atoi(argv[1])) : 101;
    const bool probing = argc > 2 && std::string(argv[2]) == "probe";
    if (argc > 2 && std::string(argv[2]) == "company") {
        bench::Stats a, m;
        bench_like(CUDOT_F32, std::size_t(1) << 22, false, false, true, rounds, &a, &m);
        std::printf("f32 2^22 seeds only: AUTO-managed %.1f (p10 %.1f) / MANAGED %.1f (p10 %.1f) us\n", a.median_us,
                    a.p10_us, m.median_us, m.p10_us);
        return 0;
    }
    std::printf("resident_gap: resident inputs, medians of %d rounds in us (AUTO-managed / MANAGED)\n", rounds);
    std::printf("%-4s %6s %16s %16s %16s %16s %16s %16s\n", "type", "n", "alone", "in turn", "+ spin", "+ auto", "+ host",
                "fresh first");
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg : {18, 20, 22, 24}) {
            const std::size_t n = std::size_t(1) << lg;
            Ctx am(CUDOT_MEMORY_AUTO, dtype, n, true), mg(CUDOT_MEMORY_MANAGED, dtype, n, false);
            Ctx au(CUDOT_MEMORY_AUTO, dtype, n, false), host(CUDOT_MEMORY_HOST, dtype, n, false);
            int32_t memory = -1, device = -1;
            cudot_get_memory(am.ctx, &memory, &device);
            if (memory != CUDOT_MEMORY_MANAGED) {
                std::printf("AUTO with CUDOT_AUTO_MANAGED=1 reports memory %d, not MANAGED: skipped\n", memory);
                return 1;
            }
            for (int k = 0; k < 40; ++k) am.dot(), mg.dot();  // AUTO learns and moves the inputs
            std::string cells;
            auto cell = [&](double a, double m) {
                char buf[40];
                std::snprintf(buf, sizeof buf, " %7.1f /%7.1f", a, m);
                cells += buf;
            };
            // alone
            const bench::Stats a1 = bench::time_calls(5, rounds, nullptr, [&] { return am.dot(); });
            const bench::Stats m1 = bench::time_calls(5, rounds, nullptr, [&] { return mg.dot(); });
            cell(a1.median_us, m1.median_us);
            // in turn, with an optional untimed call or pause before each timed one
            auto in_turn = [&](const std::function<void()> &before) {
                std::vector<bench::Contender> cs{{before ? std::function<void(int)>([&](int) { before(); }) : nullptr,
                                                  [&] { return am.dot(); }},
                                                 {before ? std::function<void(int)>([&](int) { before(); }) : nullptr,
                                                  [&] { return mg.dot(); }}};
                bench::time_interleaved(5, rounds, cs);
                cell(bench::summarize(cs[0].samples).median_us, bench::summarize(cs[1].samples).median_us);
            };
            in_turn(nullptr);
            in_turn([] { spin(2000); });
            in_turn([&] { au.dot(); });
            in_turn([&] { host.dot(); });
            Ctx am2(CUDOT_MEMORY_AUTO, dtype, n, true), mg2(CUDOT_MEMORY_MANAGED, dtype, n, false);
            for (int k = 0; k < 33; ++k)
                for (Ctx *c : {&am2, &mg2}) {
                    bench::rewrite(dtype, c->x, c->y, n, 1000 + k);
                    c->dot();
                }
            for (int k = 0; k < 40; ++k) am2.dot(), mg2.dot();
            std::vector<bench::Contender> cs{{nullptr, [&] { return am2.dot(); }}, {nullptr, [&] { return mg2.dot(); }}};
            bench::time_interleaved(5, rounds, cs);
            cell(bench::summarize(cs[0].samples).median_us, bench::summarize(cs[1].samples).median_us);
            std::printf("%-4s   2^%-2d%s\n", dtype == CUDOT_F32 ? "f32" : "f64", lg, cells.c_str());
        }
    std::printf("\nas in cudot-bench: resident medians of %d rotated rounds after 33 fresh ones (AUTO-managed / MANAGED)\n",
                rounds);
    std::printf("%-4s %6s %28s %28s %28s %28s %28s\n", "type", "n", "bench set", "no seeds", "seeds only", "- cpu", "- bus");
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg : {20, 22}) {
            std::printf("%-4s   2^%-2d", dtype == CUDOT_F32 ? "f32" : "f64", lg);
            const bool variants[][3] = {{true, true, true}, {true, true, false}, {false, false, true},
                                        {false, true, true}, {true, false, true}};  // cpu, bus, seeds
            for (const auto &v : variants) {
                bench::Stats a, m;
                bench_like(dtype, std::size_t(1) << lg, v[0], v[1], v[2], rounds, &a, &m,
                           probing && dtype == CUDOT_F32 && lg == 22);
                std::printf(" %6.1f (%5.1f) /%6.1f (%5.1f)", a.median_us, a.p10_us, m.median_us, m.p10_us);
            }
            std::printf("\n");
        }
    return 0;
}
