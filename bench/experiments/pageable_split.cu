// pageable_split.cu - issue 23, D: can a dot of large pageable (unregistered) host arrays gain from the
// GPU the way AUTO's split does for its page-locked buffers? The GPU cannot read pageable memory in place
// here (no HMM), so its share must come through the driver's pageable copies (cudaMemcpy stages them
// through page-locked buffers of its own, on the calling thread). Times, alternated, on f64 arrays the
// host rewrites before every call (as cudot-bench-arrays' D rows do), medians:
//   arrays:      cudot_dot_arrays on the pageable arrays (the CPU reads them in place: today's road)
//   split g:     the first g of the tiles copied to the GPU with cudaMemcpy and their partials computed
//                there (cudot_tile_partials_arrays on the device copies), while another thread takes the
//                partials of the rest on the CPU (the same call on the host arrays); joined with
//                cudot_join_partials. Every split result is checked bit for bit against `arrays`.
//   copy alone:  the pageable copy of the largest share, to see what the driver's staging reaches
//   AUTO:        an AUTO context's dot on its own (page-locked) buffers, rewritten the same way
// Public API only. Build (from the repository root, after the CUDA build in build/):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Ibench bench/experiments/pageable_split.cu bench/measure.cpp \
//        -Lbuild -lcudot -Xlinker -rpath -Xlinker '$ORIGIN/..' -lpthread -o build/experiments/pageable_split
//   usage: pageable_split [rounds = 9]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "cudot.h"
#include "inputs.hpp"
#include "measure.hpp"

namespace {

bool ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) std::printf("CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

cudot_arrays arrays_of(const double *x, const double *y, std::size_t n) {
    cudot_arrays a = CUDOT_ARRAYS_INIT;
    a.n = n;
    a.x = {x, CUDOT_F64, 0, 1};  // data, dtype, reserved, stride
    a.y = {y, CUDOT_F64, 0, 1};
    return a;
}

}  // namespace

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? std::max(3, std::atoi(argv[1])) : 9;
    const double shares[] = {0.05, 0.1, 0.2, 0.3};
    std::printf("pageable_split: f64, %d rounds per row, medians in us; GB/s of both arrays\n", rounds);
    std::printf("%-18s %10s %10s %10s %9s %s\n", "what", "n", "median_us", "p10_us", "GB/s", "arrays time / this");
    for (int lg : {24, 26}) {
        const std::size_t n = std::size_t(1) << lg, bytes = n * sizeof(double);
        std::vector<double> hx(n), hy(n);  // pageable
        const std::size_t tiles = (n + CUDOT_TILE_ELEMENTS - 1) / CUDOT_TILE_ELEMENTS;
        const std::size_t max_g = static_cast<std::size_t>(0.3 * tiles) + 1;
        double *dx = nullptr, *dy = nullptr;
        if (!ok(cudaMalloc(&dx, max_g * CUDOT_TILE_ELEMENTS * sizeof(double)), "cudaMalloc") ||
            !ok(cudaMalloc(&dy, max_g * CUDOT_TILE_ELEMENTS * sizeof(double)), "cudaMalloc"))
            return 1;
        std::vector<unsigned char> partials(tiles * CUDOT_PARTIAL_BYTES);
        cudot_ctx *ctx = nullptr;
        void *cx = nullptr, *cy = nullptr;
        cudot_config cfg = CUDOT_CONFIG_INIT;
        cfg.dtype = CUDOT_F64;
        cfg.memory = CUDOT_MEMORY_AUTO;
        if (cudot_init(&ctx, n, &cfg) != CUDOT_OK || cudot_get_inputs(ctx, &cx, &cy) != CUDOT_OK) {
            std::printf("cudot_init: %s\n", cudot_last_error(nullptr));
            return 1;
        }
        double want = 0, got = 0;
        int mismatches = 0;
        auto fresh = [&](int round) { bench::rewrite(hx.data(), hy.data(), n, round + 1); };
        auto arrays = [&] {
            const cudot_arrays a = arrays_of(hx.data(), hy.data(), n);
            return cudot_dot_arrays(&a, &want) == CUDOT_OK;
        };
        auto split = [&](double share) {
            return [&, share] {
                const std::size_t g = static_cast<std::size_t>(share * tiles), e = std::min(n, g * CUDOT_TILE_ELEMENTS);
                cudot_status cpu_status = CUDOT_OK;
                std::thread cpu([&] {
                    const cudot_arrays a = arrays_of(hx.data() + e, hy.data() + e, n - e);
                    cpu_status = cudot_tile_partials_arrays(&a, partials.data() + g * CUDOT_PARTIAL_BYTES);
                });
                bool good = ok(cudaMemcpy(dx, hx.data(), e * sizeof(double), cudaMemcpyHostToDevice), "copy x") &&
                            ok(cudaMemcpy(dy, hy.data(), e * sizeof(double), cudaMemcpyHostToDevice), "copy y");
                const cudot_arrays d = arrays_of(dx, dy, e);
                good = good && cudot_tile_partials_arrays(&d, partials.data()) == CUDOT_OK;
                cpu.join();
                good = good && cpu_status == CUDOT_OK &&
                       cudot_join_partials(CUDOT_F64, CUDOT_F64, partials.data(), tiles, &got) == CUDOT_OK;
                // the same values as the arrays row of this round only if nothing rewrote them between:
                // each split row checks itself against a fresh arrays call below instead.
                return good;
            };
        };
        auto check = [&](double share) {  // untimed: the split's bits against cudot_dot_arrays, same values
            split(share)();
            const double split_result = got;
            arrays();
            if (std::memcmp(&split_result, &want, sizeof want) != 0) ++mismatches;
        };
        std::vector<bench::Contender> cs = {{fresh, arrays}};
        std::vector<std::string> names = {"arrays"};
        for (double s : shares) {
            cs.push_back({fresh, split(s)});
            char name[32];
            std::snprintf(name, sizeof name, "split %.2f", s);
            names.push_back(name);
        }
        cs.push_back({fresh, [&] {
                          const std::size_t e = max_g * CUDOT_TILE_ELEMENTS;
                          return ok(cudaMemcpy(dx, hx.data(), e * sizeof(double), cudaMemcpyHostToDevice), "copy") &&
                                 ok(cudaMemcpy(dy, hy.data(), e * sizeof(double), cudaMemcpyHostToDevice), "copy");
                      }});
        names.push_back("copy alone (0.3)");
        cs.push_back({[&](int round) { bench::rewrite(CUDOT_F64, cx, cy, n, round + 1); },
                      [&] { return cudot_dot(ctx, &got) == CUDOT_OK; }});
        names.push_back("AUTO context");
        bench::time_interleaved(2, rounds, cs);
        for (double s : shares) check(s);
        const double base = bench::summarize(cs[0].samples).median_us;
        for (std::size_t k = 0; k < cs.size(); ++k) {
            const bench::Stats t = bench::summarize(cs[k].samples);
            const double moved = k == cs.size() - 2 ? 2.0 * max_g * CUDOT_TILE_ELEMENTS * sizeof(double) : 2.0 * bytes;
            std::printf("%-18s %10zu %10.1f %10.1f %9.2f %.3f%s\n", names[k].c_str(), n, t.median_us, t.p10_us,
                        moved / (t.median_us * 1e3), base / t.median_us, cs[k].ok ? "" : "  (failed)");
        }
        std::printf("split results that differ from cudot_dot_arrays in bits: %d of %zu\n", mismatches,
                    sizeof shares / sizeof shares[0]);
        cudot_deinit(ctx);
        cudaFree(dx);
        cudaFree(dy);
    }
    return 0;
}
