// test_gpu_caller_state.cpp - cudot leaves the caller's CUDA state as it found it (the current device,
// an error the caller's own code left pending), and MANAGED works on GPUs without concurrent managed
// access (simulated through a test hook).
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "current_device.hpp"
#include "isolation.hpp"
#include "knobs.hpp"
#include "reference.hpp"
#include "testing.hpp"

using test::Ctx;

namespace {

const int32_t kGpu[] = {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO};

// init, fill, dot, dot_n, partials, deinit on one context; true when every call succeeded.
bool whole_life(int32_t memory, int32_t device, std::size_t n = 100000) {
    Ctx c(n, CUDOT_F32, memory, device);
    if (c.status != CUDOT_OK) return false;
    float *x = c.x<float>(), *y = c.y<float>();
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = static_cast<float>(i % 3);
        y[i] = 0.5f;
    }
    double r = 0;
    std::vector<unsigned char> partials(CUDOT_PARTIAL_BYTES * 16);
    return cudot_dot(c.ctx, &r) == CUDOT_OK && cudot_dot_n(c.ctx, n / 2, &r) == CUDOT_OK &&
           cudot_tile_partials(c.ctx, 0, 1000, partials.data()) == CUDOT_OK;
}

}  // namespace

// [deliberate]: the test itself makes what compute-sanitizer reports (here a failing CUDA call of the
// caller's; below a hung context's memory, kept by design), so scripts/gpu-check.sh --sanitize leaves
// these cases out.
TEST_CASE("GPU: an error the caller left pending stays pending, and cudot adds none",
          "[gpu][caller][deliberate]") {
    for (int32_t memory : kGpu) {
        INFO("memory " << memory);
        // A non-sticky error of the caller's own, pending in CUDA's per-thread last error.
        REQUIRE(cudaSetDevice(-7) == cudaErrorInvalidDevice);
        CHECK(whole_life(memory, 0));
        CHECK(cudaGetLastError() == cudaErrorInvalidDevice);  // still there, and now cleared
        // Nothing pending: cudot leaves nothing behind either.
        CHECK(whole_life(memory, 0));
        CHECK(cudaGetLastError() == cudaSuccess);
    }
}

TEST_CASE("GPU: the caller's current device is the same after every call", "[gpu][caller]") {
    const int gpus = test::visible_gpus();
    if (gpus < 2) TEST_SKIP("needs two GPUs (with one, cudot has no other device to go to); " << gpus << " visible");
    const test::CurrentDevice callers;  // the case plays a caller that changes it: given back at the end
    for (int32_t memory : kGpu)
        for (int32_t device : {0, 1, CUDOT_DEVICE_ALL}) {
            INFO("memory " << memory << ", device " << device);
            for (int mine : {0, 1}) {
                REQUIRE(cudaSetDevice(mine) == cudaSuccess);
                CHECK(whole_life(memory, device));
                int now = -1;
                REQUIRE(cudaGetDevice(&now) == cudaSuccess);
                CHECK(now == mine);
            }
        }
}

TEST_CASE("GPU: MANAGED without concurrent managed access never prefetches and keeps HOST's bits",
          "[gpu][managed]") {
    const test::NoConcurrentManaged pretend;
    // Sizes below and above the 8 MiB from which MANAGED adapts (and with concurrent access, prefetches).
    for (std::size_t n : {std::size_t(1000), std::size_t(1) << 21, (std::size_t(1) << 23) + 5}) {
        INFO("n = " << n);
        Ctx m(n, CUDOT_F32, CUDOT_MEMORY_MANAGED), h(n, CUDOT_F32, CUDOT_MEMORY_HOST);
        REQUIRE(m.status == CUDOT_OK);
        REQUIRE(h.status == CUDOT_OK);
        for (int round = 0; round < 6; ++round) {  // the host rewrites the inputs between dots
            float *mx = m.x<float>(), *my = m.y<float>(), *hx = h.x<float>(), *hy = h.y<float>();
            for (std::size_t i = 0; i < n; ++i) {
                mx[i] = hx[i] = static_cast<float>((i * 7 + round) % 17) - 8.0f;
                my[i] = hy[i] = static_cast<float>((i + round) % 5) * 0.25f;
            }
            for (int again = 0; again < 3; ++again) {  // and dots on unchanged inputs
                double a = 0, b = 0;
                REQUIRE(cudot_dot(m.ctx, &a) == CUDOT_OK);
                REQUIRE(cudot_dot(h.ctx, &b) == CUDOT_OK);
                CHECK(std::memcmp(&a, &b, sizeof a) == 0);
            }
        }
    }
    // Several GPUs cannot share managed memory without concurrent access: refused at init.
    test::ForcedDevices twice({0, 0});
    Ctx all(1000, CUDOT_F32, CUDOT_MEMORY_MANAGED, CUDOT_DEVICE_ALL);
    twice.release();
    CHECK(all.status == CUDOT_ERROR_UNSUPPORTED);
    CHECK(all.init_error.find("concurrent managed access") != std::string::npos);
}

