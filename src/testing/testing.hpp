// testing.hpp - what tests reach inside the library: knobs, counters and fault injection. Only the test
// build has them (CMake's cudot_testing: the library compiled with the seams of core/seams.hpp, and this
// unit); the shipped library has none. Each knob must be set before the calls it should affect, and set
// back before the test case ends (tests/support checks the process-wide ones after every case).
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "../auto/auto_dot.hpp"
#include "cudot.h"

namespace cudot {
namespace testing {
// Caps the CPU threads one dot on ctx may use (0: all).
void set_cpu_threads(cudot_ctx *ctx, unsigned threads);
// Sends even tiny dots on ctx through the thread pool.
void set_cpu_always_parallel(cudot_ctx *ctx, bool on);
// Dots on ctx that read at least this many bytes of x and y together use the thread pool (0: the
// library's threshold for the pair's kind). For tuning the threshold on a given machine.
void set_cpu_parallel_bytes(cudot_ctx *ctx, std::size_t bytes);
// How many jobs the CPU thread pool has shared with its workers in this process so far.
unsigned long long cpu_pool_jobs();
// The CPU thread pool's threads, the calling thread included (starts the pool if it has not started).
unsigned cpu_pool_threads();
// How many times a sleeping pool worker has been woken for a job in this process so far.
unsigned long long cpu_pool_wakeups();
// Limits are read from the cgroup tree at `root` for the membership `self_cgroup` (the text of a
// /proc/self/cgroup) instead of the process's own (root nullptr: the process's own again).
void use_cgroup_tree(const char *root, const char *self_cgroup);
// Building a CPU kernel table (on the first dot of the process) first sleeps this long (0: not at all),
// so tests can fork while another thread is inside the build.
void delay_tile_kernel_build(unsigned ms);
// MinGW builds only (src/cpu/fma_mingw.cpp): the baseline copy's fma uses the software path even on a
// processor with FMA, so tests can compare the two.
void set_software_fma(bool on);
// Forces the dot kernel's grid size on ctx (0: the normal choice).
void set_gpu_blocks(cudot_ctx *ctx, unsigned blocks);
// Fixes the share of tiles the GPU takes in an AUTO (hybrid) dot: 0..1; negative: adapt (the default).
void set_hybrid_share(cudot_ctx *ctx, double share);
// The share the next hybrid dot would use (for tests of the adaptation).
double hybrid_share(const cudot_ctx *ctx);
// AUTO on managed buffers: how many leading elements AUTO has moved into GPU memory (0: all on the host).
std::size_t auto_on_gpus(const cudot_ctx *ctx);
// AUTO on managed buffers: what it decided so far and the times it judged by (auto_dot.hpp).
AutoCounts auto_counts(const cudot_ctx *ctx);
// Fault injection: the calling thread's (calls_before + 1)-th checked CUDA call from now (in init,
// dot or deinit, on any context) is made and then reported as failing with cuda_error (a cudaError_t
// value); 0 cancels. Without CUDA: no effect.
void inject_cuda_fault(unsigned calls_before, int cuda_error);
// Whether the injected fault is still waiting for its call.
bool cuda_fault_pending();
// MANAGED inits on the calling thread treat every GPU as lacking concurrent managed access (Windows,
// WSL2, some embedded GPUs): the context must then never prefetch and wait for every kernel.
void pretend_no_concurrent_managed(bool on);
// The calling thread's next lookup of a context handle throws, as a failing lock would.
void throw_on_next_lookup();
// While on, every GPU dot kernel launched from then on does not finish, as on a hung GPU; turning it off
// lets them end. Without CUDA: no effect.
void hold_gpu_kernels(bool on);
// The same for the kernels of one device only (ordinals 0..15).
void hold_gpu_device_kernels(int device, bool on);
// The bound a GPU wait of a default-configured context gets for a call reading `bytes` (milliseconds).
unsigned long long default_gpu_wait_ms(std::size_t bytes);
// The GPUs that CUDOT_DEVICE_ALL inits on the calling thread use instead of every visible GPU; a GPU
// may repeat (two "GPUs" on one device run the several-GPU split with one). count 0: every visible GPU.
void force_all_devices(const int *devices, int count);
// Dots of own arrays: blocking dots of dense page-locked host arrays through the copy engines: 0 from
// the size threshold (2^22 elements), 1 never (a GPU reads them in place), 2 at any size.
void set_host_pipeline(int mode);
// Frees the per-stream workspaces and result staging of own-array dots (kept until the process ends
// otherwise), for leak checkers; test programs call it before they exit.
void release_own_array_state();
// How many per-stream workspaces dots of own arrays keep on GPU `device` (at most 64 of streams whose
// dots were all blocking; streams that had an asynchronous dot keep theirs). Without CUDA: 0.
std::size_t kept_stream_workspaces(int device);
// Input buffers kept, as zero pages, after their contexts were destroyed (src/process/input_buffers.hpp).
std::size_t kept_buffer_ranges();
// Holds one of the library's own locks for `ms` milliseconds, as a thread inside cudot_deinit (kept
// buffer ranges: which = 0) or cudot_register_host (registered ranges: which = 1) would; `held` turns
// true once it is held. For the fork tests: a child forked meanwhile must not inherit it held.
void hold_library_lock(int which, unsigned ms, std::atomic<bool> *held);
// The process-wide knobs above that are not at their defaults, by name, comma-separated ("" when all are;
// the calling thread's own for the thread-local ones). Per-context knobs end with their context.
std::string changed_knobs();
}  // namespace testing
}  // namespace cudot
