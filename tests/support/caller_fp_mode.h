/* caller_fp_mode.h - what a caller's thread may do to its floating-point control register before it calls
 * cudot: flush subnormals to zero and round toward zero, as code built with -Ofast or an audio or ML
 * library leaves it. C99 and C++. CALLER_FP_MODE_AVAILABLE is 0 where the tests know no such register. */
#ifndef CUDOT_TEST_CALLER_FP_MODE_H
#define CUDOT_TEST_CALLER_FP_MODE_H

#include <stdint.h>

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define CALLER_FP_MODE_AVAILABLE 1
#define CALLER_FP_MODE_NAME "MXCSR FTZ|DAZ, round toward zero"
/* MXCSR without its sticky exception flags (bits 0-5). */
static inline uint64_t caller_fp_control(void) { return _mm_getcsr() & ~0x3fu; }
static inline void caller_fp_set_control(uint64_t v) { _mm_setcsr((unsigned)v); }
static inline uint64_t caller_fp_default(void) { return 0x1f80u; }
/* FTZ (bit 15), DAZ (bit 6), rounding toward zero (bits 13-14 = 11). */
static inline uint64_t caller_fp_flush_toward_zero(void) { return 0x1f80u | 0x8040u | 0x6000u; }
#elif defined(__aarch64__) && defined(__GNUC__)
#define CALLER_FP_MODE_AVAILABLE 1
#define CALLER_FP_MODE_NAME "FPCR FZ|FZ16, round toward zero"
static inline uint64_t caller_fp_control(void) {
    uint64_t v;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
    return v;
}
static inline void caller_fp_set_control(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v) : "memory"); }
static inline uint64_t caller_fp_default(void) { return 0; }
/* FZ (bit 24), FZ16 (bit 19), RMode = 11 (toward zero, bits 22-23). */
static inline uint64_t caller_fp_flush_toward_zero(void) {
    return (UINT64_C(1) << 24) | (UINT64_C(1) << 19) | (UINT64_C(3) << 22);
}
#else
#define CALLER_FP_MODE_AVAILABLE 0
#endif

#endif
