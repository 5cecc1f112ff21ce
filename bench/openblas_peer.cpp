// openblas_peer.cpp - OpenBLAS's dot on the CPU (Debian's libopenblas, linked statically so the
// benchmark runs on machines without it). The benchmark owns the buffers and their fill, so that
// OpenBLAS's rows see the same data and the same "fresh" rewrite as cudot's.
#include <cblas.h>

#include "openblas_peer.hpp"

extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_num_procs(void);

namespace bench {

void openblas_threads(int threads) { openblas_set_num_threads(threads > 0 ? threads : openblas_get_num_procs()); }

double openblas_dot(int dtype, const void *x, const void *y, std::size_t n) {
    const int m = static_cast<int>(n);
    if (dtype == 2) return cblas_ddot(m, static_cast<const double *>(x), 1, static_cast<const double *>(y), 1);
    return cblas_sdot(m, static_cast<const float *>(x), 1, static_cast<const float *>(y), 1);
}

double openblas_dsdot(const float *x, const float *y, std::size_t n) {
    return cblas_dsdot(static_cast<int>(n), x, 1, y, 1);
}

}  // namespace bench
