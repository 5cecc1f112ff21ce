// cudot_bench.cpp - cudot-bench: every strategy x dtype x size, fresh and resident inputs, with the
// ceilings and peers measured in the same run. Prints a table, writes JSON (and a PNG via plot.py).
//
//   cudot-bench [--quick] [--pairs-only] [--pairs-same-bytes] [--host-only | --only STRATEGY] [--json FILE]
//               [--max-log2 K] [--reps R]
//
// fresh:    the host rewrites every input element before each call (not timed), as when new data
//           arrives every time; the dot must carry it over the bus (or read it from host memory).
// resident: repeated calls on unchanged inputs. Only MANAGED can keep inputs on the GPU between calls
//           (PINNED and MAPPED re-read host memory by design, so their bound stays the bus).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ceilings.hpp"
#include "host_read.hpp"
#include "inputs.hpp"
#include "cudot.h"

using namespace bench;

namespace {

struct Options {
    bool quick = false;
    std::string json = "cudot-bench.json";
    int max_log2 = 28;
    int reps = 30;
    bool pairs_only = false;  // only the narrow and mixed element-type rows
    bool pairs_same_bytes = false;  // each pair at the n that moves f32 x f32's bytes, not at one n
    int only = -1;                  // --only STRATEGY: that strategy's rows alone (--host-only: HOST, no GPU
                                    // probe, so quick A/B runs of CPU loops also work on a GPU machine)
};

struct Row {
    std::string what;      // strategy or peer name
    std::string dtype;
    std::size_t n = 0;
    std::string scenario;  // fresh | resident | peer
    Stats t;
    double GBps = 0;
    std::string bound;     // which ceiling bounds it
    double ratio = 0;      // achieved / ceiling (bandwidth), or latency ceiling / time
    double ceiling_GBps = 0;  // the bandwidth ceiling of that ratio (HOST: this row's own read, below)
    bool checked = true;   // result bitwise equal to HOST on the same data
};

const char *kMemoryNames[] = {"auto", "pinned", "mapped", "managed", "host"};

const char *type_name(int dtype) {
    static const char *names[] = {"?", "f32", "f64", "f16", "bf16", "i8", "u8"};
    return dtype >= 1 && dtype <= 6 ? names[dtype] : "?";
}
// Input bytes of one dot: what crosses the bus or comes from memory, for the pair's actual sizes.
double bytes_of(int x_dtype, int y_dtype, std::size_t n) { return double(n) * (size_of(x_dtype) + size_of(y_dtype)); }
double bytes_of(int dtype, std::size_t n) { return bytes_of(dtype, dtype, n); }

// The ceiling that bounds a row, and the achieved fraction of it. HOST rows bring their own ceiling
// (read_GBps: the same buffers read in alternation with the dot, time_with_read below); without it
// they fall back to the run's host-read ceiling.
void bound_row(Row &r, int memory, const Ceilings &c, double bytes, double read_GBps = 0) {
    r.GBps = bytes / (r.t.median_us * 1e3);
    if (memory == CUDOT_MEMORY_HOST || !c.gpu) {
        r.bound = "host-read";
        r.ceiling_GBps = read_GBps > 0 ? read_GBps : c.host_read_GBps;
        r.ratio = r.GBps / r.ceiling_GBps;
    } else if (memory == CUDOT_MEMORY_MANAGED && r.scenario == "resident") {
        // On the GPU: bounded by HBM for large n, by launch + sync for small n.
        double floor_us = bytes / (c.d2d_GBps * 1e3) + c.launch_us;
        r.bound = "d2d+launch";
        r.ceiling_GBps = c.d2d_GBps;
        r.ratio = floor_us / r.t.median_us;
    } else {
        double floor_us = bytes / (c.h2d_GBps * 1e3) + c.launch_us;
        r.bound = "h2d+launch";
        r.ceiling_GBps = c.h2d_GBps;
        r.ratio = floor_us / r.t.median_us;
    }
}

// A HOST row and its own ceiling: each round prepares the inputs and times a plain read of the very
// same buffers (host_read.hpp), then prepares them again and times the dot. Both therefore see the
// same pages, the same cache state after a fresh write and the same minute of a shared host, whose
// memory bandwidth moves by up to 2x between runs; their ratio is what stays put. Returns the dot's
// quantiles; *read_GBps gets the read's median bandwidth.
Stats time_with_read(int warmup, int reps, const std::function<void(int)> &prepare, const std::function<bool()> &call,
                     const void *x, int xd, const void *y, int yd, std::size_t n, double *read_GBps, bool *ok) {
    std::vector<double> dot, read;
    *ok = true;
    for (int i = 0; i < warmup + reps; ++i) {
        if (prepare) prepare(2 * i);
        double t0 = now_us();
        host_read(x, size_of(xd), y, size_of(yd), n);
        double t1 = now_us();
        if (prepare) prepare(2 * i + 1);
        double t2 = now_us();
        if (!call()) {
            *ok = false;
            break;
        }
        double t3 = now_us();
        if (i >= warmup) {
            read.push_back(t1 - t0);
            dot.push_back(t3 - t2);
        }
    }
    *read_GBps = read.empty() ? 0 : bytes_of(xd, yd, n / 64 * 64) / (summarize(read).median_us * 1e3);
    return summarize(dot);
}

// One strategy, dtype and size: both scenarios. Returns false if the strategy is unavailable.
bool bench_strategy(int memory, int dtype, std::size_t n, const Options &o, const Ceilings &c, std::vector<Row> &rows) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = dtype;
    cfg.memory = memory;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) return false;
    void *x, *y;
    cudot_get_inputs(ctx, &x, &y);
    auto fill = [&](int round) {
        if (dtype == CUDOT_F64) rewrite(static_cast<double *>(x), static_cast<double *>(y), n, round);
        else rewrite(static_cast<float *>(x), static_cast<float *>(y), n, round);
    };
    const double bytes = bytes_of(dtype, n);
    double last = 0;
    auto call = [&] { return cudot_dot(ctx, &last) == CUDOT_OK; };
    for (const char *scenario : {"fresh", "resident"}) {
        Row r{kMemoryNames[memory], dtype == CUDOT_F64 ? "f64" : "f32", n, scenario};
        bool ok = true;
        const bool fresh = std::strcmp(scenario, "fresh") == 0;
        double read_GBps = 0;
        if (memory == CUDOT_MEMORY_HOST)
            r.t = time_with_read(fresh ? 3 : 5, o.reps, fresh ? std::function<void(int)>(fill) : nullptr, call, x,
                                 dtype, y, dtype, n, &read_GBps, &ok);
        else if (fresh) r.t = time_calls(3, o.reps, fill, call, &ok);
        else r.t = time_calls(5, o.reps, nullptr, call, &ok);
        if (!ok) std::fprintf(stderr, "bench: %s dot failed: %s\n", kMemoryNames[memory], cudot_last_error(ctx));
        r.checked = ok && same_bits(last, host_reference(dtype, x, y, n));
        bound_row(r, memory, c, bytes, read_GBps);
        rows.push_back(r);
    }
    cudot_deinit(ctx);
    return true;
}

