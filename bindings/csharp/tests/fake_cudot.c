/* fake_cudot.c - a stand-in libcudot for test.sh's loader checks: it answers only the calls the
 * binding makes while loading, with a version chosen at compile time (-DFAKE_VERSION=20000).
 * With -DFAKE_ROWS it also has cudot_dot_rows as 1.9 to 1.13 have it, for tests/rows/OldRows.cs: it knows
 * the first 136 bytes of cudot_rows and accepts a larger struct only while the bytes beyond are zero. */
#include <stdint.h>
#include <string.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 20000
#endif

uint32_t cudot_version(void) { return FAKE_VERSION; }
const char *cudot_version_string(void) { return "fake"; }
const char *cudot_status_string(int status) { (void)status; return "FAKE"; }

#ifdef FAKE_ROWS
static const char *message = "";
const char *cudot_last_error(const void *ctx) { (void)ctx; return message; }
int cudot_dot_rows(const uint32_t *r, double *results) {
    static const char zero[4096];
    if (r[0] < 136 || r[0] > 4096) { message = "cudot_dot_rows: fake: bad size"; return 1; }
    if (r[0] > 136 && memcmp((const char *)r + 136, zero, r[0] - 136) != 0) {
        message = "cudot_dot_rows: fake: fields newer than this library"; return 4;
    }
    results[0] = 4.0; /* what a canonical sum might give: the binding must not ask for the exact mode here */
    return 0;
}
#endif
