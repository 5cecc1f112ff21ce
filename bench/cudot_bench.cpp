// cudot_bench.cpp - cudot-bench: every strategy x dtype x size, fresh and resident inputs, beside the
// tutorial's design (seed peers), cuBLAS and OpenBLAS, with the ceilings measured in the same run; many
// small dots on many threads at once; target 1's block (MANAGED resident beside launch + sync, alone);
// the verdicts of targets T1..T8 (docs/PERFORMANCE.md). Prints tables, writes JSON (plot.py draws it).
//
//   cudot-bench [--quick] [--pairs-only | --no-pairs] [--pairs-same-bytes] [--host-only | --only STRATEGY]
//               [--json FILE] [--max-log2 K] [--reps R]
//
// fresh:    the host rewrites every input element before each call (not timed), as when new data
//           arrives every time; the dot must carry it over the bus (or read it from host memory).
// resident: repeated calls on unchanged inputs. Only MANAGED (and AUTO opted in to managed buffers)
//           can keep inputs on the GPU between calls (PINNED and MAPPED re-read host memory by design,
//           so their bound stays the bus).
// All strategies of one dtype and size (and their seed peers) are timed in turn, round by round.
// Every row with inputs of its own (cudot, seed peers, OpenBLAS) gets the same values from the same fill.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "ceilings.hpp"
#include "host_read.hpp"
#include "inputs.hpp"
#include "openblas_peer.hpp"
#include "rows.hpp"
#include "seed_peer.hpp"
#include "targets.hpp"
#include "thread_scaling.hpp"
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
    bool no_pairs = false;          // the sweep without the pair rows (shorter full runs)
    int only = -1;                  // --only STRATEGY: that strategy's rows alone, its seed peer with it
                                    // (--host-only: HOST, no GPU probe, so quick A/B runs of CPU loops
                                    // also work on a GPU machine)
};

const char *kMemoryNames[] = {"auto", "pinned", "mapped", "managed", "host"};

bool wanted(const Options &o, int memory) { return o.only < 0 || o.only == memory; }

const char *type_name(int dtype) {
    static const char *names[] = {"?", "f32", "f64", "f16", "bf16", "i8", "u8"};
    return dtype >= 1 && dtype <= 6 ? names[dtype] : "?";
}
// Input bytes of one dot: what crosses the bus or comes from memory, for the pair's actual sizes.
double bytes_of(int x_dtype, int y_dtype, std::size_t n) { return double(n) * (size_of(x_dtype) + size_of(y_dtype)); }
double bytes_of(int dtype, std::size_t n) { return bytes_of(dtype, dtype, n); }

// ---- inputs and checks ---------------------------------------------------------------------------

// The "fresh" rewrite of an f32 or f64 pair of buffers: the one fill every row of the sweep uses.
std::function<void(int)> fill_of(int dtype, void *x, void *y, std::size_t n) {
    return [=](int round) { rewrite(dtype, x, y, n, round); };
}

Check bits_check(bool ok, double got, double host) { return ok && same_bits(got, host) ? Check::Same : Check::Differs; }

Check close_check(int dtype, const void *x, const void *y, std::size_t n, double got, double host) {
    return close_to_host(dtype, x, y, n, got, host) ? Check::Close : Check::Far;
}

// ---- bounds: which ceiling each row is held to ----------------------------------------------------

bool is_host_side(const std::string &what) {
    return what == "host" || what == kT3HostRow || what.rfind("openblas", 0) == 0;
}

// Sets each row's GB/s, bound and ratio from the best ceilings of every round. HOST rows bring their own
// ceiling (a read of their own buffers); OpenBLAS and, without a GPU, every row use the run's host read.
void bound_rows(std::vector<Row> &rows, const Ceilings &c) {
    for (Row &r : rows) {
        r.GBps = r.t.median_us > 0 ? r.bytes / (r.t.median_us * 1e3) : 0;
        if (r.t.median_us <= 0) continue;
        if (is_host_side(r.what) || !c.gpu) {
            r.bound = "host-read";
            r.ceiling_GBps = r.own_read_GBps > 0 ? r.own_read_GBps : c.host_read_GBps;
            r.ratio = r.ceiling_GBps > 0 ? r.GBps / r.ceiling_GBps : 0;
            continue;
        }
        // MANAGED resident, cuBLAS and the device copy in the resident rounds read HBM: bounded by the
        // device copy for large n, launch for small n.
        const bool on_device = r.what == "cublas" || r.what == "d2d-copy" ||
                               ((r.what == "managed" || r.what == "seed-managed") && r.scenario == "resident");
        r.bound = on_device ? "d2d+launch" : "h2d+launch";
        r.ceiling_GBps = on_device ? c.d2d_GBps : c.h2d_GBps;
        r.ratio = (r.bytes / (r.ceiling_GBps * 1e3) + c.launch_us) / r.t.median_us;
    }
}

// Rows that moved more than 5 % above the bus or device-copy ceiling they are bounded by: the ceiling
// was then measured in a slow moment, and every ratio against it is flattering. AUTO is left out: it
// splits each dot between the CPU threads and the bus, so it may beat the bus alone.
std::vector<std::string> ceiling_suspects(const std::vector<Row> &rows) {
    std::vector<std::string> out;
    for (const Row &r : rows) {
        if (r.what.rfind("auto", 0) == 0 || (r.bound != "h2d+launch" && r.bound != "d2d+launch")) continue;
        if (r.GBps <= 1.05 * r.ceiling_GBps) continue;
        char line[200];
        std::snprintf(line, sizeof line, "%s %s n=%zu %s: %.1f GB/s > 1.05 x %s ceiling %.1f GB/s", r.what.c_str(),
                      r.dtype.c_str(), r.n, r.scenario.c_str(), r.GBps, r.bound.substr(0, 3).c_str(), r.ceiling_GBps);
        out.push_back(line);
    }
    return out;
}

