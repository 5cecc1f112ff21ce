// host_read.hpp - the HOST ceiling: every hardware thread streaming through two arrays, nothing else.
//
// A dot of n elements must at least read x and y once, so the fastest plain read of those same bytes,
// by as many threads as the library's pool uses, bounds what HOST can reach. The reader works like
// the library's pool on purpose (persistent threads that sleep between jobs, the caller working too,
// tasks of about 512 KiB claimed from a shared counter, both arrays read in step, 2 KiB prefetched
// ahead on each stream) so that the gap between a dot and its ceiling is the dot's arithmetic and
// access pattern, not thread start-up or a weaker read loop.
//
// Measured on buffers of the row's sizes, alternating with the dot, each after the same kind of rewrite,
// the ceiling sees the same kind of pages, the same cache state after a fresh write and the same minute
// of a noisy host. (Not on the row's own buffers: a read of those right before the dot warms the
// caches for it.)
#pragma once

#include <cstddef>
#include <cstdlib>
#include <functional>

#include "measure.hpp"

namespace bench {

// Reads the first n / 64 * 64 elements of x (x_size bytes each) and of y (y_size bytes each) once, on
// `threads` threads (0: every hardware thread; buffers 64-byte aligned; the < 64 elements left over are not worth a loop).
// Returns a value that depends on every byte read, so that nothing is optimized away.
unsigned long long host_read(const void *x, std::size_t x_size, const void *y, std::size_t y_size, std::size_t n,
                             unsigned threads = 0);

// Page-aligned host buffers, as cudot's HOST buffers are: the OpenBLAS rows' inputs and the reads' arrays.
struct Aligned {
    explicit Aligned(std::size_t bytes) : p(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096)) {}
    ~Aligned() { std::free(p); }
    Aligned(const Aligned &) = delete;
    Aligned &operator=(const Aligned &) = delete;
    void *p;
};

// A plain read of host memory by every hardware thread, to be timed in turn with the dots it bounds: of
// buffers of its own, n elements of x_dtype and y_dtype (cudot dtypes), rewritten by `rewrite` before each
// read (null: written once, the resident scenario). Not a row's own buffers: a rewrite and read of those
// right before the row's rewrite and dot would leave them in the caches, a head start no other row has.
Contender read_contender(int x_dtype, int y_dtype, std::size_t n, std::function<void(void *, void *, int)> rewrite);
// Its median speed in GB/s (0: no samples).
double read_GBps(const Contender &read, int x_dtype, int y_dtype, std::size_t n);

}  // namespace bench
