// testing.cpp - the testing unit: the knobs of testing.hpp, and the answers to the seams (seams.hpp) that
// the test build compiles into the library. Linked only into the test build (CMake's cudot_testing).
#include "testing.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "../core/context.hpp"
#include "../cpu/cpu_backend.hpp"
#include "../cpu/thread_pool.hpp"
#include "../cuda/cuda_backend.hpp"
#include "../process/input_buffers.hpp"
#include "../api/own_arrays.hpp"
#include "../core/seams.hpp"
#include "testing_cuda.hpp"

namespace cudot {

namespace {

// Thread-local knobs: a test's fault or forced GPUs never reach another thread's calls.
thread_local long fault_countdown = -1;  // the calls left before the injected fault; negative: none
thread_local int fault_code = 0;
thread_local bool throw_next_lookup = false;
thread_local bool no_concurrent_managed_on = false;
thread_local std::vector<int> forced_gpus;

std::atomic<int> host_pipeline{0};
std::atomic<unsigned> build_delay_ms{0};
std::atomic<bool> software_fma_on{false};

// A fake cgroup tree, published through an atomic pointer rather than under a lock: a fork() while
// another thread held that lock would leave it held in the child, whose first init would then wait for
// it forever. Every tree stays allocated until exit: a concurrent init may still read a replaced one.
struct FakeCgroup {
    std::string root, self;
};
std::atomic<const FakeCgroup *> fake_cgroup_tree{nullptr};

// Fixed CPU+GPU splits of AUTO contexts, by the context's serial (an address may be reused).
std::mutex splits_mutex;
std::map<std::uint64_t, double> &fixed_splits() {
    static std::map<std::uint64_t, double> *m = new std::map<std::uint64_t, double>;
    return *m;
}

}  // namespace

namespace seams {
void lookup() {
    if (!throw_next_lookup) return;
    throw_next_lookup = false;
    throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur), "test hook");
}
bool fake_cgroup(std::string &root, std::string &self_cgroup) {
    const FakeCgroup *fake = fake_cgroup_tree.load(std::memory_order_acquire);
    if (!fake) return false;
    root = fake->root;
    self_cgroup = fake->self;
    return true;
}
void kernel_table_build() {
    if (const unsigned ms = build_delay_ms.load(std::memory_order_relaxed))
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}
bool software_fma() { return software_fma_on.load(std::memory_order_relaxed); }
int cuda_result(int error) {
    if (fault_countdown < 0) return error;
    return fault_countdown-- == 0 ? fault_code : error;
}
bool forced_devices(std::vector<int> &devices) {
    if (forced_gpus.empty()) return false;
    devices = forced_gpus;
    return true;
}
bool no_concurrent_managed() { return no_concurrent_managed_on; }
int host_pipeline_mode() { return host_pipeline.load(std::memory_order_relaxed); }
bool fixed_split(const cudot_ctx &ctx, double *share) {
    std::lock_guard<std::mutex> lock(splits_mutex);
    auto it = fixed_splits().find(ctx.serial);
    if (it == fixed_splits().end()) return false;
    *share = it->second;
    return true;
}
}  // namespace seams

