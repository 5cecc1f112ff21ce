// own_arrays.hpp - dots of the caller's own arrays (cudot_dot_arrays and its kin): the request checked,
// each operand located, and the dot sent to the CPU or to a GPU as operand views (operands.hpp), the
// same road a context's buffers take.
#pragma once

#include <atomic>
#include <cstddef>

#include "../core/context.hpp"

namespace cudot {
namespace arrays {

// What the caller wants back, and where (`out`: a host double, a device double, or the tile partials).
enum class Want { Result, DeviceResult, Partials };

// `a` as the caller passed it (any size it claims); `call` names the entry point in messages.
cudot_status run(const cudot_arrays *a, Want want, void *out, const char *call, ErrorSink err);

// cudot_dot_rows (want Result: count doubles of host memory) and cudot_dot_rows_async (DeviceResult:
// count doubles a GPU writes in stream order); request as the caller passed it.
cudot_status run_rows(const cudot_rows *request, Want want, double *results, const char *call, ErrorSink err);

// cudot_register_host / cudot_unregister_host.
cudot_status register_host(const void *p, std::size_t bytes, ErrorSink err);
cudot_status unregister_host(const void *p, ErrorSink err);

// fork(): the lock of the registered ranges, taken before a fork and released after it in the parent and
// in the child (as buffers::before_fork).
void before_fork();
void after_fork();
#if defined(CUDOT_TESTING)  // the test build's unit (src/testing/) only
void hold_lock(unsigned ms, std::atomic<bool> *held);  // holds that lock for ms milliseconds
#endif

}  // namespace arrays
}  // namespace cudot
