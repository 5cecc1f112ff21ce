// thread_pool.cpp - see thread_pool.hpp.
//
// A job's life: run() writes the job, publishes it by making state_ odd, wakes one sleeping worker if
// any (the first worker in wakes the rest), and claims tasks itself. When no task is left to claim it
// closes the job (state_ even) and waits until every worker that entered has left; the workers that
// entered are exactly those that may still be running a claimed task. A worker that was asleep and
// arrives after the close sees the state changed and goes back to waiting without reading the job.
// Entering (inside_ + 1, then re-reading state_) and closing (state_ store, then reading inside_) are
// sequentially consistent, so at least one side sees the other.
#include "thread_pool.hpp"

#include "fp_env.hpp"

#include <algorithm>
#include <chrono>

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define CUDOT_CPU_RELAX() _mm_pause()
#else
#define CUDOT_CPU_RELAX() std::this_thread::yield()
#endif

namespace cudot {
namespace cpu {

// How long an idle worker keeps polling for the next job before it sleeps. Long enough to cover the
// gap between two dots in a loop, including a host rewriting a few MiB of input between them; short
// enough that a process which stopped dotting soon has no spinning threads.
constexpr auto kSpin = std::chrono::microseconds(500);
// Polls between two looks at the clock while spinning (a pause is tens of nanoseconds).
constexpr unsigned kPollsPerClockRead = 64;
// Polls of a caller waiting for workers to finish their last tasks before it starts yielding its core.
constexpr unsigned kPollsBeforeYield = 1u << 16;

namespace {
bool is_open(std::uint64_t state) { return (state & 1) != 0; }
}  // namespace

namespace {
std::atomic<ThreadPool *> the_pool{nullptr};
// Pools a fork() left behind in this process, newest first (kept reachable, so leak checkers see
// memory that is deliberately kept, not lost).
ThreadPool *abandoned_pools = nullptr;
std::mutex &creation_mutex() {
    static std::mutex *m = new std::mutex;  // never destroyed, like the pool
    return *m;
}
}  // namespace

ThreadPool &ThreadPool::instance() {
    ThreadPool *pool = the_pool.load(std::memory_order_acquire);
    if (pool) return *pool;
    std::lock_guard<std::mutex> lock(creation_mutex());
    pool = the_pool.load(std::memory_order_relaxed);
    if (!pool) {
        pool = new ThreadPool(std::max(1u, std::thread::hardware_concurrency()) - 1);  // never deleted
        pool->abandoned_ = abandoned_pools;
        abandoned_pools = nullptr;
        the_pool.store(pool, std::memory_order_release);
    }
    return *pool;
}

void ThreadPool::before_fork() {
    creation_mutex().lock();
    if (ThreadPool *pool = the_pool.load(std::memory_order_acquire)) pool->job_mutex_.lock();
}

void ThreadPool::after_fork_parent() {
    if (ThreadPool *pool = the_pool.load(std::memory_order_acquire)) pool->job_mutex_.unlock();
    creation_mutex().unlock();
}

void ThreadPool::after_fork_child() {
    // The parent's pool stays allocated and locked: its workers do not exist here, and nothing will
    // use it again.
    // A pool exists only while abandoned_pools is empty (its creation took the list over).
    if (ThreadPool *old = the_pool.exchange(nullptr, std::memory_order_acq_rel)) abandoned_pools = old;
    creation_mutex().unlock();
}

namespace {
// Keeps the library that holds this code loaded until the process ends. Workers run its code and are
// never joined, so unloading it under them (FreeLibrary, dlclose) would crash them. Called before the
// first worker starts: a library that never started a worker can still be unloaded.
void pin_this_module() {
    static char anchor;  // any address inside this library (or program, when linked statically)
#if defined(_WIN32)
    HMODULE self = nullptr;
    GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN, &anchor, &self);
#else
    // RTLD_NOLOAD finds the copy already loaded; RTLD_NODELETE makes every later dlclose leave it.
    Dl_info info;
    if (dladdr(&anchor, &info) && info.dli_fname) {
        void *handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        (void)handle;  // a reference that is deliberately never closed
    }
#endif
    // Failure leaves the library as unloadable as before; nothing better can be done here.
}
}  // namespace

ThreadPool::ThreadPool(unsigned helpers) {
    if (helpers > 0) pin_this_module();
    workers_.reserve(helpers);
    try {
        for (unsigned i = 0; i < helpers; ++i) workers_.emplace_back(&ThreadPool::worker_main, this, i);
    } catch (...) {
        // Could not start every thread (resource limits): work with the ones we have.
    }
}

void ThreadPool::drain() {
    for (;;) {
        const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
        if (i >= count_) return;
        task_(arg_, i);
    }
}

void ThreadPool::wake_one_sleeper() {
    { std::lock_guard<std::mutex> lock(sleep_mutex_); }  // a worker between its check and its wait holds it
    wake_.notify_one();
}

// Waits (spinning, then asleep) until a job other than `seen` is open.
std::uint64_t ThreadPool::next_job(std::uint64_t seen) {
    auto fresh = [&](std::uint64_t s) { return is_open(s) && s != seen; };
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned polls = 1;; ++polls) {
        const std::uint64_t s = state_.load(std::memory_order_acquire);
        if (fresh(s)) return s;
        if (polls % kPollsPerClockRead == 0) {
            if (std::chrono::steady_clock::now() >= until) break;
            std::this_thread::yield();  // should this core have other work, let it run
        } else {
            CUDOT_CPU_RELAX();
        }
    }
    std::unique_lock<std::mutex> lock(sleep_mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    std::uint64_t s = 0;
    wake_.wait(lock, [&] {
        s = state_.load(std::memory_order_seq_cst);
        return fresh(s);
    });
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return s;
}

void ThreadPool::worker_main(unsigned index) {
    DefaultFpEnv fp_env;  // a new thread inherits its creator's FP environment; workers use the default
    std::uint64_t seen = 0;
    for (;;) {
        const std::uint64_t job = next_job(seen);
        seen = job;
        inside_.fetch_add(1, std::memory_order_seq_cst);
        if (state_.load(std::memory_order_seq_cst) == job) {
            // The caller wakes one sleeper, to stay off the slow path itself; the first one in wakes the rest.
            if (sleepers_.load(std::memory_order_relaxed) != 0) wake_.notify_all();
            if (index < helpers_wanted_) drain();
        }
        inside_.fetch_sub(1, std::memory_order_release);
    }
}

void ThreadPool::wait_until_no_worker_inside() {
    for (unsigned polls = 0; inside_.load(std::memory_order_seq_cst) != 0; ++polls) {
        if (polls < kPollsBeforeYield)
            CUDOT_CPU_RELAX();
        else
            std::this_thread::yield();
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
    jobs_shared_.fetch_add(1, std::memory_order_relaxed);
    task_ = task;
    arg_ = arg;
    count_ = count;
    helpers_wanted_ = helpers;
    next_.store(0, std::memory_order_relaxed);
    const std::uint64_t open = state_.load(std::memory_order_relaxed) + 1;
    state_.store(open, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) != 0) wake_one_sleeper();
    drain();
    state_.store(open + 1, std::memory_order_seq_cst);  // closed: nobody enters any more
    wait_until_no_worker_inside();
}

}  // namespace cpu
}  // namespace cudot
