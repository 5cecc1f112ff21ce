// input_buffers.hpp - the input buffers a context hands its caller (x and y): zero when made, and harmless
// once the context is gone.
//
// A caller's view of a buffer (a numpy array, a Go slice, a C# span, a Julia array) can outlive the
// context, and a language with a garbage collector makes that easy to do by accident. So a buffer is
// pages cudot maps itself, and retiring it does not give the address range back: the same range is
// mapped again, in one call, with fresh zero pages, and the old pages' memory returns to the system. A
// view used after the context is gone then reads zeros, and what it writes lands in pages nothing else
// uses: no crash, and no other context's data touched. The ranges kept that way are bounded (address
// space and the process's map count, vm.max_map_count, are finite): past the bound the oldest is
// released, and only a view that old could then reach memory a later allocation reuses.
#pragma once

#include <atomic>
#include <cstddef>

namespace cudot {
namespace buffers {

// Ranges kept after their context is gone, at most: the oldest beyond either bound is released.
constexpr std::size_t kKeptRanges = 4096;
constexpr std::size_t kKeptBytes = std::size_t(1) << 40;  // address space only: a kept range holds no memory

// Fresh zero pages for `bytes` (rounded up to whole pages), or nullptr when the system refuses.
void *map(std::size_t bytes);
// Ends a buffer that map returned: its pages are replaced by fresh zero pages and their memory returned
// to the system, and the range is kept (see above). Safe while stale views still point into it.
void retire(void *p, std::size_t bytes);


// fork(): the lock of the kept ranges is taken before a fork and released after it, in the parent and
// in the child, so that a child never inherits it held by a thread that does not exist there (it would
// hang at its first cudot_deinit). api.cpp's fork handlers call these.
void before_fork();
void after_fork();

#if defined(CUDOT_TESTING)  // the test build's unit (src/testing/) only
std::size_t kept_ranges();  // how many ranges are kept now
void hold_lock(unsigned ms, std::atomic<bool> *held);  // holds that lock for ms milliseconds
#endif

}  // namespace buffers
}  // namespace cudot
