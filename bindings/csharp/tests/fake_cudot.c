/* fake_cudot.c - a stand-in libcudot for test.sh's loader checks: it answers only the calls the
 * binding makes while loading, with a version chosen at compile time (-DFAKE_VERSION=20000). */
#include <stdint.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 20000
#endif

uint32_t cudot_version(void) { return FAKE_VERSION; }
const char *cudot_version_string(void) { return "fake"; }
const char *cudot_status_string(int status) { (void)status; return "FAKE"; }
