// measure.cpp - see measure.hpp. Plain C++, so that programs built without CUDA (cudot-bench-host)
// can prepare inputs with the same helpers as the GPU benchmarks.
#include "measure.hpp"

#include <algorithm>
#include <thread>
#include <vector>

namespace bench {

void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)> &fn) {
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    if (n < (1u << 16)) threads = 1;
    // One thread: the calling one. A thread started and ended for a small fill slows the next small dot
    // (even an empty thread does), cudot's more than its peers': a cost of the bench's own method, not of
    // the data.
    if (threads == 1) {
        fn(0, n);
        return;
    }
    std::vector<std::thread> pool;
    std::size_t chunk = (n + threads - 1) / threads;
    for (unsigned t = 0; t < threads; ++t) {
        std::size_t b = t * chunk, e = std::min(n, b + chunk);
        if (b < e) pool.emplace_back(fn, b, e);
    }
    for (auto &th : pool) th.join();
}

}  // namespace bench
