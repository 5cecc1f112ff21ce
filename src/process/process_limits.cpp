// process_limits.cpp - see process_limits.hpp.
#include "process_limits.hpp"

#include "../core/seams.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#if defined(_WIN32)
#include <windows.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace cudot {
namespace limits {

namespace {

// The start of a small file (up to 4 KiB; empty if it cannot be read). Plain reads into a buffer on
// the stack rather than a stream: these run on every HOST init, and a stream's 8 KiB heap buffer made a
// fork() in another thread likely to catch an allocator lock that a child under AddressSanitizer then
// waits for forever.
std::string file_text(const std::string &path) {
    char buffer[4096];
    std::size_t size = 0;
#if defined(_WIN32)
    if (std::FILE *f = std::fopen(path.c_str(), "rb")) {
        size = std::fread(buffer, 1, sizeof buffer, f);
        std::fclose(f);
    }
#else
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::string();
    for (ssize_t got = 0; size < sizeof buffer; size += static_cast<std::size_t>(got)) {
        got = ::read(fd, buffer + size, sizeof buffer - size);
        if (got <= 0) break;
    }
    ::close(fd);
#endif
    return std::string(buffer, size);
}

// The first line of a small file, without its line end (written on Windows, as tests do, it is "\r\n").
std::string first_line(const std::string &path) {
    const std::string text = file_text(path);
    return text.substr(0, text.find_first_of("\r\n"));
}

bool file_exists(const std::string &path) {
#if defined(_WIN32)
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (f) std::fclose(f);
    return f != nullptr;
#else
    return ::access(path.c_str(), F_OK) == 0;
#endif
}

// A whole decimal number with nothing after it; false for anything else (including "max", "-1").
bool parse_number(const std::string &text, unsigned long long *out) {
    if (text.empty() || text[0] < '0' || text[0] > '9') return false;
    errno = 0;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *out = v;
    return true;
}

unsigned cpus_of_quota(unsigned long long quota, unsigned long long period) {
    if (quota == 0 || period == 0) return 0;
    const unsigned long long cpus = (quota + period - 1) / period;
    return static_cast<unsigned>(std::min<unsigned long long>(cpus, std::numeric_limits<unsigned>::max()));
}

// cpu.max (v2): "max PERIOD" (no quota) or "QUOTA PERIOD".
unsigned v2_cpus(const std::string &dir) {
    std::istringstream fields(first_line(dir + "/cpu.max"));
    std::string quota, period;
    unsigned long long q = 0, p = 0;
    if (!(fields >> quota >> period) || !parse_number(quota, &q) || !parse_number(period, &p)) return 0;
    return cpus_of_quota(q, p);
}

// cpu.cfs_quota_us (v1) is -1 without a quota.
unsigned v1_cpus(const std::string &dir) {
    unsigned long long q = 0, p = 0;
    if (!parse_number(first_line(dir + "/cpu.cfs_quota_us"), &q) ||
        !parse_number(first_line(dir + "/cpu.cfs_period_us"), &p))
        return 0;
    return cpus_of_quota(q, p);
}

// memory.max (v2, "max" without a limit) or memory.limit_in_bytes (v1).
std::size_t memory_in(const std::string &file) {
    unsigned long long bytes = 0;
    if (!parse_number(first_line(file), &bytes) || bytes == 0) return 0;
    return static_cast<std::size_t>(std::min<unsigned long long>(bytes, std::numeric_limits<std::size_t>::max()));
}

// The smaller of two limits, where 0 means none.
template <class T> T tighter(T a, T b) { return a == 0 ? b : b == 0 ? a : std::min(a, b); }

// Calls visit(directory) for the cgroup at `path` under `mount` and each of its ancestors up to the
// mount itself. A level the mount does not show has no files to read and adds no limit (a v1 container
// sees the host's path of its own cgroup, which it finds at the mount's root).
template <class Visit> void each_level(const std::string &mount, std::string path, Visit visit) {
    for (;;) {
        while (path.size() > 1 && path.back() == '/') path.pop_back();
        visit(path == "/" || path.empty() ? mount : mount + path);
        const std::size_t slash = path.rfind('/');
        if (slash == std::string::npos || path.size() <= 1) return;
        path.erase(slash == 0 ? 1 : slash);
    }
}

struct Membership {
    std::string v2;                   // the path of the "0::" line
    std::string cpu_dir, cpu_path;    // v1: the cpu controller's mount directory name and path
    std::string memory_dir, memory_path;
    bool has_v2 = false, has_cpu = false, has_memory = false;
};

// /proc/self/cgroup: one "ID:CONTROLLERS:PATH" line per hierarchy; v2's is "0::PATH".
Membership parse_membership(const std::string &text) {
    Membership m;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const std::size_t a = line.find(':');
        const std::size_t b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        if (controllers.empty()) {
            m.v2 = path;
            m.has_v2 = true;
            continue;
        }
        std::istringstream names(controllers);
        for (std::string name; std::getline(names, name, ',');) {
            if (name == "cpu") m.has_cpu = true, m.cpu_dir = controllers, m.cpu_path = path;
            if (name == "memory") m.has_memory = true, m.memory_dir = controllers, m.memory_path = path;
        }
    }
    return m;
}

// A v1 controller's mount: named after its controller list ("cpu,cpuacct"), or after the controller
// alone (the link systemd makes).
std::string v1_mount(const std::string &root, const std::string &controllers, const char *controller) {
    const std::string listed = root + "/" + controllers;
    return file_exists(listed + "/cgroup.procs") ? listed : root + "/" + controller;
}

}  // namespace

