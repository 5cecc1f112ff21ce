// d2d_rounds.cu - issue 24, T8: a 256 MiB device-to-device copy timed in cudot-bench's resident rounds
// at f32 2^26 ran at 2255 (one-H100 host) and 2401 GB/s (two-H100 host), against 2855 / 2852 GB/s for
// the same copy timed 20 times back to back in the ceiling rounds. Which part of the rounds slows it?
// Each mode times the copy (bench::DeviceCopyPeer: cudaMemcpyAsync and a stream sync) 41 times, median:
//   alone         back to back, as the ceiling rounds time it;
//   spun          each after a spun 2 ms pause (cudot-bench's pause before calls of 256 KiB or more);
//   after a dot   each right after a MANAGED resident dot of the same size (cudot's context);
//   rounds        the copy and the MANAGED dot in turn, each after the spun pause (cudot-bench's rounds).
// Wall times, as cudot-bench's; the MANAGED dot's result is checked against a host reference.
// Build (from the repository root, after the CUDA build in build/):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc -Ibench bench/experiments/d2d_rounds.cu bench/ceilings.cu \
//        bench/host_read.cpp bench/measure.cpp src/cpu/thread_pool.cpp src/process_limits.cpp \
//        build/libcudot_static.a -lcublas -lpthread -ldl -o build/experiments/d2d_rounds
//   usage: d2d_rounds [log2 n = 26]     (run with LD_LIBRARY_PATH=/usr/local/cuda/lib64 for cuBLAS)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ceilings.hpp"
#include "cudot.h"
#include "inputs.hpp"
#include "measure.hpp"

namespace {

constexpr int kCalls = 41, kSettleUs = 2000;

void spin(int us) {
    const double until = bench::now_us() + us;
    while (bench::now_us() < until) {
    }
}

// Wall times of one kind of call.
struct Timed {
    std::vector<double> wall;
    template <class Call> bool run(Call call) {
        const double t0 = bench::now_us();
        const bool ok = call();
        wall.push_back(bench::now_us() - t0);
        return ok;
    }
    void print(const char *mode, const char *what, double bytes) const {
        const bench::Stats w = bench::summarize(wall);
        std::printf("  %-12s %-5s %8.1f us (p10 %8.1f, p90 %8.1f) %7.1f GB/s\n", mode, what, w.median_us, w.p10_us,
                    w.p90_us, bytes / (w.median_us * 1e3));
    }
};

}  // namespace

int main(int argc, char **argv) {
    const int lg = argc > 1 ? std::atoi(argv[1]) : 26;
    const std::size_t n = std::size_t(1) << lg;
    bench::DeviceCopyPeer copy(CUDOT_F32, n);
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = CUDOT_F32;
    cfg.memory = CUDOT_MEMORY_MANAGED;
    cudot_ctx *ctx = nullptr;
    if (!copy.ok() || cudot_init(&ctx, n, &cfg) != CUDOT_OK) {
        std::printf("d2d_rounds: no copy buffers or no MANAGED context: %s\n", cudot_last_error(nullptr));
        return 1;
    }
    void *x, *y;
    cudot_get_inputs(ctx, &x, &y);
    bench::rewrite(CUDOT_F32, x, y, n, 0);
    double result = 0;
    auto dot = [&] { return cudot_dot(ctx, &result) == CUDOT_OK; };
    for (int i = 0; i < 5; ++i)
        if (!dot() || !copy.copy()) return 1;  // warm-up: the inputs move into GPU memory
    const double copy_bytes = 2.0 * copy.bytes(), dot_bytes = 2.0 * n * sizeof(float);
    std::printf("d2d_rounds: f32 2^%d, copy of %zu bytes (GB/s counted as read + written), %d calls per mode\n", lg,
                copy.bytes(), kCalls);
    bool ok = true;
    {
        Timed c;
        for (int i = 0; i < kCalls; ++i) ok = ok && c.run([&] { return copy.copy(); });
        c.print("alone", "copy", copy_bytes);
    }
    {
        Timed c;
        for (int i = 0; i < kCalls; ++i) {
            spin(kSettleUs);
            ok = ok && c.run([&] { return copy.copy(); });
        }
        c.print("spun", "copy", copy_bytes);
    }
    {
        Timed c;
        for (int i = 0; i < kCalls; ++i) {
            ok = ok && dot();
            ok = ok && c.run([&] { return copy.copy(); });
        }
        c.print("after a dot", "copy", copy_bytes);
    }
    {
        Timed c, d;
        for (int i = 0; i < kCalls; ++i) {
            spin(kSettleUs);
            ok = ok && c.run([&] { return copy.copy(); });
            spin(kSettleUs);
            ok = ok && d.run(dot);
        }
        c.print("rounds", "copy", copy_bytes);
        d.print("rounds", "dot", dot_bytes);
    }
    const bool same = bench::same_bits(result, bench::host_reference(CUDOT_F32, x, y, n));
    cudot_deinit(ctx);
    std::printf("%s; MANAGED's result %s\n", ok ? "every call succeeded" : "A CALL FAILED",
                same ? "bit-equal to the host's" : "DIFFERS");
    return ok && same ? 0 : 1;
}
