// multi_gpu_bench.cu - cudot-bench-multigpu: one GPU against every visible GPU (config->device =
// CUDOT_DEVICE_ALL) on fresh host data, with the bus ceilings that bound both measured in the same run.
//
//   cudot-bench-multigpu [--json FILE] [--reps R] [--max-log2 K]
//
// Ceilings: a pinned host->device copy of 256 MiB on each GPU alone, and on all GPUs at once (each from
// its own pinned buffer, all started together): if the links shared bandwidth, "all at once" would not
// add up to the sum of the single ones. Rows: PINNED, MAPPED, MANAGED and AUTO, f32 and f64, n = 2^24 ..
// 2^max (even powers), fresh inputs (the host rewrites every element before each timed call), on device
// 0 and on every GPU; the speed-up is the ratio of the two medians. Every result is checked bit for bit
// against HOST; a mismatch fails the run.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cudot.h"
#include "inputs.hpp"
#include "measure.hpp"

using namespace bench;

namespace {

#define MG_CUDA(call)                                                                       \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            std::fprintf(stderr, "bench: %s failed: %s\n", #call, cudaGetErrorString(e_));   \
            return -1;                                                                      \
        }                                                                                   \
    } while (0)

// GB/s of `reps` timed rounds in which every listed GPU copies `bytes` from its own pinned buffer at
// the same time (one GPU listed: that GPU alone). Median round time; bytes of all GPUs counted.
double h2d_GBps(const std::vector<int> &devices, std::size_t bytes, int reps) {
    struct Lane {
        void *host = nullptr, *dev = nullptr;
        cudaStream_t stream = nullptr;
    };
    std::vector<Lane> lanes(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        MG_CUDA(cudaSetDevice(devices[i]));
        MG_CUDA(cudaHostAlloc(&lanes[i].host, bytes, cudaHostAllocPortable));
        std::memset(lanes[i].host, 1, bytes);
        MG_CUDA(cudaMalloc(&lanes[i].dev, bytes));
        MG_CUDA(cudaStreamCreateWithFlags(&lanes[i].stream, cudaStreamNonBlocking));
    }
    std::vector<double> t;
    for (int r = 0; r < reps + 2; ++r) {
        const double t0 = now_us();
        for (std::size_t i = 0; i < devices.size(); ++i) {
            MG_CUDA(cudaSetDevice(devices[i]));
            MG_CUDA(cudaMemcpyAsync(lanes[i].dev, lanes[i].host, bytes, cudaMemcpyHostToDevice, lanes[i].stream));
        }
        for (std::size_t i = 0; i < devices.size(); ++i) MG_CUDA(cudaStreamSynchronize(lanes[i].stream));
        if (r >= 2) t.push_back(now_us() - t0);
    }
    for (std::size_t i = 0; i < devices.size(); ++i) {
        cudaSetDevice(devices[i]);
        cudaStreamDestroy(lanes[i].stream);
        cudaFree(lanes[i].dev);
        cudaFreeHost(lanes[i].host);
    }
    return double(bytes) * devices.size() / (summarize(t).median_us * 1e3);
}

struct Row {
    std::string memory, dtype;
    std::size_t n = 0;
    int device = 0;
    Stats t;
    double GBps = 0;
    bool checked = false;
};

