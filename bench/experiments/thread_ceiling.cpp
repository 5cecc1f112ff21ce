// thread_ceiling.cpp - how far 16 independent callers scale on this host at all (issue 24, T7: HOST,
// 16 threads against 1, n = 2^12 f32, goal 12 x).
//
// cudot-bench's T7 block times HOST contexts only, so a miss there does not say whether cudot or the
// host stops the scaling. This program times three kinds of caller, each thread on buffers of its own,
// n = 2^12 f32, as the bench does (no pinning, the same 0.3 s per run):
//   host     cudot_dot on a HOST context of the thread's own (one thread each: below the pool's size)
//   dsdot    OpenBLAS cblas_dsdot, set to one thread (the same arithmetic: products and sum in double)
//   loop     a plain loop, float products widened and summed in double, 8 partial sums (no library)
//   tiles:C  HOST's tile loop alone (no call around it), copy C of src/cpu/tile_kernels*.cpp: each copy
//            in the variant list (baseline, AVX2, AVX-512, AVX-512 for AMD), so the copies' own scaling
//            shows (wider vectors may lower the clock of a core when many cores run them)
// 1 thread, then 16, for each kind, in turn; the rounds repeat so that each kind's figures spread over
// the whole run. It prints every run and, per kind, the median of the rounds' ratios (16 threads' dots/s
// over 1 thread's of the same round). Every thread's last result is checked against a double reference.
//
// Build (from the repository root, after the build in build/; the static library, so the tile copies can
// be called, and the CUDA runtime it needs):
//   g++ -O3 -mavx2 -mfma -std=c++17 -Iinclude -Isrc bench/experiments/thread_ceiling.cpp build/libcudot_static.a \
//       /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a -L/usr/local/cuda/lib64 -lcudart_static \
//       -lpthread -ldl -lrt -o build/experiments/thread_ceiling
//   (the build's CMakeCache.txt names the static OpenBLAS it links: OPENBLAS_STATIC)
//   usage: thread_ceiling [rounds = 5] [threads = 16]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cpu/tile_kernels.hpp"
#include "cudot.h"
#include "order.hpp"

extern "C" double cblas_dsdot(int n, const float *x, int incx, const float *y, int incy);
extern "C" void openblas_set_num_threads(int);

