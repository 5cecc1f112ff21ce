// context_rows_bench.cu - cudot-bench-context-rows: rows that reach a GPU from the host or live in managed
// memory, against the ceilings of the same run, with the verdict lines of their targets:
//   B8  contexts with rows (cudot_dot_each_row), 256 MiB of x and y together, rows of 8192 and 65536
//       elements: MANAGED resident >= 0.85 of
//       the device-copy ceiling; PINNED and MAPPED with the host writing the rows before each call
//       ("fresh") >= 0.85 of host-to-device; AUTO fresh >= 1.3 x host-to-device; every GPU of a host
//       with two or more >= 1.7 x one GPU (PINNED fresh and MANAGED resident)
//   B6  (its GPU half) page-locked own rows (cudot_dot_rows on cudaMallocHost memory), fresh: >= 0.9 of
//       host-to-device
// Host-to-device ratios are bytes / ceiling over the time; "of ceiling" adds an empty launch + sync to the
// bytes' time, as cudot-bench does. Sampled rows of every timed call's last results are checked against
// cudot_dot_arrays on a host copy of that row.
// Usage: cudot-bench-context-rows [--quick]   (--quick: 32 MiB and few rounds, a smoke test)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ceilings.hpp"
#include "cudot.h"
#include "measure.hpp"
#include "targets.hpp"

using namespace bench;

namespace {

// Writes every element of the buffers (the host's "fresh" data): values that differ by round.
void rewrite(float *x, float *y, std::size_t n, int round) {
    parallel_for(n, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) {
            x[i] = static_cast<float>((i * 2654435761u + round) % 1000) * 0.001f - 0.5f;
            y[i] = static_cast<float>((i * 40503u + 7 * round) % 999) * 0.002f - 1.0f;
        }
    });
}

// Whether sampled rows' results are each row's own dot (cudot_dot_arrays on a host copy).
bool rows_have_their_own_bits(const float *x, const float *y, std::size_t rows, std::size_t n,
                              const std::vector<double> &results) {
    for (std::size_t r = 0; r < rows; r += rows / 7 + 1) {
        std::vector<float> cx(x + r * n, x + (r + 1) * n), cy(y + r * n, y + (r + 1) * n);
        cudot_arrays a = CUDOT_ARRAYS_INIT;
        a.n = n;
        a.x.data = cx.data();
        a.y.data = cy.data();
        double alone = 0;
        if (cudot_dot_arrays(&a, &alone) != CUDOT_OK) return false;
        if (std::memcmp(&alone, &results[r], sizeof alone) != 0) return false;
    }
    return true;
}

struct Timed {
    double us = 0;
    bool good = false;
};

// cudot_dot_each_row over a context's rows, fresh (rewritten before each call) or left alone.
Timed time_context(int32_t memory, int32_t device, std::size_t rows, std::size_t n, bool fresh, int reps) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.memory = memory;
    cfg.device = device;
    cfg.rows = rows;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) {
        std::printf("cudot_init: %s\n", cudot_last_error(nullptr));
        return {};
    }
    void *px = nullptr, *py = nullptr;
    cudot_get_inputs(ctx, &px, &py);
    float *x = static_cast<float *>(px), *y = static_cast<float *>(py);
    rewrite(x, y, rows * n, 0);
    std::vector<double> results(rows);
    std::vector<Contender> cs;
    cs.push_back(Contender{fresh ? std::function<void(int)>([&](int round) { rewrite(x, y, rows * n, round + 1); })
                                 : std::function<void(int)>(),
                           [&] {
                               const bool good = cudot_dot_each_row(ctx, rows, n, results.data()) == CUDOT_OK;
                               if (!good) std::printf("cudot_dot_each_row: %s\n", cudot_last_error(ctx));
                               return good;
                           }});
    // MANAGED's policy reads fresh pages in place and probes now and then whether they stay: a dozen
    // calls let inputs left alone settle in GPU memory ("resident").
    time_interleaved(memory == CUDOT_MEMORY_MANAGED ? 12 : 3, reps, cs);
    Timed t;
    t.us = summarize(cs[0].samples).median_us;
    t.good = cs[0].ok && rows_have_their_own_bits(x, y, rows, n, results);
    cudot_deinit(ctx);
    return t;
}

// cudot_dot_rows on the caller's page-locked rows, rewritten before each call.
Timed time_locked_rows(std::size_t rows, std::size_t n, int reps) {
    float *x = nullptr, *y = nullptr;
    if (cudaMallocHost(reinterpret_cast<void **>(&x), rows * n * 4) != cudaSuccess ||
        cudaMallocHost(reinterpret_cast<void **>(&y), rows * n * 4) != cudaSuccess)
        return {};
    cudot_rows r = CUDOT_ROWS_INIT;
    r.count = rows;
    r.n = n;
    r.x.data = x;
    r.y.data = y;
    r.x_row_stride = r.y_row_stride = static_cast<std::int64_t>(n);
    std::vector<double> results(rows);
    std::vector<Contender> cs;
    cs.push_back(Contender{[&](int round) { rewrite(x, y, rows * n, round + 1); }, [&] {
                               const bool good = cudot_dot_rows(&r, results.data()) == CUDOT_OK;
                               if (!good) std::printf("cudot_dot_rows: %s\n", cudot_last_error(nullptr));
                               return good;
                           }});
    time_interleaved(3, reps, cs);
    Timed t;
    t.us = summarize(cs[0].samples).median_us;
    t.good = cs[0].ok && rows_have_their_own_bits(x, y, rows, n, results);
    cudaFreeHost(x);
    cudaFreeHost(y);
    return t;
}

