// thread_cost.cpp - what happens just before a small dot costs the dot (issue 24, T3 and T5 fresh at
// 2^10). cudot-bench's "fresh" rewrite of a small pair ran on a thread started for it (parallel_for
// started one even when one was all it needed), and HOST's next dot took 0.7 us more at f32 2^10 on the
// development machine, OpenBLAS dsdot's 0.3 us more; with the rewrite on the calling thread, HOST's
// fresh dots on an H100 host's Xeon still took 1.0 us more than its resident ones in three runs of four,
// OpenBLAS's 0.02-0.08.
//
// Callers, on one thread, f32 (or f64, with ddot for both OpenBLAS callers): a HOST context's cudot_dot
// ("host ctx"), cudot_dot_arrays on buffers of the program's own ("arrays own"), OpenBLAS dsdot and sdot
// on those ("dsdot own", "sdot own"), and each copy of HOST's tile loop alone on those ("tiles:ISA",
// src/cpu/tile_kernels*.cpp: whether the vector width matters, e.g. 512-bit units that a core powers
// down while it sleeps), then the table in use with one locked instruction before it ("inuse+lock"), the
// floating-point guard around it ("inuse+fpenv") or both: two things a HOST call adds to its loop.
// (Callers take turns, each running all seven modes: a caller's "resident" call is its first after the
// other callers' turns, so it also says how much a call pays when its code and data have gone cold.) Before
// each call, one of these (untimed):
//   resident            nothing
//   rewrite             the inputs rewritten by the calling thread
//   thread rewrite      rewritten by a thread started for it and joined
//   empty thread        a thread started and joined that does nothing, inputs untouched
//   sleep               the calling thread sleeps 50 us (as cudot-bench's settle between calls)
//   sleep+rewrite       sleeps 50 us, then rewrites the inputs itself
//   spin+rewrite        spins 50 us (the bench's busy settle), then rewrites
// Every (caller, mode) pair in turn, round after round; medians and p10 of 2001 rounds, one call each.
// If "empty thread" costs what "thread rewrite" does, the cost is the thread's, not the data's; if
// "sleep+rewrite" costs more than "spin+rewrite", the core's sleep is part of it.
//
// Build (from the repository root, after the build in build/; the static library, for the tile copies):
//   g++ -O2 -std=c++17 -Iinclude -Isrc bench/experiments/thread_cost.cpp build/libcudot_static.a \
//       /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a -L/usr/local/cuda/lib64 -lcudart_static \
//       -lpthread -ldl -lrt -o build/experiments/thread_cost
//   usage: CUDOT_NUM_THREADS=1 thread_cost [n = 1024] [f32 | f64]   (f64: ddot is the peer, listed twice)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "cpu/fp_env.hpp"
#include "cpu/tile_kernels.hpp"
#include "cudot.h"
#include "order.hpp"
#include <string>

extern "C" double cblas_dsdot(int n, const float *x, int incx, const float *y, int incy);
extern "C" float cblas_sdot(int n, const float *x, int incx, const float *y, int incy);
extern "C" double cblas_ddot(int n, const double *x, int incx, const double *y, int incy);
extern "C" void openblas_set_num_threads(int);

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool g_f64 = false;  // the element type of every caller's inputs (argv[2])

void fill(void *vx, void *vy, std::size_t n, int r) {
    for (std::size_t i = 0; i < n; ++i) {
        const double a = static_cast<double>((i * 7 + r) % 2001) * 0.001, b = static_cast<double>((i * 13 + r) % 1999) * 0.002;
        if (g_f64) static_cast<double *>(vx)[i] = a, static_cast<double *>(vy)[i] = b;
        else static_cast<float *>(vx)[i] = static_cast<float>(a), static_cast<float *>(vy)[i] = static_cast<float>(b);
    }
}

std::atomic<unsigned> g_locked{0};  // the "inuse+lock" callers' locked read-modify-write

void in_use(int dtype, const void *x, const void *y, std::size_t n, unsigned char *partials) {
    cudot::cpu::tile_kernels().get(dtype, dtype)(x, y, n, 0, cudot::order::tile_count(n), partials);
}

void spin(double us) {
    const double until = now_us() + us;
    while (now_us() < until) {
    }
}

}  // namespace