// Byte patterns that are finite values in every type (small integers / small floats), varying per round.
// (One loop per type and a running remainder: at 2^28 elements a fill is most of a row's run time.)
template <class T, class Value>
void rewrite_as(void *p, std::size_t n, int round, Value value) {
    parallel_for(n, [&](std::size_t b, std::size_t e) {
        T *out = static_cast<T *>(p);
        unsigned k = static_cast<unsigned>((b * 7 + static_cast<std::size_t>(round)) % 17);
        for (std::size_t i = b; i < e; ++i) {
            out[i] = value(static_cast<int>(k) - 8);  // (i * 7 + round) % 17 - 8
            k += 7;
            if (k >= 17) k -= 17;
        }
    });
}

void rewrite_bytes(void *p, int dtype, std::size_t n, int round) {
    switch (dtype) {
        case CUDOT_F32: rewrite_as<float>(p, n, round, [](int v) { return v * 0.25f; }); break;
        case CUDOT_F64: rewrite_as<double>(p, n, round, [](int v) { return v * 0.25; }); break;
        case CUDOT_F16:
            rewrite_as<std::uint16_t>(p, n, round, [](int v) { return static_cast<std::uint16_t>(v < 0 ? 0xbc00 : 0x3c00); });
            break;
        case CUDOT_BF16:
            rewrite_as<std::uint16_t>(p, n, round, [](int v) { return static_cast<std::uint16_t>(v < 0 ? 0xbf80 : 0x3f80); });
            break;
        case CUDOT_I8: rewrite_as<std::int8_t>(p, n, round, [](int v) { return static_cast<std::int8_t>(v); }); break;
        default: rewrite_as<std::uint8_t>(p, n, round, [](int v) { return static_cast<std::uint8_t>(v + 8); }); break;
    }
}

