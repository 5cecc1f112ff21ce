/* config_spy.c - a stand-in libcudot for the bindings' tests: its cudot_init refuses every request
 * (CUDOT_ERROR_UNSUPPORTED) with a message that spells out the cudot_config it received, read through
 * include/cudot.h as the library reads it (the first min(size, sizeof) bytes). A binding's test loads
 * it in place of the library and checks that each option it was given arrived in its field: on a
 * machine without a GPU the real library gives options such as wait_ms no visible effect, so this is
 * where a mirror that lays the struct out differently from the header, or drops a field, shows.
 *
 *     cc -shared -fPIC -I include -Wl,-soname,libcudot.so.1 -o libcudot_spy.so bindings/testing/config_spy.c
 *
 * The message, one line: "config spy: n=N size=S sizeof=Z dtype=D memory=M device=V y_dtype=Y
 * wait_ms=W rows=R", with sizeof the header's sizeof(cudot_config). Every other function of the header exists,
 * so that every binding loads it; those fail with CUDOT_ERROR_INVALID_ARGUMENT. */
#include <stdio.h>
#include <string.h>

#include "cudot.h"

static char message[512] = "";

cudot_status cudot_init(cudot_ctx **ctx, size_t n, const cudot_config *config) {
    cudot_config c;
    if (ctx) *ctx = NULL;
    if (!config) {
        snprintf(message, sizeof message, "config spy: n=%zu config=NULL", n);
        return CUDOT_ERROR_UNSUPPORTED;
    }
    memset(&c, 0, sizeof c);
    memcpy(&c, config, config->size < sizeof c ? config->size : sizeof c);
    snprintf(message, sizeof message,
             "config spy: n=%zu size=%u sizeof=%u dtype=%d memory=%d device=%d y_dtype=%d wait_ms=%u rows=%llu",
             n, (unsigned)config->size, (unsigned)sizeof(cudot_config), (int)c.dtype, (int)c.memory, (int)c.device,
             (int)c.y_dtype, (unsigned)c.wait_ms, (unsigned long long)c.rows);
    return CUDOT_ERROR_UNSUPPORTED;
}

static cudot_status refuse(void) {
    snprintf(message, sizeof message, "config spy: only cudot_init is answered");
    return CUDOT_ERROR_INVALID_ARGUMENT;
}

cudot_status cudot_get_inputs(cudot_ctx *ctx, void **x, void **y) { (void)ctx, (void)x, (void)y; return refuse(); }
cudot_status cudot_dot(cudot_ctx *ctx, double *r) { (void)ctx, (void)r; return refuse(); }
cudot_status cudot_dot_n(cudot_ctx *ctx, size_t n, double *r) { (void)ctx, (void)n, (void)r; return refuse(); }
cudot_status cudot_deinit(cudot_ctx *ctx) { return ctx ? refuse() : CUDOT_OK; }
cudot_status cudot_get_memory(const cudot_ctx *ctx, int32_t *m, int32_t *d) { (void)ctx, (void)m, (void)d; return refuse(); }
cudot_status cudot_get_dtypes(const cudot_ctx *ctx, int32_t *x, int32_t *y) { (void)ctx, (void)x, (void)y; return refuse(); }
cudot_status cudot_get_capacity(const cudot_ctx *ctx, size_t *n) { (void)ctx, (void)n; return refuse(); }
cudot_status cudot_get_rows(const cudot_ctx *ctx, size_t *rows, size_t *n) { (void)ctx, (void)rows, (void)n; return refuse(); }
cudot_status cudot_dot_each_row(cudot_ctx *ctx, size_t rows, size_t n, double *results) {
    (void)ctx, (void)rows, (void)n, (void)results;
    return refuse();
}
cudot_status cudot_tile_partials(cudot_ctx *ctx, size_t first, size_t n, void *out) {
    (void)ctx, (void)first, (void)n, (void)out;
    return refuse();
}
cudot_status cudot_join_partials(int32_t x, int32_t y, const void *p, size_t tiles, double *r) {
    (void)x, (void)y, (void)p, (void)tiles, (void)r;
    return refuse();
}
cudot_status cudot_dot_arrays(const cudot_arrays *a, double *r) { (void)a, (void)r; return refuse(); }
cudot_status cudot_dot_arrays_async(const cudot_arrays *a, double *r) { (void)a, (void)r; return refuse(); }
cudot_status cudot_tile_partials_arrays(const cudot_arrays *a, void *out) { (void)a, (void)out; return refuse(); }
cudot_status cudot_register_host(const void *p, size_t bytes) { (void)p, (void)bytes; return refuse(); }
cudot_status cudot_unregister_host(const void *p) { (void)p; return refuse(); }

const char *cudot_status_string(cudot_status status) {
    static const char *const names[] = {"CUDOT_OK", "CUDOT_ERROR_INVALID_ARGUMENT", "CUDOT_ERROR_OUT_OF_MEMORY",
                                        "CUDOT_ERROR_NO_DEVICE", "CUDOT_ERROR_UNSUPPORTED", "CUDOT_ERROR_CUDA",
                                        "CUDOT_ERROR_INTERNAL"};
    return (unsigned)status < sizeof names / sizeof names[0] ? names[status] : "CUDOT_ERROR_UNKNOWN";
}
const char *cudot_last_error(const cudot_ctx *ctx) { (void)ctx; return message; }
uint32_t cudot_version(void) { return CUDOT_VERSION_NUMBER; }
const char *cudot_version_string(void) { return "config spy"; }
