// process_limits.hpp - how many CPUs and how much memory this process may use.
//
// A process may be allowed fewer CPUs than the machine has (taskset, an MPI launcher binding one rank
// per core, a container's CPU quota) and less memory (a container's memory limit). The thread pool
// and the checks that refuse rather than overcommit memory size themselves from these, not from the
// machine's totals. Linux: the affinity mask, then the cgroup (v2, or v1 where v2 is absent) of the
// process. Windows: the process affinity mask; no cgroups.
#pragma once

#include <cstddef>
#include <string>

namespace cudot {
namespace limits {

// The limits a cgroup tree sets on this process; 0 where it sets none (or they cannot be read).
struct CgroupLimits {
    unsigned cpus = 0;          // ceil(quota / period) of the tightest CPU quota on the way to the root
    std::size_t memory = 0;     // the tightest memory limit on the way to the root, in bytes
};

// Reads the limits of the cgroup named in `self_cgroup` (the text of /proc/self/cgroup) from the
// cgroup file system mounted at `root` (normally /sys/fs/cgroup). v2 (root holds cgroup.controllers):
// cpu.max and memory.max; otherwise v1: cpu.cfs_quota_us / cpu.cfs_period_us under root/cpu and
// memory.limit_in_bytes under root/memory. Every level from the process's cgroup up to the mount's
// root counts, as the kernel enforces each of them.
CgroupLimits cgroup_limits(const std::string &root, const std::string &self_cgroup);

// CUDOT_NUM_THREADS's value: a decimal integer from 1 to kMaxThreads; 0 when the text is absent or
// anything else (then the variable is ignored).
constexpr unsigned kMaxThreads = 1024;
unsigned parse_thread_count(const char *text);

// The threads a CPU job should use, the calling thread included (at least 1): `num_threads` (the
// text of CUDOT_NUM_THREADS) if it is a valid count, otherwise the CPUs in the affinity mask (0:
// unknown, then `hardware`), lowered to the cgroup's CPU quota.
unsigned threads_for(const char *num_threads, unsigned affinity, unsigned hardware, const CgroupLimits &cgroup);
// The memory this process may use: `physical` lowered to the cgroup's limit (0 if neither is known).
std::size_t memory_for(std::size_t physical, const CgroupLimits &cgroup);

// threads_for and memory_for with this process's environment, affinity mask, machine and cgroup.
unsigned usable_cpus();
std::size_t usable_memory();

}  // namespace limits
}  // namespace cudot
