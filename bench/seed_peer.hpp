// seed_peer.hpp - the tutorial's dot, rebuilt as a peer for cudot-bench: one kernel of 256 threads a
// block, 8 elements a thread; each block sums its products in the element type in shared memory and
// writes one partial; the host adds the partials in a plain loop. Three ways to hold the data, as the
// tutorial offers them:
//
//   PINNED   page-locked host buffers copied to device buffers before each launch, partials copied back;
//   MAPPED   page-locked host buffers the kernel reads over the bus, partials written to mapped memory;
//   MANAGED  unified-memory buffers, partials in unified memory read after cudaDeviceSynchronize.
//
// The block count is ceil(n / 2048), so every element is counted (the tutorial's own formula dropped the
// tail). Its results differ from cudot's in the last bits (another summation order, float partials);
// the benchmark checks they are close, not equal.
#pragma once

#include <cstddef>
#include <memory>

namespace bench {

enum class SeedMemory { Pinned, Mapped, Managed };

class SeedDot {
public:
    // A peer context for n elements of float (f64 false) or double; null if CUDA refuses (no GPU, no
    // memory), with the reason on stderr.
    static std::unique_ptr<SeedDot> create(SeedMemory memory, bool f64, std::size_t n);
    virtual ~SeedDot() = default;

    // The host-visible inputs the caller fills (float or double, n elements each).
    virtual void *x() = 0;
    virtual void *y() = 0;

    // One dot of every element; false on a CUDA error (reported on stderr).
    virtual bool dot(double *result) = 0;
};

}  // namespace bench
