// host_blas.cpp - cudot-bench-host: target T3 (docs/PERFORMANCE.md) on any machine, with or without a
// GPU (it is built whenever OpenBLAS is found, with CUDA or without). HOST against OpenBLAS, each on
// one thread, at the sizes where a dot is arithmetic and per-call cost rather than memory traffic:
// n = 2^10, 2^12, 2^14, 2^16; f32 HOST against cblas_dsdot (the same arithmetic: products and sum in
// double) and cblas_sdot (a float sum: the user's view), f64 HOST against cblas_ddot. Prints the CPU,
// the timings and the T3 verdict lines.
//
//   cudot-bench-host [--rounds R]      R >= 201 timed rounds per size (default 1001)
//
// One thread each: OpenBLAS through openblas_set_num_threads(1); cudot through CUDOT_NUM_THREADS=1, the
// library's public knob (cudot.h, HOST), which this program sets before the library's thread pool
// starts, whatever the environment says.
// Resident inputs: every contender reads the same buffers (the HOST context's own), filled once, so all
// see the same values and equally warm caches. The calls alternate between the contenders, one call each
// per round (measure.hpp, time_interleaved), so that on a loaded machine they share its slow moments;
// the ratios are of the medians.
// Checks: HOST's result equals cudot_dot_arrays on the same buffers bit for bit (a HOST context and the
// own-arrays path must agree), and each OpenBLAS result is close to it (another summation order).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "cudot.h"
#include "inputs.hpp"
#include "measure.hpp"
#include "openblas_peer.hpp"
#include "rows.hpp"
#include "targets.hpp"

using namespace bench;

