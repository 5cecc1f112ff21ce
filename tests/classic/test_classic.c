/* test_classic.c - the classic drop-in library: the tutorial's four functions, as its callers use them.
 * Exits non-zero, saying why, on the first wrong answer. */
#define _POSIX_C_SOURCE 200112L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct Ctx Ctx;
void init(Ctx **p, size_t n);
void getInputs(Ctx *ctx, float **px, float **py);
void dot(Ctx *ctx, float *r);
void deinit(Ctx *ctx);

/* The strategy is chosen by the environment: setenv is POSIX; Windows' CRT has _putenv_s. */
static void set_memory_env(const char *value) {
#if defined(_WIN32)
    _putenv_s("CUDOT_MEMORY", value); /* "" removes it: Windows has no empty variables (same as unset) */
#else
    setenv("CUDOT_MEMORY", value, 1);
#endif
}

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

static int run(const char *memory, size_t n) {
    set_memory_env(memory);
    Ctx *ctx = NULL;
    init(&ctx, n);
    CHECK(ctx != NULL);
    float *x = NULL, *y = NULL;
    getInputs(ctx, &x, &y);
    CHECK(x != NULL && y != NULL);
    for (size_t i = 0; i < n; ++i) {
        x[i] = 1.0f;
        y[i] = (float)(i % 4); /* 0 1 2 3 ... */
    }
    float r = -1.0f;
    dot(ctx, &r);
    double expected = 0.0;
    for (size_t i = 0; i < n; ++i) expected += (double)(i % 4);
    CHECK(r == (float)expected);
    deinit(ctx);
    return 0;
}

int main(void) {
    /* n = 1000 is where the tutorial's block count returned 0; 2^20 + 3 is where it dropped the tail. */
    if (run("host", 1000) || run("HOST", (1u << 20) + 3) || run("", 1000)) return 1;
    const char *gpu = getenv("CUDOT_CLASSIC_TEST_GPU"); /* set by the GPU check */
    if (gpu && (run("pinned", 1000) || run("mapped", 1000) || run("managed", (1u << 20) + 3))) return 1;

    Ctx *ctx = (Ctx *)1;
    set_memory_env("bogus");
    init(&ctx, 10);
    CHECK(ctx == NULL); /* unknown strategy: init fails, leaving NULL */
    float r = 0.0f;
    dot(NULL, &r);
    CHECK(isnan(r)); /* documented: dot on a NULL context writes NaN */
    float *px = (float *)1, *py = (float *)1;
    getInputs(NULL, &px, &py);
    CHECK(px == NULL && py == NULL);
    deinit(NULL);
    init(NULL, 10); /* must not crash */
    printf("classic library: ok\n");
    return 0;
}