#include <atomic>
#include <chrono>
#include <thread>

TEST_CASE("GPU: a dot the GPU never finishes returns after wait_ms, and the context can then only be destroyed",
          "[gpu][hang][deliberate]") {
    using Clock = std::chrono::steady_clock;
    struct Case {
        int32_t memory, device;
        std::vector<int> forced;  // CUDOT_DEVICE_ALL over these (the host-joined path)
    };
    const Case cases[] = {{CUDOT_MEMORY_PINNED, 0, {}},
                          {CUDOT_MEMORY_MAPPED, 0, {}},
                          {CUDOT_MEMORY_MANAGED, 0, {}},
                          {CUDOT_MEMORY_MANAGED, CUDOT_DEVICE_ALL, {0, 0}}};
    for (const Case &k : cases) {
        INFO("memory " << k.memory << ", device " << k.device);
        test::ForcedDevices forced(k.forced);  // for the init only
        cudot_config c = CUDOT_CONFIG_INIT;
        c.memory = k.memory;
        c.device = k.device;
        c.wait_ms = 300;
        cudot_ctx *ctx = nullptr;
        const std::size_t n = 100000;
        REQUIRE(cudot_init(&ctx, n, &c) == CUDOT_OK);
        forced.release();
        void *x = nullptr, *y = nullptr;
        REQUIRE(cudot_get_inputs(ctx, &x, &y) == CUDOT_OK);
        for (std::size_t i = 0; i < n; ++i) static_cast<float *>(x)[i] = static_cast<float *>(y)[i] = 1.0f;
        double r = 0;
        REQUIRE(cudot_dot(ctx, &r) == CUDOT_OK);
        REQUIRE(r == static_cast<double>(n));

        test::HeldGpuKernels held;
        // A second thread calls in while the first waits: it must come back too, not hang on the lock.
        cudot_status other = CUDOT_OK;
        double other_seconds = 0;
        const auto start = Clock::now();
        std::thread second([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            double v = 0;
            other = cudot_dot(ctx, &v);
            other_seconds = std::chrono::duration<double>(Clock::now() - start).count();
        });
        const cudot_status first = cudot_dot(ctx, &r);
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        second.join();
        CHECK(first == CUDOT_ERROR_CUDA);
        CHECK(std::string(cudot_last_error(ctx)).find("only be destroyed") != std::string::npos);
        CHECK(seconds >= 0.29);
        CHECK(seconds < 5.0);
        CHECK(other == CUDOT_ERROR_CUDA);
        CHECK(other_seconds < 5.0);
        unsigned char partials[CUDOT_PARTIAL_BYTES * 16];
        CHECK(cudot_tile_partials(ctx, 0, 1000, partials) == CUDOT_ERROR_CUDA);
        CHECK(cudot_dot(ctx, &r) == CUDOT_ERROR_CUDA);
        // Destroyed while its kernel still runs: no wait.
        const auto before_deinit = Clock::now();
        CHECK(cudot_deinit(ctx) == CUDOT_OK);
        CHECK(std::chrono::duration<double>(Clock::now() - before_deinit).count() < 5.0);
        held.release();  // the GPU finishes the held kernels

        // The GPU and the library go on: once the held kernels have ended, a new context on the same
        // device works (until then the device is refused: it is stuck for the whole process).
        for (int attempt = 0; attempt < 200; ++attempt) {
            Ctx probe(16, CUDOT_F32, k.memory, 0);
            if (probe.status == CUDOT_OK) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
        Ctx fresh(n, CUDOT_F32, k.memory, 0);
        REQUIRE(fresh.status == CUDOT_OK);
        float *fx = fresh.x<float>(), *fy = fresh.y<float>();
        for (std::size_t i = 0; i < n; ++i) fx[i] = fy[i] = 2.0f;
        CHECK(fresh.dot() == 4.0 * static_cast<double>(n));
    }
}

TEST_CASE("GPU: wait_ms = 0 means the default bound, which a long dot stays well within", "[gpu][hang]") {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_MANAGED;
    c.wait_ms = 0;
    cudot_ctx *ctx = nullptr;
    const std::size_t n = std::size_t(1) << 26;  // 512 MiB, freshly written: milliseconds of GPU work
    REQUIRE(cudot_init(&ctx, n, &c) == CUDOT_OK);
    void *x = nullptr, *y = nullptr;
    REQUIRE(cudot_get_inputs(ctx, &x, &y) == CUDOT_OK);
    for (std::size_t i = 0; i < n; ++i) static_cast<float *>(x)[i] = static_cast<float *>(y)[i] = 1.0f;
    double r = 0;
    CHECK(cudot_dot(ctx, &r) == CUDOT_OK);
    CHECK(r == static_cast<double>(n));
    CHECK(cudot_deinit(ctx) == CUDOT_OK);
}

TEST_CASE("GPU: configs without wait_ms (NULL, or a 1.1-1.4 caller's 20 bytes) get the default bound", "[gpu][hang]") {
    // A zero bound would give up on every dot that is not already done at the first look.
    cudot_config old = CUDOT_CONFIG_INIT;
    old.size = 20;
    old.memory = CUDOT_MEMORY_MANAGED;
    const cudot_config *configs[] = {nullptr, &old};
    for (const cudot_config *config : configs) {
        cudot_ctx *ctx = nullptr;
        const std::size_t n = std::size_t(1) << 24;
        REQUIRE(cudot_init(&ctx, n, config) == CUDOT_OK);
        void *x = nullptr, *y = nullptr;
        REQUIRE(cudot_get_inputs(ctx, &x, &y) == CUDOT_OK);
        for (int round = 0; round < 5; ++round) {
            for (std::size_t i = 0; i < n; ++i) static_cast<float *>(x)[i] = static_cast<float *>(y)[i] = 1.0f;
            double r = 0;
            CHECK(cudot_dot(ctx, &r) == CUDOT_OK);
            CHECK(r == static_cast<double>(n));
        }
        CHECK(cudot_deinit(ctx) == CUDOT_OK);
    }
}

namespace {

using Clock = std::chrono::steady_clock;

// Runs `call` on a thread and gives it `seconds`. If it has not returned by then, the case fails, the
// held kernels are let go (so the call can end), and the thread is joined: a wait that would never end
// shows as a failure, not as a test that hangs.
template <class Call>
double returns_within(double seconds, Call call, const char *what) {
    std::atomic<bool> done{false};
    const auto start = Clock::now();
    std::thread t([&] {
        call();
        done = true;
    });
    while (!done && std::chrono::duration<double>(Clock::now() - start).count() < seconds)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    if (!done) {
        FAIL_CHECK(what << " did not return within " << seconds << " s");
        cudot::testing::hold_gpu_kernels(false);
    }
    t.join();
    return took;
}

// After the held kernels are let go, a stuck GPU is usable again once they have ended.
bool usable_again(int device) {
    for (int attempt = 0; attempt < 200; ++attempt) {
        Ctx probe(1000, CUDOT_F32, CUDOT_MEMORY_MAPPED, device);
        if (probe.status == CUDOT_OK) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
}

cudot_ctx *filled(int32_t memory, int32_t device, std::size_t n, uint32_t wait_ms) {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = memory;
    c.device = device;
    c.wait_ms = wait_ms;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &c) != CUDOT_OK) return nullptr;
    void *x = nullptr, *y = nullptr;
    cudot_get_inputs(ctx, &x, &y);
    for (std::size_t i = 0; i < n; ++i) static_cast<float *>(x)[i] = static_cast<float *>(y)[i] = 1.0f;
    return ctx;
}

}  // namespace

