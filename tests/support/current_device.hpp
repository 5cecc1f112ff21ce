// current_device.hpp - the calling thread's current CUDA device, for test files that use the CUDA runtime
// themselves: a guard that gives it back at the end of its scope, and the count of visible GPUs.
#pragma once

#include <cuda_runtime.h>

namespace test {

// Notes the current device and makes it current again when the scope ends, however it ends (a failed
// REQUIRE throws): a case that leaves another device current makes every later case of the process
// allocate, and have cudot work, on that device.
class CurrentDevice {
   public:
    CurrentDevice() {
        if (cudaGetDevice(&device_) != cudaSuccess) device_ = -1;
    }
    ~CurrentDevice() {
        if (device_ >= 0) cudaSetDevice(device_);
    }
    int device() const { return device_; }
    CurrentDevice(const CurrentDevice &) = delete;
    CurrentDevice &operator=(const CurrentDevice &) = delete;

   private:
    int device_ = -1;
};

// How many GPUs the CUDA runtime sees (0 when it cannot say).
inline int visible_gpus() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

}  // namespace test
