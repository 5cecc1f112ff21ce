/* primary_contexts.h - tests: which GPUs have an active primary CUDA context in this process, asked of the
 * driver itself (loaded with dlopen, so test programs need no libcuda to link or to run where none is). */
#ifndef CUDOT_TEST_PRIMARY_CONTEXTS_H
#define CUDOT_TEST_PRIMARY_CONTEXTS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Bit d is set when device d's primary context is active. *devices gets the visible device count.
 * Returns -1 (and *devices = 0) where there is no driver or no device. */
long long cudot_test_active_primaries(int *devices);

#ifdef __cplusplus
}
#endif

#endif
