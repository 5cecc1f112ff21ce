// call_cost.cpp - what a HOST dot costs besides its tiles (issue 24, T3 f64 at 2^10): cudot_dot on HOST
// contexts of n = 1 ... 4096 (f32 and f64), one thread, the contexts taken in turn, 10 calls per sample,
// medians of 3001 samples. At n = 1 the tile is a single product, so that row is the call itself (the
// handle's lookup, the message slot, the floating-point environment, the join); bench/experiments/
// tile_copies.cpp times the tiles alone.
//
// Build (from the repository root, after the build in build/):
//   g++ -O2 -std=c++17 -Iinclude bench/experiments/call_cost.cpp -Lbuild -lcudot -Wl,-rpath,'$ORIGIN/..' \
//       -o build/experiments/call_cost
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "cudot.h"
int main() {
  setenv("CUDOT_NUM_THREADS", "1", 1);
  const size_t ns[] = {1, 8, 64, 256, 1024, 4096};
  const int dts[] = {CUDOT_F32, CUDOT_F64};
  std::vector<cudot_ctx*> ctx;
  for (int dt : dts) for (size_t n : ns) {
    cudot_config cfg = CUDOT_CONFIG_INIT; cfg.dtype = dt; cfg.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *c; if (cudot_init(&c, n, &cfg) != CUDOT_OK) { puts(cudot_last_error(NULL)); return 1; }
    void *x, *y; cudot_get_inputs(c, &x, &y);
    for (size_t i = 0; i < n; ++i) { if (dt == CUDOT_F32) { ((float*)x)[i] = 1.0f + i % 7; ((float*)y)[i] = 0.5f; } else { ((double*)x)[i] = 1.0 + i % 7; ((double*)y)[i] = 0.5; } }
    ctx.push_back(c);
  }
  const int R = 3001;
  std::vector<std::vector<double>> t(ctx.size());
  double r, sink = 0;
  for (int k = 0; k < R; ++k) for (size_t i = 0; i < ctx.size(); ++i) {
    auto a = std::chrono::steady_clock::now();
    for (int j = 0; j < 10; ++j) { cudot_dot(ctx[i], &r); sink += r; }
    auto b = std::chrono::steady_clock::now();
    t[i].push_back(std::chrono::duration<double, std::micro>(b - a).count() / 10);
  }
  size_t i = 0;
  for (int dt : dts) for (size_t n : ns) { auto &v = t[i++]; std::sort(v.begin(), v.end());
    std::printf("%s n=%5zu median %.3f us p10 %.3f\n", dt == CUDOT_F32 ? "f32" : "f64", n, v[v.size()/2], v[v.size()/10]); }
  std::printf("sink %g\n", sink);
}
