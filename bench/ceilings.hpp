// ceilings.hpp - the physical limits each result is compared with, measured in the same run, and the
// cuBLAS peer measured on the same sizes (OpenBLAS: openblas_peer.hpp).
//
// A ceiling measured once can land in a slow moment of a shared machine (and then read below what the
// dots it bounds achieve), so the benchmark measures every ceiling in several rounds spread through the
// run and keeps the best round of each; the spread of the rounds is reported beside it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "measure.hpp"

namespace bench {

// One round of every ceiling; 0 where not measured (no GPU) or where a CUDA call failed.
struct CeilingRound {
    std::string when;              // where in the run: "start", "after f32", ...
    double h2d_GBps = 0;           // pinned host -> device copy, 256 MiB, median of 20
    double d2d_GBps = 0;           // device -> device copy, bytes read + written, median of 20
    double launch_us = 0;          // empty kernel launch + stream synchronize, median of 2000
    double host_read_GBps = 0;     // every hardware thread reading two arrays (one dot's worth)
    double host_read_1t_GBps = 0;  // the same on one thread
};

struct Ceilings {
    bool gpu = false;
    std::string gpu_name;
    // The best of the rounds: the highest bandwidths, the lowest launch + sync median.
    double h2d_GBps = 0, d2d_GBps = 0, launch_us = 0, host_read_GBps = 0, host_read_1t_GBps = 0;
    std::vector<CeilingRound> rounds;
};

// The first round (GPU parts only when with_gpu and a device answers; c.gpu says whether they did).
Ceilings measure_ceilings(bool with_gpu, bool quick);
// Another round, labelled `when`; the best values are updated.
void remeasure_ceilings(Ceilings &c, const char *when, bool quick);

// The lowest and highest value of one ceiling over the rounds that measured it.
struct Spread {
    double lo = 0, hi = 0;
};
Spread spread_of(const Ceilings &c, double CeilingRound::*field);

// An empty kernel launched on a stream of the probe's own and waited for (cudaStreamSynchronize): the
// launch + sync ceiling as one call, so that it can be timed in turn with the dots it bounds (target 1's
// block in cudot-bench) as well as alone (the ceiling rounds).
class LaunchProbe {
public:
    LaunchProbe();  // ok() says whether its stream could be made
    ~LaunchProbe();
    LaunchProbe(const LaunchProbe &) = delete;
    LaunchProbe &operator=(const LaunchProbe &) = delete;
    bool ok() const { return stream_ != nullptr; }
    bool once();  // one launch + sync; false if either failed (the reason on stderr)

private:
    void *stream_ = nullptr;  // a cudaStream_t: this header is also read by code compiled without CUDA
};

// Peer: cuBLAS's dot of n elements (dtype 1 = f32, 2 = f64) on device arrays of its own, filled once,
// in host pointer mode (each call blocks, as users call it). A contender among cudot's resident rows
// (cudot_bench.cpp): timed in a block of its own it would run at the GPU's steady state while cudot's
// rows share their rounds, and T8's ratio would measure that, not the kernels.
class CublasPeer {
public:
    CublasPeer(int dtype, std::size_t n);
    ~CublasPeer();
    CublasPeer(const CublasPeer &) = delete;
    CublasPeer &operator=(const CublasPeer &) = delete;
    bool ok() const { return handle_ != nullptr; }
    bool dot();  // one call; false if cuBLAS failed

private:
    int dtype_;
    std::size_t n_;
    void *handle_ = nullptr;  // a cublasHandle_t (this header is also read by code compiled without CUDA)
    void *x_ = nullptr, *y_ = nullptr;
};

// Peer: a device-to-device copy of n elements' bytes (dtype 1 = f32, 2 = f64) on arrays of its own, the
// call waiting for it; T8's device-copy ceiling timed in the resident rounds with MANAGED's row, as cuBLAS
// is (the ceiling rounds time it alone, at the GPU's steady state).
class DeviceCopyPeer {
public:
    DeviceCopyPeer(int dtype, std::size_t n);
    ~DeviceCopyPeer();
    DeviceCopyPeer(const DeviceCopyPeer &) = delete;
    DeviceCopyPeer &operator=(const DeviceCopyPeer &) = delete;
    bool ok() const { return stream_ != nullptr; }
    bool copy();  // one copy; false if CUDA failed
    std::size_t bytes() const { return bytes_; }

private:
    std::size_t bytes_;
    void *stream_ = nullptr;  // a cudaStream_t
    void *from_ = nullptr, *to_ = nullptr;
};

}  // namespace bench