// Mixed and narrow pairs: one size, the strategies that matter, ratios against the same ceilings with
// the bytes each pair really moves.
void bench_pair(int memory, int xd, int yd, std::size_t n, const Options &o, const Ceilings &c, std::vector<Row> &rows) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = xd;
    cfg.y_dtype = yd;
    cfg.memory = memory;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) return;
    void *x, *y;
    cudot_get_inputs(ctx, &x, &y);
    auto fill = [&](int round) {
        rewrite_bytes(x, xd, n, round);
        rewrite_bytes(y, yd, n, round + 1);
    };
    double last = 0;
    auto call = [&] { return cudot_dot(ctx, &last) == CUDOT_OK; };
    const std::string name = std::string(type_name(xd)) + "x" + type_name(yd);
    for (const char *scenario : {"fresh", "resident"}) {
        Row r{kMemoryNames[memory], name, n, scenario};
        bool ok = true;
        double read_GBps = 0;
        if (std::strcmp(scenario, "fresh") == 0) {
            if (memory == CUDOT_MEMORY_HOST) r.t = time_with_read(3, o.reps, fill, call, x, xd, y, yd, n, &read_GBps, &ok);
            else r.t = time_calls(3, o.reps, fill, call, &ok);
        } else {
            if (r.what == "auto" || r.what == "pinned" || r.what == "mapped" || r.what == "host") continue;
            r.t = time_calls(5, o.reps, nullptr, call, &ok);
        }
        r.checked = ok && same_bits(last, host_reference(xd, x, y, n, yd));
        bound_row(r, memory, c, bytes_of(xd, yd, n), read_GBps);
        rows.push_back(r);
    }
    cudot_deinit(ctx);
}

void peer_rows(int dtype, std::size_t n, const Options &o, const Ceilings &c, std::vector<Row> &rows) {
    const char *dt = dtype == CUDOT_F64 ? "f64" : "f32";
    const double bytes = bytes_of(dtype, n);
    if (c.gpu) {
        Row r{"cublas", dt, n, "peer", cublas_dot(dtype, n, o.reps)};
        r.GBps = bytes / (r.t.median_us * 1e3);
        r.bound = "d2d+launch";
        r.ceiling_GBps = c.d2d_GBps;
        r.ratio = (bytes / (c.d2d_GBps * 1e3) + c.launch_us) / r.t.median_us;
        rows.push_back(r);
    }
    for (int threads : {0, 1}) {
        if (threads == 1 && n > (std::size_t(1) << 24)) continue;  // only small sizes need it
        Row r{threads ? "openblas-1t" : "openblas", dt, n, "peer", openblas_dot(dtype, n, o.reps, threads)};
        r.GBps = bytes / (r.t.median_us * 1e3);
        r.bound = "host-read";
        r.ceiling_GBps = c.host_read_GBps;
        r.ratio = r.GBps / c.host_read_GBps;
        rows.push_back(r);
    }
}

// cudot_init / cudot_deinit cost per strategy and size (page-locking large buffers is slow).
struct InitRow {
    std::string memory;
    std::size_t n;
    Stats init, deinit;
};

