// stress.hpp - the concurrency stress shared by test_stress (HOST, runs everywhere, clean under
// ThreadSanitizer) and test_stress_gpu (GPU strategies; skipped without a GPU).
//
// Many threads pull operations from one counter until the total is reached. Each operation is one of:
//  - a private cycle: init a context of a random size, element-type pair and strategy, check what the
//    getters report, fill it, dot and dot_n (checked exactly), provoke a failure and check the message,
//    dot again (the context must still work), refill, dot, deinit;
//  - a dot or dot_n on one of a few shared contexts, under a shared lock, checked exactly;
//  - a swap: under the exclusive lock, deinit a shared context and put a new one, of another size and
//    type, in its place (init/deinit interleaved with other threads' dots on the other shared contexts);
//  - calls that must fail on a shared context (dot_n beyond capacity), plus the read-only getters;
//  - a failing cudot_init whose message must be this thread's own.
// The integer-valued inputs make every dot exact in double whatever the summation order, so results
// are compared with ==. Two shared contexts hold random floats instead; their expected value is the
// bits of a dot computed single-threaded on a separate HOST context before the threads start.
//
// Catch2's assertions are not thread-safe: threads count failures and keep the first messages; the
// calling thread checks them.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "reference.hpp"
#include "testing.hpp"

#include "windows_h.hpp"

namespace stress {

// The slots' reader-writer lock. On Windows, MinGW-w64's std::shared_mutex is winpthreads'
// pthread_rwlock, which at times lets a reader in beside a writer (measured under wine: a writer saw
// readers in up to ~200 of 400,000 lock operations, 32 threads; Windows' own SRWLOCK: none in the same
// program), so the harness would deinit a context while other threads were still using it and blame
// cudot. There the slots use an SRWLOCK; it satisfies what std::shared_lock and std::unique_lock need.
#if defined(_WIN32)
class SlotLock {
public:
    SlotLock() = default;
    SlotLock(const SlotLock &) = delete;
    SlotLock &operator=(const SlotLock &) = delete;
    void lock() { AcquireSRWLockExclusive(&lock_); }
    void unlock() { ReleaseSRWLockExclusive(&lock_); }
    void lock_shared() { AcquireSRWLockShared(&lock_); }
    void unlock_shared() { ReleaseSRWLockShared(&lock_); }

private:
    SRWLOCK lock_ = SRWLOCK_INIT;
};
#else
using SlotLock = std::shared_mutex;
#endif

struct Options {
    std::vector<int32_t> memories;  // strategies for private contexts and shared slots, picked in turn
    int threads = 32;
    long ops = 10000;
    int int_slots = 4;         // shared contexts with integer inputs (these get swapped)
    bool random_slots = true;  // plus two shared contexts of random F32 and F64 values
    std::size_t max_n = 300000;
    int parallel_percent = 25;  // share of HOST contexts sent through the thread pool even when small
    std::uint64_t seed = 1;
};

struct Report {
    long ops = 0;
    long private_cycles = 0, shared_dots = 0, swaps = 0, refused_calls = 0, failed_inits = 0;
    long dots_checked = 0;  // every dot and dot_n whose value was compared
    long failures = 0;
    double seconds = 0;
    std::vector<std::string> first_failures;
};

// Environment overrides: CUDOT_STRESS_OPS, CUDOT_STRESS_THREADS, CUDOT_STRESS_SEED.
inline long env_long(const char *name, long fallback) {
    const char *v = std::getenv(name);
    if (!v || !*v) return fallback;
    char *end = nullptr;
    long r = std::strtol(v, &end, 10);
    return end && *end == '\0' && r > 0 ? r : fallback;
}

// Inputs x[i] = X[(i + ox) % 7], y[i] = Y[(i + oy) % 5]: small integers (non-negative for U8), exact in
// every element type, so the dot of any prefix is an integer far below 2^53.
struct Pattern {
    int32_t xd = CUDOT_F32, yd = CUDOT_F32;
    std::size_t n = 0;
    unsigned ox = 0, oy = 0;

