/* primary_contexts.c - see primary_contexts.h. */
#include "primary_contexts.h"

#include <dlfcn.h>
#include <stddef.h>

typedef int (*init_fn)(unsigned);
typedef int (*count_fn)(int *);
typedef int (*get_fn)(int *, int);
typedef int (*state_fn)(int, unsigned *, int *);

long long cudot_test_active_primaries(int *devices) {
    *devices = 0;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) return -1;
    init_fn init = (init_fn)dlsym(cuda, "cuInit");
    count_fn count = (count_fn)dlsym(cuda, "cuDeviceGetCount");
    get_fn get = (get_fn)dlsym(cuda, "cuDeviceGet");
    state_fn state = (state_fn)dlsym(cuda, "cuDevicePrimaryCtxGetState");
    int n = 0;
    if (!init || !count || !get || !state || init(0) != 0 || count(&n) != 0 || n <= 0) return -1;
    long long mask = 0;
    for (int d = 0; d < n && d < 63; ++d) {
        int dev = 0, active = 0;
        unsigned flags = 0;
        if (get(&dev, d) == 0 && state(dev, &flags, &active) == 0 && active) mask |= 1LL << d;
    }
    *devices = n;
    return mask; /* the handle stays open: the process's CUDA runtime has the same library loaded */
}
