// knobs.hpp - guards for the process-wide test knobs of the testing unit (testing.hpp). Each sets its
// knob for the guard's scope and sets it back to the default when the scope ends, however it ends: a
// failed REQUIRE throws out of the middle of a case, and a knob left set would change every case after
// it in the same process (the check after every case, isolation.cpp, fails a case that leaves one set).
// Knobs of one context need no guard: they end with their context.
#pragma once

#include <vector>

#include "testing.hpp"

namespace test {

// CUDOT_DEVICE_ALL inits on this thread use `devices` (a GPU may repeat) instead of every visible GPU;
// an empty list changes nothing. release() gives every visible GPU back before the scope ends.
class ForcedDevices {
   public:
    explicit ForcedDevices(const std::vector<int> &devices) {
        cudot::testing::force_all_devices(devices.data(), static_cast<int>(devices.size()));
    }
    ~ForcedDevices() { release(); }
    void release() { cudot::testing::force_all_devices(nullptr, 0); }
    ForcedDevices(const ForcedDevices &) = delete;
    ForcedDevices &operator=(const ForcedDevices &) = delete;
};

// MANAGED inits on this thread act as if no GPU had concurrent managed access, until release().
class NoConcurrentManaged {
   public:
    NoConcurrentManaged() { cudot::testing::pretend_no_concurrent_managed(true); }
    ~NoConcurrentManaged() { release(); }
    void release() { cudot::testing::pretend_no_concurrent_managed(false); }
    NoConcurrentManaged(const NoConcurrentManaged &) = delete;
    NoConcurrentManaged &operator=(const NoConcurrentManaged &) = delete;
};

// GPU dot kernels launched while held do not finish, as on a hung GPU: every device's (device -1) or one
// device's. release() lets them end before the scope does.
class HeldGpuKernels {
   public:
    explicit HeldGpuKernels(int device = -1) : device_(device) { set(true); }
    ~HeldGpuKernels() { release(); }
    void release() {
        if (held_) set(false);
    }
    HeldGpuKernels(const HeldGpuKernels &) = delete;
    HeldGpuKernels &operator=(const HeldGpuKernels &) = delete;

   private:
    void set(bool on) {
        if (device_ < 0) cudot::testing::hold_gpu_kernels(on);
        else cudot::testing::hold_gpu_device_kernels(device_, on);
        held_ = on;
    }
    int device_;
    bool held_ = false;
};

// The calling thread's (calls_before + 1)-th checked CUDA call from now fails with cuda_error (a
// cudaError_t value); cancel() withdraws it before the scope ends.
class InjectedCudaFault {
   public:
    InjectedCudaFault(unsigned calls_before, int cuda_error) {
        cudot::testing::inject_cuda_fault(calls_before, cuda_error);
    }
    ~InjectedCudaFault() { cancel(); }
    void cancel() { cudot::testing::inject_cuda_fault(0, 0); }
    InjectedCudaFault(const InjectedCudaFault &) = delete;
    InjectedCudaFault &operator=(const InjectedCudaFault &) = delete;
};

// Blocking dots of dense page-locked host arrays: 1 never through the copy engines, 2 at any size.
class HostPipeline {
   public:
    explicit HostPipeline(int mode) { cudot::testing::set_host_pipeline(mode); }
    ~HostPipeline() { cudot::testing::set_host_pipeline(0); }
    HostPipeline(const HostPipeline &) = delete;
    HostPipeline &operator=(const HostPipeline &) = delete;
};

// Limits are read from the cgroup tree at `root`, for the membership `self_cgroup` (the text of a
// /proc/self/cgroup), instead of the process's own.
class LimitsFromCgroupTree {
   public:
    LimitsFromCgroupTree(const char *root, const char *self_cgroup) {
        cudot::testing::use_cgroup_tree(root, self_cgroup);
    }
    ~LimitsFromCgroupTree() { cudot::testing::use_cgroup_tree(nullptr, nullptr); }
    LimitsFromCgroupTree(const LimitsFromCgroupTree &) = delete;
    LimitsFromCgroupTree &operator=(const LimitsFromCgroupTree &) = delete;
};

// Building a CPU kernel table first sleeps `ms` milliseconds; release() stops that before the scope ends.
class DelayedKernelBuild {
   public:
    explicit DelayedKernelBuild(unsigned ms) { cudot::testing::delay_tile_kernel_build(ms); }
    ~DelayedKernelBuild() { release(); }
    void release() { cudot::testing::delay_tile_kernel_build(0); }
    DelayedKernelBuild(const DelayedKernelBuild &) = delete;
    DelayedKernelBuild &operator=(const DelayedKernelBuild &) = delete;
};

// MinGW builds: the baseline kernel copy's fma takes the software path (`on`) or the processor's FMA.
class SoftwareFma {
   public:
    explicit SoftwareFma(bool on) { set(on); }
    ~SoftwareFma() { set(false); }
    void set(bool on) { cudot::testing::set_software_fma(on); }
    SoftwareFma(const SoftwareFma &) = delete;
    SoftwareFma &operator=(const SoftwareFma &) = delete;
};

}  // namespace test