// ---- the rows of one strategy, with its seed peer and HOST's own read ---------------------------

// The tutorial's design for the same strategy, if it has one (PINNED, MAPPED, MANAGED) and a GPU.
std::unique_ptr<SeedDot> seed_for(int memory, int dtype, std::size_t n) {
    switch (memory) {
        case CUDOT_MEMORY_PINNED: return SeedDot::create(SeedMemory::Pinned, dtype == CUDOT_F64, n);
        case CUDOT_MEMORY_MAPPED: return SeedDot::create(SeedMemory::Mapped, dtype == CUDOT_F64, n);
        case CUDOT_MEMORY_MANAGED: return SeedDot::create(SeedMemory::Managed, dtype == CUDOT_F64, n);
        default: return nullptr;
    }
}

// Rows of at least kSettleBytes (every strategy of a size, timed in turn; OpenBLAS; HOST's pairs) pause
// kSettleUs before each timed call (see time_interleaved): the pools of HOST, AUTO's CPU road and
// OpenBLAS sleep again before the next row's call. The strategies' rows spin through it (their GPU
// rows would otherwise measure the calling core's wake-up). Smaller dots run on the calling thread
// alone, and a pause before them would only measure a core woken from idle with cold caches.
constexpr int kSettleUs = 2000;
constexpr double kSettleBytes = 256 << 10;
int settle_for(double bytes) { return bytes >= kSettleBytes ? kSettleUs : 0; }

// One strategy's context of one dtype and size, with its seed peer (if any) and, for HOST, its own read.
struct Strategy {
    std::string name;
    int memory = 0;
    cudot_ctx *ctx = nullptr;
    void *x = nullptr, *y = nullptr;
    std::unique_ptr<SeedDot> seed;
    double last = 0, seed_last = 0;
    std::size_t first = 0;  // its first contender in the round
};

// Creates a strategy's context (nullptr: unavailable). managed_opt_in: AUTO created with
// CUDOT_AUTO_MANAGED=1 (cudot.h), its rows named "auto-managed" (no seed peer); the variable is set for
// this init only, either way, and restored.
std::unique_ptr<Strategy> make_strategy(int memory, int dtype, std::size_t n, bool managed_opt_in) {
    auto st = std::make_unique<Strategy>();
    st->name = managed_opt_in ? "auto-managed" : kMemoryNames[memory];
    st->memory = memory;
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = dtype;
    cfg.memory = memory;
    const char *was = std::getenv("CUDOT_AUTO_MANAGED");
    const std::string kept = was ? was : "";
    if (managed_opt_in) setenv("CUDOT_AUTO_MANAGED", "1", 1);
    else unsetenv("CUDOT_AUTO_MANAGED");
    const cudot_status made = cudot_init(&st->ctx, n, &cfg);
    if (was) setenv("CUDOT_AUTO_MANAGED", kept.c_str(), 1);
    else unsetenv("CUDOT_AUTO_MANAGED");
    if (made != CUDOT_OK) return nullptr;
    cudot_get_inputs(st->ctx, &st->x, &st->y);
    if (!managed_opt_in) st->seed = seed_for(memory, dtype, n);
    return st;
}

