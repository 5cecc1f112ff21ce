// readable.cpp - see readable.hpp.
#include "readable.hpp"

#include <atomic>
#include <cstdint>

#if defined(_WIN32)
#include <windows.h>
#else
#include <cerrno>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#endif

namespace cudot {
namespace cpu {

namespace {

constexpr std::uintptr_t kPage = 4096;

std::atomic<unsigned> generation{0};  // bumped by forget_pageable()

// The last few page ranges this thread found to be readable pageable memory, most recent first. Plain
// data with no initialisers, so the thread_local is zero-initialised without a guard: each look at it is
// one __tls_get_addr, not two (the guard is a thread_local too).
struct KnownPageable {
    unsigned generation;
    static constexpr int kRanges = 8;
    std::uintptr_t lo[kRanges], hi[kRanges];
    void refresh() {  // forget everything if cudot registered memory since this thread last looked
        const unsigned now = cpu::generation.load(std::memory_order_acquire);
        if (generation != now) {
            for (int i = 0; i < kRanges; ++i) lo[i] = hi[i] = 0;
            generation = now;
        }
    }
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

bool host_range_mapped(const void *p, std::size_t bytes) {
    const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(p), last = start + (bytes - 1);
#if defined(_WIN32)
    for (std::uintptr_t at = start;;) {  // one question per region of the address space
        MEMORY_BASIC_INFORMATION region;
        if (VirtualQuery(reinterpret_cast<const void *>(at), &region, sizeof region) == 0) return false;
        if (region.State != MEM_COMMIT) return false;
        const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(region.BaseAddress) + region.RegionSize;
        if (end - 1 >= last) return true;  // end 0: the region reaches the top of the address space
        at = end;
    }
#else
    // mincore fails with ENOMEM where a page of its range is not mapped (qemu-user says so of a page
    // mapped without access too); its own buffer is valid, so EFAULT can only be about the range. It
    // wants a page-aligned start and fills a byte per page, so it is asked about kChunk pages at a time.
    constexpr std::size_t kChunk = 4096;
    unsigned char resident[kChunk];
    const long page_size = sysconf(_SC_PAGESIZE);
    const std::uintptr_t page = page_size > 0 ? static_cast<std::uintptr_t>(page_size) : kPage;
    for (std::uintptr_t at = start & ~(page - 1); at <= last;) {
        const std::uintptr_t chunk = last - at < kChunk * page ? last - at + 1 : kChunk * page;
        if (mincore(reinterpret_cast<void *>(at), chunk, resident) != 0) return errno != ENOMEM && errno != EFAULT;
        at += chunk;
        if (at == 0) break;  // the range reached the top of the address space
    }
    return true;
#endif
}

bool known_pageable(const HostRange *ranges, std::size_t count) {
    KnownPageable &mine = known;
    mine.refresh();
    for (std::size_t i = 0; i < count; ++i) {
        std::uintptr_t lo, hi;
        pages_of(ranges[i].p, ranges[i].bytes, lo, hi);
        if (!mine.has(lo, hi)) return false;
    }
    return true;
}

void remember_pageable(const void *p, std::size_t bytes) {
    std::uintptr_t lo, hi;
    pages_of(p, bytes, lo, hi);
    KnownPageable &mine = known;
    mine.refresh();
    if (!mine.has(lo, hi)) mine.add(lo, hi);
}

void forget_pageable() { generation.fetch_add(1, std::memory_order_acq_rel); }

}  // namespace cpu
}  // namespace cudot
