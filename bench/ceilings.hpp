// ceilings.hpp - the physical limits each result is compared with, measured in the same run, and the
// peers (cuBLAS, OpenBLAS) measured on the same sizes.
#pragma once

#include <cstddef>
#include <string>

#include "measure.hpp"

namespace bench {

struct Ceilings {
    bool gpu = false;
    double h2d_GBps = 0;          // pinned host -> device copy, 256 MiB
    double d2d_GBps = 0;          // device -> device copy, bytes read + written
    double launch_us = 0;         // empty kernel launch + stream synchronize, median
    double host_read_GBps = 0;    // all threads reading two float arrays (one dot's worth)
    double host_read_1t_GBps = 0; // the same on one thread
    std::string gpu_name;
};

Ceilings measure_ceilings(bool with_gpu, bool quick);

// Peers: median time of one dot of n elements (dtype 1 = f32, 2 = f64); negative when unavailable.
Stats cublas_dot(int dtype, std::size_t n, int reps);
Stats openblas_dot(int dtype, std::size_t n, int reps, int threads);  // threads 0: OpenBLAS default

}  // namespace bench
