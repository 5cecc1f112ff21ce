// readable.cpp - see readable.hpp.
#include "readable.hpp"

#include <cstdint>

#if defined(_WIN32)
#include <windows.h>
#else
#include <cerrno>
#include <sys/uio.h>
#include <unistd.h>
#endif

namespace cudot {
namespace cpu {

namespace {

constexpr std::uintptr_t kPage = 4096;

// The last few page ranges this thread found readable, most recent first.
struct KnownReadable {
    static constexpr int kRanges = 8;
    std::uintptr_t lo[kRanges] = {}, hi[kRanges] = {};
    bool has(std::uintptr_t a, std::uintptr_t b) const {
        for (int i = 0; i < kRanges; ++i)
            if (a >= lo[i] && b <= hi[i]) return true;
        return false;
    }
    void add(std::uintptr_t a, std::uintptr_t b) {
        for (int i = kRanges - 1; i > 0; --i) {
            lo[i] = lo[i - 1];
            hi[i] = hi[i - 1];
        }
        lo[0] = a;
        hi[0] = b;
    }
};
thread_local KnownReadable known;

// One read of the kernel's, which fails instead of faulting.
bool ask_system(const void *p, std::size_t bytes) {
    unsigned char sink[64];
    if (bytes > sizeof sink) bytes = sizeof sink;
#if defined(_WIN32)
    SIZE_T got = 0;
    return ReadProcessMemory(GetCurrentProcess(), p, sink, bytes, &got) && got == bytes;
#else
    struct iovec local = {sink, bytes};
    struct iovec remote = {const_cast<void *>(p), bytes};
    const ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (got == static_cast<ssize_t>(bytes)) return true;
    return got < 0 && (errno == ENOSYS || errno == EPERM);  // the system will not say
#endif
}

}  // namespace

bool host_readable(const void *p, std::size_t bytes) {
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t page_lo = a & ~(kPage - 1), page_hi = ((a + bytes - 1) & ~(kPage - 1)) + kPage;
    if (known.has(page_lo, page_hi)) return true;
    if (!ask_system(p, bytes)) return false;
    known.add(page_lo, page_hi);
    return true;
}

}  // namespace cpu
}  // namespace cudot
