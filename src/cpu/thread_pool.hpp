// thread_pool.hpp - one process-wide pool of persistent worker threads for the CPU backend.
//
// Threads are created once, on first use: one fewer than the CPUs the process may use
// (process_limits.hpp: the affinity mask, the cgroup's CPU quota, CUDOT_NUM_THREADS), so a process
// pinned to one core starts none. A job is a count of independent tasks that the calling thread and
// the workers it needs claim one at a time from a shared counter, so whoever is awake does the work:
// the caller never waits for a worker to wake up, only for the tasks that workers have already claimed.
// Only the workers a job needs are woken. After a job, the workers that took part poll for the next one
// for a while (kSpin in thread_pool.cpp) before they sleep, so dots called back to back find them
// awake; the others sleep, and an idle process has no spinning threads. One job runs at a time;
// concurrent callers (different contexts) take turns. Workers block every asynchronous signal, so the
// application's signals go to its own threads.
//
// The pool is never destroyed: a dot from an atexit handler or a late finalizer still finds it, and
// no thread is joined during process exit or library unload (where joining can deadlock). A child of
// fork() has none of the workers; after_fork_child() drops the parent's pool there, and the child's
// first shared job starts a fresh one.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cudot {
namespace cpu {

class ThreadPool {
   public:
    using Task = void (*)(void *arg, std::size_t index);

    // The process's pool, created on first call with one thread per CPU the process may use (caller
    // included).
    static ThreadPool &instance();

    // pthread_atfork handlers (called from api.cpp's): before fork, wait for a running job and hold
    // the pool still; after it, release it in the parent, or forget it in the child (its workers did
    // not follow; its memory is left as it is).
    static void before_fork();
    static void after_fork_parent();
    static void after_fork_child();

    // Threads available to one job, the calling thread included.
    unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

    // Runs task(arg, i) for every i in [0, count) on up to max_threads threads (0: all), and returns
    // when all are done. Tasks must not throw. Which thread runs which i is unspecified.
    void run(std::size_t count, unsigned max_threads, Task task, void *arg);

    // How many jobs run() has shared with workers since the pool started (for tests).
    std::uint64_t jobs_shared() const { return jobs_shared_.load(std::memory_order_relaxed); }
    // How many times a sleeping worker has been woken for a job (for tests).
    std::uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }

    ThreadPool(const ThreadPool &) = delete;
    ThreadPool &operator=(const ThreadPool &) = delete;

   private:
    // Where a worker sleeps between jobs, so that a job can wake exactly the workers it needs.
    struct alignas(64) Bed {
        std::mutex mutex;
        std::condition_variable wake;
        std::atomic<bool> asleep{false};
        bool woken = false;  // under mutex: a wake is on its way (so it is sent and counted once)
    };

    explicit ThreadPool(unsigned helpers);
    void start_workers(unsigned helpers);
    void worker_main(unsigned index);
    std::uint64_t spin_for_job(std::uint64_t seen);
    std::uint64_t sleep_until_job(unsigned index, std::uint64_t seen);
    bool wake(unsigned index);
    void wake_first_sleeping(unsigned helpers);
    void claim_and_run_tasks();
    void wait_until_no_worker_inside();

    // The current job. run() writes these only while no worker is inside a job (inside_ == 0 after the
    // previous job closed); a worker reads them only after it has entered and seen its job still open.
    Task task_ = nullptr;
    void *arg_ = nullptr;
    std::size_t count_ = 0;
    unsigned helpers_wanted_ = 0;  // workers with index below this take part
    std::atomic<bool> rest_woken_{false};  // the first helper in has woken the job's other sleepers

    // Odd while a job is open (2k - 1 for the k-th job), even once it is closed: a worker that saw an
    // open state enters only if the state has not changed since.
    alignas(64) std::atomic<std::uint64_t> state_{0};
    alignas(64) std::atomic<std::size_t> next_{0};   // the next task index to claim
    alignas(64) std::atomic<unsigned> inside_{0};    // workers that entered the current job
    std::atomic<std::uint64_t> jobs_shared_{0};
    std::atomic<std::uint64_t> wakeups_{0};

    std::mutex job_mutex_;  // one job at a time
    std::unique_ptr<Bed[]> beds_;  // one per worker
    std::vector<std::thread> workers_;
    ThreadPool *abandoned_ = nullptr;  // pools that fork() left behind (thread_pool.cpp), still reachable
};

}  // namespace cpu
}  // namespace cudot
