// thread_pool.hpp - one process-wide pool of persistent worker threads for the CPU backend.
//
// Threads are created once, on first use, and sleep on a condition variable between jobs, so a dot
// never pays for thread creation. After a job, workers spin for a short while (kSpinMicroseconds)
// before sleeping, so dots called back to back do not pay the wake-up latency each time either. The caller of run() works too, so a job on k threads wakes k - 1
// workers. One job runs at a time; concurrent callers (different contexts) take turns.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace cudot {
namespace cpu {

class ThreadPool {
   public:
    using Task = void (*)(void *arg, std::size_t index);

    // The process's pool, created on first call with one thread per hardware thread (caller included).
    static ThreadPool &instance();

    // Threads available to one job, the calling thread included.
    unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

    // Runs task(arg, i) for every i in [0, count) on up to max_threads threads (0: all), and returns
    // when all are done. Tasks must not throw. Which thread runs which i is unspecified.
    void run(std::size_t count, unsigned max_threads, Task task, void *arg);

    ~ThreadPool();
    ThreadPool(const ThreadPool &) = delete;
    ThreadPool &operator=(const ThreadPool &) = delete;

   private:
    explicit ThreadPool(unsigned helpers);
    void worker_main(unsigned index);
    void drain();

    std::mutex job_mutex_;  // one job at a time
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    std::vector<std::thread> workers_;
    std::atomic<std::uint64_t> generation_{0};  // bumped (under mutex_) for every job; read lock-free while spinning
    std::atomic<bool> stopping_{false};
    // The current job (written under mutex_ before generation_ is bumped).
    Task task_ = nullptr;
    void *arg_ = nullptr;
    std::size_t count_ = 0;
    unsigned helpers_wanted_ = 0;  // workers with index below this join the job
    unsigned helpers_busy_ = 0;    // joined workers not yet finished
    std::atomic<std::size_t> next_{0};
};

}  // namespace cpu
}  // namespace cudot