// One dtype and size: every wanted strategy (AUTO twice: as created by default, and opted in to
// managed buffers) with its seed peer and HOST's read, fresh then resident. All of them are timed in
// turn in the same rounds (time_interleaved), so that a slow minute of a shared machine falls on every
// row alike and the ratios between rows (T5: AUTO against the fastest other strategy) reproduce; the
// order is shuffled anew each round, so each row follows each of the others about equally often. cuBLAS
// joins the resident rounds; each seed peer has a block of its own with its strategy (T2).
void bench_size(int dtype, std::size_t n, const Options &o, bool gpu, std::vector<Row> &rows) {
    std::vector<std::unique_ptr<Strategy>> strategies;
    for (int memory = 0; memory <= 4; ++memory) {
        if ((!gpu && memory >= 1 && memory <= 3) || !wanted(o, memory)) continue;
        if (auto st = make_strategy(memory, dtype, n, false)) strategies.push_back(std::move(st));
        // The opt-in applies only on a GPU.
        if (gpu && memory == CUDOT_MEMORY_AUTO)
            if (auto st = make_strategy(memory, dtype, n, true)) strategies.push_back(std::move(st));
    }
    const double bytes = bytes_of(dtype, n);
    for (const char *scenario : {"fresh", "resident"}) {
        const bool fresh = std::strcmp(scenario, "fresh") == 0;
        auto fill = [&](void *a, void *b) { return fresh ? fill_of(dtype, a, b, n) : nullptr; };
        std::vector<Contender> cs;
        for (auto &st : strategies) {
            st->first = cs.size();
            if (st->memory == CUDOT_MEMORY_HOST)
                cs.push_back(read_contender(dtype, dtype, n, fresh ? [dtype, n](void *a, void *b, int round) {
                    rewrite(dtype, a, b, n, round);
                } : std::function<void(void *, void *, int)>()));
            Strategy *p = st.get();
            cs.push_back({fill(p->x, p->y), [p] { return cudot_dot(p->ctx, &p->last) == CUDOT_OK; }});
        }
        // cuBLAS reads device arrays of its own: a peer of the resident rows, timed in their rounds.
        std::unique_ptr<CublasPeer> cublas;
        if (gpu && !fresh) cublas = std::make_unique<CublasPeer>(dtype, n);
        const std::size_t cublas_at = cs.size();
        if (cublas && cublas->ok()) cs.push_back({nullptr, [&cublas] { return cublas->dot(); }});
        // T8's device-copy ceiling at 2^26, in the same rounds (the ceiling rounds time it alone).
        std::unique_ptr<DeviceCopyPeer> d2d;
        if (gpu && !fresh && n == (std::size_t(1) << 26)) d2d = std::make_unique<DeviceCopyPeer>(dtype, n);
        const std::size_t d2d_at = cs.size();
        if (d2d && d2d->ok()) cs.push_back({nullptr, [&d2d] { return d2d->copy(); }});
        // In a shuffled order a row's neighbour changes every round; at small n (short calls, where a
        // neighbour's leftovers weigh most) a row's p10-p90 spread can be several times its median, too wide
        // for a median of 30. Those sizes are cheap to time longer.
        const int rounds = n <= (std::size_t(1) << 20) ? 4 * o.reps : n <= (std::size_t(1) << 22) ? 2 * o.reps : o.reps;
        time_interleaved(fresh ? 3 : 5, rounds, cs, settle_for(bytes), true, Order::kShuffled);
        if (cublas && cublas->ok() && cs[cublas_at].ok && !cs[cublas_at].samples.empty())
            rows.push_back(Row{"cublas", type_name(dtype), n, "peer", summarize(cs[cublas_at].samples), bytes});
        // Its row: GB/s counted as the ceiling counts them (the bytes read and written).
        if (d2d && d2d->ok() && cs[d2d_at].ok && !cs[d2d_at].samples.empty())
            rows.push_back(Row{"d2d-copy", type_name(dtype), n, "peer", summarize(cs[d2d_at].samples), 2.0 * d2d->bytes()});
        for (auto &st : strategies) {
            const std::size_t mine = st->first + (st->memory == CUDOT_MEMORY_HOST ? 1 : 0);
            if (!cs[mine].ok) std::fprintf(stderr, "bench: %s dot failed: %s\n", st->name.c_str(), cudot_last_error(st->ctx));
            const double host = host_reference(dtype, st->x, st->y, n);
            Row r{st->name, type_name(dtype), n, scenario, summarize(cs[mine].samples), bytes};
            if (st->memory == CUDOT_MEMORY_HOST) r.own_read_GBps = read_GBps(cs[st->first], dtype, dtype, n);
            r.check = bits_check(cs[mine].ok, st->last, host);
            rows.push_back(r);
        }
        // T2's block: each seed peer alternated with its cudot strategy alone. In the rounds above its
        // leftovers (the seed's MANAGED dot migrates its partials after every call) fell on whichever
        // row came next.
        for (auto &st : strategies) {
            if (!st->seed) continue;
            Strategy *p = st.get();
            std::vector<Contender> pair{{fill(p->x, p->y), [p] { return cudot_dot(p->ctx, &p->last) == CUDOT_OK; }},
                                        {fill(p->seed->x(), p->seed->y()), [p] { return p->seed->dot(&p->seed_last); }}};
            time_interleaved(fresh ? 3 : 5, o.reps, pair, settle_for(bytes), true, Order::kRotated);
            if (!pair[1].ok || !pair[0].ok) continue;
            Row sr{"seed-" + st->name, type_name(dtype), n, scenario, summarize(pair[1].samples), bytes};
            sr.pair_us = summarize(pair[0].samples).median_us;
            sr.check = close_check(dtype, p->seed->x(), p->seed->y(), n, p->seed_last,
                                   host_reference(dtype, p->seed->x(), p->seed->y(), n));
            rows.push_back(sr);
        }
    }
    for (auto &st : strategies) cudot_deinit(st->ctx);
}

// ---- target 1 in a block of its own ----------------------------------------------------------------
// Target 1 holds a MANAGED resident dot at n <= 2^20 to an empty kernel's launch + sync. In the sweep
// those rows share their rounds with every other row, whose leftovers (a pool still spinning, pages
// migrating) fall on them and make the ratio measure the neighbours rather than the dot. Here each
// size's dots alternate call by call with the empty kernel and with nothing else, so that both medians
// come from the same minutes of the machine. The seed comparison (target 2) has blocks of its own in
// the sweep (bench_size).

constexpr int kT1Warmup = 100;

// One dtype and size: a MANAGED context filled once (its inputs are resident after the first dots),
// timed in turn with the probe. False if the context could not be made.
bool t1_size(int dtype, std::size_t n, int rounds, LaunchProbe &probe, std::vector<T1Row> &out) {
    const BenchContext c(dtype, CUDOT_MEMORY_MANAGED, n, "T1 block, managed init");
    if (!c.ok()) return false;
    double last = 0;
    std::vector<Contender> cs{{nullptr, [&] { return probe.once(); }},
                              {nullptr, [&] { return cudot_dot(c.ctx(), &last) == CUDOT_OK; }}};
    time_interleaved(kT1Warmup, rounds, cs);
    if (!cs[1].ok) std::fprintf(stderr, "bench: T1 block, managed dot failed: %s\n", cudot_last_error(c.ctx()));
    T1Row r;
    r.dtype = type_name(dtype);
    r.n = n;
    r.launch = summarize(cs[0].samples);
    r.dot = summarize(cs[1].samples);
    r.check = bits_check(cs[1].ok, last, host_reference(dtype, c.x(), c.y(), n));
    out.push_back(r);
    return true;
}

