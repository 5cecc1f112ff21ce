// auto_managed.cu - issue 24, T5 resident: could AUTO keep its buffers in managed memory, so that inputs
// the caller leaves unchanged come to live in GPU memory (as MANAGED's do, 12-28 x faster than AUTO's
// page-locked buffers in the records) while inputs rewritten before every dot are still read where they
// are? Three costs decide it, timed here on f32 arrays, alternated, medians:
//   CPU read of ordinary / page-locked / managed pages (managed ones just written by the CPU, so on the
//     host): AUTO's CPU road would read managed pages; does it lose speed (page size, TLB)?
//   CPU rewrite of page-locked pages, of managed pages on the host, and of managed pages that a prefetch
//     moved to the GPU: what the caller's fill would pay after a dot moved its inputs to the GPU
//   GPU read of managed pages prefetched to the GPU and left there: the resident road (read_sum)
//   the same with the pages advised read-mostly (cudaMemAdviseSetReadMostly): a prefetch to the GPU
//     then duplicates them, so the host keeps a valid copy. Then the CPU road reads host pages while the
//     GPU reads its own copy, and the caller's first write to a page drops the GPU's copy. Timed: the CPU
//     read and rewrite with copies on the GPU, the GPU read of its copy with and without a prefetch in
//     the call (an already-done prefetch's cost), the prefetch + read of pages just written on the host
//     (the fresh GPU road), the read without prefetch of such pages (page faults), and the GPU's read of
//     page-locked mapped pages (AUTO's GPU road today)
// and, through the public API for reference, the dots of HOST, MANAGED and AUTO contexts, fresh and
// resident. Build (from the repository root, after the CUDA build in build/):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Ibench bench/experiments/auto_managed.cu bench/measure.cpp \
//        -Lbuild -lcudot -Xlinker -rpath -Xlinker '$ORIGIN/..' -lpthread -o build/experiments/auto_managed
//   usage: auto_managed [rounds = 9]   (never asks for more managed memory than the GPU has free)
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudot.h"
#include "inputs.hpp"
#include "measure.hpp"
#include "read_sum.cuh"

