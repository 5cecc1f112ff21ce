// readable.hpp - whether host memory can be read, asked of the kernel instead of found out by a crash.
#pragma once

#include <cstddef>

namespace cudot {
namespace cpu {

// Whether the `bytes` bytes at p can be read by this process (a freed mapping, a guard page, or the address
// of GPU memory with no GPU to read it cannot). Asks the operating system once per page range; pages found
// readable are remembered per thread, so repeated dots on the same arrays ask nothing. Where the system
// will not say (a sandbox that forbids the call), the memory is taken to be readable.
bool host_readable(const void *p, std::size_t bytes);

}  // namespace cpu
}  // namespace cudot
