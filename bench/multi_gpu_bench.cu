// multi_gpu_bench.cu - cudot-bench-multigpu: one GPU against every visible GPU (config->device =
// CUDOT_DEVICE_ALL) on fresh host data, with the ceilings that bound both measured in the same run, and
// the verdicts of the multi-GPU targets (M1..M4).
//
//   cudot-bench-multigpu [--json FILE] [--reps R] [--min-log2 K] [--max-log2 K]
//
// Ceilings: a pinned host->device copy of 256 MiB on each GPU alone, and on all GPUs at once (each from
// its own pinned buffer, all started together): if the links shared bandwidth, "all at once" would not
// add up to the sum of the single ones. And the host read (bench/host_read.hpp: every hardware thread
// reading two arrays): AUTO splits a dot between the CPU threads and the GPUs, and both read host memory,
// so that read bounds AUTO. It is measured twice: of two untouched 256 MiB arrays at the start and at the
// end (the better kept, for reference), and, the one M2 judges by, of arrays of each row's size rewritten
// before every read as the rows' inputs are, timed in the rows' rounds. Rows: PINNED, MAPPED, MANAGED and
// AUTO, f32 and f64, n = 2^min .. 2^max (even powers; 2^20 .. 2^28 by default), fresh inputs (the host
// rewrites every element before each timed call), on device 0 and on every GPU, all of one dtype and
// size timed in turn in shuffled rounds (run_rows says why); the speed-up is the ratio of the two
// medians. Every result is checked bit for bit against HOST; a mismatch fails the run. With one GPU the
// M lines say "not applicable: 1 GPU".
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ceilings.hpp"
#include "cudot.h"
#include "host_read.hpp"
#include "inputs.hpp"
#include "measure.hpp"
#include "targets.hpp"

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

// The plain read of one dtype and size's fresh arrays, timed in the rows' rounds.
struct FreshRead {
    int dtype = 0;
    std::size_t n = 0;
    double GBps = 0;
};

int log2_of(std::size_t n) {
    int k = 0;
    while (n >>= 1) ++k;
    return k;
}

// The fresh read of a row's dtype and size (0: none).
double fresh_read_of(const std::vector<FreshRead> &fresh, const std::string &dtype, std::size_t n) {
    for (const FreshRead &r : fresh)
        if (r.n == n && (r.dtype == CUDOT_F64 ? "f64" : "f32") == dtype) return r.GBps;
    return 0;
}

struct GpuRow {
    std::string memory, dtype;
    std::size_t n = 0;
    int device = 0;
    Stats t;
    double GBps = 0;
    bool checked = false;
};

struct Options {
    std::string json = "cudot-bench-multigpu.json";
    int reps = 30, min_log2 = 20, max_log2 = 28;
};

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json" && i + 1 < argc) o.json = argv[++i];
        else if (a == "--reps" && i + 1 < argc) o.reps = std::max(10, std::atoi(argv[++i]));
        else if (a == "--min-log2" && i + 1 < argc) o.min_log2 = std::max(10, std::atoi(argv[++i]));
        else if (a == "--max-log2" && i + 1 < argc) o.max_log2 = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: cudot-bench-multigpu [--json FILE] [--reps R>=10] [--min-log2 K>=10] "
                                 "[--max-log2 K]\n");
            std::exit(2);
        }
    }
    return o;
}

// The bus ceilings: each GPU's pinned copy alone, and every GPU's at once.
struct Bus {
    std::vector<double> alone;  // GB/s, by device ordinal
    double together = 0;        // GB/s, all GPUs' bytes together
};

Bus measure_bus(const std::vector<int> &all) {
    const std::size_t copy_bytes = std::size_t(256) << 20;
    Bus bus;
    for (int d : all) bus.alone.push_back(h2d_GBps({d}, copy_bytes, 10));
    bus.together = h2d_GBps(all, copy_bytes, 10);
    return bus;
}

void print_bus(const Bus &bus) {
    double sum_alone = 0;
    std::printf("ceilings (pinned h2d copy, 256 MiB per GPU):\n");
    for (std::size_t d = 0; d < bus.alone.size(); ++d) {
        cudaDeviceProp p;
        cudaGetDeviceProperties(&p, static_cast<int>(d));
        std::printf("  GPU %zu (%s, PCI %02x:%02x): alone %.1f GB/s\n", d, p.name, p.pciBusID, p.pciDeviceID, bus.alone[d]);
        sum_alone += bus.alone[d];
    }
    std::printf("  all %zu at once: %.1f GB/s together (%.2f x GPU 0 alone; sum of the single copies %.1f)\n",
                bus.alone.size(), bus.together, bus.together / bus.alone[0], sum_alone);
    std::fflush(stdout);  // progress: the rows take minutes
}