namespace {

bool ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) std::printf("CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

// Every element of x and y read once on the pool of the bench (all threads), as the CPU road would.
double cpu_read(const float *x, const float *y, std::size_t n) {
    std::atomic<double> total{0};
    bench::parallel_for(n, [&](std::size_t b, std::size_t e) {
        float s = 0;
        for (std::size_t i = b; i < e; ++i) s += x[i] * y[i];
        double t = total.load();
        while (!total.compare_exchange_weak(t, t + s)) {
        }
    });
    return total.load();
}

struct Pair {
    float *x = nullptr, *y = nullptr;
};

}  // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(3, std::atoi(argv[1])) : 9;
    int sms = 0;
    if (!ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute")) return 1;
    cudaStream_t s;
    float *sink = nullptr;
    if (!ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate") ||
        !ok(cudaMalloc(&sink, sizeof(float)), "cudaMalloc"))
        return 1;
    cudaMemLocation gpu{}, host{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = 0;
    host.type = cudaMemLocationTypeHost;
    double keep = 0;
    std::printf("auto_managed: f32, %d rounds per row, medians in us; GB/s of both arrays\n", rounds);
    std::printf("%-40s %10s %10s %10s %9s\n", "what", "n", "median_us", "p10_us", "GB/s");
    for (int lg : {16, 20, 22, 24, 26}) {
        const std::size_t n = std::size_t(1) << lg, bytes = n * sizeof(float);
        std::size_t free_bytes = 0, total_bytes = 0;
        if (!ok(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo")) return 1;
        if (10 * bytes > free_bytes / 2) {  // the two managed pairs and two MANAGED contexts' buffers, with room to spare
            std::printf("n=%zu skipped: %zu bytes free on the GPU\n", n, free_bytes);
            continue;
        }
        std::vector<float> px(n), py(n);  // ordinary pageable pages
        Pair pl, mg, rm;  // page-locked mapped; managed; managed read-mostly
        if (!ok(cudaHostAlloc(&pl.x, bytes, cudaHostAllocMapped), "cudaHostAlloc") ||
            !ok(cudaHostAlloc(&pl.y, bytes, cudaHostAllocMapped), "cudaHostAlloc") ||
            !ok(cudaMallocManaged(&mg.x, bytes), "cudaMallocManaged") ||
            !ok(cudaMallocManaged(&mg.y, bytes), "cudaMallocManaged") ||
            !ok(cudaMallocManaged(&rm.x, bytes), "cudaMallocManaged") ||
            !ok(cudaMallocManaged(&rm.y, bytes), "cudaMallocManaged") ||
            !ok(cudaMemAdvise(rm.x, bytes, cudaMemAdviseSetReadMostly, gpu), "cudaMemAdvise") ||
            !ok(cudaMemAdvise(rm.y, bytes, cudaMemAdviseSetReadMostly, gpu), "cudaMemAdvise"))
            return 1;
        bench::rewrite(px.data(), py.data(), n, 0);
        bench::rewrite(pl.x, pl.y, n, 0);
        bench::rewrite(mg.x, mg.y, n, 0);
        bench::rewrite(rm.x, rm.y, n, 0);
        auto move = [&](const Pair &p, const cudaMemLocation &where) {
            return ok(cudaMemPrefetchAsync(p.x, bytes, where, 0, s), "cudaMemPrefetchAsync") &&
                   ok(cudaMemPrefetchAsync(p.y, bytes, where, 0, s), "cudaMemPrefetchAsync") &&
                   ok(cudaStreamSynchronize(s), "sync");
        };
        auto to = [&](const cudaMemLocation &where) { return move(mg, where); };
        auto read_pair = [&](const Pair &p) {
            read_sum<<<4 * sms, 512, 0, s>>>(reinterpret_cast<const float4 *>(p.x), reinterpret_cast<const float4 *>(p.y),
                                             n / 4, sink);
            return ok(cudaGetLastError(), "launch") && ok(cudaStreamSynchronize(s), "sync");
        };
        auto gpu_read = [&] { return read_pair(mg); };
        // Contexts of the same n, for the library's own rows: one of each kind for the fresh row (rewritten
        // before every dot) and one for the resident row (written once), so the two never share data.
        const int32_t kinds[3] = {CUDOT_MEMORY_HOST, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO};
        const char *kind_names[3] = {"HOST", "MANAGED", "AUTO"};
        cudot_ctx *ctx[6] = {};
        void *cx[6], *cy[6];
        for (int k = 0; k < 6; ++k) {
            cudot_config cfg = CUDOT_CONFIG_INIT;
            cfg.memory = kinds[k / 2];
            if (cudot_init(&ctx[k], n, &cfg) != CUDOT_OK || cudot_get_inputs(ctx[k], &cx[k], &cy[k]) != CUDOT_OK) {
                std::printf("cudot_init: %s\n", cudot_last_error(nullptr));
                return 1;
            }
            bench::rewrite(CUDOT_F32, cx[k], cy[k], n, 0);
        }
        double r = 0;
        std::vector<bench::Contender> cs;
        std::vector<std::string> names;
        auto add = [&](const std::string &name, std::function<void(int)> prepare, std::function<bool()> call) {
            cs.push_back({std::move(prepare), std::move(call)});
            names.push_back(name);
        };
        add("CPU read, ordinary pages", nullptr, [&] { keep += cpu_read(px.data(), py.data(), n); return true; });
        add("CPU read, page-locked pages", nullptr, [&] { keep += cpu_read(pl.x, pl.y, n); return true; });
        add("CPU read, managed pages on the host", [&](int) { to(host); },
            [&] { keep += cpu_read(mg.x, mg.y, n); return true; });
        add("CPU rewrite, page-locked pages", nullptr, [&] { bench::rewrite(pl.x, pl.y, n, 1); return true; });
        add("CPU rewrite, managed pages on the host", [&](int) { to(host); },
            [&] { bench::rewrite(mg.x, mg.y, n, 1); return true; });
        add("CPU rewrite, managed pages on the GPU", [&](int) { to(gpu); },
            [&] { bench::rewrite(mg.x, mg.y, n, 1); return true; });
        add("GPU read, managed pages on the GPU", [&](int) { to(gpu); }, gpu_read);
        add("GPU read, page-locked mapped pages", nullptr, [&] { return read_pair(pl); });
        auto rm_on_gpu = [&](int) { move(rm, gpu); };
        auto rm_written = [&](int round) { bench::rewrite(rm.x, rm.y, n, round + 1); };
        add("RM: CPU read, copies also on the GPU", rm_on_gpu, [&] { keep += cpu_read(rm.x, rm.y, n); return true; });
        add("RM: CPU rewrite, copies on the GPU", rm_on_gpu, [&] { bench::rewrite(rm.x, rm.y, n, 1); return true; });
        add("RM: CPU rewrite, host only", rm_written, [&] { bench::rewrite(rm.x, rm.y, n, 1); return true; });
        add("RM: GPU read of its copy", rm_on_gpu, [&] { return read_pair(rm); });
        add("RM: GPU prefetch+read of its copy", rm_on_gpu, [&] { return move(rm, gpu) && read_pair(rm); });
        add("RM: GPU prefetch+read, just written", rm_written, [&] { return move(rm, gpu) && read_pair(rm); });
        add("RM: GPU read (faults), just written", rm_written, [&] { return read_pair(rm); });
        for (int k = 0; k < 6; k += 2) {
            const std::string who = kind_names[k / 2];
            add(who + " dot, fresh", [&, k](int round) { bench::rewrite(CUDOT_F32, cx[k], cy[k], n, round + 1); },
                [&, k] { return cudot_dot(ctx[k], &r) == CUDOT_OK; });
            add(who + " dot, resident", nullptr, [&, k] { return cudot_dot(ctx[k + 1], &r) == CUDOT_OK; });
        }
        bench::time_interleaved(2, rounds, cs);
        for (std::size_t k = 0; k < cs.size(); ++k) {
            const bench::Stats t = bench::summarize(cs[k].samples);
            std::printf("%-40s %10zu %10.1f %10.1f %9.2f%s\n", names[k].c_str(), n, t.median_us, t.p10_us,
                        2.0 * bytes / (t.median_us * 1e3), cs[k].ok ? "" : "  (failed)");
        }
        for (cudot_ctx *c : ctx) cudot_deinit(c);
        cudaFreeHost(pl.x);
        cudaFreeHost(pl.y);
        cudaFree(mg.x);
        cudaFree(mg.y);
        cudaFree(rm.x);
        cudaFree(rm.y);
    }
    cudaFree(sink);
    cudaStreamDestroy(s);
    return keep == 12345.0 ? 2 : 0;  // keeps the CPU reads
}
