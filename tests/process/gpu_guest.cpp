// gpu_guest.cpp - cudot as a guest in a CUDA program, each run in a fresh process (issue 22):
//   gpu_guest <pinned|mapped|managed|auto> <device|all> [own D]
// Runs a cudot context's whole life on the device (init, dot, dot_n, partials, use from another thread,
// deinit) and checks after every call that the calling thread's current CUDA context is the one it had
// before: nothing, or with "own D" a driver-API context the program made itself on device D
// (cuCtxCreate). With "own", it also destroys its own context while a cudot context made under it is
// still in use, and the cudot context must keep working, from this thread and another one. At the end
// the only primary contexts active in the process must be those of the devices cudot was asked for.
// Exits 0 on success, 1 on a failure (said on stderr), 77 (skipped) without the GPUs the case needs.
// The driver is reached through dlopen, as a program that uses it would: nothing of CUDA is linked.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cudot.h"
#include "primary_contexts.h"

namespace {

using CUcontext = void *;
struct Driver {
    int (*init)(unsigned);
    int (*device_get)(int *, int);
    int (*ctx_create)(CUcontext *, unsigned, int);
    int (*ctx_destroy)(CUcontext);
    int (*ctx_get_current)(CUcontext *);
};

bool load(Driver &d) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    d.init = reinterpret_cast<int (*)(unsigned)>(dlsym(lib, "cuInit"));
    d.device_get = reinterpret_cast<int (*)(int *, int)>(dlsym(lib, "cuDeviceGet"));
    d.ctx_create = reinterpret_cast<int (*)(CUcontext *, unsigned, int)>(dlsym(lib, "cuCtxCreate_v2"));
    d.ctx_destroy = reinterpret_cast<int (*)(CUcontext)>(dlsym(lib, "cuCtxDestroy_v2"));
    d.ctx_get_current = reinterpret_cast<int (*)(CUcontext *)>(dlsym(lib, "cuCtxGetCurrent"));
    return d.init && d.device_get && d.ctx_create && d.ctx_destroy && d.ctx_get_current && d.init(0) == 0;
}

Driver driver;
int failures = 0;

void check(bool ok, const std::string &what) {
    if (ok) return;
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    ++failures;
}

CUcontext current() {
    CUcontext c = nullptr;
    if (driver.ctx_get_current(&c) != 0) return reinterpret_cast<CUcontext>(-1);
    return c;
}

// The caller's context must be the current one after each cudot call.
void expect_current(CUcontext mine, const char *after) {
    check(current() == mine, std::string("the caller's current context changed after ") + after);
}

int32_t memory_of(const char *name) {
    if (!std::strcmp(name, "pinned")) return CUDOT_MEMORY_PINNED;
    if (!std::strcmp(name, "mapped")) return CUDOT_MEMORY_MAPPED;
    if (!std::strcmp(name, "managed")) return CUDOT_MEMORY_MANAGED;
    if (!std::strcmp(name, "auto")) return CUDOT_MEMORY_AUTO;
    return -1;
}

constexpr std::size_t kN = 300000;  // > 2^14: AUTO really uses the GPU; more than 16 tiles

void fill(cudot_ctx *ctx) {
    float *x = nullptr, *y = nullptr;
    cudot_get_inputs(ctx, reinterpret_cast<void **>(&x), reinterpret_cast<void **>(&y));
    for (std::size_t i = 0; i < kN; ++i) {
        x[i] = static_cast<float>(i % 7) - 3.0f;
        y[i] = 0.25f * static_cast<float>(i % 5);
    }
}

