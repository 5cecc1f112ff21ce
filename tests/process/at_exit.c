/* at_exit.c - cudot called during process exit: from an atexit handler registered before the library
 * was first used (so it runs after everything the library set up on first use would have been torn
 * down, had it been torn down), and with a context still live at exit. The handler does dots that
 * share work with the thread pool, checks them, and destroys the contexts. Exit code 0 on success;
 * a hang is caught by CTest's timeout. */
#include <cudot.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { kN = 1 << 21 }; /* 16 MiB of f32 x and y: the HOST dot shares it with the thread pool */

static cudot_ctx *ctx_a, *ctx_b;
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
    printf("at_exit: dots and deinits from an atexit handler OK\n");
    fflush(stdout);
}

int main(void) {
    if (atexit(late) != 0) return 10;
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    if (cudot_init(&ctx_a, kN, &c) != CUDOT_OK || cudot_init(&ctx_b, kN, &c) != CUDOT_OK) return 11;
    if (!fill_and_dot(ctx_a, &want) || !fill_and_dot(ctx_b, &want)) return 12;
    /* ctx_b is left live at exit, on purpose: the library must not trip over it. */
    return 0;
}
