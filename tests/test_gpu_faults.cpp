// test_gpu_faults.cpp - what a caller sees when a CUDA call fails: inside cudot_init, inside a dot,
// inside cudot_deinit. Failures are injected through a test-only hook (testing.hpp) that makes
// the k-th checked CUDA call report an error after it was really made, so every clean-up path runs
// with whatever that call did take. Each case walks k over every CUDA call of the operation.
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "knobs.hpp"
#include "reference.hpp"
#include "testing.hpp"

using test::Ctx;

namespace {

const int32_t kStrategies[] = {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO};

// Each case runs on device 0 and on a CUDOT_DEVICE_ALL context over device 0 listed twice (the test
// hook), so the several-GPU paths' clean-up is walked too, on any GPU machine.
struct Placement {
    int32_t device;
    std::vector<int> forced;
    const char *name;
};
const Placement kPlacements[] = {{0, {}, "device 0"}, {CUDOT_DEVICE_ALL, {0, 0}, "device 0 twice as ALL"}};

std::size_t device_free_bytes() {
    std::size_t free_bytes = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
    return free_bytes;
}

// Free device memory once a context like the walk's has been built and destroyed cleanly. The first
// context of a kind may leave the driver holding memory for good (on an H100 the first context over
// device 0 listed twice kept 2 MiB, once per process, however many contexts followed); that is the
// driver's pool, not the context's to give back, so the walk is measured from after it.
std::size_t free_bytes_after_one_context(int32_t memory, int32_t device, std::size_t n) {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = memory;
    c.device = device;
    cudot_ctx *ctx = nullptr;
    REQUIRE(cudot_init(&ctx, n, &c) == CUDOT_OK);
    REQUIRE(cudot_deinit(ctx) == CUDOT_OK);
    return device_free_bytes();
}

// Fills x and y with small integers, so every strategy gives the exact value n * (n - 1) / 2 mod-free.
void fill_counts(Ctx &c, std::size_t n) {
    float *x = c.x<float>(), *y = c.y<float>();
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = static_cast<float>(i % 1000);
        y[i] = 1.0f;
    }
}

double expected_counts(std::size_t n) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(i % 1000);
    return sum;
}

// A message that names the failing CUDA call and CUDA's own error name.
bool names_a_cuda_call(const std::string &message, const char *error_name) {
    return message.find(" failed: ") != std::string::npos && message.find(error_name) != std::string::npos;
}

}  // namespace

TEST_CASE("GPU faults: a CUDA failure at any call of cudot_init frees everything it took", "[gpu][faults]") {
    const std::size_t n = (std::size_t(1) << 24) + 3;  // 64 MiB a buffer: a leak would show in free memory
    for (const Placement &place : kPlacements)
    for (int32_t memory : kStrategies) {
        const test::ForcedDevices forced(place.forced);
        const std::size_t before = free_bytes_after_one_context(memory, place.device, n);
        unsigned fired = 0;
        for (unsigned k = 0;; ++k) {
            INFO(test::memory_name(memory) << ", " << place.name << ": fault at CUDA call " << k << " of init");
            const int code = k % 2 ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
            test::InjectedCudaFault fault(k, code);
            cudot_config c = CUDOT_CONFIG_INIT;
            c.memory = memory;
            c.device = place.device;
            cudot_ctx *ctx = reinterpret_cast<cudot_ctx *>(std::uintptr_t(0x1));
            const cudot_status s = cudot_init(&ctx, n, &c);
            if (cudot::testing::cuda_fault_pending()) {  // init made fewer than k + 1 CUDA calls: done
                fault.cancel();
                REQUIRE(s == CUDOT_OK);
                cudot_deinit(ctx);
                break;
            }
            ++fired;
            if (memory == CUDOT_MEMORY_AUTO && s == CUDOT_OK) {  // the GPU probe failed: AUTO fell back
                int32_t resolved = 0;
                CHECK(cudot_get_memory(ctx, &resolved, nullptr) == CUDOT_OK);
                CHECK(resolved == CUDOT_MEMORY_HOST);
                cudot_deinit(ctx);
                continue;
            }
            const std::string message = cudot_last_error(nullptr);
            INFO(message);
            CHECK(ctx == nullptr);
            CHECK(s == (code == cudaErrorMemoryAllocation ? CUDOT_ERROR_OUT_OF_MEMORY : CUDOT_ERROR_CUDA));
            CHECK(names_a_cuda_call(message, code == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation"
                                                                                : "cudaErrorInvalidValue"));
            REQUIRE(k < 100);
        }
        CHECK(fired >= 5);  // every strategy makes at least this many checked calls while building
        // Nothing kept: free device memory back where it was (1 MiB of slack for the driver's own pools).
        const std::size_t after = device_free_bytes();
        INFO(test::memory_name(memory) << ", " << place.name << ": " << fired << " faults; free before " << before
                                       << " after " << after);
        CHECK(after + (std::size_t(1) << 20) >= before);
    }
}

