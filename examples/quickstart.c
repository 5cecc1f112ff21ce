/* quickstart.c - fill 2^20 floats, print the dot product and its time for every strategy this machine has.
 * Build and run: ./scripts/demo.sh */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>

#include "cudot.h"

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The names a reader knows the strategies by (cudot_get_memory reports the enum's value). */
static const char *memory_name(int32_t memory) {
    switch (memory) {
        case CUDOT_MEMORY_PINNED: return "PINNED";
        case CUDOT_MEMORY_MAPPED: return "MAPPED";
        case CUDOT_MEMORY_MANAGED: return "MANAGED";
        case CUDOT_MEMORY_HOST: return "HOST";
        default: return "AUTO";
    }
}

/* "none" for the CPU, "all" for every visible GPU, else the ordinal; text has room for any int32. */
static const char *device_name(int32_t device, char *text, size_t size) {
    if (device == CUDOT_DEVICE_NONE) return "none";
    if (device == CUDOT_DEVICE_ALL) return "all";
    snprintf(text, size, "%d", (int)device);
    return text;
}

int main(void) {
    const size_t n = (size_t)1 << 20;
    const struct { int memory; const char *name; } strategies[] = {
        {CUDOT_MEMORY_AUTO, "auto"},     {CUDOT_MEMORY_PINNED, "pinned"}, {CUDOT_MEMORY_MAPPED, "mapped"},
        {CUDOT_MEMORY_MANAGED, "managed"}, {CUDOT_MEMORY_HOST, "host"},
    };
    printf("cudot %s, n = %zu float32 elements, x[i] = (i %% 7) - 3, y[i] = (i %% 5) * 0.25\n", cudot_version_string(), n);
    for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; ++s) {
        cudot_config config = CUDOT_CONFIG_INIT;
        config.memory = strategies[s].memory;
        cudot_ctx *ctx = NULL;
        cudot_status status = cudot_init(&ctx, n, &config);
        if (status != CUDOT_OK) {
            printf("%-8s unavailable: %s: %s\n", strategies[s].name, cudot_status_string(status), cudot_last_error(NULL));
            continue;
        }
        float *x = NULL, *y = NULL;
        cudot_get_inputs(ctx, (void **)&x, (void **)&y);
        for (size_t i = 0; i < n; ++i) {
            x[i] = (float)((int)(i % 7) - 3);
            y[i] = (float)(i % 5) * 0.25f;
        }
        double result = 0.0, best = 1e30;
        for (int rep = 0; rep < 20; ++rep) { /* the first call warms up; report the fastest */
            double t0 = seconds();
            status = cudot_dot(ctx, &result);
            double t = seconds() - t0;
            if (status != CUDOT_OK) break;
            if (t < best) best = t;
        }
        int32_t memory = 0, device = 0;
        char ordinal[16];
        cudot_get_memory(ctx, &memory, &device);
        if (status == CUDOT_OK)
            printf("%-8s dot = %.17g  %8.1f us  (runs as %s, device %s)\n", strategies[s].name, result, best * 1e6,
                   memory_name(memory), device_name(device, ordinal, sizeof ordinal));
        else
            printf("%-8s dot failed: %s: %s\n", strategies[s].name, cudot_status_string(status), cudot_last_error(ctx));
        cudot_deinit(ctx);
    }
    return 0;
}
