// kernel_trace.hpp - issue 24's experiments: CUPTI's activity records of kernels and runtime calls, for
// machines without a profiler's command line. start() turns the records on, stop() collects them;
// report() prints, for one stream, where the time of its last `count` kernels went: the launching
// call's duration, the wait from that call's start to the kernel's start, and the kernel's own time.
// Link with -lcupti (carry libcupti.so.13 beside the binary: rpath $ORIGIN).
#pragma once
#include <cupti.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace trace {

struct Kernel {
    std::uint32_t stream, corr;
    std::uint64_t start, end;
    std::string name;
};
struct Api {
    std::uint32_t cbid;
    std::uint64_t start, end;
};

inline std::vector<Kernel> &kernels() {
    static std::vector<Kernel> k;
    return k;
}
inline std::map<std::uint32_t, Api> &apis() {
    static std::map<std::uint32_t, Api> a;
    return a;
}

inline void CUPTIAPI requested(std::uint8_t **buffer, std::size_t *size, std::size_t *max_records) {
    *size = std::size_t(8) << 20;
    *buffer = static_cast<std::uint8_t *>(std::aligned_alloc(8, *size));
    *max_records = 0;
}

inline void CUPTIAPI completed(CUcontext, std::uint32_t, std::uint8_t *buffer, std::size_t, std::size_t valid) {
    CUpti_Activity *record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const auto *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
            kernels().push_back({k->streamId, k->correlationId, k->start, k->end, k->name ? k->name : "?"});
        } else if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
            const auto *a = reinterpret_cast<const CUpti_ActivityAPI *>(record);
            apis()[a->correlationId] = {a->cbid, a->start, a->end};
        }
    }
    std::free(buffer);
}

inline bool start() {
    static bool registered = cuptiActivityRegisterCallbacks(requested, completed) == CUPTI_SUCCESS;
    if (!registered) return false;
    kernels().clear();
    apis().clear();
    return cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS &&
           cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS;
}

inline void stop() {
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
    cuptiActivityFlushAll(1);
}

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The last `count` kernels of one stream: medians in us.
inline void report(const char *label, std::uint64_t stream, std::size_t count) {
    std::vector<const Kernel *> mine;
    for (const Kernel &k : kernels())
        if (k.stream == stream) mine.push_back(&k);
    std::sort(mine.begin(), mine.end(), [](const Kernel *a, const Kernel *b) { return a->start < b->start; });
    if (mine.size() > count) mine.erase(mine.begin(), mine.end() - count);
    std::vector<double> call, to_start, run;
    std::map<std::uint32_t, int> calls;
    for (const Kernel *k : mine) {
        run.push_back((k->end - k->start) / 1e3);
        auto a = apis().find(k->corr);
        if (a == apis().end()) continue;
        ++calls[a->second.cbid];
        call.push_back((a->second.end - a->second.start) / 1e3);
        to_start.push_back((static_cast<double>(k->start) - static_cast<double>(a->second.start)) / 1e3);
    }
    std::printf("  trace %-14s stream %3llu: %zu kernels (%s): launching call %.1f us, call start to kernel start %.1f us, "
                "kernel %.1f us; launch cbids:", label, static_cast<unsigned long long>(stream), mine.size(),
                mine.empty() ? "-" : mine.back()->name.substr(0, 40).c_str(), median(call), median(to_start), median(run));
    for (const auto &c : calls) std::printf(" %u x%d", c.first, c.second);
    std::printf("\n");
}

}  // namespace trace