    static int xv(int32_t dtype, std::size_t k) { return dtype == CUDOT_U8 ? static_cast<int>(k) : static_cast<int>(k) - 3; }
    static int yv(int32_t dtype, std::size_t k) { return dtype == CUDOT_U8 ? static_cast<int>(k) : static_cast<int>(k) - 2; }
    int x(std::size_t i) const { return xv(xd, (i + ox) % 7); }
    int y(std::size_t i) const { return yv(yd, (i + oy) % 5); }

    // The exact dot of the first m elements (the products repeat every 35).
    double expected(std::size_t m) const {
        long long period = 0, head = 0;
        for (std::size_t i = 0; i < 35; ++i) {
            long long p = static_cast<long long>(x(i)) * y(i);
            period += p;
            if (i < m % 35) head += p;
        }
        return static_cast<double>(static_cast<long long>(m / 35) * period + head);
    }

    void fill(cudot_ctx *ctx) const {
        void *px = nullptr, *py = nullptr;
        cudot_get_inputs(ctx, &px, &py);
        fill_one(xd, px, 7, [this](std::size_t i) { return x(i); });
        fill_one(yd, py, 5, [this](std::size_t i) { return y(i); });
    }

   private:
    // Encodes one block of whole periods with test::set_value, then copies it: encoding element by
    // element would cost more than everything the library does in the stress.
    template <class Value>
    void fill_one(int32_t dtype, void *p, std::size_t period, Value value) const {
        const std::size_t size = test::dtype_size(dtype), block = period * 128;
        std::vector<unsigned char> encoded(block * size);
        for (std::size_t i = 0; i < block; ++i) test::set_value(dtype, encoded.data(), i, value(i));
        unsigned char *out = static_cast<unsigned char *>(p);
        for (std::size_t i = 0; i < n; i += block)
            std::memcpy(out + i * size, encoded.data(), std::min(block, n - i) * size);
    }
};

inline const char *memory_name(int32_t memory) { return test::memory_name(memory); }

class Runner {
   public:
    explicit Runner(const Options &options) : opt_(options) {}

    Report run() {
        const auto start = std::chrono::steady_clock::now();
        setup_slots();
        std::vector<std::thread> pool;
        for (int t = 0; t < opt_.threads; ++t) pool.emplace_back([this, t] { worker(t); });
        for (auto &th : pool) th.join();
        teardown_slots();
        report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        report_.ops = std::min<long>(next_op_.load(), opt_.ops);
        return report_;
    }

   private:
    struct Slot {
        SlotLock lock;
        cudot_ctx *ctx = nullptr;
        bool random = false;
        Pattern pattern;                                        // integer slots
        std::vector<std::pair<std::size_t, double>> expected;  // random slots: (m, dot of the first m)
        int32_t memory = CUDOT_MEMORY_HOST;
    };

    const Options opt_;
    Report report_;
    std::mutex report_mutex_;
    std::atomic<long> next_op_{0};
    std::vector<std::unique_ptr<Slot>> slots_;

    void fail(const std::string &what) {
        std::lock_guard<std::mutex> lock(report_mutex_);
        ++report_.failures;
        if (report_.first_failures.size() < 20) report_.first_failures.push_back(what);
    }
    void count(long Report::*field, long k = 1) {
        std::lock_guard<std::mutex> lock(report_mutex_);
        report_.*field += k;
    }

    static cudot_ctx *create(std::size_t n, int32_t xd, int32_t yd, int32_t memory, std::string &error) {
        cudot_config c = CUDOT_CONFIG_INIT;
        c.dtype = xd;
        c.y_dtype = yd;
        c.memory = memory;
        cudot_ctx *ctx = nullptr;
        if (cudot_init(&ctx, n, &c) != CUDOT_OK) {
            error = cudot_last_error(nullptr);
            return nullptr;
        }
        return ctx;
    }

    static std::string describe(const Pattern &p, int32_t memory) {
        return std::string(memory_name(memory)) + " " + test::dtype_name(p.xd) + "x" + test::dtype_name(p.yd) +
               " n=" + std::to_string(p.n);
    }

