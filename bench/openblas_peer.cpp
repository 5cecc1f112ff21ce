// openblas_peer.cpp - OpenBLAS's dot on the CPU (Debian's libopenblas, linked statically so the
// benchmark runs on machines without it).
#include <cblas.h>

#include <vector>

#include "ceilings.hpp"

extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_num_procs(void);

namespace bench {

Stats openblas_dot(int dtype, std::size_t n, int reps, int threads) {
    openblas_set_num_threads(threads > 0 ? threads : openblas_get_num_procs());
    const int m = static_cast<int>(n);
    Stats st;
    if (dtype == 2) {
        std::vector<double> x(n, 0.5), y(n, 0.25);
        volatile double sink = 0;
        st = time_calls(3, reps, nullptr, [&] {
            sink = cblas_ddot(m, x.data(), 1, y.data(), 1);
            return true;
        });
    } else {
        std::vector<float> x(n, 0.5f), y(n, 0.25f);
        volatile float sink = 0;
        st = time_calls(3, reps, nullptr, [&] {
            sink = cblas_sdot(m, x.data(), 1, y.data(), 1);
            return true;
        });
    }
    openblas_set_num_threads(openblas_get_num_procs());
    return st;
}

}  // namespace bench
