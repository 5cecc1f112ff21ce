/* consumer.c - a program built against an installed cudot (find_package or pkg-config). */
#include <stdio.h>

#include "cudot.h"

int main(void) {
    cudot_ctx *ctx = NULL;
    cudot_config config = CUDOT_CONFIG_INIT;
    config.memory = CUDOT_MEMORY_HOST;
    if (cudot_init(&ctx, 3, &config) != CUDOT_OK) return 1;
    float *x, *y;
    cudot_get_inputs(ctx, (void **)&x, (void **)&y);
    for (int i = 0; i < 3; ++i) x[i] = y[i] = (float)(i + 1);
    double r = 0.0;
    int bad = cudot_dot(ctx, &r) != CUDOT_OK || r != 14.0;
    cudot_deinit(ctx);
    if (!bad) printf("consumer ok\n");
    return bad;
}
