// init_costs.cu - issue 25's two measurements for the GPU strategies' buffers, in one run:
//  1. What zeroing the input buffers costs at init, against init's own cost: the raw allocation calls
//     (cudaHostAlloc, cudaHostAlloc + memset, mmap + cudaHostRegister, whose pages the kernel hands out
//     zeroed; cudaMallocManaged alone, + a host memset, + cudaMemset), and cudot_init + cudot_deinit of
//     PINNED, MAPPED and MANAGED contexts, for two buffers of 2^20 ... 2^28 floats. Medians, alternated.
//  2. Whether the bus speed is the same from cudot's own page-locked pages (mmap + cudaHostRegister) as
//     from cudaHostAlloc's: a host->device copy of both arrays, and a kernel reading them in place
//     through their mapped device pointers, 2^26 floats each, medians of 15 alternated.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude bench/experiments/init_costs.cu \
//          build/libcudot_static.a -lpthread -ldl -o build/experiments/init_costs
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "cudot.h"
#include "read_sum.cuh"

namespace {

using Clock = std::chrono::steady_clock;

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double ms_of(const std::function<void()> &f) {
    const auto t = Clock::now();
    f();
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

void *map_zero(std::size_t bytes) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    return p;
}

const unsigned kHostFlags = cudaHostAllocPortable | cudaHostAllocMapped;
const unsigned kRegisterFlags = cudaHostRegisterPortable | cudaHostRegisterMapped;

// Each variant allocates two buffers of `bytes`, (maybe) zeroes them, and frees them.
struct Variant {
    const char *name;
    std::function<void(std::size_t)> run;
};

void host_alloc_pair(std::size_t bytes, bool zero) {
    void *a, *b;
    check(cudaHostAlloc(&a, bytes, kHostFlags), "cudaHostAlloc");
    check(cudaHostAlloc(&b, bytes, kHostFlags), "cudaHostAlloc");
    if (zero) {
        std::memset(a, 0, bytes);
        std::memset(b, 0, bytes);
    }
    check(cudaFreeHost(a), "cudaFreeHost");
    check(cudaFreeHost(b), "cudaFreeHost");
}

void registered_pair(std::size_t bytes) {
    void *a = map_zero(bytes), *b = map_zero(bytes);
    check(cudaHostRegister(a, bytes, kRegisterFlags), "cudaHostRegister");
    check(cudaHostRegister(b, bytes, kRegisterFlags), "cudaHostRegister");
    check(cudaHostUnregister(a), "cudaHostUnregister");
    check(cudaHostUnregister(b), "cudaHostUnregister");
    munmap(a, bytes);
    munmap(b, bytes);
}

void managed_pair(std::size_t bytes, int zero) {  // 0: none, 1: host memset, 2: cudaMemset
    void *a, *b;
    check(cudaMallocManaged(&a, bytes, cudaMemAttachGlobal), "cudaMallocManaged");
    check(cudaMallocManaged(&b, bytes, cudaMemAttachGlobal), "cudaMallocManaged");
    if (zero == 1) {
        std::memset(a, 0, bytes);
        std::memset(b, 0, bytes);
    } else if (zero == 2) {
        check(cudaMemset(a, 0, bytes), "cudaMemset");
        check(cudaMemset(b, 0, bytes), "cudaMemset");
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    check(cudaFree(a), "cudaFree");
    check(cudaFree(b), "cudaFree");
}

void context(std::size_t n, int memory) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.memory = memory;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) {
        std::fprintf(stderr, "cudot_init: %s\n", cudot_last_error(nullptr));
        std::exit(1);
    }
    cudot_deinit(ctx);
}

void part_zeroing() {
    std::printf("## zeroing at init: two buffers of n floats, ms (median of R, alternated)\n\n");
    std::printf("| n | R | cudaHostAlloc | + memset | mmap + cudaHostRegister | cudaMallocManaged | + host memset |"
                " + cudaMemset | cudot PINNED init+deinit | MAPPED | MANAGED |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int k : {20, 22, 24, 26, 28}) {
        const std::size_t n = std::size_t(1) << k, bytes = n * sizeof(float);
        const int reps = k >= 28 ? 3 : (k >= 26 ? 5 : 9);
        std::vector<Variant> variants = {
            {"hostalloc", [](std::size_t b) { host_alloc_pair(b, false); }},
            {"hostalloc+memset", [](std::size_t b) { host_alloc_pair(b, true); }},
            {"register", [](std::size_t b) { registered_pair(b); }},
            {"managed", [](std::size_t b) { managed_pair(b, 0); }},
            {"managed+memset", [](std::size_t b) { managed_pair(b, 1); }},
            {"managed+cudaMemset", [](std::size_t b) { managed_pair(b, 2); }},
            {"PINNED", [n](std::size_t) { context(n, CUDOT_MEMORY_PINNED); }},
            {"MAPPED", [n](std::size_t) { context(n, CUDOT_MEMORY_MAPPED); }},
            {"MANAGED", [n](std::size_t) { context(n, CUDOT_MEMORY_MANAGED); }},
        };
        std::vector<std::vector<double>> t(variants.size());
        for (auto &v : variants) v.run(bytes);  // warm-up
        for (int r = 0; r < reps; ++r)
            for (std::size_t i = 0; i < variants.size(); ++i) t[i].push_back(ms_of([&] { variants[i].run(bytes); }));
        std::printf("| 2^%d | %d |", k, reps);
        for (auto &v : t) std::printf(" %.2f |", median(v));
        std::printf("\n");
        std::fflush(stdout);
    }
}