// The block: f32 and f64 at the sweep's sizes up to 2^20, 2001 rounds each (as many as the ceiling
// rounds' launch + sync; 301 in --quick). Empty without a usable probe.
std::vector<T1Row> t1_block(const Options &o) {
    std::vector<T1Row> out;
    LaunchProbe probe;
    if (!probe.ok()) return out;
    const int rounds = o.quick ? 301 : 2001;
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg = 10; lg <= std::min(20, o.max_log2); lg += (o.quick ? 5 : 2))
            t1_size(dtype, std::size_t(1) << lg, rounds, probe, out);
    return out;
}

void print_t1_block(const std::vector<T1Row> &t1) {
    if (t1.empty()) return;
    std::printf("\nT1 block: MANAGED resident, alone, each call alternated with an empty kernel's launch + sync "
                "(%d rounds per size)\n%-4s %10s %10s %10s %10s %11s %10s %10s %7s %s\n", t1[0].dot.samples, "type",
                "n", "median_us", "p10_us", "p90_us", "launch_us", "l_p10_us", "l_p90_us", "ratio", "check");
    for (const T1Row &r : t1)
        std::printf("%-4s %10zu %10.2f %10.2f %10.2f %10.2f %11.2f %10.2f %7.3f %s\n", r.dtype.c_str(), r.n,
                    r.dot.median_us, r.dot.p10_us, r.dot.p90_us, r.launch.median_us, r.launch.p10_us, r.launch.p90_us,
                    r.ratio(), check_text(r.check));
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
void bench_pair(int memory, int xd, int yd, std::size_t n, const Options &o, std::vector<Row> &rows) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = xd;
    cfg.y_dtype = yd;
    cfg.memory = memory;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) return;
    void *x, *y;
    cudot_get_inputs(ctx, &x, &y);
    auto rewrite_pair = [=](void *a, void *b, int round) {
        rewrite_bytes(a, xd, n, round);
        rewrite_bytes(b, yd, n, round + 1);
    };
    auto fill = [=](int round) { rewrite_pair(x, y, round); };
    double last = 0;
    const std::string name = std::string(type_name(xd)) + "x" + type_name(yd);
    const bool with_read = memory == CUDOT_MEMORY_HOST;
    for (const char *scenario : {"fresh", "resident"}) {
        const bool fresh = std::strcmp(scenario, "fresh") == 0;
        // Only MANAGED keeps resident inputs anywhere but host memory: the others' resident rows add nothing here.
        if (!fresh && memory != CUDOT_MEMORY_MANAGED) continue;
        std::vector<Contender> cs;
        if (with_read)
            cs.push_back(read_contender(xd, yd, n, fresh ? std::function<void(void *, void *, int)>(rewrite_pair) : nullptr));
        cs.push_back({fresh ? std::function<void(int)>(fill) : nullptr, [&] { return cudot_dot(ctx, &last) == CUDOT_OK; }});
        time_interleaved(fresh ? 3 : 5, o.reps, cs, memory == CUDOT_MEMORY_HOST ? settle_for(bytes_of(xd, yd, n)) : 0);
        Row r{kMemoryNames[memory], name, n, scenario, summarize(cs.back().samples), bytes_of(xd, yd, n)};
        if (with_read) r.own_read_GBps = read_GBps(cs[0], xd, yd, n);
        r.check = bits_check(cs.back().ok, last, host_reference(xd, x, y, n, yd));
        rows.push_back(r);
    }
    cudot_deinit(ctx);
}

// ---- peers ---------------------------------------------------------------------------------------

// Target 3's block: a HOST context, OpenBLAS's one-thread dot (sdot or ddot) and, for f32, its dsdot, in
// the same rounds (shuffled), each on buffers of its own and each with its own rewrite in the fresh
// scenario. HOST runs as a user gets it (its pool where it would use one); OpenBLAS on one thread.
void t3_rows(int dtype, std::size_t n, const Options &o, Aligned &x, Aligned &y, std::vector<Row> &rows) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = dtype;
    cfg.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    void *hx = nullptr, *hy = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK || cudot_get_inputs(ctx, &hx, &hy) != CUDOT_OK) {
        std::fprintf(stderr, "bench: T3 block: %s\n", cudot_last_error(nullptr));
        cudot_deinit(ctx);
        return;
    }
    rewrite(dtype, hx, hy, n, 0);
    openblas_threads(1);
    // dsdot has buffers of its own too: each contender's rewrite writes values of its own round.
    Aligned dx(dtype == CUDOT_F32 ? n * size_of(dtype) : 0), dy(dtype == CUDOT_F32 ? n * size_of(dtype) : 0);
    if (dtype == CUDOT_F32) rewrite(dtype, dx.p, dy.p, n, 0);
    const auto fill_host = fill_of(dtype, hx, hy, n), fill_peer = fill_of(dtype, x.p, y.p, n),
               fill_dsdot = fill_of(dtype, dx.p, dy.p, n);
    double host_last = 0, dot_last = 0, dsdot_last = 0;
    for (const char *scenario : {"fresh", "resident"}) {
        const bool fresh = std::strcmp(scenario, "fresh") == 0;
        std::vector<Contender> cs{{fresh ? fill_host : nullptr, [&] { return cudot_dot(ctx, &host_last) == CUDOT_OK; }},
                                  {fresh ? fill_peer : nullptr, [&] {
                                       dot_last = openblas_dot(dtype, x.p, y.p, n);
                                       return true;
                                   }}};
        if (dtype == CUDOT_F32)
            cs.push_back({fresh ? fill_dsdot : nullptr, [&] {
                              dsdot_last = openblas_dsdot(static_cast<const float *>(dx.p), static_cast<const float *>(dy.p), n);
                              return true;
                          }});
        time_interleaved(fresh ? 3 : 5, o.reps, cs, settle_for(bytes_of(dtype, n)), false, Order::kShuffled);
        // Every contender's last call saw the last rewrite of its own buffers (fresh) or the first (resident),
        // so each result is checked against a reference of those buffers as they are now.
        Row h{kT3HostRow, type_name(dtype), n, scenario, summarize(cs[0].samples), bytes_of(dtype, n)};
        h.check = bits_check(cs[0].ok, host_last, host_reference(dtype, hx, hy, n));
        rows.push_back(h);
        Row p{"openblas-1t", type_name(dtype), n, scenario, summarize(cs[1].samples), bytes_of(dtype, n)};
        p.check = close_check(dtype, x.p, y.p, n, dot_last, host_reference(dtype, x.p, y.p, n));
        rows.push_back(p);
        if (dtype == CUDOT_F32) {
            Row d{"openblas-dsdot-1t", type_name(dtype), n, scenario, summarize(cs[2].samples), bytes_of(dtype, n)};
            d.check = close_check(dtype, dx.p, dy.p, n, dsdot_last, host_reference(dtype, dx.p, dy.p, n));
            rows.push_back(d);
        }
    }
    cudot_deinit(ctx);
}

