// devices.cu - which GPUs a context gets, whether they can run this build, and what AUTO resolves to.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

#include "../core/order.hpp"
#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "device_health.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

cudot_status device_list(int32_t device, std::vector<int> &out, ErrorSink err) {
    out.clear();
    if (device != CUDOT_DEVICE_ALL) {
        out.push_back(device);
        return CUDOT_OK;
    }
#if defined(CUDOT_TESTING)
    if (seams::forced_devices(out)) return CUDOT_OK;
#endif
    int count = 0;
    CUDOT_CUDA_TRY(err, cudaGetDeviceCount(&count));
    for (int d = 0; d < count; ++d) out.push_back(d);
    return CUDOT_OK;
}

static cudot_status probe_one(int device, ErrorSink err) {
    CUDOT_CUDA_TRY_AS(err, use_primary_context(device), "cuCtxSetCurrent (the device's primary context)");
    if (is_stuck(device)) return refuse_stuck(err, device, "cudot_init");
    const cudaError_t e = checked(kernels_load());
    // Only these say that the build has no code this GPU can run; anything else (a device context a
    // crashed kernel poisoned, no memory, ...) is reported as the CUDA failure it is.
    const bool no_code = e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction ||
                         e == cudaErrorUnsupportedPtxVersion || e == cudaErrorInvalidKernelImage ||
                         e == cudaErrorInvalidPtx || e == cudaErrorInvalidSource;
    if (e != cudaSuccess && !no_code) return cuda_fail(err, e, "cudaFuncGetAttributes (loading the dot kernel)");
    if (e != cudaSuccess) {
        cudaDeviceProp prop;
        if (note(cudaGetDeviceProperties(&prop, device)) != cudaSuccess) prop = cudaDeviceProp{};
        return fail(err, CUDOT_ERROR_NO_DEVICE,
                    "GPU %d (%s, compute capability %d.%d) cannot run this build's kernels: %s (%s)", device,
                    prop.name, prop.major, prop.minor, cudaGetErrorString(e), cudaGetErrorName(e));
    }
    return CUDOT_OK;
}

// The NVIDIA driver's library, as the CUDA runtime looks for it.
#if defined(_WIN32)
static const char kDriverLibrary[] = "nvcuda.dll";
#else
static const char kDriverLibrary[] = "libcuda.so.1";
#endif

// CUDA says "driver version is insufficient" both when the driver is too old and when there is none at
// all, which sends a user without a GPU after the wrong fix. Looking for the driver's library tells the two
// apart: *found says whether it loads, *version (cuDriverGetVersion: 1000 * major + 10 * minor) what it
// supports, 0 if unknown; `why` gets the loader's reason when it does not load.
static void look_for_driver(bool *found, int *version, char *why, std::size_t why_size) {
    *found = false;
    *version = 0;
    using VersionFn = int (*)(int *);
    VersionFn get_version = nullptr;
#if defined(_WIN32)
    HMODULE lib = LoadLibraryExA(kDriverLibrary, nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
    if (!lib) {
        std::snprintf(why, why_size, "Windows error %lu", static_cast<unsigned long>(GetLastError()));
        return;
    }
    get_version = reinterpret_cast<VersionFn>(reinterpret_cast<void *>(GetProcAddress(lib, "cuDriverGetVersion")));
#else
    void *lib = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *reason = dlerror();
        std::snprintf(why, why_size, "%s", reason ? reason : "not found");
        return;
    }
    get_version = reinterpret_cast<VersionFn>(dlsym(lib, "cuDriverGetVersion"));
#endif
    *found = true;  // the library stays loaded: the CUDA runtime holds it too, and unloading gains nothing
    int v = 0;
    if (get_version && get_version(&v) == 0) *version = v;
}