void print_host_read(const Ceilings &host, const std::vector<FreshRead> &fresh) {
    const Spread s = spread_of(host, &CeilingRound::host_read_GBps);
    std::printf("host read (every hardware thread, two untouched 256 MiB arrays; before and after the rows): %.1f GB/s, "
                "best of %zu rounds (%.1f .. %.1f)\n", host.host_read_GBps, host.rounds.size(), s.lo, s.hi);
    std::printf("host read of fresh arrays of each row's size, in the rows' rounds (median GB/s):");
    for (const FreshRead &r : fresh)
        std::printf(" %s 2^%d %.1f;", r.dtype == CUDOT_F64 ? "f64" : "f32", log2_of(r.n), r.GBps);
    std::printf("\n");
}

const char *const kMemoryNames[] = {"auto", "pinned", "mapped", "managed"};  // by CUDOT_MEMORY_*
constexpr int kSettleUs = 2000;  // a spun pause before each timed call, as cudot-bench's large rows have

// Every strategy, dtype and size, on GPU 0 and on every GPU (print_rows relies on that order: each
// every-GPU row right after its GPU-0 row). All rows of a dtype and size, and a plain read of arrays of
// theirs by every hardware thread (fresh_reads), are timed in turn in shuffled rounds (each after
// its own rewrite), so that a speed-up compares two medians of the same minutes: measured one after the
// other, the two AUTO rows' ratio at sizes where both take the CPU road (the same work) moves with the
// machine. Sizes up to 2^22 get four times the rounds (dots of 0.1-1 ms, cheap to time longer, where one
// neighbour's leftovers weigh most).
std::vector<GpuRow> run_rows(const Options &o, std::vector<FreshRead> &fresh_reads) {
    std::vector<GpuRow> rows;
    const int memories[] = {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO};
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg = o.min_log2; lg <= o.max_log2; lg += 2) {
            const std::size_t n = std::size_t(1) << lg;
            std::vector<std::unique_ptr<BenchContext>> contexts;
            std::vector<double> last(2 * std::size(memories));  // each row's last result
            std::vector<Contender> cs;
            for (int memory : memories)
                for (int device : {0, CUDOT_DEVICE_ALL}) {
                    contexts.push_back(std::make_unique<BenchContext>(dtype, memory, n, kMemoryNames[memory], device));
                    BenchContext &c = *contexts.back();
                    double *result = &last[contexts.size() - 1];
                    if (!c.ok()) {
                        cs.push_back({nullptr, [] { return false; }});
                        continue;
                    }
                    cs.push_back({[&c, dtype, n](int round) { rewrite(dtype, c.x(), c.y(), n, round); },
                                  [&c, result] {
                                      if (cudot_dot(c.ctx(), result) == CUDOT_OK) return true;
                                      std::fprintf(stderr, "bench: dot failed: %s\n", cudot_last_error(c.ctx()));
                                      return false;
                                  }});
                }
            // The read: arrays of the rows' size, rewritten before each read as the rows' inputs are.
            cs.push_back(read_contender(dtype, dtype, n, [dtype, n](void *a, void *b, int round) { rewrite(dtype, a, b, n, round); }));
            const int rounds = lg <= 22 ? 4 * o.reps : o.reps;
            time_interleaved(3, rounds, cs, kSettleUs, true, Order::kShuffled);
            for (std::size_t k = 0; k < contexts.size(); ++k) {
                const BenchContext &c = *contexts[k];
                if (!c.ok()) continue;
                GpuRow r;
                r.memory = kMemoryNames[memories[k / 2]];
                r.dtype = dtype == CUDOT_F64 ? "f64" : "f32";
                r.n = n;
                r.device = k % 2 == 0 ? 0 : CUDOT_DEVICE_ALL;
                r.t = summarize(cs[k].samples);
                r.checked = cs[k].ok && same_bits(last[k], host_reference(dtype, c.x(), c.y(), n));
                r.GBps = r.t.median_us > 0 ? double(n) * 2 * size_of(dtype) / (r.t.median_us * 1e3) : 0;
                rows.push_back(r);
            }
            fresh_reads.push_back({dtype, n, read_GBps(cs.back(), dtype, dtype, n)});
            std::printf("  %s 2^%d: %d rounds\n", dtype == CUDOT_F64 ? "f64" : "f32", lg, rounds);
            std::fflush(stdout);  // progress: the rows take minutes
        }
    return rows;
}