const char *memory_name(int32_t m) {
    switch (m) {
        case CUDOT_MEMORY_PINNED: return "PINNED";
        case CUDOT_MEMORY_MAPPED: return "MAPPED";
        case CUDOT_MEMORY_MANAGED: return "MANAGED";
        default: return "AUTO";
    }
}

}  // namespace

int main(int argc, char **argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    Ceilings c = measure_ceilings(true, quick);
    std::printf("cudot %s  cudot-bench-context-rows%s  %s\n", cudot_version_string(), quick ? " --quick" : "",
                c.gpu_name.c_str());
    if (!c.gpu) {
        std::printf("no usable GPU: nothing measured\n");
        return 0;
    }
    std::printf("ceilings: host to device %.1f GB/s, device copy %.1f GB/s, launch + sync %.2f us\n", c.h2d_GBps,
                c.d2d_GBps, c.launch_us);
    const std::size_t total = quick ? std::size_t(32) << 20 : std::size_t(256) << 20;  // x and y together
    const int reps = quick ? 5 : 20;
    int gpus = 0;
    cudaGetDeviceCount(&gpus);

    Target managed = at_least("B8 MANAGED resident vs device copy", "of ceiling (worst row length)", 0.85);
    Target pinned = at_least("B8 PINNED fresh vs host to device", "of host to device (worst)", 0.85);
    Target mapped = at_least("B8 MAPPED fresh vs host to device", "of host to device (worst)", 0.85);
    Target autos = at_least("B8 AUTO fresh vs host to device", "x host to device (worst)", 1.3);
    Target every_gpu = at_least("B8 every GPU vs one GPU", "one GPU's time / every GPU's (worst)", 1.7);
    Target locked = at_least("B6 page-locked own rows vs host to device", "of host to device (worst)", 0.9);
    Target bits = at_most("bits of sampled rows vs each row alone", "mismatches", 0);

    std::printf("\n%-4s %-8s %-7s %8s %8s %11s %9s %8s %s\n", "", "memory", "device", "n", "rows", "us", "GB/s", "ratio", "");
    // Rows of 8192 and 65536 elements: how rows of 1024 and fewer fare in GPU memory is B1's target
    // (cudot-bench-rows-gpu); here the question is the road to the GPU.
    for (std::size_t n : {std::size_t(8192), std::size_t(65536)}) {
        const std::size_t rows = total / 8 / n;
        const double bytes = static_cast<double>(total);
        const std::string at = "n=" + std::to_string(n);
        for (int32_t memory : {CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_AUTO}) {
            const bool fresh = memory != CUDOT_MEMORY_MANAGED;
            const Timed t = time_context(memory, 0, rows, n, fresh, reps);
            const double ratio = memory == CUDOT_MEMORY_MANAGED ? (bytes / (c.d2d_GBps * 1e3) + c.launch_us) / t.us
                                                                : bytes / (c.h2d_GBps * 1e3) / t.us;
            std::printf("%-4s %-8s %-7s %8zu %8zu %11.1f %9.1f %8.3f %s\n", "B8", memory_name(memory), "0", n, rows, t.us,
                        bytes / (t.us * 1e3), ratio, t.good ? "ok" : "MISMATCH");
            Target &target = memory == CUDOT_MEMORY_MANAGED ? managed
                             : memory == CUDOT_MEMORY_PINNED ? pinned
                             : memory == CUDOT_MEMORY_MAPPED ? mapped
                                                             : autos;
            target.see(t.us > 0 ? ratio : 0, at);
            bits.see(t.good ? 0 : 1, std::string(memory_name(memory)) + " " + at);
            if (gpus >= 2 && (memory == CUDOT_MEMORY_MANAGED || memory == CUDOT_MEMORY_PINNED)) {
                const Timed all = time_context(memory, CUDOT_DEVICE_ALL, rows, n, fresh, reps);
                std::printf("%-4s %-8s %-7s %8zu %8zu %11.1f %9.1f %8.3f %s\n", "B8", memory_name(memory), "all", n,
                            rows, all.us, bytes / (all.us * 1e3), all.us > 0 ? t.us / all.us : 0,
                            all.good ? "ok" : "MISMATCH");
                every_gpu.see(all.us > 0 ? t.us / all.us : 0, std::string(memory_name(memory)) + " " + at);
                bits.see(all.good ? 0 : 1, std::string(memory_name(memory)) + " all " + at);
            }
        }
        const Timed t = time_locked_rows(rows, n, reps);
        const double ratio = bytes / (c.h2d_GBps * 1e3) / t.us;
        std::printf("%-4s %-8s %-7s %8zu %8zu %11.1f %9.1f %8.3f %s\n", "B6", "locked", "0", n, rows, t.us,
                    bytes / (t.us * 1e3), ratio, t.good ? "ok" : "MISMATCH");
        locked.see(t.us > 0 ? ratio : 0, at);
        bits.see(t.good ? 0 : 1, "locked " + at);
    }
    if (gpus < 2) std::printf("B8 every GPU: not measured (%d GPU here)\n", gpus);
    remeasure_ceilings(c, "end", quick);
    std::printf("\nceilings (best of rounds): host to device %.1f GB/s, device copy %.1f GB/s, launch + sync %.2f us\n",
                c.h2d_GBps, c.d2d_GBps, c.launch_us);
    std::vector<Target> targets{managed, pinned, mapped, autos};
    if (gpus >= 2) targets.push_back(every_gpu);
    targets.push_back(locked);
    targets.push_back(bits);
    print_targets(targets, "rows target (host and managed)");
    return 0;
}