int main(int argc, char **argv) {
    const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
    g_f64 = argc > 2 && std::string(argv[2]) == "f64";
    const int dtype = g_f64 ? CUDOT_F64 : CUDOT_F32;
    const std::size_t bytes = (n * (g_f64 ? 8 : 4) + 4095) / 4096 * 4096;
    openblas_set_num_threads(1);
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = dtype;
    cfg.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    void *vx = nullptr, *vy = nullptr;
    if (n == 0 || cudot_init(&ctx, n, &cfg) != CUDOT_OK || cudot_get_inputs(ctx, &vx, &vy) != CUDOT_OK) {
        std::printf("cudot_init: %s\n", cudot_last_error(nullptr));
        return 1;
    }
    void *hx = vx, *hy = vy;
    void *ox = std::aligned_alloc(4096, bytes), *oy = std::aligned_alloc(4096, bytes);
    fill(hx, hy, n, 0);
    fill(ox, oy, n, 0);
    cudot_arrays arrays = CUDOT_ARRAYS_INIT;
    arrays.n = n;
    arrays.x.data = ox;
    arrays.y.data = oy;
    arrays.x.dtype = arrays.y.dtype = dtype;
    const cudot::cpu::TileKernels *copies[4];
    const int count = cudot::cpu::tile_kernel_variants(copies, 4);
    std::vector<std::string> callers = {"host ctx", "arrays own", g_f64 ? "ddot own" : "dsdot own", g_f64 ? "ddot own" : "sdot own"};
    for (int k = 0; k < count; ++k) callers.push_back(std::string("tiles:") + copies[k]->isa);
    // The table in use with what a HOST call adds around it: one locked read-modify-write (the call takes
    // several: the handle's shard lock, the context's lock, its call count), the floating-point guard
    // (src/cpu/fp_env.hpp), or both. If "inuse+lock" costs more than the bare table right after a
    // rewrite, the call waits for the rewrite's stores to drain before its first locked instruction.
    const int kFirstExtra = static_cast<int>(callers.size());
    for (const char *extra : {"inuse+lock", "inuse+fpenv", "inuse+lock+fp"}) callers.push_back(extra);
    const char *modes[] = {"resident", "rewrite", "thread rewrite", "empty thread", "sleep", "sleep+rewrite", "spin+rewrite"};
    const int kCallers = static_cast<int>(callers.size());
    constexpr int kModes = 7;
    std::vector<std::vector<std::vector<double>>> t(kCallers, std::vector<std::vector<double>>(kModes));
    std::vector<unsigned char> partials(cudot::order::tile_count(n) * 64);
    double r = 0, sink = 0;
    bool ok = true;
    for (int round = 0; round < 2001; ++round)
        for (int who = 0; who < kCallers; ++who)
            for (int mode = 0; mode < kModes; ++mode) {
                void *x = who == 0 ? hx : ox, *y = who == 0 ? hy : oy;
                const float *fx = static_cast<const float *>(x), *fy = static_cast<const float *>(y);
                const double *dx = static_cast<const double *>(x), *dy = static_cast<const double *>(y);
                if (mode == 1) fill(x, y, n, round);
                if (mode == 2) std::thread(fill, x, y, n, round).join();
                if (mode == 3) std::thread([] {}).join();
                if (mode == 4) std::this_thread::sleep_for(std::chrono::microseconds(50));
                if (mode == 5) std::this_thread::sleep_for(std::chrono::microseconds(50)), fill(x, y, n, round);
                if (mode == 6) spin(50), fill(x, y, n, round);
                const double t0 = now_us();
                if (who == 0) ok = cudot_dot(ctx, &r) == CUDOT_OK && ok;
                else if (who == 1) ok = cudot_dot_arrays(&arrays, &r) == CUDOT_OK && ok;
                else if (who == 2 || (who == 3 && g_f64)) r = g_f64 ? cblas_ddot(static_cast<int>(n), dx, 1, dy, 1)
                                                                     : cblas_dsdot(static_cast<int>(n), fx, 1, fy, 1);
                else if (who == 3) r = cblas_sdot(static_cast<int>(n), fx, 1, fy, 1);
                else if (who < kFirstExtra) copies[who - 4]->get(dtype, dtype)(x, y, n, 0, cudot::order::tile_count(n), partials.data());
                else {
                    const int extra = who - kFirstExtra;  // 0: lock, 1: fp guard, 2: both
                    if (extra != 1) g_locked.fetch_add(1);
                    std::optional<cudot::cpu::DefaultFpEnv> guard;
                    if (extra != 0) guard.emplace();
                    in_use(dtype, x, y, n, partials.data());
                }
                t[who][mode].push_back(now_us() - t0);
                sink += r;
            }
    std::printf("thread_cost: %s n = %zu, one thread, 2001 rounds, us per call\n", g_f64 ? "f64" : "f32", n);
    std::printf("%-14s", "caller");
    for (const char *m : modes) std::printf(" %15s", m);
    std::printf("\n");
    for (int who = 0; who < kCallers; ++who) {
        std::printf("%-14.14s", callers[who].c_str());
        for (int mode = 0; mode < kModes; ++mode) {
            std::vector<double> &v = t[who][mode];
            std::sort(v.begin(), v.end());
            std::printf("   %5.3f (%5.3f)", v[v.size() / 2], v[v.size() / 10]);
        }
        std::printf("\n");
    }
    std::printf("median (p10); %s (checksum %g)\n", ok ? "every cudot call ok" : "A CUDOT CALL FAILED", sink);
    cudot_deinit(ctx);
    std::free(ox);
    std::free(oy);
    return ok ? 0 : 1;
}
