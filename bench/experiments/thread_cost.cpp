// thread_cost.cpp - what a thread started and ended before a call costs the call (issue 24, T3 and T5
// fresh at 2^10). cudot-bench's "fresh" rewrite of a small pair ran on a thread of its own (parallel_for
// started one even when one was all it needed), and HOST's next dot took 0.7 us more at f32 2^10, OpenBLAS
// dsdot's 0.3 us more. Four callers on one thread, taken in turn: a HOST context's cudot_dot ("host ctx"),
// dsdot on buffers of its own ("dsdot own"), cudot_dot_arrays on those ("arrays own"), and dsdot on the
// context's buffers ("dsdot ctxbuf"); four modes before each call: nothing ("resident"), the inputs
// rewritten by the calling thread, rewritten by a thread started for it, and an empty thread started
// and joined with no rewrite at all. If the empty thread costs as much as the other-thread rewrite, the
// cost is the thread's, not the data's. Medians of 4001 rounds, one call each (f32).
//
// Build (from the repository root, after the build in build/):
//   g++ -O2 -std=c++17 -Iinclude bench/experiments/thread_cost.cpp -Lbuild -lcudot -Wl,-rpath,'$ORIGIN/..' \
//       /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a -lpthread -o build/experiments/thread_cost
//   usage: CUDOT_NUM_THREADS=1 thread_cost [n = 1024]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include "cudot.h"
extern "C" double cblas_dsdot(int n, const float *x, int incx, const float *y, int incy);
extern "C" void openblas_set_num_threads(int);
static double now_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static void fill(float *x, float *y, size_t n, int r) { for (size_t i = 0; i < n; ++i) { x[i] = (float)((i * 7 + r) % 2001) * 0.001f; y[i] = (float)((i * 13 + r) % 1999) * 0.002f; } }
int main(int argc, char **argv) {
  size_t n = argc > 1 ? atoi(argv[1]) : 1024;
  openblas_set_num_threads(1);
  cudot_config cfg = CUDOT_CONFIG_INIT; cfg.memory = CUDOT_MEMORY_HOST;
  cudot_ctx *c; cudot_init(&c, n, &cfg); void *vx, *vy; cudot_get_inputs(c, &vx, &vy);
  float *hx = (float*)vx, *hy = (float*)vy;
  float *ox = (float*)aligned_alloc(4096, 4 * n + 4096), *oy = (float*)aligned_alloc(4096, 4 * n + 4096);
  fill(hx, hy, n, 0); fill(ox, oy, n, 0);
  // modes: 0 resident, 1 same-thread rewrite, 2 other-thread rewrite
  std::vector<double> t[4][4];
  cudot_arrays A = CUDOT_ARRAYS_INIT; A.n = n; A.x.data = ox; A.y.data = oy;
  double r, sink = 0;
  for (int round = 0; round < 4001; ++round)
    for (int who = 0; who < 4; ++who) for (int mode = 0; mode < 4; ++mode) {
      float *x = (who == 1 || who == 2) ? ox : hx, *y = (who == 1 || who == 2) ? oy : hy;
      if (mode == 1) fill(x, y, n, round);
      if (mode == 2) { std::thread th(fill, x, y, n, round); th.join(); }
      if (mode == 3) { std::thread th([]{}); th.join(); }
      double t0 = now_us();
      if (who == 0) cudot_dot(c, &r); else if (who == 2) cudot_dot_arrays(&A, &r); else r = cblas_dsdot((int)n, x, 1, y, 1);
      t[who][mode].push_back(now_us() - t0); sink += r;
    }
  const char *modes[] = {"resident", "same-thread rewrite", "other-thread rewrite", "empty thread, no rewrite"};
  const char *whos[] = {"host ctx", "dsdot own", "arrays own", "dsdot ctxbuf"};
  for (int who = 0; who < 4; ++who) for (int mode = 0; mode < 4; ++mode) { auto &v = t[who][mode]; std::sort(v.begin(), v.end());
    printf("%-12s n=%zu %-22s median %.3f p10 %.3f\n", whos[who], n, modes[mode], v[v.size()/2], v[v.size()/10]); }
  printf("%g\n", sink);
}