TEST_CASE("GPU: one GPU hung behind CUDOT_DEVICE_ALL: every later wait on it, by any context, is bounded",
          "[gpu][hang][deliberate]") {
    const int gpus = test::visible_gpus();
    if (gpus < 2) TEST_SKIP("needs two GPUs (it holds one of several); " << gpus << " visible");
    const std::size_t n = 1 << 20;
    cudot_ctx *all = filled(CUDOT_MEMORY_MAPPED, CUDOT_DEVICE_ALL, n, 300);
    cudot_ctx *same = filled(CUDOT_MEMORY_PINNED, 1, n, 300);   // another context on the hung GPU
    cudot_ctx *other = filled(CUDOT_MEMORY_MAPPED, 0, n, 300);  // a context on the healthy GPU
    REQUIRE(all);
    REQUIRE(same);
    REQUIRE(other);
    double r = 0;
    REQUIRE(cudot_dot(all, &r) == CUDOT_OK);
    REQUIRE(cudot_dot(same, &r) == CUDOT_OK);

    test::HeldGpuKernels held(1);
    cudot_status s = CUDOT_OK;
    returns_within(10, [&] { s = cudot_dot(all, &r); }, "the DEVICE_ALL dot with GPU 1 hung");
    CHECK(s == CUDOT_ERROR_CUDA);
    CHECK(std::string(cudot_last_error(all)).find("GPU 1 did not finish") != std::string::npos);
    // Another context on GPU 1: refused at once, with the reason.
    const double refused = returns_within(10, [&] { s = cudot_dot(same, &r); }, "a dot of another context on GPU 1");
    CHECK(s == CUDOT_ERROR_CUDA);
    CHECK(std::string(cudot_last_error(same)).find("GPU 1 still has work") != std::string::npos);
    CHECK(refused < 1.0);
    // The healthy GPU goes on.
    r = 0;
    CHECK(cudot_dot(other, &r) == CUDOT_OK);
    CHECK(r == static_cast<double>(n));
    // A new context on GPU 1 is refused; deinits never wait on the hung kernel.
    cudot_ctx *fresh = nullptr;
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_MAPPED;
    c.device = 1;
    std::string message;  // cudot_last_error(NULL) is per thread: read on the thread that failed
    returns_within(10, [&] {
        s = cudot_init(&fresh, 1000, &c);
        message = cudot_last_error(nullptr);
    }, "an init on GPU 1");
    CHECK(s == CUDOT_ERROR_CUDA);
    CHECK(message.find("GPU 1 still has work") != std::string::npos);
    returns_within(10, [&] {
        s = cudot_deinit(same);
        message = cudot_last_error(nullptr);  // a failed deinit's message (the context is gone)
    }, "the deinit of another context on GPU 1");
    CHECK(s == CUDOT_ERROR_CUDA);
    CHECK(message.find("GPU 1 still has work") != std::string::npos);
    returns_within(10, [&] { s = cudot_deinit(all); }, "the deinit of the hung context");
    CHECK(s == CUDOT_OK);  // its own hang was reported by the dot
    returns_within(10, [&] { s = cudot_deinit(other); }, "the deinit of a context on the healthy GPU");
    CHECK(s == CUDOT_OK);

    held.release();
    CHECK(usable_again(1));
}