namespace testing {

void set_cpu_threads(cudot_ctx *ctx, unsigned threads) { ctx->pool.max_threads = threads ? threads : ~0u; }
void set_cpu_always_parallel(cudot_ctx *ctx, bool on) {
    const PoolUse normal = cpu::pool_use(ctx->dtype, ctx->y_dtype);
    ctx->pool.from_bytes = on ? 0 : normal.from_bytes;
    ctx->pool.measured = on ? false : normal.measured;
}
void set_cpu_parallel_bytes(cudot_ctx *ctx, std::size_t bytes) {
    const PoolUse normal = cpu::pool_use(ctx->dtype, ctx->y_dtype);
    ctx->pool.from_bytes = bytes ? bytes : normal.from_bytes;
    ctx->pool.measured = bytes ? false : normal.measured;
}
unsigned long long cpu_pool_jobs() { return cpu::ThreadPool::instance().jobs_shared(); }
unsigned cpu_pool_threads() { return cpu::ThreadPool::instance().threads(); }
unsigned long long cpu_pool_wakeups() { return cpu::ThreadPool::instance().wakeups(); }

void use_cgroup_tree(const char *root, const char *self_cgroup) {
    static std::mutex mutex;
    static std::vector<std::unique_ptr<FakeCgroup>> *trees = new std::vector<std::unique_ptr<FakeCgroup>>;
    std::lock_guard<std::mutex> lock(mutex);
    const FakeCgroup *fake = nullptr;
    if (root) {
        trees->push_back(std::unique_ptr<FakeCgroup>(new FakeCgroup{root, self_cgroup ? self_cgroup : ""}));
        fake = trees->back().get();
    }
    fake_cgroup_tree.store(fake, std::memory_order_release);
}
void delay_tile_kernel_build(unsigned ms) { build_delay_ms.store(ms, std::memory_order_relaxed); }
void set_software_fma(bool on) { software_fma_on.store(on, std::memory_order_relaxed); }

void set_gpu_blocks(cudot_ctx *ctx, unsigned blocks) { testing_cuda::set_gpu_blocks(*ctx, blocks); }
void set_hybrid_share(cudot_ctx *ctx, double share) {
    std::lock_guard<std::mutex> lock(splits_mutex);
    if (share < 0) fixed_splits().erase(ctx->serial);
    else fixed_splits()[ctx->serial] = share;
}
double hybrid_share(const cudot_ctx *ctx) {
    double share = 0;
    if (ctx->hybrid && seams::fixed_split(*ctx, &share)) return share;
    return auto_split_share(*ctx);
}
std::size_t auto_on_gpus(const cudot_ctx *ctx) { return auto_elements_on_gpus(*ctx); }
AutoCounts auto_counts(const cudot_ctx *ctx) { return cudot::auto_counts(*ctx); }

void inject_cuda_fault(unsigned calls_before, int cuda_error) {
    fault_countdown = cuda_error ? static_cast<long>(calls_before) : -1;
    fault_code = cuda_error;
}
bool cuda_fault_pending() { return fault_countdown >= 0; }
void pretend_no_concurrent_managed(bool on) { no_concurrent_managed_on = on; }
void throw_on_next_lookup() { throw_next_lookup = true; }
void hold_gpu_kernels(bool on) { testing_cuda::hold_kernels(-1, on); }
void hold_gpu_device_kernels(int device, bool on) { testing_cuda::hold_kernels(device, on); }
unsigned long long default_gpu_wait_ms(std::size_t bytes) { return cuda::default_wait_ms(bytes); }
void force_all_devices(const int *devices, int count) { forced_gpus.assign(devices, devices + std::max(count, 0)); }
void set_host_pipeline(int mode) { host_pipeline.store(mode, std::memory_order_relaxed); }
void release_own_array_state() { cuda::release_stream_state(); }
std::size_t kept_stream_workspaces(int device) { return cuda::kept_stream_workspaces(device); }
std::size_t kept_buffer_ranges() { return buffers::kept_ranges(); }
void hold_library_lock(int which, unsigned ms, std::atomic<bool> *held) {
    if (which == 0) buffers::hold_lock(ms, held);
    else arrays::hold_lock(ms, held);
}

std::string changed_knobs() {
    std::string names;
    auto note = [&](bool changed, const char *name) {
        if (!changed) return;
        if (!names.empty()) names += ", ";
        names += name;
    };
    note(fault_countdown >= 0, "inject_cuda_fault");
    note(throw_next_lookup, "throw_on_next_lookup");
    note(no_concurrent_managed_on, "pretend_no_concurrent_managed");
    note(!forced_gpus.empty(), "force_all_devices");
    note(host_pipeline.load() != 0, "set_host_pipeline");
    note(build_delay_ms.load() != 0, "delay_tile_kernel_build");
    note(software_fma_on.load(), "set_software_fma");
    note(fake_cgroup_tree.load() != nullptr, "use_cgroup_tree");
    note(testing_cuda::any_kernels_held(), "hold_gpu_kernels");
    return names;
}

}  // namespace testing

#if !defined(CUDOT_TESTING_CUDA)
// A build without CUDA: no GPU to hold or to launch on.
namespace testing_cuda {
void set_gpu_blocks(cudot_ctx &, unsigned) {}
void hold_kernels(int, bool) {}
bool any_kernels_held() { return false; }
}  // namespace testing_cuda
#endif

}  // namespace cudot
