// readable.hpp - whether host memory can be read, asked of the kernel instead of found out by a crash, and
// which pages a thread already knows to be ordinary (pageable) host memory.
#pragma once

#include <cstddef>

namespace cudot {
namespace cpu {

// Whether the `bytes` bytes at p can be read by this process (a freed mapping, a guard page, or the address
// of GPU memory with no GPU to read it cannot). Where the system will not say (a sandbox that forbids
// the call), the memory is taken to be readable.
bool host_readable(const void *p, std::size_t bytes);

// Whether every page of the `bytes` (> 0) bytes at p is mapped in this process (on Windows: committed),
// whatever its protection: the system's map of the address space answers, no page is read or faulted
// in, so a range of any size costs little. Where the system will not say, the range is taken to be mapped.
bool host_range_mapped(const void *p, std::size_t bytes);

// A per-thread memory of pages found to be readable pageable host memory (CUDA did not know them), so that
// repeated dots on the same host arrays ask neither CUDA nor the system again. Registering memory with
// cudot (forget_pageable) clears every thread's memory; memory a caller page-locks itself behind cudot's
// back keeps being read by the CPU, which gives the same bits.
struct HostRange {
    const void *p;
    std::size_t bytes;
};
// Whether every one of the `count` ranges lies on pages this thread knows. One look at the thread's memory
// answers for all of them: a dot asks about both ends of both operands, and each look at a thread_local
// of a shared library costs a call (__tls_get_addr).
bool known_pageable(const HostRange *ranges, std::size_t count);
void remember_pageable(const void *p, std::size_t bytes);
void forget_pageable();

}  // namespace cpu
}  // namespace cudot