std::vector<InitRow> init_costs(const Options &o, bool gpu) {
    std::vector<InitRow> out;
    std::vector<std::size_t> sizes = o.quick ? std::vector<std::size_t>{1u << 20}
                                             : std::vector<std::size_t>{1u << 20, 1u << 24, std::size_t(1) << o.max_log2};
    for (int memory = 0; memory <= 4; ++memory) {
        if (!gpu && memory >= 1 && memory <= 3) continue;
        for (std::size_t n : sizes) {
            cudot_config cfg = CUDOT_CONFIG_INIT;
            cfg.memory = memory;
            std::vector<double> ti, td;
            for (int rep = 0; rep < (n > (1u << 24) ? 3 : 7); ++rep) {
                cudot_ctx *ctx = nullptr;
                double t0 = now_us();
                if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) break;
                double t1 = now_us();
                cudot_deinit(ctx);
                td.push_back(now_us() - t1);
                ti.push_back(t1 - t0);
            }
            if (!ti.empty()) out.push_back({kMemoryNames[memory], n, summarize(ti), summarize(td)});
        }
    }
    return out;
}

// ---- the pairs against F32 x F32 (issue 5: every pair at F32's bandwidth ratio) ----------------------
// Each pair's ratio to its ceiling divided by F32 x F32's ratio for the same strategy and scenario in
// this run (bytes counted as each pair really moves them): 1.00 is F32's ratio; then the lowest.
void print_pairs_vs_f32(const std::vector<Row> &rows) {
    const char *columns[][2] = {{"mapped", "fresh"}, {"managed", "resident"}, {"managed", "fresh"},
                                {"auto", "fresh"},   {"host", "fresh"}};
    std::vector<std::string> pairs;  // every pair but f32xf32, in the order the rows were run
    for (const Row &r : rows)
        if (r.dtype.find('x') != std::string::npos && r.dtype != "f32xf32" &&
            std::find(pairs.begin(), pairs.end(), r.dtype) == pairs.end())
            pairs.push_back(r.dtype);
    if (pairs.empty()) return;
    std::printf("\npairs: ratio / f32xf32's ratio, same strategy and scenario, this run\n%-10s", "pair");
    for (auto &col : columns) std::printf(" %17s", (std::string(col[0]) + " " + col[1]).c_str());
    std::printf("\n");
    double worst = 1e300;
    for (const std::string &pair : pairs) {
        std::printf("%-10s", pair.c_str());
        for (auto &col : columns) {
            const Row *mine = nullptr, *f32 = nullptr;
            for (const Row &q : rows) {
                if (q.what != col[0] || q.scenario != col[1]) continue;
                if (q.dtype == pair) mine = &q;
                if (q.dtype == "f32xf32") f32 = &q;
            }
            if (mine && f32 && f32->ratio > 0) {
                const double v = mine->ratio / f32->ratio;
                worst = std::min(worst, v);
                std::printf(" %17.3f", v);
            } else {
                std::printf(" %17s", "-");
            }
        }
        std::printf("\n");
    }
    std::printf("lowest: %.3f\n", worst);
}

// ---- the targets of docs/PERFORMANCE.md, evaluated on this run's rows ----------------------------
const Row *find(const std::vector<Row> &rows, const char *what, const char *dtype, std::size_t n, const char *scenario) {
    for (const Row &r : rows)
        if (r.what == what && r.dtype == dtype && r.n == n && r.scenario == scenario) return &r;
    return nullptr;
}

struct Target {
    std::string name, detail;
    double value = 0, goal = 0;
    bool higher_is_better = true, measured = false;
};

void check(Target &t, double v) {
    if (!t.measured) t.value = v;
    else t.value = t.higher_is_better ? std::min(t.value, v) : std::max(t.value, v);
    t.measured = true;
}