void print_rows(const std::vector<GpuRow> &rows, const Bus &bus, const std::vector<FreshRead> &fresh) {
    std::printf("\n%-8s %-4s %10s %-8s %11s %11s %11s %9s %8s %8s %9s %s\n", "memory", "type", "n", "device",
                "median_us", "p10_us", "p90_us", "GB/s", "vs h2d", "vs read", "speed-up", "check");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const GpuRow &r = rows[i];
        // Each row's bus ceiling: GPU 0's copy alone for one GPU, all GPUs' copies at once for every GPU.
        const double ceiling = r.device == 0 ? bus.alone[0] : bus.together;
        const double host_read = fresh_read_of(fresh, r.dtype, r.n);  // the fresh read of the row's rounds
        char speedup[32] = "";
        if (r.device == CUDOT_DEVICE_ALL && i > 0 && rows[i - 1].device == 0 && rows[i - 1].n == r.n)
            std::snprintf(speedup, sizeof speedup, "%.3f", rows[i - 1].t.median_us / r.t.median_us);
        std::printf("%-8s %-4s %10zu %-8s %11.1f %11.1f %11.1f %9.2f %8.3f %8.3f %9s %s\n", r.memory.c_str(),
                    r.dtype.c_str(), r.n, r.device == 0 ? "0" : "all", r.t.median_us, r.t.p10_us, r.t.p90_us, r.GBps,
                    r.GBps / ceiling, host_read > 0 ? r.GBps / host_read : 0.0, speedup, r.checked ? "ok" : "MISMATCH");
    }
}

// ---- the multi-GPU targets ----------------------------------------------------------------------

const std::size_t kLargeN = std::size_t(1) << 24;  // M1, M3 and M2's host-read part hold from here up

const GpuRow *find_row(const std::vector<GpuRow> &rows, const std::string &memory, const std::string &dtype,
                       std::size_t n, int device) {
    for (const GpuRow &r : rows)
        if (r.memory == memory && r.dtype == dtype && r.n == n && r.device == device && r.t.median_us > 0) return &r;
    return nullptr;
}

// Folds in every GPU's speed-up over GPU 0 (GPU 0's median time over every GPU's) for one strategy
// and dtype at each n >= from.
void fold_speedups(Target &t, const std::vector<GpuRow> &rows, const std::string &memory, const std::string &dtype,
                   std::size_t from) {
    for (const GpuRow &all : rows) {
        if (all.device != CUDOT_DEVICE_ALL || all.memory != memory || all.dtype != dtype || all.n < from) continue;
        if (const GpuRow *one = find_row(rows, memory, dtype, all.n, 0))
            if (all.t.median_us > 0) t.see(one->t.median_us / all.t.median_us, where(all.n, memory));
    }
}

// M2's second half: AUTO on every GPU against the host read of the same run, at n >= 2^24: the read of
// fresh arrays of the row's size in the row's rounds (the same kind of pages, in the same minutes).
Target auto_vs_host_read(const std::vector<GpuRow> &rows, const std::string &d, const std::vector<FreshRead> &fresh) {
    Target t = at_least("M2 " + d + " auto fresh all GPUs n>=2^24 vs host read", "GB/s / fresh read, same rounds (worst n)", 0.85);
    for (const GpuRow &r : rows) {
        const double read = fresh_read_of(fresh, r.dtype, r.n);
        if (r.memory == "auto" && r.dtype == d && r.device == CUDOT_DEVICE_ALL && r.n >= kLargeN && read > 0)
            t.see(r.GBps / read, where(r.n, "auto"));
    }
    return t;
}

// For reference, not a verdict: the same rows against the untouched read of the run's start and end.
void print_auto_vs_untouched_read(const std::vector<GpuRow> &rows, double host_read) {
    std::printf("for reference: AUTO on every GPU, n>=2^24, GB/s / untouched host read (%.1f GB/s):", host_read);
    for (const GpuRow &r : rows)
        if (r.memory == "auto" && r.device == CUDOT_DEVICE_ALL && r.n >= kLargeN && host_read > 0)
            std::printf(" %s 2^%d %.3f;", r.dtype.c_str(), log2_of(r.n), r.GBps / host_read);
    std::printf("\n");
}

