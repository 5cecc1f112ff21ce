// seams.hpp - the few places where the test build reaches into the library's behaviour.
//
// The shipped library is compiled without CUDOT_TESTING: there every CUDOT_TEST_SEAM(...) is empty, so
// it holds no test state and takes no test branch. The test build (CMake's cudot_testing) compiles the
// same sources with CUDOT_TESTING and links the testing unit beside them (testing.cpp, testing_cuda.cu),
// which holds the knobs that tests set through testing.hpp and answers these calls.
#pragma once

#if defined(CUDOT_TESTING)

#include <string>
#include <vector>

struct cudot_ctx;

namespace cudot {
namespace seams {
// api.cpp, each lookup of a context handle: throws as a failing lock would, when a test asked.
void lookup();
// process_limits.cpp: true, with a fake cgroup tree and membership, when a test set them.
bool fake_cgroup(std::string &root, std::string &self_cgroup);
// src/cpu/tile_kernels.cpp, before a kernel table is built: sleeps as long as a test asked.
void kernel_table_build();
// src/cpu/fma_mingw.cpp: whether the baseline copy's fma must take the software path.
bool software_fma();
// Each checked CUDA call's result (a cudaError_t): an injected fault in place of the call's own result
// when this is the call a test waits for.
int cuda_result(int error);
// src/cuda/devices.cu: true, with the GPUs that CUDOT_DEVICE_ALL inits on this thread use, when a test
// forced them; whether MANAGED inits on this thread act as if no GPU had concurrent managed access.
bool forced_devices(std::vector<int> &devices);
bool no_concurrent_managed();
// src/cuda/host_pipeline.cu: 0 by size, 1 never, 2 at any size.
int host_pipeline_mode();
// src/cuda/launch.cu, before each dot kernel is queued on `stream` (a cudaStream_t) of GPU `device`: a
// kernel that spins while a test holds the device's kernels (a GPU that hangs).
void before_launch(int device, void *stream);
// src/auto/auto_dot.cpp: true, with the GPUs' share, when a test fixed the CPU+GPU split of ctx's dots.
bool fixed_split(const cudot_ctx &ctx, double *share);
}  // namespace seams
}  // namespace cudot

#define CUDOT_TEST_SEAM(...) __VA_ARGS__
#else
#define CUDOT_TEST_SEAM(...)
#endif