std::vector<Target> evaluate_targets(const std::vector<Row> &rows, const Ceilings &c) {
    std::vector<Target> out;
    if (!c.gpu) return out;
    for (const char *dt : {"f32", "f64"}) {
        std::string d = dt;
        Target t1a{"1 " + d + " managed resident 2^26 vs device copy", "GB/s / d2d", 0, 0.95};
        Target t1b{"1 " + d + " managed resident 2^26 vs cuBLAS", "cuBLAS time / ours", 0, 1.0};
        Target t1c{"1 " + d + " managed resident n<=2^20 vs launch+sync", "time / launch (worst)", 0, 1.3, false};
        Target t2a{"2 " + d + " pinned+mapped fresh n>=2^22 vs h2d copy", "GB/s / h2d (worst)", 0, 0.9};
        Target t2b{"2 " + d + " pinned+mapped fresh 2^20 vs copy+launch", "time / (8n/h2d + launch) (worst)", 0, 1.25, false};
        Target t3{"3 " + d + " managed fresh n>=2^22 vs h2d copy", "GB/s / h2d (worst)", 0, 0.8};
        Target t4a{"4 " + d + " host n>=2^24 vs host read", "GB/s / host read (worst)", 0, 0.8};
        Target t4b{"4 " + d + " host n<=2^16 vs OpenBLAS 1 thread", "time / OpenBLAS-1t (worst)", 0, 1.0, false};
        Target t5a{"5 " + d + " auto fresh n>=2^24 vs h2d copy", "GB/s / h2d (worst)", 0, 1.3};
        Target t5b{"5 " + d + " auto fresh vs best single strategy", "time / best (worst n)", 0, 1.1, false};
        for (int lg = 10; lg <= 28; lg += 2) {
            std::size_t n = std::size_t(1) << lg;
            const Row *mr = find(rows, "managed", dt, n, "resident");
            if (mr && lg == 26) check(t1a, mr->GBps / c.d2d_GBps);
            const Row *cb = find(rows, "cublas", dt, n, "peer");
            if (mr && cb && lg == 26) check(t1b, cb->t.median_us / mr->t.median_us);
            if (mr && lg <= 20) check(t1c, mr->t.median_us / c.launch_us);
            for (const char *m : {"pinned", "mapped"}) {
                const Row *f = find(rows, m, dt, n, "fresh");
                if (f && lg >= 22) check(t2a, f->GBps / c.h2d_GBps);
                if (f && lg == 20) check(t2b, f->t.median_us / (bytes_of(d == "f64" ? 2 : 1, n) / (c.h2d_GBps * 1e3) + c.launch_us));
            }
            const Row *mf = find(rows, "managed", dt, n, "fresh");
            if (mf && lg >= 22) check(t3, mf->GBps / c.h2d_GBps);
            const Row *h = find(rows, "host", dt, n, "fresh");
            if (h && lg >= 24) check(t4a, h->ratio);  // against the row's own read
            const Row *hr = find(rows, "host", dt, n, "resident");
            const Row *ob = find(rows, "openblas-1t", dt, n, "peer");
            if (hr && ob && lg <= 16) check(t4b, hr->t.median_us / ob->t.median_us);
            const Row *a = find(rows, "auto", dt, n, "fresh");
            if (a && lg >= 24) check(t5a, a->GBps / c.h2d_GBps);
            double best = 1e300;
            for (const char *m : {"pinned", "mapped", "managed", "host"})
                if (const Row *f = find(rows, m, dt, n, "fresh")) best = std::min(best, f->t.median_us);
            if (a && best < 1e300) check(t5b, a->t.median_us / best);
        }
        for (Target *t : {&t1a, &t1b, &t1c, &t2a, &t2b, &t3, &t4a, &t4b, &t5a, &t5b})
            if (t->measured) out.push_back(*t);
    }
    return out;
}

