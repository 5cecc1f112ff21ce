// header_cxx.cpp - cudot.h must compile alone as C++ with every warning on.
#include <cstddef>

#include "cudot.h"

static_assert(sizeof(cudot_config) == 40, "cudot_config 1.13 is 40 bytes (1.0 was 16, 1.1 20, 1.5 24, 1.10 32); it may only grow");
static_assert(offsetof(cudot_config, rows) == 24, "rows follows wait_ms");
static_assert(offsetof(cudot_config, mode) == 32 && offsetof(cudot_config, reserved) == 36, "mode follows rows");
static_assert(CUDOT_EXACT_PARTIAL_BYTES == 1120, "an exact partial's size is fixed");
static_assert(sizeof(void *) != 8 || sizeof(cudot_arrays) == 96, "cudot_arrays 1.11 is 96 bytes (1.7 was 88)");
static_assert(sizeof(void *) != 8 || offsetof(cudot_arrays, mode) == 88, "mode follows y_ready");
static_assert(CUDOT_MODE_CANONICAL == 0 && CUDOT_MODE_EXACT == 1, "mode values are fixed");
static_assert(CUDOT_OK == 0 && CUDOT_ERROR_INTERNAL == 6, "status values are fixed");

int main() {
    cudot_config config = CUDOT_CONFIG_INIT;
    cudot_arrays arrays = CUDOT_ARRAYS_INIT;
    return config.memory == CUDOT_MEMORY_AUTO && config.device == 0 && arrays.mode == CUDOT_MODE_CANONICAL ? 0 : 1;
}
