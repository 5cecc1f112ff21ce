// pool_workers.cpp - the thread pool's workers compute in the default floating-point environment even
// when the thread that starts the pool has flush-to-zero and round-toward-zero set (new threads inherit
// their creator's control register). A process of its own, so that this is the pool's first use.
// Prints "pool workers OK", or "SKIPPED: ..." where it cannot check, and exits 1 on a failure.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "caller_fp_mode.h"
#include "cpu/thread_pool.hpp"

namespace {

struct Record {
    std::thread::id thread;
    float product;  // a subnormal times 2: flushed to zero under FTZ/DAZ or FZ
    std::uint64_t control;
};

struct Job {
    std::vector<Record> records;
    volatile float subnormal = 0x1p-140f;
};

void task(void *arg, std::size_t i) {
    Job &job = *static_cast<Job *>(arg);
    // Long enough that sleeping workers wake and take tasks before the caller runs them all.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(300);
    while (std::chrono::steady_clock::now() < until) {
    }
    job.records[i] = Record{std::this_thread::get_id(), job.subnormal * 2.0f, caller_fp_control()};
}

}  // namespace

int main() {
#if !CALLER_FP_MODE_AVAILABLE
    std::puts("SKIPPED: no floating-point control register known to the tests on this processor");
    return 0;
#else
    const std::uint64_t flush = caller_fp_flush_toward_zero();
    caller_fp_set_control(flush);
    cudot::cpu::ThreadPool &pool = cudot::cpu::ThreadPool::instance();  // started here, under FTZ
    if (pool.threads() < 2) {
        std::puts("SKIPPED: the pool has no workers here (one CPU)");
        return 0;
    }
    Job job;
    job.records.resize(64);
    int failures = 0;
    bool worker_seen = false;
    for (int round = 0; round < 20 && !worker_seen; ++round) {
        pool.run(job.records.size(), 0, task, &job);
        for (const Record &r : job.records) {
            if (r.thread == std::this_thread::get_id()) continue;  // the caller's own mode is the caller's
            worker_seen = true;
            if (r.product != 0x1p-139f || r.control != caller_fp_default()) {
                std::printf("a worker computed %a (expected %a) with control register %#llx (expected %#llx)\n",
                            static_cast<double>(r.product), 0x1p-139, static_cast<unsigned long long>(r.control),
                            static_cast<unsigned long long>(caller_fp_default()));
                ++failures;
            }
        }
    }
    if (caller_fp_control() != flush) {
        std::puts("the caller's mode was changed");
        ++failures;
    }
    caller_fp_set_control(caller_fp_default());
    if (!worker_seen) {
        std::puts("SKIPPED: no task ran on a worker in 20 rounds");
        return 0;
    }
    if (failures) return 1;
    std::puts("pool workers OK");
    return 0;
#endif
}