    Pattern random_pattern(std::mt19937_64 &rng) const {
        Pattern p;
        const auto &types = test::all_dtypes();
        p.xd = types[rng() % types.size()];
        p.yd = types[rng() % types.size()];
        const unsigned size_class = rng() % 100;
        const std::size_t cap = opt_.max_n;
        if (size_class < 70) p.n = rng() % std::min<std::size_t>(4001, cap + 1);
        else if (size_class < 95) p.n = rng() % std::min<std::size_t>(40001, cap + 1);
        else p.n = cap / 3 + rng() % (cap - cap / 3 + 1);  // parallel on the thread pool, or many GPU blocks
        p.ox = static_cast<unsigned>(rng() % 7);
        p.oy = static_cast<unsigned>(rng() % 5);
        return p;
    }

    void tune(cudot_ctx *ctx, int32_t memory, std::mt19937_64 &rng) const {
        if (memory == CUDOT_MEMORY_HOST && static_cast<int>(rng() % 100) < opt_.parallel_percent) {
            cudot::testing::set_cpu_always_parallel(ctx, true);
            cudot::testing::set_cpu_threads(ctx, static_cast<unsigned>(rng() % 3));  // 0 = all
        }
    }

    // Fills slot with a new integer context; the caller holds its exclusive lock (or no thread runs).
    bool refill_int_slot(Slot &s, std::mt19937_64 &rng) {
        Pattern p = random_pattern(rng);
        std::string error;
        cudot_ctx *ctx = create(p.n, p.xd, p.yd, s.memory, error);
        if (!ctx) {
            fail("shared init " + describe(p, s.memory) + ": " + error);
            return false;
        }
        tune(ctx, s.memory, rng);
        p.fill(ctx);
        s.ctx = ctx;
        s.pattern = p;
        return true;
    }

    void setup_slots() {
        std::mt19937_64 rng(opt_.seed * 7919 + 17);
        const std::size_t nm = opt_.memories.size();
        for (int i = 0; i < opt_.int_slots; ++i) {
            auto s = std::make_unique<Slot>();
            s->memory = opt_.memories[static_cast<std::size_t>(i) % nm];
            refill_int_slot(*s, rng);
            slots_.push_back(std::move(s));
        }
        if (!opt_.random_slots) return;
        // Random floats: the expected bits come from a HOST context filled alike, dotted single-threaded.
        for (int32_t dtype : {CUDOT_F32, CUDOT_F64}) {
            auto s = std::make_unique<Slot>();
            s->random = true;
            s->memory = opt_.memories[slots_.size() % nm];
            const std::size_t n = 150001;
            std::string error;
            cudot_ctx *host = create(n, dtype, dtype, CUDOT_MEMORY_HOST, error);
            s->ctx = create(n, dtype, dtype, s->memory, error);
            if (!host || !s->ctx) {
                fail("random slot init: " + error);
                cudot_deinit(host);
                cudot_deinit(s->ctx);
                s->ctx = nullptr;
                slots_.push_back(std::move(s));
                continue;
            }
            void *hx, *hy, *sx, *sy;
            cudot_get_inputs(host, &hx, &hy);
            cudot_get_inputs(s->ctx, &sx, &sy);
            const std::uint64_t seed = opt_.seed * 31 + static_cast<std::uint64_t>(dtype);
            test::fill_random_any(dtype, hx, n, seed);
            test::fill_random_any(dtype, hy, n, seed + 1);
            test::fill_random_any(dtype, sx, n, seed);
            test::fill_random_any(dtype, sy, n, seed + 1);
            for (std::size_t m : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(8193), n / 2, n}) {
                double r = 0;
                if (cudot_dot_n(host, m, &r) != CUDOT_OK) fail("HOST reference dot_n failed");
                s->expected.emplace_back(m, r);
            }
            cudot_deinit(host);
            slots_.push_back(std::move(s));
        }
    }

    void teardown_slots() {
        for (auto &s : slots_)
            if (s->ctx && cudot_deinit(s->ctx) != CUDOT_OK) fail("deinit of a shared context failed");
        slots_.clear();
    }

    // Compares a dot with its expected value, bit for bit.
    bool same(double got, double want) const { return test::bits(got) == test::bits(want); }