// Why cudaGetDeviceCount failed, in words that point at the right fix.
static cudot_status no_usable_gpu(cudaError_t e, ErrorSink err) {
    if (e == cudaErrorInsufficientDriver) {
        bool found = false;
        int version = 0;
        char why[256] = "";
        look_for_driver(&found, &version, why, sizeof why);
        if (!found)
            return fail(err, CUDOT_ERROR_NO_DEVICE,
                        "no usable GPU: no NVIDIA driver on this machine (%s does not load: %s); the HOST "
                        "strategy (and AUTO, which falls back to it) works without one", kDriverLibrary, why);
        if (version > 0 && version < CUDART_VERSION)
            return fail(err, CUDOT_ERROR_NO_DEVICE,
                        "no usable GPU: the NVIDIA driver is too old for this build: it supports CUDA %d.%d, and this "
                        "cudot was built with CUDA %d.%d; update the driver (or use the HOST strategy)",
                        version / 1000, version % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    }
    if (e == cudaErrorNoDevice) {
        const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
        return fail(err, CUDOT_ERROR_NO_DEVICE,
                    "no usable GPU: the NVIDIA driver is installed but sees no GPU (cudaErrorNoDevice)%s%s%s",
                    visible ? "; CUDA_VISIBLE_DEVICES is \"" : "", visible ? visible : "", visible ? "\"" : "");
    }
    return fail(err, CUDOT_ERROR_NO_DEVICE, "no usable GPU: cudaGetDeviceCount failed: %s (%s)", cudaGetErrorString(e),
                cudaGetErrorName(e));
}

static cudot_status probe_devices(int32_t device, ErrorSink err) {
    int count = 0;
    cudaError_t e = note(cudaGetDeviceCount(&count));
    if (e != cudaSuccess) return no_usable_gpu(e, err);
    if (count == 0)
        return fail(err, CUDOT_ERROR_NO_DEVICE, "no usable GPU: the NVIDIA driver is installed but sees no GPU");
    if (device >= count)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "config->device %d does not exist: %d CUDA device(s) present",
                    static_cast<int>(device), count);
    std::vector<int> devices;
    cudot_status status = device_list(device, devices, err);
    for (std::size_t i = 0; status == CUDOT_OK && i < devices.size(); ++i) status = probe_one(devices[i], err);
    return status;
}

cudot_status probe(int32_t device, ErrorSink err) {
    CallerCudaState caller;
    return caller.restore(probe_devices(device, err), err);
}

bool can_map(int device) {
    int yes = 0;
    if (note(cudaDeviceGetAttribute(&yes, cudaDevAttrCanMapHostMemory, device)) != cudaSuccess) yes = 0;
    return yes != 0;
}

bool managed_fits(std::size_t free_bytes, std::size_t x_bytes, std::size_t y_bytes) {
    const std::size_t reserve = std::max<std::size_t>(free_bytes / 16, std::size_t(256) << 20);
    return x_bytes <= free_bytes / 2 && y_bytes <= free_bytes / 2 && x_bytes + y_bytes + reserve <= free_bytes;
}

// MAPPED, or PINNED where a GPU cannot map host memory. With CUDOT_AUTO_MANAGED=1 in the environment
// (read at each init; an opt-in while it is measured): MANAGED where every GPU shares
// managed memory with the host while kernels run and the buffers fit in every GPU's free memory
// (auto_dot.cpp then keeps inputs the host leaves alone in GPU memory). A CUDA call that fails here only
// narrows the choice: create() reports failures.
int32_t auto_strategy(int32_t device, std::size_t n, std::size_t x_size, std::size_t y_size) {
    CallerCudaState caller;
    std::vector<int> devices;
    if (device_list(device, devices, ErrorSink{nullptr, 0}) != CUDOT_OK) return CUDOT_MEMORY_PINNED;
    for (int d : devices)
        if (!can_map(d)) return CUDOT_MEMORY_PINNED;
    const char *opt_in = std::getenv("CUDOT_AUTO_MANAGED");
    if (!opt_in || std::strcmp(opt_in, "1") != 0) return CUDOT_MEMORY_MAPPED;
#if defined(CUDOT_TESTING)
    if (seams::no_concurrent_managed()) return CUDOT_MEMORY_MAPPED;  // as on a GPU without concurrent access
#endif
    // Each GPU holds its run of the tiles (buffers.cu's slice_elements).
    const std::size_t count = devices.size(), tiles = order::tile_count(n);
    const std::size_t run = count == 1 ? n : std::min(n, (tiles + count - 1) / count * order::kTile);
    const std::size_t share_x = run * x_size, share_y = run * y_size;
    for (int d : devices) {
        int concurrent = 0;
        std::size_t free_bytes = 0, total_bytes = 0;
        if (cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, d) != cudaSuccess || !concurrent)
            return CUDOT_MEMORY_MAPPED;
        if (use_primary_context(d) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess ||
            !managed_fits(free_bytes, share_x, share_y))
            return CUDOT_MEMORY_MAPPED;
    }
    return CUDOT_MEMORY_MANAGED;
}

}  // namespace cuda
}  // namespace cudot