std::vector<Target> multi_gpu_targets(const std::vector<GpuRow> &rows, const std::vector<FreshRead> &fresh, int gpus) {
    const char *speedup = "GPU-0 time / all-GPU time (worst)";
    std::vector<Target> out;
    for (const std::string d : {"f32", "f64"}) {
        Target m1 = at_least("M1 " + d + " managed fresh, all GPUs vs GPU 0, n>=2^24", speedup, 1.7);
        fold_speedups(m1, rows, "managed", d, kLargeN);
        Target m2 = at_least("M2 " + d + " auto fresh, all GPUs vs GPU 0, every n", speedup, 0.95);
        fold_speedups(m2, rows, "auto", d, 0);
        Target m3 = at_least("M3 " + d + " pinned+mapped fresh, all GPUs vs GPU 0, n>=2^24", speedup, 1.7);
        fold_speedups(m3, rows, "pinned", d, kLargeN);
        fold_speedups(m3, rows, "mapped", d, kLargeN);
        for (const Target &t : {m1, m2, auto_vs_host_read(rows, d, fresh), m3}) out.push_back(t);
    }
    Target m4 = at_most("M4 every row bit-equal to HOST", "rows that differ", 0);
    for (const GpuRow &r : rows) {  // a count over the rows, not a worst value
        m4.measured = true;
        if (!r.checked) m4.value += 1;
    }
    out.push_back(m4);
    // M1, M1, M2, ...: by number, f32 before f64 within each.
    std::stable_sort(out.begin(), out.end(), [](const Target &x, const Target &y) { return x.name[1] < y.name[1]; });
    // One GPU cannot show what several GPUs do: its "all GPUs" rows are GPU 0 again.
    if (gpus < 2)
        for (Target &t : out) t.inapplicable = "not applicable: 1 GPU";
    return out;
}

void write_json(const Options &o, const Bus &bus, const Ceilings &host, const std::vector<FreshRead> &fresh,
                const std::vector<GpuRow> &rows, const std::vector<Target> &targets) {
    FILE *f = std::fopen(o.json.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "bench: cannot write %s\n", o.json.c_str());
        return;
    }
    std::fprintf(f, "{\n  \"cudot_version\": \"%s\", \"gpus\": %zu,\n  \"h2d_alone_GBps\": [", cudot_version_string(),
                 bus.alone.size());
    for (std::size_t d = 0; d < bus.alone.size(); ++d) std::fprintf(f, "%s%.2f", d ? ", " : "", bus.alone[d]);
    std::fprintf(f, "], \"h2d_together_GBps\": %.2f, \"host_read_GBps\": %.2f,\n  \"fresh_reads\": [", bus.together,
                 host.host_read_GBps);
    for (std::size_t i = 0; i < fresh.size(); ++i)
        std::fprintf(f, "%s{\"dtype\": \"%s\", \"n\": %zu, \"GBps\": %.2f}", i ? ", " : "",
                     fresh[i].dtype == CUDOT_F64 ? "f64" : "f32", fresh[i].n, fresh[i].GBps);
    std::fprintf(f, "],\n  \"rows\": [\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const GpuRow &r = rows[i];
        std::fprintf(f, "    {\"memory\": \"%s\", \"dtype\": \"%s\", \"n\": %zu, \"device\": \"%s\", \"median_us\": %.2f, "
                        "\"p10_us\": %.2f, \"p90_us\": %.2f, \"GBps\": %.3f, \"checked\": %s}%s\n",
                     r.memory.c_str(), r.dtype.c_str(), r.n, r.device == 0 ? "0" : "all", r.t.median_us, r.t.p10_us,
                     r.t.p90_us, r.GBps, r.checked ? "true" : "false", i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"targets\": [\n");
    json_targets(f, targets);
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
    std::printf("\nwrote %s\n", o.json.c_str());
}

}  // namespace

int main(int argc, char **argv) {
    const Options o = parse(argc, argv);
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("SKIPPED: no usable GPU\n");
        return 0;
    }
    std::vector<int> all;
    for (int d = 0; d < count; ++d) all.push_back(d);
    std::printf("cudot %s on %d GPU(s)\n", cudot_version_string(), count);
    Ceilings host = measure_ceilings(false, false);  // the host read only
    const Bus bus = measure_bus(all);
    print_bus(bus);
    std::vector<FreshRead> fresh;
    const std::vector<GpuRow> rows = run_rows(o, fresh);
    remeasure_ceilings(host, "end", false);

    print_host_read(host, fresh);
    print_rows(rows, bus, fresh);
    print_auto_vs_untouched_read(rows, host.host_read_GBps);
    const std::vector<Target> targets = multi_gpu_targets(rows, fresh, count);
    print_targets(targets, "target");
    write_json(o, bus, host, fresh, rows, targets);
    bool all_ok = true;
    for (const GpuRow &r : rows) all_ok = all_ok && r.checked;
    return all_ok ? 0 : 1;
}
