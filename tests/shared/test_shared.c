/* test_shared.c - a C caller linked against libcudot.so exactly as users link it: the public API only.
 * Exits non-zero (with a line saying why) on the first wrong answer. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cudot.h"

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main(void) {
    cudot_ctx *ctx = NULL;
    cudot_config config = CUDOT_CONFIG_INIT;
    config.memory = CUDOT_MEMORY_HOST;
    const size_t n = 1000; /* the tutorial's block count turned this size into 0 */
    CHECK(cudot_init(&ctx, n, &config) == CUDOT_OK);
    float *x = NULL, *y = NULL;
    CHECK(cudot_get_inputs(ctx, (void **)&x, (void **)&y) == CUDOT_OK);
    for (size_t i = 0; i < n; ++i) {
        x[i] = (float)i;
        y[i] = 2.0f;
    }
    double r = 0.0;
    CHECK(cudot_dot(ctx, &r) == CUDOT_OK);
    CHECK(r == 999000.0); /* 2 * (0 + 1 + ... + 999) */
    CHECK(cudot_dot_n(ctx, 10, &r) == CUDOT_OK);
    CHECK(r == 90.0);
    CHECK(cudot_dot_n(ctx, n + 1, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(cudot_last_error(ctx), "capacity") != NULL);
    CHECK(cudot_deinit(ctx) == CUDOT_OK);
    CHECK(cudot_deinit(NULL) == CUDOT_OK);
    CHECK(cudot_version() / 10000 == CUDOT_VERSION_MAJOR);
    CHECK(strcmp(cudot_status_string((cudot_status)42), "CUDOT_ERROR_UNKNOWN") == 0);
    printf("shared library C caller: ok (cudot %s)\n", cudot_version_string());
    return 0;
}
