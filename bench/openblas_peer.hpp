// openblas_peer.hpp - OpenBLAS's dots on the caller's buffers (openblas_peer.cpp), the CPU peer of
// cudot-bench and cudot-bench-host. Plain C++: no CUDA needed.
#pragma once

#include <cstddef>

namespace bench {

// OpenBLAS cblas_sdot / cblas_ddot on the caller's buffers (dtype 1 = f32, 2 = f64), with `threads`
// threads (0: OpenBLAS's default, every core); set once before timing, reset to the default after.
void openblas_threads(int threads);
double openblas_dot(int dtype, const void *x, const void *y, std::size_t n);
// OpenBLAS cblas_dsdot: f32 inputs, products and sum in double by its definition, the arithmetic cudot's
// f32 dot does (in its own order). The row that shows what double accumulation costs OpenBLAS itself.
// Not every OpenBLAS kernel keeps to it: cudot-bench-host checks whether the products are in double.
double openblas_dsdot(const float *x, const float *y, std::size_t n);

}  // namespace bench
