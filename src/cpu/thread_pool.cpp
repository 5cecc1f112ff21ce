// thread_pool.cpp - see thread_pool.hpp.
//
// A job's life: run() writes the job, publishes it by making state_ odd, wakes one of the sleeping
// workers the job needs (the first helper in wakes the job's other sleepers), and claims tasks itself.
// When no task is left to claim it closes the job (state_ even) and waits until every worker that
// entered has left; the workers that entered are exactly those that may still be running a claimed
// task. A worker that arrives after the close sees the state changed and waits for the next job
// without reading this one.
// Entering (inside_ + 1, then re-reading state_) and closing (state_ store, then reading inside_) are
// sequentially consistent, so at least one side sees the other. So are going to sleep (asleep = true,
// then reading state_) and publishing (state_ store, then reading asleep): a worker either sees the
// job or is seen asleep and woken.
#include "thread_pool.hpp"

#include "fp_env.hpp"
#include "../process/process_limits.hpp"

#include <algorithm>
#include <chrono>

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#endif

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define CUDOT_CPU_RELAX() _mm_pause()
#else
#define CUDOT_CPU_RELAX() std::this_thread::yield()
#endif

namespace cudot {
namespace cpu {

// How long a worker that took part in a job keeps polling for the next one before it sleeps. Long
// enough to cover the gap between two dots in a loop, including a host rewriting a few MiB of input
// between them; short enough that a process which stopped dotting soon has no spinning threads.
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
        pool = new ThreadPool(limits::usable_cpus() - 1);  // never deleted
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

// No beds for no workers: a zero-length array of beds would be held by a pointer just past its cookie,
// which leak checkers do not count as a reference to it.
ThreadPool::ThreadPool(unsigned helpers) : beds_(helpers ? new Bed[helpers] : nullptr) {
    if (helpers > 0) pin_this_module();
    workers_.reserve(helpers);
#if defined(_WIN32)
    start_workers(helpers);
#else
    // A new thread starts with its creator's signal mask: block every asynchronous signal while the
    // workers are created, so that the application's handlers run on its own threads (which may block
    // a signal to have it delivered elsewhere, or wait for it with sigwait). The synchronous ones stay
    // open: a fault in a worker must still reach the handler that reports it.
    sigset_t all, callers;
    sigfillset(&all);
    for (int synchronous : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&all, synchronous);
    const bool masked = pthread_sigmask(SIG_SETMASK, &all, &callers) == 0;
    start_workers(helpers);
    if (masked) pthread_sigmask(SIG_SETMASK, &callers, nullptr);
#endif
}

void ThreadPool::start_workers(unsigned helpers) {
    try {
        for (unsigned i = 0; i < helpers; ++i) workers_.emplace_back(&ThreadPool::worker_main, this, i);
    } catch (...) {
        // Could not start every thread (resource limits): work with the ones we have.
    }
}

void ThreadPool::claim_and_run_tasks() {
    for (;;) {
        const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
        if (i >= count_) return;
        task_(arg_, i);
    }
}

// Wakes worker `index` if it sleeps and no wake is on its way to it; true if this call woke it.
bool ThreadPool::wake(unsigned index) {
    Bed &bed = beds_[index];
    if (!bed.asleep.load(std::memory_order_seq_cst)) return false;  // awake: it will see the job
    std::lock_guard<std::mutex> lock(bed.mutex);  // a worker between its check and its wait holds it
    if (!bed.asleep.load(std::memory_order_relaxed) || bed.woken) return false;
    bed.woken = true;
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    bed.wake.notify_one();
    return true;
}

// The caller wakes one sleeping helper only, to stay off the slow path itself.
void ThreadPool::wake_first_sleeping(unsigned helpers) {
    for (unsigned i = 0; i < helpers; ++i)
        if (wake(i)) return;
}

// Polls for a job other than `seen` for up to kSpin; 0 if none came.
std::uint64_t ThreadPool::spin_for_job(std::uint64_t seen) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned polls = 1;; ++polls) {
        const std::uint64_t s = state_.load(std::memory_order_acquire);
        if (is_open(s) && s != seen) return s;
        if (polls % kPollsPerClockRead == 0) {
            if (std::chrono::steady_clock::now() >= until) return 0;
            std::this_thread::yield();  // should this core have other work, let it run
        } else {
            CUDOT_CPU_RELAX();
        }
    }
}

// Sleeps until a job other than `seen` is open (a job that opened before the sleep began included).
std::uint64_t ThreadPool::sleep_until_job(unsigned index, std::uint64_t seen) {
    Bed &bed = beds_[index];
    std::unique_lock<std::mutex> lock(bed.mutex);
    bed.asleep.store(true, std::memory_order_seq_cst);
    std::uint64_t s = 0;
    for (;;) {
        s = state_.load(std::memory_order_seq_cst);
        if (is_open(s) && s != seen) break;
        bed.woken = false;  // a wake for a job that closed before this worker saw it
        bed.wake.wait(lock);
    }
    bed.woken = false;
    bed.asleep.store(false, std::memory_order_relaxed);
    return s;
}

void ThreadPool::worker_main(unsigned index) {
    DefaultFpEnv fp_env;  // a new thread inherits its creator's FP environment; workers use the default
    std::uint64_t seen = 0;
    bool took_part = false;  // in the last job it saw: only then is the next one worth polling for
    for (;;) {
        std::uint64_t job = took_part ? spin_for_job(seen) : 0;
        if (job == 0) job = sleep_until_job(index, seen);
        seen = job;
        took_part = false;
        inside_.fetch_add(1, std::memory_order_seq_cst);
        if (state_.load(std::memory_order_seq_cst) == job && index < helpers_wanted_) {
            if (!rest_woken_.exchange(true, std::memory_order_relaxed))
                for (unsigned i = 0; i < helpers_wanted_; ++i)
                    if (i != index) wake(i);
            claim_and_run_tasks();
            took_part = true;
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
    rest_woken_.store(false, std::memory_order_relaxed);
    next_.store(0, std::memory_order_relaxed);
    const std::uint64_t open = state_.load(std::memory_order_relaxed) + 1;
    state_.store(open, std::memory_order_seq_cst);
    wake_first_sleeping(helpers);
    claim_and_run_tasks();
    state_.store(open + 1, std::memory_order_seq_cst);  // closed: nobody enters any more
    wait_until_no_worker_inside();
}

}  // namespace cpu
}  // namespace cudot