namespace {

constexpr int kWarmup = 20;
constexpr int kLeastRounds = 201;
const int kSizesLog2[] = {10, 12, 14, 16};

struct CpuInfo {
    std::string model = "unknown";
    bool avx2 = false, avx512f = false;
};

// The first processor's "model name" and "flags" lines of /proc/cpuinfo (Linux; elsewhere: unknown).
CpuInfo read_cpuinfo() {
    CpuInfo info;
    std::ifstream in("/proc/cpuinfo");
    bool model_seen = false, flags_seen = false;
    for (std::string line; std::getline(in, line) && !(model_seen && flags_seen);) {
        const std::size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
        const std::string value = line.substr(std::min(line.size(), colon + 2));
        if (key == "model name" && !model_seen) {
            info.model = value;
            model_seen = true;
        } else if (key == "flags" && !flags_seen) {
            std::istringstream words(value);
            for (std::string w; words >> w;) {
                info.avx2 = info.avx2 || w == "avx2";
                info.avx512f = info.avx512f || w == "avx512f";
            }
            flags_seen = true;
        }
    }
    return info;
}

// A result through the own-arrays entry point: HOST's bits by the library's promise, reached without a
// context (the sanity check of every HOST row).
double arrays_dot(int dtype, const void *x, const void *y, std::size_t n) {
    cudot_arrays a = CUDOT_ARRAYS_INIT;
    a.n = n;
    a.x = {x, dtype, 0, 1};  // data, dtype, reserved, stride
    a.y = {y, dtype, 0, 1};
    double r = std::nan("");
    if (cudot_dot_arrays(&a, &r) != CUDOT_OK)
        std::fprintf(stderr, "bench: cudot_dot_arrays: %s\n", cudot_last_error(nullptr));
    return r;
}

// An OpenBLAS contender: the row name target 3 looks for, and its dot on the HOST context's buffers.
struct Peer {
    const char *what;  // "openblas-1t" (sdot for f32, ddot for f64) or "openblas-dsdot-1t"
    std::function<double(const void *, const void *, std::size_t)> dot;
    double last = 0;
};

std::vector<Peer> peers_for(int dtype) {
    if (dtype == CUDOT_F64)
        return {{"openblas-1t", [](const void *x, const void *y, std::size_t n) {
                     return openblas_dot(CUDOT_F64, x, y, n);
                 }}};
    return {{"openblas-dsdot-1t", [](const void *x, const void *y, std::size_t n) {
                 return openblas_dsdot(static_cast<const float *>(x), static_cast<const float *>(y), n);
             }},
            {"openblas-1t", [](const void *x, const void *y, std::size_t n) {
                 return openblas_dot(CUDOT_F32, x, y, n);
             }}};
}

const char *type_name(int dtype) { return dtype == CUDOT_F64 ? "f64" : "f32"; }

// One dtype and size: HOST and its peers alternated for `rounds` rounds; their rows appended to `rows`.
// False if the HOST context could not be made.
bool measure_size(int dtype, std::size_t n, int rounds, std::vector<Row> &rows) {
    const BenchContext c(dtype, CUDOT_MEMORY_HOST, n, "HOST init");
    if (!c.ok()) return false;
    void *x = c.x(), *y = c.y();
    double host_last = 0;
    std::vector<Peer> peers = peers_for(dtype);
    std::vector<Contender> cs{{nullptr, [&] { return cudot_dot(c.ctx(), &host_last) == CUDOT_OK; }}};
    for (Peer &p : peers)
        cs.push_back({nullptr, [&p, x, y, n] {
                          p.last = p.dot(x, y, n);
                          return true;
                      }});
    time_interleaved(kWarmup, rounds, cs);
    if (!cs[0].ok) std::fprintf(stderr, "bench: HOST dot failed: %s\n", cudot_last_error(c.ctx()));

    const double bytes = double(n) * 2 * size_of(dtype);
    Row host{kT3HostRow, type_name(dtype), n, "resident", summarize(cs[0].samples), bytes};
    host.check = cs[0].ok && same_bits(host_last, arrays_dot(dtype, x, y, n)) ? Check::Same : Check::Differs;
    rows.push_back(host);
    for (std::size_t i = 0; i < peers.size(); ++i) {
        Row r{peers[i].what, type_name(dtype), n, "resident", summarize(cs[i + 1].samples), bytes};
        r.check = close_to_host(dtype, x, y, n, peers[i].last, host_last) ? Check::Close : Check::Far;
        rows.push_back(r);
    }
    return true;
}

const char *function_of(const Row &r) {
    if (r.what == kT3HostRow) return "cudot HOST";
    if (r.what == "openblas-dsdot-1t") return "cblas_dsdot";
    return r.dtype == "f64" ? "cblas_ddot" : "cblas_sdot";
}

void print_rows(const std::vector<Row> &rows) {
    std::printf("\n%-18s %-12s %-4s %7s %10s %10s %10s %s\n", "what", "function", "type", "n", "median_us", "p10_us",
                "p90_us", "check");
    for (const Row &r : rows)
        std::printf("%-18s %-12s %-4s %7zu %10.3f %10.3f %10.3f %s\n", r.what.c_str(), function_of(r), r.dtype.c_str(),
                    r.n, r.t.median_us, r.t.p10_us, r.t.p90_us, check_text(r.check));
}

// The median time of one row (0 if it did not run).
double median_of(const std::vector<Row> &rows, const char *what, const char *dtype, std::size_t n) {
    const Row *r = find(rows, what, dtype, n, "resident");
    return r ? r->t.median_us : 0;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

// T3's table: one line per n, f32 and f64 side by side, sdot beside both as information.
void print_summary(const std::vector<Row> &rows) {
    std::printf("\nT3 on this machine: medians in us, one thread each, resident inputs\n%-5s %9s %9s %9s %10s %10s "
                "%9s %9s %10s\n", "n", "f32 host", "dsdot", "sdot", "host/dsdot", "host/sdot", "f64 host", "ddot",
                "host/ddot");
    for (int lg : kSizesLog2) {
        const std::size_t n = std::size_t(1) << lg;
        const double h32 = median_of(rows, kT3HostRow, "f32", n), ds = median_of(rows, "openblas-dsdot-1t", "f32", n),
                     s = median_of(rows, "openblas-1t", "f32", n), h64 = median_of(rows, kT3HostRow, "f64", n),
                     d = median_of(rows, "openblas-1t", "f64", n);
        std::printf("2^%-3d %9.3f %9.3f %9.3f %10.3f %10.3f %9.3f %9.3f %10.3f\n", lg, h32, ds, s, ratio(h32, ds),
                    ratio(h32, s), h64, d, ratio(h64, d));
    }
}

// Whether OpenBLAS's dsdot forms each product in double, as its definition (and HOST f32) does, at n
// elements: with x = y = 1 + 2^-12 (exact in float) a product is 1 + 2^-11 + 2^-24 in double and
// 1 + 2^-11 rounded to float, and n of them sum exactly in double either way (n <= 2^16). Not every
// OpenBLAS build keeps to the definition: a vector kernel may round the products to float and sum them
// in double at some sizes and not at others, so each size is checked.
bool dsdot_products_in_double(std::size_t n) {
    const float v = 1.0f + 1.0f / 4096;
    std::vector<float> x(n, v);
    const double product = static_cast<double>(v) * static_cast<double>(v);
    return openblas_dsdot(x.data(), x.data(), n) == product * static_cast<double>(n);
}

// One line on the peer T3 holds HOST f32 to: whether it is the same arithmetic here.
void print_dsdot_arithmetic() {
    std::string rounded;
    for (int lg : kSizesLog2)
        if (!dsdot_products_in_double(std::size_t(1) << lg)) rounded += (rounded.empty() ? "2^" : ", 2^") + std::to_string(lg);
    if (rounded.empty())
        std::printf("OpenBLAS's dsdot here forms its products in double at every size above: the arithmetic of HOST f32\n");
    else
        std::printf("OpenBLAS's dsdot here rounds its products to float (n = %s; checked on x = y = 1 + 2^-12): not the "
                    "arithmetic of HOST f32, whose products are exact; T3 f32 compares against it as its goal states\n",
                    rounded.c_str());
}

int parse_rounds(int argc, char **argv) {
    int rounds = 1001;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rounds" && i + 1 < argc && std::atoi(argv[i + 1]) >= kLeastRounds) {
            rounds = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: cudot-bench-host [--rounds R>=%d]\n", kLeastRounds);
            std::exit(2);
        }
    }
    return rounds;
}

}  // namespace