void write_json(const Options &o, const Ceilings &c, const std::vector<Row> &rows, const std::vector<InitRow> &inits) {
    FILE *f = std::fopen(o.json.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "bench: cannot write %s\n", o.json.c_str());
        return;
    }
    std::fprintf(f, "{\n  \"cudot_version\": \"%s\", \"quick\": %s,\n", cudot_version_string(), o.quick ? "true" : "false");
    std::fprintf(f, "  \"ceilings\": {\"gpu\": \"%s\", \"h2d_GBps\": %.2f, \"d2d_GBps\": %.1f, \"launch_us\": %.2f, "
                    "\"host_read_GBps\": %.2f, \"host_read_1t_GBps\": %.2f},\n",
                 c.gpu ? c.gpu_name.c_str() : "", c.h2d_GBps, c.d2d_GBps, c.launch_us, c.host_read_GBps, c.host_read_1t_GBps);
    std::fprintf(f, "  \"rows\": [\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row &r = rows[i];
        std::fprintf(f, "    {\"what\": \"%s\", \"dtype\": \"%s\", \"n\": %zu, \"scenario\": \"%s\", \"median_us\": %.3f, "
                        "\"p10_us\": %.3f, \"p90_us\": %.3f, \"samples\": %d, \"GBps\": %.3f, \"bound\": \"%s\", "
                        "\"ratio\": %.4f, \"ceiling_GBps\": %.2f, \"checked\": %s}%s\n",
                     r.what.c_str(), r.dtype.c_str(), r.n, r.scenario.c_str(), r.t.median_us, r.t.p10_us, r.t.p90_us,
                     r.t.samples, r.GBps, r.bound.c_str(), r.ratio, r.ceiling_GBps, r.checked ? "true" : "false",
                     i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"init\": [\n");
    for (std::size_t i = 0; i < inits.size(); ++i)
        std::fprintf(f, "    {\"memory\": \"%s\", \"n\": %zu, \"init_us\": %.1f, \"deinit_us\": %.1f}%s\n",
                     inits[i].memory.c_str(), inits[i].n, inits[i].init.median_us, inits[i].deinit.median_us,
                     i + 1 < inits.size() ? "," : "");
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick") o.quick = true;
        else if (a == "--pairs-only") o.pairs_only = true;
        else if (a == "--pairs-same-bytes") o.pairs_same_bytes = true;
        else if (a == "--host-only") o.only = CUDOT_MEMORY_HOST;
        else if (a == "--only" && i + 1 < argc) {
            const std::string m = argv[++i];
            for (int k = 0; k < 5; ++k)
                if (m == kMemoryNames[k]) o.only = k;
            if (o.only < 0) {
                std::fprintf(stderr, "cudot-bench: unknown strategy '%s' (auto, pinned, mapped, managed, host)\n", m.c_str());
                std::exit(2);
            }
        }
        else if (a == "--json" && i + 1 < argc) o.json = argv[++i];
        else if (a == "--max-log2" && i + 1 < argc) o.max_log2 = std::atoi(argv[++i]);
        else if (a == "--reps" && i + 1 < argc) o.reps = std::max(30, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: cudot-bench [--quick] [--pairs-only] [--pairs-same-bytes] [--host-only | --only STRATEGY] [--json FILE] [--max-log2 K] [--reps R>=30]\n");
            std::exit(2);
        }
    }
    if (o.quick) o.max_log2 = std::min(o.max_log2, 20);
    return o;
}

}  // namespace

