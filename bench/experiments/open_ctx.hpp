// open_ctx.hpp - the experiments' context of one strategy: created or the program ends with the reason;
// and which road an AUTO dot took (the experiments link the static library for cudot::testing).
#pragma once

#include <cstdio>
#include <cstdlib>

#include "cudot.h"
#include "testing.hpp"

// A context of n elements of dtype in `memory` on `device`; auto_managed: AUTO created with
// CUDOT_AUTO_MANAGED=1.
inline cudot_ctx *open_ctx(int memory, int dtype, std::size_t n, bool auto_managed, int device = 0) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = dtype;
    cfg.memory = memory;
    cfg.device = device;
    if (auto_managed) setenv("CUDOT_AUTO_MANAGED", "1", 1);
    cudot_ctx *ctx = nullptr;
    const cudot_status status = cudot_init(&ctx, n, &cfg);
    unsetenv("CUDOT_AUTO_MANAGED");
    if (status != CUDOT_OK) {
        std::printf("cudot_init: %s\n", cudot_last_error(nullptr));
        std::exit(1);
    }
    return ctx;
}

// One dot; *road: the road AUTO's counters say it took (0 the CPU, 1 the GPUs, 2 both; -1 none counted: a
// resident or sentinel dot, or not AUTO).
inline bool dot_on_road(cudot_ctx *ctx, double *result, int *road) {
    const cudot::AutoCounts before = cudot::testing::auto_counts(ctx);
    const bool ok = cudot_dot(ctx, result) == CUDOT_OK;
    const cudot::AutoCounts after = cudot::testing::auto_counts(ctx);
    *road = -1;
    for (int r = 0; r < 3; ++r)
        if (after.roads[r] != before.roads[r]) *road = r;
    return ok;
}

// An open_ctx context with its input pointers and last result, closed when it goes out of scope.
struct OpenCtx {
    cudot_ctx *ctx = nullptr;
    void *x = nullptr, *y = nullptr;
    double last = 0;
    OpenCtx(int memory, int dtype, std::size_t n, bool auto_managed = false)
        : ctx(open_ctx(memory, dtype, n, auto_managed)) {
        cudot_get_inputs(ctx, &x, &y);
    }
    ~OpenCtx() { cudot_deinit(ctx); }
    OpenCtx(const OpenCtx &) = delete;
    OpenCtx &operator=(const OpenCtx &) = delete;
};
