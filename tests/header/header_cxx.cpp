// header_cxx.cpp - cudot.h must compile alone as C++ with every warning on.
#include "cudot.h"

static_assert(sizeof(cudot_config) == 24, "cudot_config 1.5 is 24 bytes (1.0 was 16, 1.1 20); it may only grow");
static_assert(CUDOT_OK == 0 && CUDOT_ERROR_INTERNAL == 6, "status values are fixed");

int main() {
    cudot_config config = CUDOT_CONFIG_INIT;
    return config.memory == CUDOT_MEMORY_AUTO && config.device == 0 ? 0 : 1;
}