double host_answer() {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    double r = -1;
    if (cudot_init(&ctx, kN, &cfg) == CUDOT_OK) {
        fill(ctx);
        cudot_dot(ctx, &r);
    }
    cudot_deinit(ctx);
    return r;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// One dot on ctx from a new thread, which has no CUDA context current.
void dot_on_another_thread(cudot_ctx *ctx, double expected, const char *when) {
    std::thread t([&] {
        double r = 0;
        const cudot_status s = cudot_dot(ctx, &r);
        check(s == CUDOT_OK, std::string("dot from another thread ") + when + ": " + cudot_last_error(ctx));
        check(same_bits(r, expected), std::string("dot from another thread ") + when + ": wrong bits");
        check(current() == nullptr, std::string("a context was left current on another thread ") + when);
    });
    t.join();
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 3 || memory_of(argv[1]) < 0) {
        std::fprintf(stderr, "usage: gpu_guest <pinned|mapped|managed|auto> <device|all> [own D]\n");
        return 2;
    }
    const int32_t memory = memory_of(argv[1]);
    const bool all = !std::strcmp(argv[2], "all");
    const int32_t device = all ? CUDOT_DEVICE_ALL : std::atoi(argv[2]);
    const int own = argc >= 5 && !std::strcmp(argv[3], "own") ? std::atoi(argv[4]) : -1;

    int devices = 0;
    if (!load(driver) || cudot_test_active_primaries(&devices) < 0) {
        std::printf("SKIPPED: no CUDA driver or no GPU\n");
        return 77;
    }
    if ((!all && device >= devices) || own >= devices) {
        std::printf("SKIPPED: needs %d GPUs, %d visible\n", std::max(device, own) + 1, devices);
        return 77;
    }
    check(cudot_test_active_primaries(&devices) == 0, "a primary context was active before cudot ran");
    const double expected = host_answer();

    CUcontext mine = nullptr;
    if (own >= 0) {
        int dev = 0;
        if (driver.device_get(&dev, own) != 0 || driver.ctx_create(&mine, 0, dev) != 0) {
            std::fprintf(stderr, "FAILED: cuCtxCreate on device %d\n", own);
            return 1;
        }
    }
    expect_current(mine, "the program's own setup");

    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.memory = memory;
    cfg.device = device;
    cudot_ctx *ctx = nullptr;
    cudot_status s = cudot_init(&ctx, kN, &cfg);
    if (s != CUDOT_OK) {
        std::fprintf(stderr, "FAILED: cudot_init: %s\n", cudot_last_error(nullptr));
        return 1;
    }
    expect_current(mine, "cudot_init");
    fill(ctx);
    for (int round = 0; round < 3; ++round) {  // the second and third replay a captured graph
        double r = 0;
        check(cudot_dot(ctx, &r) == CUDOT_OK && same_bits(r, expected), "cudot_dot gives HOST's bits");
        expect_current(mine, "cudot_dot");
    }
    double half = 0;
    check(cudot_dot_n(ctx, kN / 2, &half) == CUDOT_OK, "cudot_dot_n");
    expect_current(mine, "cudot_dot_n");
    std::vector<unsigned char> partials(CUDOT_PARTIAL_BYTES * 16);
    check(cudot_tile_partials(ctx, 0, 16 * CUDOT_TILE_ELEMENTS, partials.data()) == CUDOT_OK,
          std::string("cudot_tile_partials: ") + cudot_last_error(ctx));
    expect_current(mine, "cudot_tile_partials");
    dot_on_another_thread(ctx, expected, "while the caller's context lives");

    if (mine) {  // the caller tears its own context down; cudot's must not depend on it
        check(driver.ctx_destroy(mine) == 0, "cuCtxDestroy of the program's own context");
        mine = nullptr;
        expect_current(nullptr, "cuCtxDestroy");
        double r = 0;
        s = cudot_dot(ctx, &r);
        check(s == CUDOT_OK && same_bits(r, expected),
              std::string("cudot_dot after the caller destroyed its context: ") + cudot_last_error(ctx));
        expect_current(nullptr, "cudot_dot after cuCtxDestroy");
        dot_on_another_thread(ctx, expected, "after the caller destroyed its context");
    }
    check(cudot_deinit(ctx) == CUDOT_OK, std::string("cudot_deinit: ") + cudot_last_error(nullptr));
    expect_current(mine, "cudot_deinit");

    // Only the devices cudot was asked for may have an active primary context.
    const long long active = cudot_test_active_primaries(&devices);
    const long long wanted = all ? (1LL << devices) - 1 : 1LL << device;
    if (active != wanted) {
        std::fprintf(stderr, "FAILED: active primary contexts 0x%llx, expected 0x%llx (devices cudot used)\n", active,
                     wanted);
        ++failures;
    }
    std::printf("%s: memory %s, device %s, own context %d, active primaries 0x%llx\n", failures ? "FAILED" : "ok",
                argv[1], argv[2], own, active);
    return failures ? 1 : 0;
}