TEST_CASE("GPU faults: a dot whose CUDA call fails reports it, and the context and others keep working",
          "[gpu][faults]") {
    const std::size_t n = 3 * 8192 * 100 + 17;
    const double expected = expected_counts(n);
    for (const Placement &place : kPlacements)
    for (int32_t memory : kStrategies) {
        const test::ForcedDevices forced(place.forced);
        Ctx c(n, CUDOT_F32, memory, place.device);
        Ctx other(n, CUDOT_F32, memory, place.device);
        REQUIRE(c.status == CUDOT_OK);
        REQUIRE(other.status == CUDOT_OK);
        fill_counts(c, n);
        fill_counts(other, n);
        if (memory == CUDOT_MEMORY_AUTO) cudot::testing::set_hybrid_share(c.ctx, 0.5);  // the GPU half runs
        unsigned fired = 0;
        for (unsigned k = 0;; ++k) {
            INFO(test::memory_name(memory) << ", " << place.name << ": fault at CUDA call " << k << " of a dot");
            test::InjectedCudaFault fault(k, cudaErrorLaunchFailure);
            double r = -1;
            const cudot_status s = cudot_dot(c.ctx, &r);
            if (cudot::testing::cuda_fault_pending()) {
                fault.cancel();
                CHECK(s == CUDOT_OK);
                CHECK(r == expected);
                break;
            }
            ++fired;
            const std::string message = cudot_last_error(c.ctx);
            INFO(message);
            CHECK(s == CUDOT_ERROR_CUDA);
            CHECK(names_a_cuda_call(message, "cudaErrorLaunchFailure"));
            // The same context answers correctly on the next call, and so does another one.
            CHECK(c.dot() == expected);
            CHECK(other.dot() == expected);
            REQUIRE(k < 100);
        }
        CHECK(fired >= 2);
    }
}

TEST_CASE("GPU faults: deinit that meets a CUDA failure still destroys the context", "[gpu][faults]") {
    const std::size_t n = (std::size_t(1) << 24) + 3;
    for (const Placement &place : kPlacements)
    for (int32_t memory : kStrategies) {
        const test::ForcedDevices forced(place.forced);
        const std::size_t before = free_bytes_after_one_context(memory, place.device, n);
        unsigned fired = 0;
        for (unsigned k = 0;; ++k) {
            INFO(test::memory_name(memory) << ", " << place.name << ": fault at CUDA call " << k << " of deinit");
            cudot_config c = CUDOT_CONFIG_INIT;
            c.memory = memory;
            c.device = place.device;
            cudot_ctx *ctx = nullptr;
            REQUIRE(cudot_init(&ctx, n, &c) == CUDOT_OK);
            test::InjectedCudaFault fault(k, cudaErrorInvalidValue);
            const cudot_status s = cudot_deinit(ctx);
            const std::string message = cudot_last_error(nullptr);  // before the next deinit rewrites it
            const bool pending = cudot::testing::cuda_fault_pending();
            fault.cancel();
            // Gone either way: the registry refuses the stale handle without reading it.
            CHECK(cudot_deinit(ctx) == CUDOT_ERROR_INVALID_ARGUMENT);
            if (pending) {
                CHECK(s == CUDOT_OK);
                break;
            }
            ++fired;
            CHECK(s == CUDOT_ERROR_CUDA);
            // The message names the failing call and CUDA's error, where cudot_last_error(NULL) reads it.
            INFO("cudot_last_error(NULL): " << message);
            CHECK(message.find(" failed: ") != std::string::npos);
            CHECK(message.find("cudaErrorInvalidValue") != std::string::npos);
            REQUIRE(k < 100);
        }
        CHECK(fired >= 3);
        const std::size_t after = device_free_bytes();
        INFO(test::memory_name(memory) << ", " << place.name << ": " << fired << " faults; free before " << before
                                       << " after " << after);
        CHECK(after + (std::size_t(1) << 20) >= before);
    }
}

TEST_CASE("GPU faults: the probe says 'cannot run this build's kernels' only when that is the reason",
          "[gpu][faults]") {
    // The probe's checked calls for a PINNED init on device 0: cudaSetDevice, then loading the kernel.
    struct Case {
        int code;
        cudot_status status;
        const char *says;
    };
    const Case cases[] = {{cudaErrorNoKernelImageForDevice, CUDOT_ERROR_NO_DEVICE, "cannot run this build's kernels"},
                          {cudaErrorLaunchFailure, CUDOT_ERROR_CUDA, "loading the dot kernel) failed"},
                          {cudaErrorMemoryAllocation, CUDOT_ERROR_OUT_OF_MEMORY, "loading the dot kernel) failed"}};
    for (const Case &c : cases) {
        INFO("injected " << cudaGetErrorName(static_cast<cudaError_t>(c.code)));
        test::InjectedCudaFault fault(1, c.code);
        Ctx ctx(1000, CUDOT_F32, CUDOT_MEMORY_PINNED);
        fault.cancel();
        CHECK(ctx.status == c.status);
        CHECK(ctx.init_error.find(c.says) != std::string::npos);
        if (c.status != CUDOT_ERROR_NO_DEVICE)
            CHECK(ctx.init_error.find("cannot run this build's kernels") == std::string::npos);
    }
}
