// caller_state.hpp - cudot as a guest in someone else's CUDA program: its work runs in the primary
// context of the device a cudot context was created for, and the calling thread's current CUDA context
// is the caller's again when the call returns.
//
// Why contexts and not devices: the runtime's cudaSetDevice initialises that device's primary context
// (since CUDA 12) and replaces whatever context the thread had current, and cudaGetDevice answers 0 on
// a thread that never used CUDA. A guard built on them creates contexts the caller never asked for
// (device 0's, in every MPI rank) and swaps out a caller's own driver-API context. So cudot reads and
// restores the current *context* through the driver API, and switches by making the device's primary
// context current: no other context is ever created or touched. The driver API is reached through the
// runtime's cudaGetDriverEntryPointByVersion, so nothing new is linked and the library still loads on
// machines without a driver.
//
// A primary context cudot used is retained once and kept until the process ends (as the runtime itself
// keeps them): its buffers and streams live there, never in whatever context happened to be current.
#pragma once

#include <cuda_runtime.h>

#include "../core/context.hpp"

namespace cudot {
namespace cuda {

// The calling thread's CUDA state as the caller left it, put back when cudot's call ends: every entry
// point of the CUDA backend holds one (nested ones do nothing). On the way in it reads the current
// context (nothing, a primary context or the caller's own); cudot switches only through use_primary_context();
// on the way out the caller's context is made current again if cudot switched.
// CUDA keeps one "last error" per thread, which any failing runtime call overwrites: if none of cudot's
// calls failed, the caller's pending error (if any) is still there and is left alone; if one did, the
// last error is cudot's own and is cleared on the way out (note() and checked() record failures).
class CallerCudaState {
   public:
    CallerCudaState();
    ~CallerCudaState();
    // Puts the caller's context back now and folds a failure to do so into `status` (a message on err,
    // if status was OK). The destructor does the same, silently, for a call that did not get here.
    cudot_status restore(cudot_status status, ErrorSink err);
    CallerCudaState(const CallerCudaState &) = delete;
    CallerCudaState &operator=(const CallerCudaState &) = delete;

   private:
    bool outermost_ = false;
    bool restored_ = false;
};

// Makes `device`'s primary context current on this thread (retaining it on first use), unless it is
// already current inside cudot's call. Returns a cudaError_t so CUDOT_CUDA_TRY can check it.
cudaError_t use_primary_context(int device);
// A driver API function by name (CUDA 12.0's ABI of it), through the runtime: no link against libcuda.
cudaError_t driver_entry(const char *symbol, void **fn);
// Records that a CUDA call of cudot's failed (it left an error behind); returns `error`.
cudaError_t note(cudaError_t error);

}  // namespace cuda
}  // namespace cudot