void part_bus() {
    const std::size_t n = std::size_t(1) << 26, bytes = n * sizeof(float);
    void *ha, *hb;
    check(cudaHostAlloc(&ha, bytes, kHostFlags), "cudaHostAlloc");
    check(cudaHostAlloc(&hb, bytes, kHostFlags), "cudaHostAlloc");
    void *ra = map_zero(bytes), *rb = map_zero(bytes);
    check(cudaHostRegister(ra, bytes, kRegisterFlags), "cudaHostRegister");
    check(cudaHostRegister(rb, bytes, kRegisterFlags), "cudaHostRegister");
    for (void *p : {ha, hb, ra, rb}) {
        float *f = static_cast<float *>(p);
        for (std::size_t i = 0; i < n; ++i) f[i] = 0.5f;
    }
    void *d;
    check(cudaMalloc(&d, 2 * bytes), "cudaMalloc");
    float *out;
    check(cudaMalloc(&out, sizeof(float)), "cudaMalloc");
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaEvent_t e0, e1;
    check(cudaEventCreate(&e0), "cudaEventCreate");
    check(cudaEventCreate(&e1), "cudaEventCreate");
    int sms = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");

    auto copy = [&](void *a, void *b) {
        check(cudaMemcpyAsync(d, a, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
        check(cudaMemcpyAsync(static_cast<char *>(d) + bytes, b, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
    };
    auto read = [&](void *a, void *b) {
        void *da, *db;
        check(cudaHostGetDevicePointer(&da, a, 0), "cudaHostGetDevicePointer");
        check(cudaHostGetDevicePointer(&db, b, 0), "cudaHostGetDevicePointer");
        read_sum<<<sms * 8, 256, 0, s>>>(static_cast<const float4 *>(da), static_cast<const float4 *>(db), n / 4, out);
        check(cudaGetLastError(), "read_sum");
    };
    auto timed = [&](const std::function<void()> &f) {
        check(cudaEventRecord(e0, s), "cudaEventRecord");
        f();
        check(cudaEventRecord(e1, s), "cudaEventRecord");
        check(cudaEventSynchronize(e1), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        return 2.0 * bytes / (ms * 1e-3) / 1e9;  // GB/s over both arrays
    };
    std::vector<double> copy_alloc, copy_reg, read_alloc, read_reg;
    for (int r = 0; r < 16; ++r) {
        const double a = timed([&] { copy(ha, hb); }), b = timed([&] { copy(ra, rb); });
        const double c = timed([&] { read(ha, hb); }), e = timed([&] { read(ra, rb); });
        if (r == 0) continue;  // warm-up
        copy_alloc.push_back(a), copy_reg.push_back(b), read_alloc.push_back(c), read_reg.push_back(e);
    }
    std::printf("\n## bus speed: two arrays of 2^26 floats, GB/s (median of 15, alternated)\n\n");
    std::printf("| path | cudaHostAlloc pages | mmap + cudaHostRegister pages | ratio |\n|---|---|---|---|\n");
    std::printf("| host->device copy (cudaMemcpyAsync) | %.2f | %.2f | %.3f |\n", median(copy_alloc), median(copy_reg),
                median(copy_reg) / median(copy_alloc));
    std::printf("| kernel reading in place (mapped) | %.2f | %.2f | %.3f |\n", median(read_alloc), median(read_reg),
                median(read_reg) / median(read_alloc));
    cudaFree(d);
    cudaFree(out);
    cudaFreeHost(ha);
    cudaFreeHost(hb);
    cudaHostUnregister(ra);
    cudaHostUnregister(rb);
    munmap(ra, bytes);
    munmap(rb, bytes);
}

}  // namespace

int main() {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("# init_costs on %s\n\n", prop.name);
    part_bus();
    std::printf("\n");
    part_zeroing();
    return 0;
}