// OpenBLAS with every thread and with one, in both scenarios, on buffers of its own filled like cudot's.
// At target 3's sizes (n <= 2^16) the one-thread rows are timed in the same rounds as a HOST context of
// their own ("host-t3"), so T3 compares HOST and OpenBLAS under the same conditions: the sweep's "host"
// rows are timed in the strategies' rounds, after GPU calls and busy settles, and OpenBLAS alone here,
// which would make the sweep's ratio a comparison of two methods rather than of the two dots.
void openblas_rows(int dtype, std::size_t n, const Options &o, std::vector<Row> &rows) {
    Aligned x(n * size_of(dtype)), y(n * size_of(dtype));
    const auto fill = fill_of(dtype, x.p, y.p, n);
    fill(0);
    double last = 0;
    const bool t3_size = n <= (std::size_t(1) << 16);
    for (int threads : {0, 1}) {
        if (threads == 1 && (n > (std::size_t(1) << 24) || t3_size)) continue;  // small sizes: the T3 block
        openblas_threads(threads);
        for (const char *scenario : {"fresh", "resident"}) {
            const bool fresh = std::strcmp(scenario, "fresh") == 0;
            std::vector<Contender> cs{{fresh ? fill : nullptr, [&] {
                                           last = openblas_dot(dtype, x.p, y.p, n);
                                           return true;
                                       }}};
            time_interleaved(fresh ? 3 : 5, o.reps, cs, settle_for(bytes_of(dtype, n)));
            Row r{threads ? "openblas-1t" : "openblas", type_name(dtype), n, scenario, summarize(cs[0].samples),
                  bytes_of(dtype, n)};
            r.check = close_check(dtype, x.p, y.p, n, last, host_reference(dtype, x.p, y.p, n));
            rows.push_back(r);
        }
    }
    if (t3_size) t3_rows(dtype, n, o, x, y, rows);
    // OpenBLAS's idle workers keep spinning for a while after a call; let them fall asleep before the
    // next rows, which would otherwise share the cores with them.
    openblas_threads(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

// cudot_init / cudot_deinit cost per strategy and size (page-locking large buffers is slow).
struct InitRow {
    std::string memory;
    std::size_t n;
    Stats init, deinit;
};

std::vector<InitRow> init_costs(const Options &o, bool gpu) {
    std::vector<InitRow> out;
    std::vector<std::size_t> sizes;  // 2^20, 2^24 and the largest n of the run (2^20 alone in --quick)
    for (int lg : {20, 24, o.max_log2})
        if (lg <= o.max_log2 && (!o.quick || lg == 20) && (sizes.empty() || sizes.back() < (std::size_t(1) << lg)))
            sizes.push_back(std::size_t(1) << lg);
    if (sizes.empty()) sizes.push_back(std::size_t(1) << o.max_log2);
    for (int memory = 0; memory <= 4; ++memory) {
        if ((!gpu && memory >= 1 && memory <= 3) || !wanted(o, memory)) continue;
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

// ---- many small dots at once (target 7) -----------------------------------------------------------

// One thread, then min(16, hardware threads) threads, each with its own context at n = 2^12, for HOST
// and (with a GPU) MANAGED.
std::vector<ScalingRun> scaling_runs(const Options &o, bool gpu) {
    std::vector<ScalingRun> out;
    if (o.pairs_only) return out;
    const int many = static_cast<int>(std::min(16u, std::max(1u, std::thread::hardware_concurrency())));
    const double seconds = o.quick ? 0.1 : 0.3;
    for (int memory : {CUDOT_MEMORY_HOST, CUDOT_MEMORY_MANAGED}) {
        if (!wanted(o, memory) || (memory == CUDOT_MEMORY_MANAGED && !gpu)) continue;
        for (int threads : {1, many}) {
            if (threads == many && many == 1) continue;  // one thread is already there
            ScalingRun s;
            if (!measure_scaling(memory, threads, std::size_t(1) << 12, seconds, &s)) continue;
            s.memory = kMemoryNames[memory];
            out.push_back(s);
        }
    }
    return out;
}

double one_thread_rate(const std::vector<ScalingRun> &runs, const std::string &memory) {
    for (const ScalingRun &s : runs)
        if (s.memory == memory && s.threads == 1) return s.dots_per_s;
    return 0;
}

void print_scaling(const std::vector<ScalingRun> &runs) {
    if (runs.empty()) return;
    std::printf("\nmany small dots at once: f32, each thread its own context, calls for a fixed time\n");
    std::printf("%-8s %8s %8s %8s %12s %14s %8s %s\n", "memory", "threads", "n", "seconds", "dots/s", "us/dot/thread",
                "scaling", "check");
    for (const ScalingRun &s : runs) {
        const double one = one_thread_rate(runs, s.memory);
        std::printf("%-8s %8d %8zu %8.2f %12.0f %14.2f %7.2fx %s\n", s.memory.c_str(), s.threads, s.n, s.seconds,
                    s.dots_per_s, s.dots_per_s > 0 ? 1e6 * s.threads / s.dots_per_s : 0.0,
                    one > 0 ? s.dots_per_s / one : 0.0, s.checked ? "ok" : "MISMATCH");
    }
}

// ---- the pairs against F32 x F32 (every pair should reach F32's bandwidth ratio) ---------------------
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

// ---- output --------------------------------------------------------------------------------------

void print_ceilings(const Ceilings &c) {
    auto one = [&](const char *name, double best, double CeilingRound::*field, const char *unit) {
        const Spread s = spread_of(c, field);
        if (best > 0) std::printf("  %-26s %9.2f %-5s (rounds %.2f .. %.2f)\n", name, best, unit, s.lo, s.hi);
        else std::printf("  %-26s %9s\n", name, "n/a");
    };
    std::printf("\nceilings: best of %zu rounds (", c.rounds.size());
    for (std::size_t i = 0; i < c.rounds.size(); ++i) std::printf("%s%s", i ? ", " : "", c.rounds[i].when.c_str());
    std::printf(")%s%s\n", c.gpu ? "  GPU: " : "", c.gpu_name.c_str());
    if (c.gpu) {
        one("host->device copy", c.h2d_GBps, &CeilingRound::h2d_GBps, "GB/s");
        one("device copy", c.d2d_GBps, &CeilingRound::d2d_GBps, "GB/s");
        one("launch+sync (lowest median)", c.launch_us, &CeilingRound::launch_us, "us");
    }
    one("host read", c.host_read_GBps, &CeilingRound::host_read_GBps, "GB/s");
    one("host read, 1 thread", c.host_read_1t_GBps, &CeilingRound::host_read_1t_GBps, "GB/s");
}

void print_round(const CeilingRound &r) {
    std::printf("ceilings [%s]:", r.when.c_str());
    if (r.h2d_GBps > 0) std::printf(" h2d %.1f GB/s, d2d %.0f GB/s, launch+sync %.2f us,", r.h2d_GBps, r.d2d_GBps, r.launch_us);
    std::printf(" host read %.1f GB/s (1 thread %.1f)\n", r.host_read_GBps, r.host_read_1t_GBps);
    std::fflush(stdout);  // progress: a full run takes minutes
}

void print_suspects(const std::vector<std::string> &suspects) {
    if (suspects.empty()) return;
    std::printf("CEILING SUSPECT: %zu row(s) moved more than 5 %% above their ceiling, so the ceiling was measured "
                "in a slow moment and ratios against it flatter:\n", suspects.size());
    for (const std::string &s : suspects) std::printf("  %s\n", s.c_str());
}

void print_rows(const std::vector<Row> &rows) {
    std::printf("\n%-12s %-4s %10s %-9s %11s %11s %11s %9s %-11s %9s %6s %s\n", "what", "type", "n", "scenario",
                "median_us", "p10_us", "p90_us", "GB/s", "bound", "ceil_GB/s", "ratio", "check");
    for (const Row &r : rows)
        std::printf("%-12s %-4s %10zu %-9s %11.2f %11.2f %11.2f %9.2f %-11s %9.1f %6.3f %s\n", r.what.c_str(),
                    r.dtype.c_str(), r.n, r.scenario.c_str(), r.t.median_us, r.t.p10_us, r.t.p90_us, r.GBps,
                    r.bound.c_str(), r.ceiling_GBps, r.ratio, check_text(r.check));
}

void json_ceilings(FILE *f, const Ceilings &c, const std::vector<std::string> &suspects) {
    std::fprintf(f, "  \"ceilings\": {\"gpu\": \"%s\", \"h2d_GBps\": %.2f, \"d2d_GBps\": %.1f, \"launch_us\": %.2f, "
                    "\"host_read_GBps\": %.2f, \"host_read_1t_GBps\": %.2f,\n",
                 c.gpu ? c.gpu_name.c_str() : "", c.h2d_GBps, c.d2d_GBps, c.launch_us, c.host_read_GBps, c.host_read_1t_GBps);
    std::fprintf(f, "    \"best_of\": \"highest bandwidth, lowest launch_us over the rounds\",\n    \"spread\": {");
    const std::pair<const char *, double CeilingRound::*> fields[] = {
        {"h2d_GBps", &CeilingRound::h2d_GBps}, {"d2d_GBps", &CeilingRound::d2d_GBps},
        {"launch_us", &CeilingRound::launch_us}, {"host_read_GBps", &CeilingRound::host_read_GBps},
        {"host_read_1t_GBps", &CeilingRound::host_read_1t_GBps}};
    for (std::size_t i = 0; i < 5; ++i) {
        const Spread s = spread_of(c, fields[i].second);
        std::fprintf(f, "%s\"%s\": [%.2f, %.2f]", i ? ", " : "", fields[i].first, s.lo, s.hi);
    }
    std::fprintf(f, "},\n    \"rounds\": [\n");
    for (std::size_t i = 0; i < c.rounds.size(); ++i) {
        const CeilingRound &r = c.rounds[i];
        std::fprintf(f, "      {\"when\": \"%s\", \"h2d_GBps\": %.2f, \"d2d_GBps\": %.1f, \"launch_us\": %.2f, "
                        "\"host_read_GBps\": %.2f, \"host_read_1t_GBps\": %.2f}%s\n",
                     r.when.c_str(), r.h2d_GBps, r.d2d_GBps, r.launch_us, r.host_read_GBps, r.host_read_1t_GBps,
                     i + 1 < c.rounds.size() ? "," : "");
    }
    std::fprintf(f, "    ],\n    \"suspect\": [");
    for (std::size_t i = 0; i < suspects.size(); ++i) std::fprintf(f, "%s\"%s\"", i ? ", " : "", suspects[i].c_str());
    std::fprintf(f, "]},\n");
}

// Target 1's block as the elements of a JSON array, one per line.
void json_t1_block(FILE *f, const std::vector<T1Row> &t1) {
    const char *separator = "";
    for (const T1Row &r : t1) {
        std::fprintf(f, "%s    {\"dtype\": \"%s\", \"n\": %zu, \"median_us\": %.3f, \"p10_us\": %.3f, \"p90_us\": %.3f, "
                        "\"launch_median_us\": %.3f, \"launch_p10_us\": %.3f, \"launch_p90_us\": %.3f, \"rounds\": %d, "
                        "\"ratio\": %.4f, \"check\": \"%s\"}",
                     separator, r.dtype.c_str(), r.n, r.dot.median_us, r.dot.p10_us, r.dot.p90_us, r.launch.median_us,
                     r.launch.p10_us, r.launch.p90_us, r.dot.samples, r.ratio(), check_text(r.check));
        separator = ",\n";
    }
    if (!t1.empty()) std::fprintf(f, "\n");
}

struct Report {
    Ceilings ceilings;
    std::vector<std::string> suspects;
    std::vector<Row> rows;
    std::vector<T1Row> t1;
    std::vector<InitRow> inits;
    std::vector<ScalingRun> scaling;
    std::vector<Target> targets;
};

void write_json(const Options &o, const Report &rep) {
    FILE *f = std::fopen(o.json.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "bench: cannot write %s\n", o.json.c_str());
        return;
    }
    std::fprintf(f, "{\n  \"cudot_version\": \"%s\", \"quick\": %s,\n", cudot_version_string(), o.quick ? "true" : "false");
    json_ceilings(f, rep.ceilings, rep.suspects);
    std::fprintf(f, "  \"rows\": [\n");
    for (std::size_t i = 0; i < rep.rows.size(); ++i) {
        const Row &r = rep.rows[i];
        std::fprintf(f, "    {\"what\": \"%s\", \"dtype\": \"%s\", \"n\": %zu, \"scenario\": \"%s\", \"median_us\": %.3f, "
                        "\"p10_us\": %.3f, \"p90_us\": %.3f, \"samples\": %d, \"GBps\": %.3f, \"bound\": \"%s\", "
                        "\"ratio\": %.4f, \"ceiling_GBps\": %.2f, \"pair_us\": %.3f, \"check\": \"%s\", \"checked\": %s}%s\n",
                     r.what.c_str(), r.dtype.c_str(), r.n, r.scenario.c_str(), r.t.median_us, r.t.p10_us, r.t.p90_us,
                     r.t.samples, r.GBps, r.bound.c_str(), r.ratio, r.ceiling_GBps, r.pair_us, check_text(r.check),
                     r.check == Check::Differs || r.check == Check::Far ? "false" : "true", i + 1 < rep.rows.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"init\": [\n");
    for (std::size_t i = 0; i < rep.inits.size(); ++i)
        std::fprintf(f, "    {\"memory\": \"%s\", \"n\": %zu, \"init_us\": %.1f, \"deinit_us\": %.1f}%s\n",
                     rep.inits[i].memory.c_str(), rep.inits[i].n, rep.inits[i].init.median_us,
                     rep.inits[i].deinit.median_us, i + 1 < rep.inits.size() ? "," : "");
    std::fprintf(f, "  ],\n  \"threads\": [\n");
    for (std::size_t i = 0; i < rep.scaling.size(); ++i) {
        const ScalingRun &s = rep.scaling[i];
        const double one = one_thread_rate(rep.scaling, s.memory);
        std::fprintf(f, "    {\"memory\": \"%s\", \"dtype\": \"f32\", \"n\": %zu, \"threads\": %d, \"seconds\": %.3f, "
                        "\"dots\": %lld, \"dots_per_s\": %.1f, \"scaling\": %.3f, \"checked\": %s}%s\n",
                     s.memory.c_str(), s.n, s.threads, s.seconds, s.dots, s.dots_per_s, one > 0 ? s.dots_per_s / one : 0.0,
                     s.checked ? "true" : "false", i + 1 < rep.scaling.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"t1_block\": [\n");
    json_t1_block(f, rep.t1);
    std::fprintf(f, "  ],\n  \"targets\": [\n");
    json_targets(f, rep.targets);
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
        else if (a == "--no-pairs") o.no_pairs = true;
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
            std::fprintf(stderr, "usage: cudot-bench [--quick] [--pairs-only | --no-pairs] [--pairs-same-bytes] "
                                 "[--host-only | --only STRATEGY] [--json FILE] [--max-log2 K] [--reps R>=30]\n");
            std::exit(2);
        }
    }
    if (o.quick) o.max_log2 = std::min(o.max_log2, 20);
    return o;
}

// One dtype's sweep over n: every wanted strategy (with its seed peer and cuBLAS), then OpenBLAS.
void sweep(int dtype, const Options &o, bool gpu, std::vector<Row> &rows) {
    for (int lg = 10; lg <= o.max_log2; lg += (o.quick ? 5 : 2)) {
        const std::size_t n = std::size_t(1) << lg;
        bench_size(dtype, n, o, gpu, rows);
        openblas_rows(dtype, n, o, rows);
    }
}

// Narrow and mixed element types at one size (2^26, 2^max-log2 if smaller, 2^20 in --quick), led by
// f32 and f64 through the same code, so every pair's ratio has its same-run f32 ratio to be compared
// with. --pairs-same-bytes gives each pair the n that moves as many bytes as f32 x f32 at that size
// (2^28 for I8 x I8 at 2^26): a dot's fixed costs (launch, join) then weigh the same for every pair.
void pairs(const Options &o, bool gpu, std::vector<Row> &rows) {
    const std::size_t pair_n = std::size_t(1) << std::min(o.quick ? 20 : 26, o.max_log2);
    const int list[][2] = {{CUDOT_F32, CUDOT_F32}, {CUDOT_F64, CUDOT_F64}, {CUDOT_F16, CUDOT_F16},
                           {CUDOT_BF16, CUDOT_BF16}, {CUDOT_I8, CUDOT_I8},   {CUDOT_U8, CUDOT_U8},
                           {CUDOT_F32, CUDOT_U8},   {CUDOT_F32, CUDOT_F16}, {CUDOT_F32, CUDOT_BF16},
                           {CUDOT_F64, CUDOT_F32},  {CUDOT_F16, CUDOT_I8}};
    for (const auto &p : list)
        for (int memory : {CUDOT_MEMORY_AUTO, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_HOST}) {
            if (!gpu && memory != CUDOT_MEMORY_HOST && memory != CUDOT_MEMORY_AUTO) continue;
            if (!wanted(o, memory)) continue;
            bench_pair(memory, p[0], p[1], o.pairs_same_bytes ? pair_n * 8 / (size_of(p[0]) + size_of(p[1])) : pair_n,
                       o, rows);
        }
}

}  // namespace

int main(int argc, char **argv) {
    Options o = parse(argc, argv);
    cudot_config probe_cfg = CUDOT_CONFIG_INIT;
    probe_cfg.memory = CUDOT_MEMORY_PINNED;
    cudot_ctx *probe = nullptr;
    const bool host_only = o.only == CUDOT_MEMORY_HOST;
    const bool gpu_usable = !host_only && cudot_init(&probe, 1, &probe_cfg) == CUDOT_OK;
    if (!gpu_usable && !host_only)
        std::printf("no usable GPU (%s): GPU strategies, seed peers, ceilings and cuBLAS skipped\n", cudot_last_error(nullptr));
    cudot_deinit(probe);

    Report rep;
    Ceilings &c = rep.ceilings;
    c = measure_ceilings(gpu_usable, o.quick);
    const bool gpu = c.gpu;
    std::printf("cudot %s%s%s\n", cudot_version_string(), gpu ? "  GPU: " : "", c.gpu_name.c_str());
    print_round(c.rounds.back());

    // Target 1's block first, before any seed context exists in the process.
    if (gpu && !o.pairs_only && wanted(o, CUDOT_MEMORY_MANAGED)) rep.t1 = t1_block(o);
    // Ceiling rounds before each dtype's sweep and at the end: the best of them is the ceiling.
    if (!o.pairs_only) {
        sweep(CUDOT_F32, o, gpu, rep.rows);
        remeasure_ceilings(c, "after f32", o.quick);
        print_round(c.rounds.back());
        sweep(CUDOT_F64, o, gpu, rep.rows);
        remeasure_ceilings(c, "after f64", o.quick);
        print_round(c.rounds.back());
    }
    if (!o.no_pairs) pairs(o, gpu, rep.rows);
    rep.scaling = scaling_runs(o, gpu);
    if (!o.pairs_only) rep.inits = init_costs(o, gpu);
    remeasure_ceilings(c, "end", o.quick);
    print_round(c.rounds.back());

    bound_rows(rep.rows, c);
    rep.suspects = ceiling_suspects(rep.rows);
    rep.targets = evaluate_targets(rep.rows, rep.t1, rep.scaling, c);

    print_ceilings(c);
    print_suspects(rep.suspects);
    print_rows(rep.rows);
    std::printf("\n%-8s %10s %12s %12s\n", "init", "n", "init_us", "deinit_us");
    for (const InitRow &i : rep.inits)
        std::printf("%-8s %10zu %12.1f %12.1f\n", i.memory.c_str(), i.n, i.init.median_us, i.deinit.median_us);
    print_scaling(rep.scaling);
    print_t1_block(rep.t1);
    print_targets(rep.targets);
    print_pairs_vs_f32(rep.rows);
    print_suspects(rep.suspects);  // again at the end, where a reader of the targets looks
    write_json(o, rep);
    std::printf("\nwrote %s\n", o.json.c_str());

    bool failed = false;  // a wrong result is a failed benchmark; a peer off its tolerance is reported
    for (const Row &r : rep.rows) {
        if (r.check == Check::Differs) failed = true;
        if (r.check == Check::Far) std::printf("PEER OFF: %s %s n=%zu %s is not close to HOST's result\n",
                                               r.what.c_str(), r.dtype.c_str(), r.n, r.scenario.c_str());
    }
    for (const T1Row &r : rep.t1) failed = failed || r.check == Check::Differs;
    for (const ScalingRun &s : rep.scaling) failed = failed || !s.checked;
    return failed ? 1 : 0;
}
