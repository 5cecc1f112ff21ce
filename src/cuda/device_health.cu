// device_health.cu - see device_health.hpp.
#include "device_health.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

#include "caller_state.hpp"
#include "cuda_check.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

std::uint64_t wait_bound_ms(const cudot_ctx &ctx, std::size_t bytes) {
    return ctx.wait_ms == CUDOT_DEFAULT_WAIT_MS ? default_wait_ms(bytes) : ctx.wait_ms;
}

namespace {

struct StuckWork {
    int device;
    cudaEvent_t after;  // recorded behind the work that ran out of time
};

constexpr int kMaxDevices = 256;
std::atomic<int> in_flight[kMaxDevices];
std::atomic<int> stuck_count{0};  // entries in stuck_work(): the fast path of is_stuck
std::mutex stuck_mutex;
std::vector<StuckWork> &stuck_work() {
    static std::vector<StuckWork> *w = new std::vector<StuckWork>;  // never destroyed: read at exit too
    return *w;
}

std::atomic<int> *in_flight_of(int device) {
    return device >= 0 && device < kMaxDevices ? &in_flight[device] : nullptr;
}

}  // namespace

void mark_stuck(int device, cudaStream_t stream) {
    cudaEvent_t after = nullptr;
    if (use_primary_context(device) != cudaSuccess ||
        note(cudaEventCreateWithFlags(&after, cudaEventDisableTiming)) != cudaSuccess)
        after = nullptr;
    if (after && note(cudaEventRecord(after, stream)) != cudaSuccess) {
        (void)cudaEventDestroy(after);
        after = nullptr;
    }
    // Without an event the mark can never clear: the device stays refused, which is safe.
    std::lock_guard<std::mutex> lock(stuck_mutex);
    stuck_work().push_back(StuckWork{device, after});
    stuck_count.fetch_add(1, std::memory_order_release);
}

bool is_stuck(int device) {
    if (stuck_count.load(std::memory_order_acquire) == 0) return false;
    std::lock_guard<std::mutex> lock(stuck_mutex);
    std::vector<StuckWork> &work = stuck_work();
    bool stuck = false;
    for (std::size_t i = 0; i < work.size();) {
        StuckWork &w = work[i];
        if (w.device != device) {
            ++i;
            continue;
        }
        const cudaError_t e = w.after && use_primary_context(device) == cudaSuccess ? note(cudaEventQuery(w.after)) : cudaErrorNotReady;
        if (e == cudaErrorNotReady) {
            stuck = true;
            ++i;
            continue;
        }
        // Ended after all (or the context failed for good, and nothing will wait on it): forget it.
        (void)cudaEventDestroy(w.after);
        work.erase(work.begin() + static_cast<std::ptrdiff_t>(i));
        stuck_count.fetch_sub(1, std::memory_order_release);
    }
    return stuck;
}

cudot_status refuse_stuck(ErrorSink err, int device, const char *what) {
    return fail(err, CUDOT_ERROR_CUDA,
                "%s: GPU %d still has work that an earlier call gave up waiting for (cudot_config.wait_ms), and "
                "CUDA would wait for it without end",
                what, device);
}

InFlight::InFlight(const DeviceState &s) : s_(s) {
    for (const Gpu &g : s_.gpus)
        if (std::atomic<int> *count = in_flight_of(g.device)) count->fetch_add(1, std::memory_order_acq_rel);
}

InFlight::~InFlight() {
    for (const Gpu &g : s_.gpus)
        if (std::atomic<int> *count = in_flight_of(g.device)) count->fetch_sub(1, std::memory_order_acq_rel);
}

bool wait_until_idle(int device) {
    std::atomic<int> *count = in_flight_of(device);
    for (unsigned round = 0;; ++round) {
        if (is_stuck(device)) return false;
        if (!count || count->load(std::memory_order_acquire) == 0) return true;
        if (round < 64)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

static inline void relax() {
#if defined(__x86_64__) || defined(_M_X64)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
}

// One read of the slot: true and the result once the kernel has written it.
static inline bool take_result(const Completion *slot, double *result) {
    const std::uint64_t bits = reinterpret_cast<const volatile std::uint64_t *>(&slot->result_bits)[0];
    if (bits == kNoResult) return false;
    std::memcpy(result, &bits, sizeof bits);
    return true;
}

// Whether every one of w's slots is written; `ready` counts those already seen, so each is read once
// after it lands.
static inline bool take_results(const GpuWait &w, std::size_t &ready, double *result) {
    for (; ready < w.slots; ++ready) {
        double ignored;
        if (!take_result(w.slot + ready, ready == 0 ? result : &ignored)) return false;
    }
    return true;
}

cudot_status wait_gpu(const GpuWait &w, double *result, ErrorSink err) {
    using Clock = std::chrono::steady_clock;
    constexpr auto kQueryEvery = std::chrono::microseconds(20), kSpinFor = std::chrono::microseconds(200);
    const auto start = Clock::now();
    auto next_query = start + kQueryEvery;
    std::size_t ready = 0;
    // Before the stream is known to be done: the slot alone settles a wait that needs only the result.
    const bool slot_settles = w.slot && !w.whole_stream;
    for (;;) {
        for (int i = 0; i < 32; ++i) {
            if (slot_settles && take_results(w, ready, result)) return CUDOT_OK;
            relax();
        }
        const auto now = Clock::now();
        if (now < next_query) continue;
        next_query = now + kQueryEvery;
        // Not a fault-injection point: how often it runs depends on timing, and the fault walks of the
        // tests need the same sequence of checked calls every time.
        const cudaError_t e = note(cudaStreamQuery(w.stream));
        if (e == cudaSuccess) {
            if (!w.slot || take_results(w, ready, result)) return CUDOT_OK;
            return fail(err, CUDOT_ERROR_INTERNAL, "%s ended without its result", w.what);
        }
        if (e != cudaErrorNotReady) {
            char call[128];
            std::snprintf(call, sizeof call, "cudaStreamQuery (%s)", w.what);
            return cuda_fail(err, e, call);
        }
        if (now > w.deadline) {
            mark_stuck(w.device, w.stream);
            if (w.gave_up) *w.gave_up = true;
            return fail(err, CUDOT_ERROR_CUDA, "GPU %d did not finish %s within %llu ms%s", w.device, w.what,
                        static_cast<unsigned long long>(w.bound_ms), w.then);
        }
        if (now - start > kSpinFor) std::this_thread::yield();
    }
}

}  // namespace cuda
}  // namespace cudot
