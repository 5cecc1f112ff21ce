// rows_bench.cpp - cudot-bench-rows: many dots in one call (cudot_dot_rows) against their ceilings and
// peers, measured in the same run, with the verdict lines of the rows targets (B6: host memory, the
// CPU threads). Each row's result is checked against cudot_dot_arrays on that row alone, bit for bit.
//
//   cudot-bench-rows [--quick]       (--quick: 4 MiB totals and few rounds, for a smoke test)
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cudot.h"
#include "host_read.hpp"
#include "inputs.hpp"
#include "measure.hpp"
#include "targets.hpp"

using namespace bench;

namespace {

struct Batch {
    int dtype;
    std::size_t n, count;
    Aligned x, y;
    std::vector<double> results;
    Batch(int d, std::size_t length, std::size_t rows)
        : dtype(d), n(length), count(rows), x(length * rows * size_of(d)), y(length * rows * size_of(d)),
          results(rows) {}
    cudot_rows request() const {
        cudot_rows r = CUDOT_ROWS_INIT;
        r.count = count;
        r.n = n;
        r.x.data = x.p;
        r.x.dtype = r.y.dtype = dtype;
        r.y.data = y.p;
        r.x_row_stride = r.y_row_stride = static_cast<std::int64_t>(n);
        return r;
    }
    cudot_arrays row(std::size_t i) const {
        cudot_arrays a = CUDOT_ARRAYS_INIT;
        a.n = n;
        a.x.data = static_cast<const char *>(x.p) + i * n * size_of(dtype);
        a.y.data = static_cast<const char *>(y.p) + i * n * size_of(dtype);
        a.x.dtype = a.y.dtype = dtype;
        return a;
    }
};

// Every row's result against cudot_dot_arrays on that row alone.
bool rows_have_their_own_bits(const Batch &b) {
    for (std::size_t i = 0; i < b.count; ++i) {
        const cudot_arrays a = b.row(i);
        double want = 0;
        if (cudot_dot_arrays(&a, &want) != CUDOT_OK || std::memcmp(&want, &b.results[i], sizeof want) != 0) return false;
    }
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const std::size_t total = quick ? std::size_t(1) << 19 : std::size_t(1) << 23;  // elements per operand
    const int reps = quick ? 5 : 15;
    std::printf("cudot %s  cudot-bench-rows%s: host rows, %zu elements per operand per batch\n", cudot_version_string(),
                quick ? " --quick" : "", total);
    std::printf("%-5s %9s %9s %12s %12s %10s %12s %8s %s\n", "type", "row", "rows", "rows_us", "GB/s", "read_GB/s",
                "loop_us/row", "speedup", "check");
    Target ceiling_f32 = at_least("B6 f32 host rows, totals >= 64 MiB, vs host read", "GB/s / host read (worst row length)", 0.85);
    Target ceiling_f64 = at_least("B6 f64 host rows, totals >= 64 MiB, vs host read", "GB/s / host read (worst row length)", 0.85);
    Target per_row = at_least("B6 host rows of 32-256 vs a loop of single calls", "loop time / rows time (worst)", 5.0);
    Target bits = at_most("B6 every row bit-equal to its own dot", "rows that differ", 0.0);
    for (int dtype : {CUDOT_F32, CUDOT_F64}) {
        for (std::size_t n : {std::size_t(32), std::size_t(256), std::size_t(1024), std::size_t(8192),
                              std::size_t(1) << 16, std::size_t(1) << 20}) {
            if (n > total) continue;
            Batch b(dtype, n, total / n);
            rewrite(dtype, b.x.p, b.y.p, n * b.count, 7);  // written once: the rows are resident
            const cudot_rows r = b.request();
            std::vector<Contender> cs;
            cs.push_back(Contender{nullptr, [&] { return cudot_dot_rows(&r, b.results.data()) == CUDOT_OK; }});
            cs.push_back(read_contender(dtype, dtype, n * b.count, nullptr));
            const bool loop = n <= 256;
            if (loop)
                cs.push_back(Contender{nullptr, [&] {
                    for (std::size_t i = 0; i < b.count; ++i) {
                        const cudot_arrays a = b.row(i);
                        if (cudot_dot_arrays(&a, &b.results[i]) != CUDOT_OK) return false;
                    }
                    return true;
                }});
            time_interleaved(2, reps, cs, 2000);
            const bool ok = cs[0].ok && cudot_dot_rows(&r, b.results.data()) == CUDOT_OK && rows_have_their_own_bits(b);
            const double us = summarize(cs[0].samples).median_us;
            const double bytes = double(n * b.count) * 2 * size_of(dtype);
            const double gbps = us > 0 ? bytes / (us * 1e3) : 0, read = read_GBps(cs[1], dtype, dtype, n * b.count);
            const double loop_us = loop ? summarize(cs[2].samples).median_us : 0;
            std::printf("%-5s %9zu %9zu %12.1f %12.2f %10.2f %12.4f %8.2f %s\n", dtype == CUDOT_F32 ? "f32" : "f64", n,
                        b.count, us, gbps, read, loop ? loop_us / b.count : 0.0, loop && us > 0 ? loop_us / us : 0.0,
                        ok ? "ok" : "MISMATCH");
            const std::string at = where(n, "rows");
            bits.see(ok ? 0 : 1, at);
            if (!quick && read > 0) (dtype == CUDOT_F32 ? ceiling_f32 : ceiling_f64).see(gbps / read, at);
            if (loop && us > 0) per_row.see(loop_us / us, at);
        }
    }
    print_targets({ceiling_f32, ceiling_f64, per_row, bits}, "rows target");
    return 0;
}