TEST_CASE("GPU: a failure on GPU 0 while GPU 1 hangs: the clean-up after it is bounded too",
          "[gpu][hang][deliberate]") {
    const int gpus = test::visible_gpus();
    if (gpus < 2) TEST_SKIP("needs two GPUs (it holds one of several); " << gpus << " visible");
    const std::size_t n = 1 << 20;
    cudot_ctx *all = filled(CUDOT_MEMORY_MAPPED, CUDOT_DEVICE_ALL, n, 300);
    REQUIRE(all);
    double r = 0;
    REQUIRE(cudot_dot(all, &r) == CUDOT_OK);
    test::HeldGpuKernels held(1);
    cudot_status s = CUDOT_OK;
    std::string message;
    // The checked calls of a MAPPED dot on two GPUs: GPU 0 current, its launch, GPU 1 current, its launch,
    // then GPU 0 current again for the wait: that fifth call fails, after GPU 1's kernel is queued.
    returns_within(10, [&] {
        test::InjectedCudaFault fault(4, cudaErrorLaunchFailure);  // on the thread that makes the dot
        s = cudot_dot(all, &r);
        fault.cancel();
        message = cudot_last_error(all);
    }, "a failed dot whose clean-up waits on a hung GPU");
    CHECK(s == CUDOT_ERROR_CUDA);
    CHECK(message.find("cudaErrorLaunchFailure") != std::string::npos);  // the failure itself is what is reported
    returns_within(10, [&] { s = cudot_deinit(all); }, "the deinit after it");
    held.release();
    CHECK(usable_again(1));
}
