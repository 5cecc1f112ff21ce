// gpu_paths.cu - A/B of the GPU dot's paths, calls alternated round by round in one process: the
// library of this tree (linked statically, knobs through cudot::cuda::tune) against another build
// loaded with dlopen (e.g. the previous release), plus the empty-kernel ceilings (launch + stream
// synchronize, launch + polling a mapped word). Medians in microseconds.
//
// Build (from the repository root, after building build-gpu with -DCMAKE_CUDA_ARCHITECTURES=90):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc bench/experiments/gpu_paths.cu build-gpu/libcudot_static.a \
//        -o build-gpu/gpu_paths -ldl -lpthread
// Run: build-gpu/gpu_paths OTHER_LIBCUDOT.so [small|large|all]
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cuda/cuda_backend.hpp"
#include "cudot.h"

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The public API of a library, from this process (static) or from a dlopen'ed build.
struct Api {
    std::string name;
    cudot_status (*init)(cudot_ctx **, size_t, const cudot_config *);
    cudot_status (*get_inputs)(cudot_ctx *, void **, void **);
    cudot_status (*dot)(cudot_ctx *, double *);
    cudot_status (*deinit)(cudot_ctx *);
    const char *(*last_error)(const cudot_ctx *);
};

Api static_api() { return Api{"new", cudot_init, cudot_get_inputs, cudot_dot, cudot_deinit, cudot_last_error}; }

bool load_api(const char *path, Api &api) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) {
        std::printf("dlopen %s: %s\n", path, dlerror());
        return false;
    }
    api.name = "old";
    api.init = reinterpret_cast<decltype(api.init)>(dlsym(h, "cudot_init"));
    api.get_inputs = reinterpret_cast<decltype(api.get_inputs)>(dlsym(h, "cudot_get_inputs"));
    api.dot = reinterpret_cast<decltype(api.dot)>(dlsym(h, "cudot_dot"));
    api.deinit = reinterpret_cast<decltype(api.deinit)>(dlsym(h, "cudot_deinit"));
    api.last_error = reinterpret_cast<decltype(api.last_error)>(dlsym(h, "cudot_last_error"));
    return api.init && api.get_inputs && api.dot && api.deinit && api.last_error;
}

void fill(int dtype, void *x, void *y, std::size_t n, int round) {
    const unsigned threads = n < (1u << 16) ? 1 : 16;
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([=] {
            for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
                const double a = static_cast<int>((i * 7 + round) % 2001) - 1000, b = static_cast<int>((i * 13 + round) % 1999) - 999;
                if (dtype == CUDOT_F64) {
                    static_cast<double *>(x)[i] = a * 0.001;
                    static_cast<double *>(y)[i] = b * 0.002;
                } else {
                    static_cast<float *>(x)[i] = static_cast<float>(a * 0.001);
                    static_cast<float *>(y)[i] = static_cast<float>(b * 0.002);
                }
            }
        });
    for (auto &t : pool) t.join();
}

// One contender: a context of some library with some knobs.
struct Contender {
    std::string label;
    Api api;
    cudot::cuda::GpuTuning tuning;
    bool tuned = false;
    cudot_ctx *ctx = nullptr;
    void *x = nullptr, *y = nullptr;
    std::vector<double> times;
    double last = 0;
};

struct Case {
    const char *what;
    int memory, dtype;
    std::size_t n;
    bool fresh;
    int rounds;
};

const char *kMemory[] = {"auto", "pinned", "mapped", "managed", "host"};

