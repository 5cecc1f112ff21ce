// open_ctx.hpp - the experiments' context of one strategy: created or the program ends with the reason.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "cudot.h"

// A context of n elements of dtype in `memory`; auto_managed: AUTO created with CUDOT_AUTO_MANAGED=1.
inline cudot_ctx *open_ctx(int memory, int dtype, std::size_t n, bool auto_managed) {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = dtype;
    cfg.memory = memory;
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