namespace {

constexpr std::size_t kN = 4096;
constexpr double kSeconds = 0.3;
// Kinds 0-2 as above, then one per tile copy (kTiles + index in the variant list).
enum Kind { kHost, kDsdot, kLoop, kTiles };
const cudot::cpu::TileKernels *g_copies[4];
int g_copy_count = 0;
std::string name_of(int kind) {
    static const char *const names[] = {"host", "dsdot", "loop"};
    return kind < kTiles ? names[kind] : std::string("tiles:") + g_copies[kind - kTiles]->isa;
}

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void fill(float *x, float *y) {
    for (std::size_t i = 0; i < kN; ++i) {
        x[i] = static_cast<float>((i * 37) % 101) * 0.25f - 12.0f;
        y[i] = static_cast<float>((i * 53) % 89) * 0.125f - 5.0f;
    }
}

// Products of floats are exact in double; with these small integers times 2^-5 every partial sum is exact
// too, so any order of the sum gives the same double.
double reference() {
    std::vector<float> x(kN), y(kN);
    fill(x.data(), y.data());
    double s = 0;
    for (std::size_t i = 0; i < kN; ++i) s += static_cast<double>(x[i]) * y[i];
    return s;
}

__attribute__((noinline)) double plain_loop(const float *x, const float *y) {
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (std::size_t i = 0; i < kN; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += static_cast<double>(x[i + k]) * y[i + k];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

struct Shared {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    double deadline = 0;  // written before go
};

struct Result {
    long long calls = 0;
    double last = 0;
    bool ok = true;
};

void worker(int kind, Shared &sh, Result &r) {
    std::vector<float> xs(kN), ys(kN);
    float *x = xs.data(), *y = ys.data();
    cudot_ctx *ctx = nullptr;
    if (kind == kHost) {
        cudot_config cfg = CUDOT_CONFIG_INIT;
        cfg.memory = CUDOT_MEMORY_HOST;
        void *vx, *vy;
        if (cudot_init(&ctx, kN, &cfg) != CUDOT_OK || cudot_get_inputs(ctx, &vx, &vy) != CUDOT_OK) {
            r.ok = false;
        } else {
            x = static_cast<float *>(vx);
            y = static_cast<float *>(vy);
        }
    }
    if (r.ok) fill(x, y);
    std::vector<unsigned char> partials(cudot::order::tile_count(kN) * 64);
    const cudot::cpu::PartialsFn tiles = kind >= kTiles ? g_copies[kind - kTiles]->get(CUDOT_F32, CUDOT_F32) : nullptr;
    auto call = [&] {
        if (kind == kHost) r.ok = r.ok && cudot_dot(ctx, &r.last) == CUDOT_OK;
        else if (kind == kDsdot) r.last = cblas_dsdot(static_cast<int>(kN), x, 1, y, 1);
        else if (kind == kLoop) r.last = plain_loop(x, y);
        else tiles(x, y, kN, 0, cudot::order::tile_count(kN), partials.data());
    };
    for (int i = 0; i < 50 && r.ok; ++i) call();
    sh.ready.fetch_add(1);
    while (!sh.go.load(std::memory_order_acquire)) std::this_thread::yield();
    while (r.ok && now_s() < sh.deadline) {
        call();
        ++r.calls;
    }
    if (ctx) cudot_deinit(ctx);
}

// Calls per second of `threads` callers of one kind together, and whether every result was right.
double run(int kind, int threads, bool *ok) {
    Shared sh;
    std::vector<Result> res(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, kind, std::ref(sh), std::ref(res[t]));
    while (sh.ready.load() < threads) std::this_thread::yield();
    const double t0 = now_s();
    sh.deadline = t0 + kSeconds;
    sh.go.store(true, std::memory_order_release);
    for (std::thread &t : pool) t.join();
    const double t1 = now_s();
    long long calls = 0;
    const double want = reference();
    for (const Result &r : res) {
        calls += r.calls;
        *ok = *ok && r.ok && (kind >= kTiles || r.last == want);  // a tile copy's partials: tile_copies checks them
    }
    return calls / (t1 - t0);
}

}  // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const int many = argc > 2 ? std::max(2, std::atoi(argv[2])) : 16;
    setenv("CUDOT_NUM_THREADS", "1", 1);  // nobody shares a pool: each caller's dot runs on its own thread
    openblas_set_num_threads(1);
    std::printf("thread_ceiling: n = %zu f32, %.1f s per run, 1 and %d callers, %d rounds, %u hardware threads\n",
                kN, kSeconds, many, rounds, std::thread::hardware_concurrency());
    std::printf("%-14s %5s %8s %14s %14s %12s %8s\n", "kind", "round", "threads", "calls/s", "us/call/thread",
                "scaling", "check");
    using namespace cudot;
    g_copy_count = cpu::tile_kernel_variants(g_copies, 4);
    const int kinds = kTiles + g_copy_count;
    std::vector<std::vector<double>> ratios(kinds);
    bool all_ok = true;
    for (int r = 0; r < rounds; ++r)
        for (int k = 0; k < kinds; ++k) {
            bool ok = true;
            const double one = run(k, 1, &ok);
            const double lots = run(k, many, &ok);
            all_ok = all_ok && ok;
            ratios[k].push_back(lots / one);
            std::printf("%-14s %5d %8d %14.0f %14.3f %12s %8s\n", name_of(k).c_str(), r, 1, one, 1e6 / one, "",
                        ok ? "ok" : "WRONG");
            std::printf("%-14s %5d %8d %14.0f %14.3f %11.2fx %8s\n", name_of(k).c_str(), r, many, lots, 1e6 * many / lots,
                        lots / one, ok ? "ok" : "WRONG");
        }
    for (int k = 0; k < kinds; ++k) {
        std::vector<double> v = ratios[k];
        std::sort(v.begin(), v.end());
        std::printf("%-14s %d callers / 1: median %.2fx, range %.2f-%.2f\n", name_of(k).c_str(), many, v[v.size() / 2], v.front(),
                    v.back());
    }
    std::printf("%s\n", all_ok ? "every result right" : "SOME RESULT WRONG");
    return all_ok ? 0 : 1;
}
