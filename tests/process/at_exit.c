/* at_exit.c - cudot called during process exit: from an atexit handler registered before the library
 * was first used (so it runs after everything the library set up on first use would have been torn
 * down, had it been torn down), and with a context still live at exit. The handler does dots that
 * share work with the thread pool, checks them, and destroys the contexts. Exit code 0 on success;
 * a hang is caught by CTest's timeout.
 * With the argument "gpu" it also makes a PINNED and a MANAGED context before exit and, in the same
 * handler (which runs after the CUDA runtime's own teardown), dots and destroys them: each call must
 * return CUDOT_OK or CUDOT_ERROR_CUDA, never crash or hang. It prints what they returned (the
 * documented behaviour, docs/RELIABILITY.md), or SKIPPED without a GPU. */
#include <cudot.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <process.h> /* _exit */
#else
#include <unistd.h>
#endif

enum { kN = 1 << 21 }; /* 16 MiB of f32 x and y: the HOST dot shares it with the thread pool */

static cudot_ctx *ctx_a, *ctx_b, *gpu_ctx[2];
static double want;

static int fill_and_dot(cudot_ctx *ctx, double *result) {
    void *x, *y;
    if (cudot_get_inputs(ctx, &x, &y) != CUDOT_OK) return 0;
    for (size_t i = 0; i < kN; ++i) {
        ((float *)x)[i] = (float)(i % 9) - 4.0f;
        ((float *)y)[i] = (float)(i % 4) * 0.25f;
    }
    return cudot_dot(ctx, result) == CUDOT_OK;
}

static void late(void) {
    double r = 0;
    /* A dot and a deinit on a context made before exit began, then a whole new context. */
    if (cudot_dot(ctx_a, &r) != CUDOT_OK || r != want) {
        fprintf(stderr, "at_exit: dot in the atexit handler failed (%s) or gave %.17g, want %.17g\n",
                cudot_last_error(ctx_a), r, want);
        _exit(1);
    }
    if (cudot_deinit(ctx_a) != CUDOT_OK) _exit(2);
    cudot_ctx *fresh = NULL;
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    if (cudot_init(&fresh, kN, &c) != CUDOT_OK || !fill_and_dot(fresh, &r) || r != want) _exit(3);
    if (cudot_deinit(fresh) != CUDOT_OK) _exit(4);
    for (int i = 0; i < 2; ++i) {
        if (!gpu_ctx[i]) continue;
        const cudot_status dotted = cudot_dot(gpu_ctx[i], &r);
        const char *why = dotted == CUDOT_OK ? "" : cudot_last_error(gpu_ctx[i]);
        printf("at_exit: GPU context %d after CUDA's teardown: dot %s%s%s", i, cudot_status_string(dotted),
               *why ? " (" : "", why);
        if (*why) printf(")");
        if (dotted != CUDOT_OK && dotted != CUDOT_ERROR_CUDA) _exit(5);
        const cudot_status gone = cudot_deinit(gpu_ctx[i]);
        printf(", deinit %s\n", cudot_status_string(gone));
        if (gone != CUDOT_OK && gone != CUDOT_ERROR_CUDA) _exit(6);
    }
    printf("at_exit: dots and deinits from an atexit handler OK\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (atexit(late) != 0) return 10;
    if (argc > 1 && strcmp(argv[1], "gpu") == 0) {
        const int32_t kinds[2] = {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MANAGED};
        for (int i = 0; i < 2; ++i) {
            cudot_config g = CUDOT_CONFIG_INIT;
            g.memory = kinds[i];
            if (cudot_init(&gpu_ctx[i], 1000, &g) != CUDOT_OK) {
                printf("SKIPPED: no usable GPU: %s\n", cudot_last_error(NULL));
                fflush(stdout);
                _exit(0);
            }
            void *x, *y;
            cudot_get_inputs(gpu_ctx[i], &x, &y);
            for (int k = 0; k < 1000; ++k) ((float *)x)[k] = ((float *)y)[k] = 1.0f;
            double r = 0;
            if (cudot_dot(gpu_ctx[i], &r) != CUDOT_OK || r != 1000.0) return 13;
        }
    }
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    if (cudot_init(&ctx_a, kN, &c) != CUDOT_OK || cudot_init(&ctx_b, kN, &c) != CUDOT_OK) return 11;
    if (!fill_and_dot(ctx_a, &want) || !fill_and_dot(ctx_b, &want)) return 12;
    /* ctx_b is left live at exit, on purpose: the library must not trip over it. */
    return 0;
}
