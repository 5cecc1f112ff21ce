/* load_unload.c LIBRARY [ROUNDS] - load the library at run time (dlopen / LoadLibrary), make a HOST
 * context large enough that the dot shares work with the thread pool, check the dot, destroy the
 * context, unload the library (dlclose / FreeLibrary), and repeat; then exit with the pool's workers
 * still alive. The workers run the library's code and are never joined, so an unload that really
 * unmapped the library would crash them, and a join during unload or exit would hang (CTest's timeout).
 * Prints "load_unload OK" and exits 0 on success. */
#include <cudot.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(_WIN32)
#include <windows.h>
typedef HMODULE library;
static library open_library(const char *path) { return LoadLibraryA(path); }
static void *find(library lib, const char *name) { return (void *)GetProcAddress(lib, name); }
static int close_library(library lib) { return FreeLibrary(lib) ? 0 : -1; }
#else
#include <dlfcn.h>
typedef void *library;
static library open_library(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static void *find(library lib, const char *name) { return dlsym(lib, name); }
static int close_library(library lib) { return dlclose(lib); }
#endif

enum { kN = 1 << 22 }; /* 32 MiB of f32 x and y: large enough that the dot uses the pool */

typedef cudot_status (*init_fn)(cudot_ctx **, size_t, const cudot_config *);
typedef cudot_status (*get_inputs_fn)(cudot_ctx *, void **, void **);
typedef cudot_status (*dot_fn)(cudot_ctx *, double *);
typedef cudot_status (*deinit_fn)(cudot_ctx *);

static int round_trip(const char *path, int round, double want) {
    library lib = open_library(path);
    if (!lib) {
        fprintf(stderr, "load_unload: round %d: cannot load %s\n", round, path);
        return 0;
    }
    init_fn init = (init_fn)find(lib, "cudot_init");
    get_inputs_fn get_inputs = (get_inputs_fn)find(lib, "cudot_get_inputs");
    dot_fn dot = (dot_fn)find(lib, "cudot_dot");
    deinit_fn deinit = (deinit_fn)find(lib, "cudot_deinit");
    if (!init || !get_inputs || !dot || !deinit) {
        fprintf(stderr, "load_unload: round %d: a cudot_* symbol is missing from %s\n", round, path);
        return 0;
    }
    cudot_config config = CUDOT_CONFIG_INIT;
    config.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = NULL;
    void *x, *y;
    if (init(&ctx, kN, &config) != CUDOT_OK || get_inputs(ctx, &x, &y) != CUDOT_OK) {
        fprintf(stderr, "load_unload: round %d: init failed\n", round);
        return 0;
    }
    for (size_t i = 0; i < kN; ++i) {
        ((float *)x)[i] = (float)(i % 9) - 4.0f;
        ((float *)y)[i] = (float)(i % 4) * 0.25f;
    }
    int ok = 1;
    for (int k = 0; k < 4 && ok; ++k) {
        double r = 0;
        if (dot(ctx, &r) != CUDOT_OK || r != want) {
            fprintf(stderr, "load_unload: round %d: dot gave %.17g, want %.17g\n", round, r, want);
            ok = 0;
        }
    }
    if (deinit(ctx) != CUDOT_OK) ok = 0;
    if (close_library(lib) != 0) {
        fprintf(stderr, "load_unload: round %d: unloading failed\n", round);
        ok = 0;
    }
    return ok;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: load_unload LIBRARY [ROUNDS]\n");
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    double want = 0; /* exact in double: small integers and quarters */
    for (size_t i = 0; i < kN; ++i) want += (double)((float)(i % 9) - 4.0f) * (double)((float)(i % 4) * 0.25f);
    for (int round = 0; round < rounds; ++round)
        if (!round_trip(argv[1], round, want)) return 1;
    printf("load_unload OK: %d rounds of load, dot, unload\n", rounds);
    return 0;
}
