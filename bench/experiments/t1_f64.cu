// t1_f64.cu - issue 24, T1 f64: in cudot-bench's T1 block a MANAGED resident f64 dot at 2^20 took
// 11.00 us against an empty kernel's launch + sync of 8.95 (one-H100 host, 1.229), while f32 at 2^20 took
// 9.36 (0.996). From 2^10 to 2^20 the f64 dot gains 4.9 us for 16 MiB of inputs (3.4 TB/s), f32 3.3 us
// for 8 MiB. At 2^20 a dot has 128 tiles, one block of 256 threads each, fewer blocks than the GPU has
// multiprocessors: each thread's loads in flight bound the time, and an f64 thread issues its tile's
// loads in two batches of four steps (LoadBatch in src/cuda/kernels/dot_kernel.cuh) where f32 issues one
// of eight. This program is built once per library (one with the kernel as it is, one with LoadBatch 8
// for f64) and run in turn; each times, as the T1 block does (each dot alternated with the empty kernel's
// launch + sync, 100 + R rounds, medians), MANAGED resident f64 at 2^14-2^20 and f32 at 2^20; and, for
// what a change must not lose, MANAGED resident f64 at 2^24 and 2^26 alternated with a device copy of the
// same bytes (T8's ceiling). Every result is checked against a host reference.
// Build (from the repository root; LIB: the static library to measure):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc -Ibench bench/experiments/t1_f64.cu bench/ceilings.cu \
//        bench/host_read.cpp bench/measure.cpp src/cpu/thread_pool.cpp src/process_limits.cpp LIB -lcublas \
//        -lpthread -ldl -o build/experiments/t1_f64_NAME
//   usage: t1_f64 [rounds = 2001]     (run with LD_LIBRARY_PATH=/usr/local/cuda/lib64 for cuBLAS)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ceilings.hpp"
#include "cudot.h"
#include "inputs.hpp"
#include "measure.hpp"

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(101, std::atoi(argv[1])) : 2001;
    bench::LaunchProbe probe;
    if (!probe.ok()) return 1;
    bool all_same = true;
    std::printf("t1_f64: MANAGED resident, each dot alternated with an empty kernel's launch + sync, %d rounds\n"
                "type        n  dot_us (p10)      launch_us (p10)   ratio\n",
                rounds);
    const std::pair<int, int> t1_sizes[] = {{CUDOT_F64, 14}, {CUDOT_F64, 16}, {CUDOT_F64, 18}, {CUDOT_F64, 20},
                                            {CUDOT_F32, 20}};
    for (const auto &size : t1_sizes) {
        const int dtype = size.first;
        const std::size_t n = std::size_t(1) << size.second;
        const bench::BenchContext c(dtype, CUDOT_MEMORY_MANAGED, n, "t1_f64");
        if (!c.ok()) return 1;
        double last = 0;
        std::vector<bench::Contender> cs{{nullptr, [&] { return probe.once(); }},
                                         {nullptr, [&] { return cudot_dot(c.ctx(), &last) == CUDOT_OK; }}};
        bench::time_interleaved(100, rounds, cs);
        const bench::Stats l = bench::summarize(cs[0].samples), d = bench::summarize(cs[1].samples);
        std::printf("%s %10zu %7.2f (%5.2f)   %7.2f (%5.2f)   %.3f\n", dtype == CUDOT_F64 ? "f64" : "f32", n,
                    d.median_us, d.p10_us, l.median_us, l.p10_us, d.median_us / l.median_us);
        all_same = all_same && cs[1].ok && bench::same_bits(last, bench::host_reference(dtype, c.x(), c.y(), n));
    }
    std::printf("MANAGED resident f64 alternated with a device copy of the same bytes, 41 rounds\n"
                "type        n  dot_us (GB/s)         copy_us (GB/s, read + written)  copy / dot time\n");
    for (int lg : {24, 26}) {
        const std::size_t n = std::size_t(1) << lg;
        const bench::BenchContext c(CUDOT_F64, CUDOT_MEMORY_MANAGED, n, "t1_f64");
        bench::DeviceCopyPeer copy(CUDOT_F64, n);
        if (!c.ok() || !copy.ok()) return 1;
        double last = 0;
        std::vector<bench::Contender> cs{{nullptr, [&] { return copy.copy(); }},
                                         {nullptr, [&] { return cudot_dot(c.ctx(), &last) == CUDOT_OK; }}};
        bench::time_interleaved(5, 41, cs);
        const bench::Stats k = bench::summarize(cs[0].samples), d = bench::summarize(cs[1].samples);
        const double bytes = double(n) * 16;
        std::printf("f64 %10zu %8.1f (%6.0f)      %8.1f (%6.0f)                  %.3f\n", n, d.median_us,
                    bytes / d.median_us / 1e3, k.median_us, 2.0 * copy.bytes() / k.median_us / 1e3,
                    k.median_us / d.median_us);
        all_same = all_same && cs[1].ok && bench::same_bits(last, bench::host_reference(CUDOT_F64, c.x(), c.y(), n));
    }
    std::printf("results %s\n", all_same ? "bit-equal to the host's" : "DIFFER");
    return all_same ? 0 : 1;
}
