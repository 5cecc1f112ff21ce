/* header_c99.c - cudot.h must compile alone as strict C99 (-Wall -Wextra -pedantic -Werror). */
#include "cudot.h"

int main(void) {
    cudot_config config = CUDOT_CONFIG_INIT;
    cudot_status status = CUDOT_OK;
    (void)status;
    return (config.size == sizeof(cudot_config) && config.dtype == CUDOT_F32 && CUDOT_ERROR_INTERNAL == 6 &&
            CUDOT_MEMORY_HOST == 4 && CUDOT_F64 == 2)
               ? 0
               : 1;
}