int main(int argc, char **argv) {
    Options o = parse(argc, argv);
    cudot_config probe_cfg = CUDOT_CONFIG_INIT;
    probe_cfg.memory = CUDOT_MEMORY_PINNED;
    cudot_ctx *probe = nullptr;
    const bool host_only = o.only == CUDOT_MEMORY_HOST;
    const bool gpu = !host_only && cudot_init(&probe, 1, &probe_cfg) == CUDOT_OK;
    if (!gpu && !host_only) std::printf("no usable GPU (%s): GPU strategies, ceilings and cuBLAS skipped\n", cudot_last_error(nullptr));
    cudot_deinit(probe);

    Ceilings c = measure_ceilings(gpu, o.quick);
    std::printf("cudot %s  ceilings: h2d %.1f GB/s, d2d %.0f GB/s, launch+sync %.2f us, host read %.1f GB/s "
                "(1 thread %.1f)%s%s\n",
                cudot_version_string(), c.h2d_GBps, c.d2d_GBps, c.launch_us, c.host_read_GBps, c.host_read_1t_GBps,
                c.gpu ? "  GPU: " : "", c.gpu_name.c_str());

    std::vector<Row> rows;
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg = 10; lg <= (o.pairs_only ? 0 : o.max_log2); lg += (o.quick ? 5 : 2)) {
            std::size_t n = std::size_t(1) << lg;
            for (int memory = 0; memory <= 4; ++memory) {
                if (!gpu && memory >= 1 && memory <= 3) continue;
                if (o.only >= 0 && memory != o.only) continue;
                bench_strategy(memory, dtype, n, o, c, rows);
            }
            peer_rows(dtype, n, o, c, rows);
        }
    // Narrow and mixed element types at one size (2^26; 2^20 in --quick), led by f32 and f64 through the
    // same code, so every pair's ratio has its same-run f32 ratio to be compared with. --pairs-same-bytes
    // gives each pair the n that moves as many bytes as f32 x f32 at that size (2^28 for I8 x I8): a
    // dot's fixed costs (launch, join) then weigh the same for every pair.
    const std::size_t pair_n = std::size_t(1) << (o.quick ? 20 : 26);
    const int pairs[][2] = {{CUDOT_F32, CUDOT_F32}, {CUDOT_F64, CUDOT_F64}, {CUDOT_F16, CUDOT_F16},
                            {CUDOT_BF16, CUDOT_BF16}, {CUDOT_I8, CUDOT_I8},   {CUDOT_U8, CUDOT_U8},
                            {CUDOT_F32, CUDOT_U8},   {CUDOT_F32, CUDOT_F16}, {CUDOT_F32, CUDOT_BF16},
                            {CUDOT_F64, CUDOT_F32},  {CUDOT_F16, CUDOT_I8}};
    for (const auto &p : pairs)
        for (int memory : {CUDOT_MEMORY_AUTO, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_HOST}) {
            if (!gpu && memory != CUDOT_MEMORY_HOST && memory != CUDOT_MEMORY_AUTO) continue;
            if (o.only >= 0 && memory != o.only) continue;
            bench_pair(memory, p[0], p[1],
                       o.pairs_same_bytes ? pair_n * 8 / (size_of(p[0]) + size_of(p[1])) : pair_n, o, c, rows);
        }
    std::vector<InitRow> inits = o.pairs_only ? std::vector<InitRow>{} : init_costs(o, gpu);

    std::printf("\n%-12s %-4s %10s %-9s %11s %11s %11s %9s %-11s %9s %6s %s\n", "what", "type", "n", "scenario",
                "median_us", "p10_us", "p90_us", "GB/s", "bound", "ceil_GB/s", "ratio", "check");
    for (const Row &r : rows)
        std::printf("%-12s %-4s %10zu %-9s %11.2f %11.2f %11.2f %9.2f %-11s %9.1f %6.3f %s\n", r.what.c_str(),
                    r.dtype.c_str(), r.n, r.scenario.c_str(), r.t.median_us, r.t.p10_us, r.t.p90_us, r.GBps,
                    r.bound.c_str(), r.ceiling_GBps, r.ratio, r.scenario == "peer" ? "" : (r.checked ? "ok" : "MISMATCH"));
    std::printf("\n%-8s %10s %12s %12s\n", "init", "n", "init_us", "deinit_us");
    for (const InitRow &i : inits)
        std::printf("%-8s %10zu %12.1f %12.1f\n", i.memory.c_str(), i.n, i.init.median_us, i.deinit.median_us);
    std::vector<Target> targets = evaluate_targets(rows, c);
    if (!targets.empty()) {
        std::printf("\n%-52s %-34s %8s %6s %s\n", "target", "measure", "value", "goal", "verdict");
        for (const Target &t : targets)
            std::printf("%-52s %-34s %8.3f %s%-5.2f %s\n", t.name.c_str(), t.detail.c_str(), t.value,
                        t.higher_is_better ? ">=" : "<=", t.goal,
                        (t.higher_is_better ? t.value >= t.goal : t.value <= t.goal) ? "met" : "MISSED");
    }
    print_pairs_vs_f32(rows);
    write_json(o, c, rows, inits);
    std::printf("\nwrote %s\n", o.json.c_str());
    for (const Row &r : rows)
        if (r.scenario != "peer" && !r.checked) return 1;  // a wrong result is a failed benchmark
    return 0;
}
