// device_health.hpp - how cudot waits for a GPU, how long, and what it remembers about one that did not
// finish.
//
// Every wait of cudot's on a GPU is bounded, and every one goes through wait_gpu(). When a wait runs out, the GPU is marked "stuck" for the
// whole process (not only the context that waited): CUDA's frees and synchronisations wait for every
// kernel of the device, so any later call of any context that would wait on it (a dot, a drain after a
// failure, the frees of a deinit, an init) is refused at once with CUDOT_ERROR_CUDA instead. The mark is
// an event recorded behind the work that ran out; once that work does end after all, the mark goes.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "../core/context.hpp"
#include "cuda_backend.hpp"
#include "kernels/dot_kernel.cuh"

namespace cudot {
namespace cuda {

struct DeviceState;

// The bound of one call that reads `bytes` of input. A bound the caller chose (cudot_config.wait_ms)
// is used as it is; the default grows with the bytes, so no healthy dot of any size runs out of it.
std::uint64_t wait_bound_ms(const cudot_ctx &ctx, std::size_t bytes);

// One bounded wait for work queued on `stream` of GPU `device`: for the result a dot's last block writes
// into `slot`, or (no slot) for everything queued so far, or (whole_stream) both.
struct GpuWait {
    int device = 0;
    cudaStream_t stream = nullptr;
    const Completion *slot = nullptr;
    std::size_t slots = 1;  // consecutive slots from `slot`, all of which must be written (*result: the first)
    bool whole_stream = false;
    std::chrono::steady_clock::time_point deadline;
    std::uint64_t bound_ms = 0;  // the bound that set the deadline, for the message
    const char *what = "";       // what is waited for, in messages: "the dot", "the partials", ...
    const char *then = "";       // what the message adds on giving up
    bool *gave_up = nullptr;     // if given, set when the wait ran out (rather than failed otherwise)
};
// Polls the slot (the result, into *result) and asks the stream for errors every 20 us, yielding the
// processor after the first 200 us. Past the deadline the device is marked stuck and the call fails:
// "GPU d did not finish <what> within <bound_ms> ms<then>".
cudot_status wait_gpu(const GpuWait &w, double *result, ErrorSink err);
// The deadline of a wait bounded by bound_ms from now.
inline std::chrono::steady_clock::time_point deadline_in(std::uint64_t bound_ms) {
    return std::chrono::steady_clock::now() + std::chrono::milliseconds(bound_ms);
}

// Marks `device` stuck behind the work queued so far on `stream` (does not wait).
void mark_stuck(int device, cudaStream_t stream);
// Whether `device` has work that a bounded wait gave up on and that has still not ended. Makes the
// device's primary context current (inside a CallerCudaState).
bool is_stuck(int device);
// The message for a call refused because `device` is stuck; returns CUDOT_ERROR_CUDA.
cudot_status refuse_stuck(ErrorSink err, int device, const char *what);

// Counts, per device, the calls whose GPU work is queued and not yet known to have ended: a deinit
// waits for them before it frees (CUDA's frees would wait for their kernels, unbounded).
class InFlight {
   public:
    explicit InFlight(const DeviceState &s);
    ~InFlight();
    InFlight(const InFlight &) = delete;
    InFlight &operator=(const InFlight &) = delete;

   private:
    const DeviceState &s_;
};
// Waits until no call of another context has work in flight on `device`, or the device is stuck: each
// such call is itself bounded, so this wait is too. True when the device is idle (not stuck).
bool wait_until_idle(int device);

}  // namespace cuda
}  // namespace cudot
