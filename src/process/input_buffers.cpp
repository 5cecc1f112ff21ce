// input_buffers.cpp - see input_buffers.hpp.
#include "input_buffers.hpp"

#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#if defined(_WIN32)
#include <windows.h>
#else
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace cudot {
namespace buffers {

namespace {

std::size_t page_size() {
#if defined(_WIN32)
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return info.dwAllocationGranularity;  // what VirtualAlloc rounds a reservation's start to
#else
    const long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? static_cast<std::size_t>(page) : 4096;
#endif
}

std::size_t rounded(std::size_t bytes) {
    static const std::size_t page = page_size();
    if (bytes == 0) return page;
    const std::size_t r = (bytes + page - 1) / page * page;
    return r < bytes ? 0 : r;  // 0: overflow
}

void release(void *p, std::size_t bytes) {
#if defined(_WIN32)
    (void)bytes;
    VirtualFree(p, 0, MEM_RELEASE);
#else
    munmap(p, bytes);
#endif
}

struct Kept {
    std::mutex mutex;
    std::deque<std::pair<void *, std::size_t>> ranges;  // oldest first
    std::size_t bytes = 0;
};

Kept &kept() {
    static Kept *k = new Kept;  // never destroyed: a context may be destroyed during static destruction
    return *k;
}

}  // namespace

void *map(std::size_t bytes) {
    const std::size_t size = rounded(bytes);
    if (size == 0) return nullptr;
#if defined(_WIN32)
    return VirtualAlloc(nullptr, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);  // zero pages
#else
    void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);  // zero pages
    return p == MAP_FAILED ? nullptr : p;
#endif
}

void retire(void *p, std::size_t bytes) {
    if (!p) return;
    const std::size_t size = rounded(bytes);
#if defined(_WIN32)
    // Decommitting returns the memory; committing again gives zero pages on first touch. (Between the two
    // calls, a stale view's access would fault: Windows has no one-call replacement of committed pages.)
    const bool kept_range = VirtualFree(p, size, MEM_DECOMMIT) && VirtualAlloc(p, size, MEM_COMMIT, PAGE_READWRITE);
#else
    // One call replaces the pages: a stale view never sees the range unmapped. MAP_NORESERVE: the kept
    // range is not counted against the commit limit until something writes to it.
    const bool kept_range = mmap(p, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                                 -1, 0) != MAP_FAILED;
#endif
    if (!kept_range) {  // (not seen) without fresh pages there is nothing safe to keep
        release(p, size);
        return;
    }
    std::deque<std::pair<void *, std::size_t>> gone;
    {
        Kept &k = kept();
        std::lock_guard<std::mutex> lock(k.mutex);
        k.ranges.emplace_back(p, size);
        k.bytes += size;
        while (k.ranges.size() > kKeptRanges || k.bytes > kKeptBytes) {
            gone.push_back(k.ranges.front());
            k.bytes -= k.ranges.front().second;
            k.ranges.pop_front();
        }
    }
    for (auto &range : gone) release(range.first, range.second);
}

void before_fork() { kept().mutex.lock(); }
void after_fork() { kept().mutex.unlock(); }  // in the child, the forking thread is the one that holds it

#if defined(CUDOT_TESTING)
std::size_t kept_ranges() {
    Kept &k = kept();
    std::lock_guard<std::mutex> lock(k.mutex);
    return k.ranges.size();
}

void hold_lock(unsigned ms, std::atomic<bool> *held) {
    std::lock_guard<std::mutex> lock(kept().mutex);
    held->store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}
#endif

}  // namespace buffers
}  // namespace cudot