// One fresh-data measurement; false if the context could not be made.
bool measure(int memory, int dtype, std::size_t n, int device, int reps, Row &row) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = dtype;
    cfg.memory = memory;
    cfg.device = device;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) {
        std::fprintf(stderr, "bench: init (memory %d, device %d, n %zu): %s\n", memory, device, n,
                     cudot_last_error(nullptr));
        return false;
    }
    void *x, *y;
    cudot_get_inputs(ctx, &x, &y);
    double last = 0;
    bool ok = false;
    row.t = time_calls(3, reps, [&](int round) {
        if (dtype == CUDOT_F64) rewrite(static_cast<double *>(x), static_cast<double *>(y), n, round);
        else rewrite(static_cast<float *>(x), static_cast<float *>(y), n, round);
    }, [&] { return cudot_dot(ctx, &last) == CUDOT_OK; }, &ok);
    if (!ok) std::fprintf(stderr, "bench: dot failed: %s\n", cudot_last_error(ctx));
    row.checked = ok && same_bits(last, host_reference(dtype, x, y, n));
    row.GBps = double(n) * 2 * size_of(dtype) / (row.t.median_us * 1e3);
    cudot_deinit(ctx);
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    std::string json = "cudot-bench-multigpu.json";
    int reps = 30, max_log2 = 28;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json" && i + 1 < argc) json = argv[++i];
        else if (a == "--reps" && i + 1 < argc) reps = std::max(10, std::atoi(argv[++i]));
        else if (a == "--max-log2" && i + 1 < argc) max_log2 = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: cudot-bench-multigpu [--json FILE] [--reps R>=10] [--max-log2 K]\n");
            return 2;
        }
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("SKIPPED: no usable GPU\n");
        return 0;
    }
    std::vector<int> all;
    for (int d = 0; d < count; ++d) all.push_back(d);
    const std::size_t copy_bytes = std::size_t(256) << 20;
    std::vector<double> alone;
    for (int d : all) alone.push_back(h2d_GBps({d}, copy_bytes, 10));
    const double together = h2d_GBps(all, copy_bytes, 10);
    double sum_alone = 0;
    std::printf("cudot %s on %d GPU(s)\nceilings (pinned h2d copy, 256 MiB per GPU):\n", cudot_version_string(), count);
    for (int d : all) {
        cudaDeviceProp p;
        cudaGetDeviceProperties(&p, d);
        std::printf("  GPU %d (%s, PCI %02x:%02x): alone %.1f GB/s\n", d, p.name, p.pciBusID, p.pciDeviceID, alone[d]);
        sum_alone += alone[d];
    }
    std::printf("  all %d at once: %.1f GB/s together (%.2f x GPU 0 alone; sum of the single copies %.1f)\n", count,
                together, together / alone[0], sum_alone);

    std::vector<Row> rows;
    const char *names[] = {"auto", "pinned", "mapped", "managed"};
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg = 24; lg <= max_log2; lg += 2)
            for (int memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO})
                for (int device : {0, CUDOT_DEVICE_ALL}) {
                    Row r;
                    r.memory = names[memory];
                    r.dtype = dtype == CUDOT_F64 ? "f64" : "f32";
                    r.n = std::size_t(1) << lg;
                    r.device = device;
                    if (measure(memory, dtype, r.n, device, reps, r)) rows.push_back(r);
                }

    std::printf("\n%-8s %-4s %10s %-8s %11s %11s %11s %9s %8s %9s %s\n", "memory", "type", "n", "device",
                "median_us", "p10_us", "p90_us", "GB/s", "vs h2d", "speed-up", "check");
    bool all_ok = true;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row &r = rows[i];
        // Each row's bus ceiling: GPU 0's copy alone for one GPU, all GPUs' copies at once for every GPU.
        const double ceiling = r.device == 0 ? alone[0] : together;
        char speedup[32] = "";
        if (r.device == CUDOT_DEVICE_ALL && i > 0 && rows[i - 1].device == 0 && rows[i - 1].n == r.n)
            std::snprintf(speedup, sizeof speedup, "%.3f", rows[i - 1].t.median_us / r.t.median_us);
        std::printf("%-8s %-4s %10zu %-8s %11.1f %11.1f %11.1f %9.2f %8.3f %9s %s\n", r.memory.c_str(), r.dtype.c_str(),
                    r.n, r.device == 0 ? "0" : "all", r.t.median_us, r.t.p10_us, r.t.p90_us, r.GBps, r.GBps / ceiling,
                    speedup, r.checked ? "ok" : "MISMATCH");
        all_ok = all_ok && r.checked;
    }
    if (FILE *f = std::fopen(json.c_str(), "w")) {
        std::fprintf(f, "{\n  \"cudot_version\": \"%s\", \"gpus\": %d,\n  \"h2d_alone_GBps\": [", cudot_version_string(), count);
        for (int d : all) std::fprintf(f, "%s%.2f", d ? ", " : "", alone[d]);
        std::fprintf(f, "], \"h2d_together_GBps\": %.2f,\n  \"rows\": [\n", together);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const Row &r = rows[i];
            std::fprintf(f, "    {\"memory\": \"%s\", \"dtype\": \"%s\", \"n\": %zu, \"device\": \"%s\", \"median_us\": %.2f, "
                            "\"p10_us\": %.2f, \"p90_us\": %.2f, \"GBps\": %.3f, \"checked\": %s}%s\n",
                         r.memory.c_str(), r.dtype.c_str(), r.n, r.device == 0 ? "0" : "all", r.t.median_us, r.t.p10_us,
                         r.t.p90_us, r.GBps, r.checked ? "true" : "false", i + 1 < rows.size() ? "," : "");
        }
        std::fprintf(f, "  ]\n}\n");
        std::fclose(f);
        std::printf("\nwrote %s\n", json.c_str());
    }
    return all_ok ? 0 : 1;
}