void run_case(const Case &c, std::vector<Contender> contenders, double launch_us) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.memory = c.memory;
    cfg.dtype = c.dtype;
    for (Contender &k : contenders) {
        if (k.api.init(&k.ctx, c.n, &cfg) != CUDOT_OK) {
            std::printf("%s: init failed: %s\n", k.label.c_str(), k.api.last_error(nullptr));
            return;
        }
        if (k.tuned) cudot::cuda::tune(*k.ctx, k.tuning);
        k.api.get_inputs(k.ctx, &k.x, &k.y);
        fill(c.dtype, k.x, k.y, c.n, 0);
    }
    const int warmup = 5;
    for (int r = 0; r < warmup + c.rounds; ++r)
        for (Contender &k : contenders) {
            if (c.fresh) fill(c.dtype, k.x, k.y, c.n, r);
            const double t0 = now_us();
            const cudot_status s = k.api.dot(k.ctx, &k.last);
            const double t1 = now_us();
            if (s != CUDOT_OK) std::printf("%s: dot failed: %s\n", k.label.c_str(), k.api.last_error(k.ctx));
            if (r >= warmup) k.times.push_back(t1 - t0);
        }
    std::printf("%-8s %-4s 2^%-2d %-8s", kMemory[c.memory], c.dtype == CUDOT_F64 ? "f64" : "f32",
                static_cast<int>(std::log2(static_cast<double>(c.n))), c.fresh ? "fresh" : "resident");
    const double first = contenders.empty() ? 0 : contenders[0].last;
    for (Contender &k : contenders) {
        const double m = median(k.times);
        std::printf(" | %s %9.2f (%.2fx L)%s", k.label.c_str(), m, m / launch_us,
                    std::memcmp(&k.last, &first, sizeof first) == 0 ? "" : " DIFFERENT");
        k.api.deinit(k.ctx);
    }
    std::printf("\n");
    std::fflush(stdout);
}

__global__ void empty_kernel() {}
__global__ void flag_kernel(volatile unsigned long long *word, unsigned long long seq) {
    __threadfence_system();
    *word = seq;
}

// Empty kernel + cudaStreamSynchronize, and empty kernel + polling a mapped word it writes.
void ceilings(double &sync_us, double &poll_us) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    unsigned long long *h = nullptr, *d = nullptr;
    cudaHostAlloc(reinterpret_cast<void **>(&h), sizeof *h, cudaHostAllocMapped);
    cudaHostGetDevicePointer(reinterpret_cast<void **>(&d), h, 0);
    *h = 0;
    std::vector<double> a, b;
    unsigned long long seq = 0;
    for (int i = 0; i < 3000; ++i) {
        double t0 = now_us();
        empty_kernel<<<1, 1, 0, s>>>();
        cudaStreamSynchronize(s);
        double t1 = now_us();
        flag_kernel<<<1, 1, 0, s>>>(d, ++seq);
        while (*static_cast<volatile unsigned long long *>(h) != seq) {
        }
        double t2 = now_us();
        cudaStreamSynchronize(s);
        if (i >= 100) {
            a.push_back(t1 - t0);
            b.push_back(t2 - t1);
        }
    }
    sync_us = median(a);
    poll_us = median(b);
    cudaFreeHost(h);
    cudaStreamDestroy(s);
}

Contender make(const std::string &label, const Api &api, cudot::cuda::GpuTuning t = {}, bool tuned = true) {
    Contender k;
    k.label = label;
    k.api = api;
    k.tuning = t;
    k.tuned = tuned && api.name == "new";
    return k;
}

cudot::cuda::GpuTuning knobs(unsigned slices, bool sync, unsigned pinned_mode = 0, bool graph = true,
                             int managed_mode = 0) {
    cudot::cuda::GpuTuning t;
    t.slices = slices;
    t.stream_sync = sync;
    t.pinned_mode = pinned_mode;
    t.no_graph = !graph;
    t.managed_mode = managed_mode;
    return t;
}

}  // namespace

