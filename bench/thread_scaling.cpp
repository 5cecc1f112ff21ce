// thread_scaling.cpp - see thread_scaling.hpp.
#include "thread_scaling.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "cudot.h"
#include "inputs.hpp"

namespace bench {
namespace {

struct Worker {
    long long dots = 0;
    double end_us = 0;
    double last = 0;
    bool ok = false;
};

// What every worker shares: the start line and the finish time.
struct Start {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::atomic<bool> abort{false};  // set when a context fails: nobody waits for it
    double deadline_us = 0;          // written before `go`, read after it
};

void wait_for(const std::atomic<bool> &flag, const std::atomic<bool> &abort) {
    while (!flag.load(std::memory_order_acquire) && !abort.load(std::memory_order_acquire)) std::this_thread::yield();
}

// One thread: its own context, filled and warmed up before the start, then dots until the deadline.
void work(int memory, std::size_t n, Start &start, Worker &w) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.memory = memory;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) {
        std::fprintf(stderr, "bench: thread context: %s\n", cudot_last_error(nullptr));
        start.abort.store(true, std::memory_order_release);
        return;
    }
    void *x, *y;
    cudot_get_inputs(ctx, &x, &y);
    rewrite(static_cast<float *>(x), static_cast<float *>(y), n, 0);
    w.ok = true;
    for (int i = 0; i < 20 && w.ok; ++i) w.ok = cudot_dot(ctx, &w.last) == CUDOT_OK;
    start.ready.fetch_add(1, std::memory_order_acq_rel);
    wait_for(start.go, start.abort);
    if (!start.abort.load(std::memory_order_acquire)) {
        for (; w.ok && now_us() < start.deadline_us; ++w.dots) w.ok = cudot_dot(ctx, &w.last) == CUDOT_OK;
        if (!w.ok) std::fprintf(stderr, "bench: thread dot failed: %s\n", cudot_last_error(ctx));
    }
    w.end_us = now_us();
    cudot_deinit(ctx);
}

}  // namespace

bool measure_scaling(int memory, int threads, std::size_t n, double seconds, ScalingRun *out) {
    std::vector<float> rx(n), ry(n);  // the values every thread writes, for the reference
    rewrite(rx.data(), ry.data(), n, 0);
    const double reference = host_reference(CUDOT_F32, rx.data(), ry.data(), n);

    Start start;
    std::vector<Worker> workers(threads);
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k) pool.emplace_back(work, memory, n, std::ref(start), std::ref(workers[k]));
    while (start.ready.load(std::memory_order_acquire) < threads && !start.abort.load(std::memory_order_acquire))
        std::this_thread::yield();
    const double t0 = now_us();
    start.deadline_us = t0 + seconds * 1e6;
    start.go.store(true, std::memory_order_release);
    for (std::thread &t : pool) t.join();

    out->threads = threads;
    out->n = n;
    out->dots = 0;
    out->checked = true;
    double end = t0;
    for (const Worker &w : workers) {
        if (!w.ok) return false;
        out->dots += w.dots;
        out->checked = out->checked && same_bits(w.last, reference);
        end = std::max(end, w.end_us);
    }
    out->seconds = (end - t0) * 1e-6;
    out->dots_per_s = out->seconds > 0 ? out->dots / out->seconds : 0;
    return true;
}

}  // namespace bench