    void private_cycle(std::mt19937_64 &rng, int thread) {
        count(&Report::private_cycles);
        const int32_t memory = opt_.memories[rng() % opt_.memories.size()];
        Pattern p = random_pattern(rng);
        const std::string what = "thread " + std::to_string(thread) + " private " + describe(p, memory);
        std::string error;
        cudot_ctx *ctx = create(p.n, p.xd, p.yd, memory, error);
        if (!ctx) return fail(what + ": init: " + error);
        tune(ctx, memory, rng);
        long checked = 0;
        int32_t got_memory = -1, device = 0, xd = 0, yd = 0;
        std::size_t capacity = 0;
        if (cudot_get_memory(ctx, &got_memory, &device) != CUDOT_OK || got_memory == CUDOT_MEMORY_AUTO ||
            (memory != CUDOT_MEMORY_AUTO && got_memory != memory))
            fail(what + ": get_memory");
        if (cudot_get_dtypes(ctx, &xd, &yd) != CUDOT_OK || xd != p.xd || yd != p.yd) fail(what + ": get_dtypes");
        if (cudot_get_capacity(ctx, &capacity) != CUDOT_OK || capacity != p.n) fail(what + ": get_capacity");
        p.fill(ctx);
        double r = -1;
        if (cudot_dot(ctx, &r) != CUDOT_OK || !same(r, p.expected(p.n)))
            fail(what + ": dot " + std::to_string(r) + " != " + std::to_string(p.expected(p.n)));
        ++checked;
        const std::size_t m = p.n ? rng() % (p.n + 1) : 0;
        if (cudot_dot_n(ctx, m, &r) != CUDOT_OK || !same(r, p.expected(m)))
            fail(what + ": dot_n(" + std::to_string(m) + ") " + std::to_string(r));
        ++checked;
        // A failure on a private context: its message is ours to read.
        if (cudot_dot_n(ctx, p.n + 1 + rng() % 5, &r) != CUDOT_ERROR_INVALID_ARGUMENT)
            fail(what + ": dot_n beyond capacity not refused");
        if (std::string(cudot_last_error(ctx)).find("capacity") == std::string::npos)
            fail(what + ": message after dot_n beyond capacity: " + cudot_last_error(ctx));
        // Fresh data: new offsets, the same context.
        p.ox = (p.ox + 1) % 7;
        p.oy = (p.oy + 3) % 5;
        p.fill(ctx);
        if (cudot_dot(ctx, &r) != CUDOT_OK || !same(r, p.expected(p.n))) fail(what + ": dot after refill");
        ++checked;
        if (cudot_deinit(ctx) != CUDOT_OK) fail(what + ": deinit");
        count(&Report::dots_checked, checked);
    }

    void shared_dot(std::mt19937_64 &rng) {
        count(&Report::shared_dots);
        if (slots_.empty()) return;
        Slot &s = *slots_[rng() % slots_.size()];
        std::shared_lock<SlotLock> lock(s.lock);
        if (!s.ctx) return;
        double r = -1;
        if (s.random) {
            const auto &e = s.expected[rng() % s.expected.size()];
            const bool whole = e.first == s.expected.back().first && rng() % 2;
            cudot_status st = whole ? cudot_dot(s.ctx, &r) : cudot_dot_n(s.ctx, e.first, &r);
            if (st != CUDOT_OK || !same(r, e.second))
                fail(std::string("shared random ") + memory_name(s.memory) + " dot_n(" + std::to_string(e.first) +
                     ") differs from single-threaded HOST");
        } else {
            const Pattern &p = s.pattern;
            const bool whole = rng() % 2;
            const std::size_t m = whole ? p.n : (p.n ? rng() % (p.n + 1) : 0);
            cudot_status st = whole ? cudot_dot(s.ctx, &r) : cudot_dot_n(s.ctx, m, &r);
            if (st != CUDOT_OK || !same(r, p.expected(m)))
                fail("shared " + describe(p, s.memory) + " dot_n(" + std::to_string(m) + ") = " + std::to_string(r) +
                     ", expected " + std::to_string(p.expected(m)));
        }
        count(&Report::dots_checked);
    }

    void swap(std::mt19937_64 &rng) {
        count(&Report::swaps);
        Slot &s = *slots_[rng() % static_cast<std::size_t>(opt_.int_slots)];
        std::unique_lock<SlotLock> lock(s.lock);
        if (s.ctx && cudot_deinit(s.ctx) != CUDOT_OK) fail("swap: deinit failed");
        s.ctx = nullptr;
        refill_int_slot(s, rng);
    }