int main(int argc, char **argv) {
    Api old_api;
    const bool have_old = argc > 1 && load_api(argv[1], old_api);
    const std::string part = argc > 2 ? argv[2] : "all";
    const Api nw = static_api();
    double sync_us = 0, poll_us = 0;
    ceilings(sync_us, poll_us);
    std::printf("empty kernel: launch + cudaStreamSynchronize %.2f us, launch + poll of a mapped word %.2f us\n",
                sync_us, poll_us);
    std::printf("columns: median us (ratio to launch + sync)\n");
    auto with_old = [&](std::vector<Contender> v) {
        if (have_old) v.insert(v.begin() + 1, make("old", old_api, {}, false));
        return v;
    };
    const auto launch = knobs(0, false, 0, false), sync = knobs(0, true, 0, false);
    const auto copy = knobs(0, false, 1), direct = knobs(0, false, 2);
    const auto migrate = knobs(0, false, 0, true, 1), in_place = knobs(0, false, 0, true, 2);
    if (part == "kernel") {  // this build's kernel against another build's, same library otherwise
        for (int memory : {CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_MAPPED})
            for (int dtype : {CUDOT_F32, CUDOT_F64})
                for (int lg : {10, 12, 14, 16, 18, 20})
                    run_case({"", memory, dtype, std::size_t(1) << lg, false, 150}, with_old({make("new", nw)}),
                             sync_us);
        for (int dtype : {CUDOT_F32, CUDOT_F64})
            for (int lg : {22, 24, 26})
                run_case({"", CUDOT_MEMORY_MANAGED, dtype, std::size_t(1) << lg, false, 60}, with_old({make("new", nw)}),
                         sync_us);
        run_case({"", CUDOT_MEMORY_MAPPED, CUDOT_F32, std::size_t(1) << 24, true, 30}, with_old({make("new", nw)}), sync_us);
    }
    if (part == "slices") {  // more blocks for dots of few tiles, now that launches are replayed graphs
        for (int memory : {CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED})
            for (int dtype : {CUDOT_F32, CUDOT_F64})
                for (int lg : {13, 14, 15, 16, 18})
                    run_case({"", memory, dtype, std::size_t(1) << lg, false, 150},
                             {make("s1", nw, knobs(1, false)), make("s2", nw, knobs(2, false)),
                              make("s4", nw, knobs(4, false)), make("s8", nw, knobs(8, false))},
                             sync_us);
        for (int dtype : {CUDOT_F32, CUDOT_F64})
            for (int lg : {14, 16})
                run_case({"", CUDOT_MEMORY_MAPPED, dtype, std::size_t(1) << lg, true, 100},
                         {make("s1", nw, knobs(1, false)), make("s2", nw, knobs(2, false)),
                          make("s4", nw, knobs(4, false)), make("s8", nw, knobs(8, false))},
                         sync_us);
    }
    if (part == "small" || part == "all") {
        for (int dtype : {CUDOT_F32, CUDOT_F64})
            for (int lg : {10, 12, 14, 16, 18, 20})
                run_case({"managed", CUDOT_MEMORY_MANAGED, dtype, std::size_t(1) << lg, false, 300},
                         with_old({make("new", nw), make("launch", nw, launch), make("sync", nw, sync)}), sync_us);
        for (int lg : {12, 16, 20})
            for (bool fresh : {false, true})
                run_case({"mapped", CUDOT_MEMORY_MAPPED, CUDOT_F32, std::size_t(1) << lg, fresh, 100},
                         with_old({make("new", nw), make("launch", nw, launch)}), sync_us);
        for (int lg : {12, 16, 20})
            for (bool fresh : {false, true})
                run_case({"pinned", CUDOT_MEMORY_PINNED, CUDOT_F32, std::size_t(1) << lg, fresh, 100},
                         with_old({make("new", nw), make("copy", nw, copy), make("direct", nw, direct)}), sync_us);
    }
    if (part == "large" || part == "all") {
        for (int dtype : {CUDOT_F32, CUDOT_F64})
            run_case({"managed", CUDOT_MEMORY_MANAGED, dtype, std::size_t(1) << 26, false, 60},
                     with_old({make("new", nw)}), sync_us);
        for (int lg : {22, 24})
            run_case({"pinned", CUDOT_MEMORY_PINNED, CUDOT_F32, std::size_t(1) << lg, true, 30},
                     with_old({make("new", nw), make("copy", nw, copy), make("direct", nw, direct)}), sync_us);
        for (int lg : {22, 24})
            for (bool fresh : {true, false})
                run_case({"managed", CUDOT_MEMORY_MANAGED, CUDOT_F32, std::size_t(1) << lg, fresh, 40},
                         with_old({make("new", nw), make("migrate", nw, migrate), make("inplace", nw, in_place)}),
                         sync_us);
    }
    return 0;
}
