// host_read.cpp - see host_read.hpp. Runs on a copy of the library's own thread pool
// (src/cpu/thread_pool.cpp is compiled into the benchmark: the library exports only cudot_* symbols).
#include "host_read.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "inputs.hpp"

#include "../src/cpu/thread_pool.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define BENCH_PREFETCH(p) _mm_prefetch(reinterpret_cast<const char *>(p), _MM_HINT_T0)
#else
#define BENCH_PREFETCH(p) ((void)0)
#endif

namespace bench {
namespace {

// 16-byte vectors: two loads a cycle keep a core far above what memory gives one core.
typedef std::uint64_t Vec __attribute__((vector_size(16)));

constexpr std::size_t kLine = 64;
constexpr std::size_t kTaskBytes = std::size_t(512) << 10;  // the library's largest pool task
constexpr std::size_t kAheadBytes = 2048;                    // as the library's integer loop

struct ReadJob {
    const unsigned char *x, *y;
    std::size_t x_size, y_size;  // bytes per element: a block of 64 elements is that many lines
    std::size_t blocks, blocks_per_task;
    std::atomic<std::uint64_t> sink{0};

    static void task(void *self, std::size_t index) {
        ReadJob &job = *static_cast<ReadJob *>(self);
        const std::size_t first = index * job.blocks_per_task;
        const std::size_t last = first + job.blocks_per_task < job.blocks ? first + job.blocks_per_task : job.blocks;
        Vec acc0{}, acc1{};
        auto line = [&](const unsigned char *p) {
            BENCH_PREFETCH(p + kAheadBytes);
            const Vec *v = reinterpret_cast<const Vec *>(p);
            acc0 ^= v[0] + v[2];
            acc1 ^= v[1] + v[3];
        };
        // Both arrays in step, as a dot reads them: 64 elements of x, then the same 64 of y.
        for (std::size_t b = first; b < last; ++b) {
            for (std::size_t k = 0; k < job.x_size; ++k) line(job.x + kLine * (b * job.x_size + k));
            for (std::size_t k = 0; k < job.y_size; ++k) line(job.y + kLine * (b * job.y_size + k));
        }
        const Vec acc = acc0 + acc1;
        job.sink.fetch_add(acc[0] ^ acc[1], std::memory_order_relaxed);
    }
};

}  // namespace

unsigned long long host_read(const void *x, std::size_t x_size, const void *y, std::size_t y_size, std::size_t n,
                             unsigned threads) {
    ReadJob job;
    job.x = static_cast<const unsigned char *>(x);
    job.y = static_cast<const unsigned char *>(y);
    job.x_size = x_size;
    job.y_size = y_size;
    job.blocks = n / 64;
    job.blocks_per_task = kTaskBytes / (64 * (x_size + y_size));
    if (job.blocks == 0) return 0;
    cudot::cpu::ThreadPool::instance().run((job.blocks + job.blocks_per_task - 1) / job.blocks_per_task, threads,
                                           &ReadJob::task, &job);
    return job.sink.load();
}

namespace {
volatile unsigned long long read_sink;  // keeps the plain reads from being optimized away
}

Contender read_contender(int x_dtype, int y_dtype, std::size_t n, std::function<void(void *, void *, int)> rewrite) {
    const std::size_t x_bytes = n * size_of(x_dtype), y_bytes = n * size_of(y_dtype);
    auto own = std::make_shared<std::pair<Aligned, Aligned>>(std::piecewise_construct, std::forward_as_tuple(x_bytes),
                                                             std::forward_as_tuple(y_bytes));
    std::memset(own->first.p, 0, x_bytes);
    std::memset(own->second.p, 0, y_bytes);
    std::function<void(int)> fill;
    if (rewrite) fill = [own, rewrite](int round) { rewrite(own->first.p, own->second.p, round); };
    return Contender{std::move(fill), [=] {
        read_sink = host_read(own->first.p, size_of(x_dtype), own->second.p, size_of(y_dtype), n);
        return true;
    }};
}

double read_GBps(const Contender &read, int x_dtype, int y_dtype, std::size_t n) {
    const Stats s = summarize(read.samples);
    const double bytes = double(n / 64 * 64) * (size_of(x_dtype) + size_of(y_dtype));
    return s.median_us > 0 ? bytes / (s.median_us * 1e3) : 0;
}

}  // namespace bench
