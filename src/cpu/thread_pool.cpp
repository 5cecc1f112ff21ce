// thread_pool.cpp - see thread_pool.hpp.
#include "thread_pool.hpp"

#include "fp_env.hpp"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define CUDOT_CPU_RELAX() _mm_pause()
#else
#define CUDOT_CPU_RELAX() std::this_thread::yield()
#endif

namespace cudot {
namespace cpu {

// How long an idle worker keeps polling for the next job before it sleeps. Long enough to cover the
// gap between two dots in a loop, short enough not to burn a core when the caller does other work.
constexpr auto kSpin = std::chrono::microseconds(100);

ThreadPool &ThreadPool::instance() {
    // Function-local static: created on first use, thread-safe, joined at process exit or unload.
    static ThreadPool pool(std::max(1u, std::thread::hardware_concurrency()) - 1);
    return pool;
}

ThreadPool::ThreadPool(unsigned helpers) {
    workers_.reserve(helpers);
    try {
        for (unsigned i = 0; i < helpers; ++i) workers_.emplace_back(&ThreadPool::worker_main, this, i);
    } catch (...) {
        // Could not start every thread (resource limits): work with the ones we have.
    }
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto &t : workers_) t.join();
}

void ThreadPool::drain() {
    for (;;) {
        std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
        if (i >= count_) return;
        task_(arg_, i);
    }
}

void ThreadPool::worker_main(unsigned index) {
    DefaultFpEnv fp_env;  // a new thread inherits its creator's FP environment; workers use the default
    std::uint64_t seen = 0;
    for (;;) {
        const auto until = std::chrono::steady_clock::now() + kSpin;
        while (generation_.load(std::memory_order_acquire) == seen && !stopping_.load(std::memory_order_relaxed) &&
               std::chrono::steady_clock::now() < until)
            for (int i = 0; i < 64; ++i) CUDOT_CPU_RELAX();
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stopping_.load() || generation_.load() != seen; });
            if (stopping_) return;
            seen = generation_.load();
            if (index >= helpers_wanted_) continue;  // this job is too small to need us
        }
        drain();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (--helpers_busy_ == 0) done_.notify_one();
        }
    }
}

void ThreadPool::run(std::size_t count, unsigned max_threads, Task task, void *arg) {
    if (count == 0) return;
    unsigned threads = max_threads == 0 ? this->threads() : std::min(max_threads, this->threads());
    unsigned helpers = static_cast<unsigned>(std::min<std::size_t>(threads - 1, count - 1));
    if (helpers == 0) {
        for (std::size_t i = 0; i < count; ++i) task(arg, i);
        return;
    }
    std::lock_guard<std::mutex> job(job_mutex_);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        task_ = task;
        arg_ = arg;
        count_ = count;
        next_.store(0, std::memory_order_relaxed);
        helpers_wanted_ = helpers;
        helpers_busy_ = helpers;
        generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    drain();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return helpers_busy_ == 0; });
}

}  // namespace cpu
}  // namespace cudot
