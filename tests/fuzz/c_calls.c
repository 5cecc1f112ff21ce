/* c_calls.c - calls the harness makes from C, where an enum argument may hold any int value.
 * cudot.h promises that cudot_status_string answers unknown values with "CUDOT_ERROR_UNKNOWN"; a C
 * caller (or an FFI binding) can pass any integer there, but in C++ forming a cudot_status outside the
 * enum's range is itself undefined, so the conversion happens here, in C, where it is well defined. */
#include "cudot.h"

const char *cudot_fuzz_status_string(int status) { return cudot_status_string((cudot_status)status); }