int main(int argc, char **argv) {
    // Before any cudot call: the library's pool reads it once, when it starts.
    setenv("CUDOT_NUM_THREADS", "1", 1);
    openblas_threads(1);
    const int rounds = parse_rounds(argc, argv);

    const CpuInfo cpu = read_cpuinfo();
    std::printf("cudot-bench-host: target T3, HOST against OpenBLAS, one thread each\n");
    std::printf("cudot %s; CPU: %s; avx2 %s, avx512f %s\n", cudot_version_string(), cpu.model.c_str(),
                cpu.avx2 ? "yes" : "no", cpu.avx512f ? "yes" : "no");
    std::printf("threads: cudot HOST 1 (CUDOT_NUM_THREADS=1, set by this program), OpenBLAS 1; %d timed rounds per "
                "size after %d warm-up, calls alternated\n", rounds, kWarmup);
    std::fflush(stdout);

    std::vector<Row> rows;
    for (int dtype : {CUDOT_F32, CUDOT_F64})
        for (int lg : kSizesLog2) measure_size(dtype, std::size_t(1) << lg, rounds, rows);

    print_rows(rows);
    print_summary(rows);
    print_dsdot_arithmetic();
    std::vector<Target> targets = t3_targets(rows, "f32");
    for (const Target &t : t3_targets(rows, "f64")) targets.push_back(t);
    print_targets(targets, "target (this machine)");

    // Every size has 5 rows: HOST, dsdot and sdot for f32, HOST and ddot for f64.
    bool failed = rows.size() != 5 * (sizeof kSizesLog2 / sizeof kSizesLog2[0]);
    for (const Row &r : rows) {
        if (r.check == Check::Differs)
            std::printf("MISMATCH: HOST %s n=%zu differs from cudot_dot_arrays\n", r.dtype.c_str(), r.n);
        if (r.check == Check::Far)
            std::printf("PEER OFF: %s %s n=%zu is not close to HOST's result\n", r.what.c_str(), r.dtype.c_str(), r.n);
        failed = failed || r.check == Check::Differs || r.check == Check::Far;
    }
    return failed ? 1 : 0;
}
