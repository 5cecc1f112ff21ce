// readable.cpp - see readable.hpp.
#include "readable.hpp"

#include <atomic>
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

std::atomic<unsigned> generation{0};  // bumped by forget_pageable()

// The last few page ranges this thread found to be readable pageable memory, most recent first.
struct KnownPageable {
    unsigned generation = 0;
    static constexpr int kRanges = 8;
    std::uintptr_t lo[kRanges] = {}, hi[kRanges] = {};
    bool has(std::uintptr_t a, std::uintptr_t b) {
        const unsigned now = cpu::generation.load(std::memory_order_acquire);
        if (generation != now) {
            for (int i = 0; i < kRanges; ++i) lo[i] = hi[i] = 0;
            generation = now;
        }
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
thread_local KnownPageable known;

void pages_of(const void *p, std::size_t bytes, std::uintptr_t &lo, std::uintptr_t &hi) {
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
    lo = a & ~(kPage - 1);
    hi = ((a + bytes - 1) & ~(kPage - 1)) + kPage;
}

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
    if (got >= 0 || (errno != ENOSYS && errno != EPERM)) return false;
    // A sandbox or an emulator (qemu-user) without process_vm_readv: a write of the bytes into a pipe of
    // our own fails with EFAULT instead of faulting. A pipe per question: nothing shared with other
    // threads or with a forked child.
    int ends[2];
    if (pipe(ends) != 0) return true;  // the system will not say
    const ssize_t wrote = write(ends[1], p, bytes);
    const int why = errno;
    close(ends[0]);
    close(ends[1]);
    return wrote == static_cast<ssize_t>(bytes) || (wrote < 0 && why != EFAULT);
#endif
}

}  // namespace

bool host_readable(const void *p, std::size_t bytes) { return ask_system(p, bytes); }

bool known_pageable(const void *p, std::size_t bytes) {
    std::uintptr_t lo, hi;
    pages_of(p, bytes, lo, hi);
    return known.has(lo, hi);
}

void remember_pageable(const void *p, std::size_t bytes) {
    std::uintptr_t lo, hi;
    pages_of(p, bytes, lo, hi);
    if (!known.has(lo, hi)) known.add(lo, hi);
}

void forget_pageable() { generation.fetch_add(1, std::memory_order_acq_rel); }

}  // namespace cpu
}  // namespace cudot