    // Calls that must be refused on a shared context, and getters that read it concurrently. The
    // messages are not read: another thread may be failing on the same context at the same moment.
    void refused_calls(std::mt19937_64 &rng) {
        count(&Report::refused_calls);
        if (slots_.empty()) return;
        Slot &s = *slots_[rng() % slots_.size()];
        std::shared_lock<SlotLock> lock(s.lock);
        if (!s.ctx) return;
        std::size_t capacity = 0;
        if (cudot_get_capacity(s.ctx, &capacity) != CUDOT_OK) fail("shared get_capacity");
        double r = 7.0;
        if (cudot_dot_n(s.ctx, capacity + 1, &r) != CUDOT_ERROR_INVALID_ARGUMENT || r != 7.0)
            fail("shared dot_n beyond capacity not refused");
        if (cudot_dot(s.ctx, nullptr) != CUDOT_ERROR_INVALID_ARGUMENT) fail("shared dot(NULL) not refused");
        int32_t xd = 0, yd = 0, memory = -1;
        void *x = nullptr;
        if (cudot_get_dtypes(s.ctx, &xd, &yd) != CUDOT_OK || cudot_get_memory(s.ctx, &memory, nullptr) != CUDOT_OK ||
            cudot_get_inputs(s.ctx, &x, nullptr) != CUDOT_OK || !x)
            fail("shared getters");
        if (!s.random && (xd != s.pattern.xd || yd != s.pattern.yd || capacity != s.pattern.n))
            fail("shared getters report another context");
    }

    void failed_init(int thread, long op) {
        count(&Report::failed_inits);
        const int32_t bad = 100 + thread * 100000 + static_cast<int32_t>(op % 100000);
        cudot_config c = CUDOT_CONFIG_INIT;
        c.dtype = bad;
        cudot_ctx *ctx = reinterpret_cast<cudot_ctx *>(std::uintptr_t(0xdead));
        if (cudot_init(&ctx, 10, &c) != CUDOT_ERROR_INVALID_ARGUMENT || ctx != nullptr)
            fail("init with a bad dtype not refused");
        const std::string expected = "config->dtype " + std::to_string(bad) + " ";
        if (std::string(cudot_last_error(nullptr)).rfind(expected, 0) != 0)
            fail("thread " + std::to_string(thread) + " reads another message: " + cudot_last_error(nullptr));
    }

    void worker(int thread) {
        std::mt19937_64 rng(opt_.seed * 1000003 + static_cast<std::uint64_t>(thread));
        for (;;) {
            const long op = next_op_.fetch_add(1);
            if (op >= opt_.ops) return;
            const unsigned kind = rng() % 100;
            if (kind < 30) private_cycle(rng, thread);
            else if (kind < 75) shared_dot(rng);
            else if (kind < 80 && opt_.int_slots > 0) swap(rng);
            else if (kind < 80) shared_dot(rng);
            else if (kind < 92) refused_calls(rng);
            else failed_init(thread, op);
        }
    }
};

// Runs the stress and checks the report on the calling thread.
inline void run_and_check(Options options) {
    options.ops = env_long("CUDOT_STRESS_OPS", options.ops);
    options.threads = static_cast<int>(env_long("CUDOT_STRESS_THREADS", options.threads));
    options.seed = static_cast<std::uint64_t>(env_long("CUDOT_STRESS_SEED", static_cast<long>(options.seed)));
    Runner runner(options);
    const Report r = runner.run();
    std::string memories;
    for (int32_t m : options.memories) memories += (memories.empty() ? "" : ",") + std::string(memory_name(m));
    std::printf(
        "stress [%s]: %d threads, %ld ops in %.2f s: %ld private cycles, %ld shared dots, %ld swaps, %ld refused-call "
        "rounds, %ld failed inits; %ld dot results checked; %ld failures\n",
        memories.c_str(), options.threads, r.ops, r.seconds, r.private_cycles, r.shared_dots, r.swaps, r.refused_calls,
        r.failed_inits, r.dots_checked, r.failures);
    for (const std::string &f : r.first_failures) UNSCOPED_INFO(f);
    CHECK(r.failures == 0);
    CHECK(r.ops == options.ops);
    CHECK(r.private_cycles + r.shared_dots + r.swaps + r.refused_calls + r.failed_inits == r.ops);
}

}  // namespace stress