CgroupLimits cgroup_limits(const std::string &root, const std::string &self_cgroup) {
    CgroupLimits limits;
    const Membership m = parse_membership(self_cgroup);
    if (file_exists(root + "/cgroup.controllers")) {
        if (!m.has_v2) return limits;
        each_level(root, m.v2, [&](const std::string &dir) {
            limits.cpus = tighter(limits.cpus, v2_cpus(dir));
            limits.memory = tighter(limits.memory, memory_in(dir + "/memory.max"));
        });
        return limits;
    }
    if (m.has_cpu)
        each_level(v1_mount(root, m.cpu_dir, "cpu"), m.cpu_path,
                   [&](const std::string &dir) { limits.cpus = tighter(limits.cpus, v1_cpus(dir)); });
    if (m.has_memory)
        each_level(v1_mount(root, m.memory_dir, "memory"), m.memory_path, [&](const std::string &dir) {
            limits.memory = tighter(limits.memory, memory_in(dir + "/memory.limit_in_bytes"));
        });
    return limits;
}

unsigned parse_thread_count(const char *text) {
    unsigned long long v = 0;
    if (!text || !parse_number(text, &v) || v == 0 || v > kMaxThreads) return 0;
    return static_cast<unsigned>(v);
}

namespace {

CgroupLimits own_cgroup_limits() {
#if defined(CUDOT_TESTING)
    std::string root, self;
    if (seams::fake_cgroup(root, self)) return cgroup_limits(root, self);
#endif
#if defined(__linux__)
    return cgroup_limits("/sys/fs/cgroup", file_text("/proc/self/cgroup"));
#else
    return CgroupLimits{};  // no cgroups
#endif
}

// CPUs in the affinity mask (0 if unknown).
unsigned affinity_cpus() {
#if defined(__linux__)
    // The mask's size is the kernel's CPU limit, which may exceed CPU_SETSIZE: grow until it fits.
    for (std::size_t cpus = CPU_SETSIZE; cpus <= (std::size_t(1) << 20); cpus *= 2) {
        cpu_set_t *set = CPU_ALLOC(cpus);
        if (!set) return 0;
        const std::size_t bytes = CPU_ALLOC_SIZE(cpus);
        const int rc = sched_getaffinity(0, bytes, set);
        const unsigned count = rc == 0 ? static_cast<unsigned>(CPU_COUNT_S(bytes, set)) : 0;
        const int error = errno;
        CPU_FREE(set);
        if (rc == 0) return count;
        if (error != EINVAL) return 0;
    }
    return 0;
#elif defined(_WIN32)
    DWORD_PTR process = 0, system = 0;
    if (!GetProcessAffinityMask(GetCurrentProcess(), &process, &system)) return 0;
    unsigned count = 0;
    for (; process != 0; process &= process - 1) ++count;
    return count;
#else
    return 0;
#endif
}

std::size_t physical_ram() {
#if defined(_WIN32)
    MEMORYSTATUSEX status;
    status.dwLength = sizeof status;
    return GlobalMemoryStatusEx(&status) ? static_cast<std::size_t>(status.ullTotalPhys) : 0;
#else
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
#endif
}

}  // namespace

unsigned threads_for(const char *num_threads, unsigned affinity, unsigned hardware, const CgroupLimits &cgroup) {
    if (const unsigned forced = parse_thread_count(num_threads)) return forced;
    return std::max(1u, tighter(affinity != 0 ? affinity : hardware, cgroup.cpus));
}

std::size_t memory_for(std::size_t physical, const CgroupLimits &cgroup) { return tighter(physical, cgroup.memory); }

unsigned usable_cpus() {
    return threads_for(std::getenv("CUDOT_NUM_THREADS"), affinity_cpus(), std::thread::hardware_concurrency(),
                       own_cgroup_limits());
}

std::size_t usable_memory() { return memory_for(physical_ram(), own_cgroup_limits()); }

}  // namespace limits

}  // namespace cudot
