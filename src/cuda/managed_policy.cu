// managed_policy.cu - MANAGED: where a dot's inputs should be when the kernel reads them.
//
// Unified memory serves two patterns that want opposite handling. Inputs that stay the same across
// dots should live in GPU memory (HBM speed). Inputs the host rewrites before every dot have moved back
// to the host each time; migrating them to the GPU again (by page faults, or by one bulk prefetch)
// costs more than reading them where they are over the bus, as MAPPED does. So each dot watches itself:
//  - resident: no advice; a dot that ran at bus speed or slower found pages the host had written, and
//    the context switches to reading in place (the inputs are advised to stay on the host, mapped for
//    the GPU);
//  - in place: every dot reads over the bus, which cannot tell whether the host still writes; so every
//    probe_every-th dot drops the advice and migrates the inputs to the GPU, and the next dot's speed
//    decides. A failed probe doubles the wait before the next one.
// Several GPUs follow the same policy: each reads its own run of tiles in place over its own link
// (every GPU is advised to access the inputs), and a probe migrates each GPU's run to that GPU. Reading in
// place is what lets fresh data scale with the GPUs' links: bulk migrations of host-written pages to
// several GPUs at once scale far worse than each GPU reading its run over its own link, as MAPPED does.
// Only timing changes, never the result. Devices without concurrent managed access take none of this:
// no advice, no prefetch, and the host waits for every kernel to end (buffers.cu).
#include <algorithm>
#include <chrono>

#include "cuda_check.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

// Dots on fewer bytes than this never adapt: latency dominates.
constexpr std::size_t kAdaptBytes = std::size_t(8) << 20;
// A dot slower than this moved pages or read over the bus: the host had written to them.
constexpr double kResidentGBps = 300.0;
// Slack on top of the bus-speed time, for the dot's fixed costs.
constexpr double kSlackMs = 0.25;
constexpr unsigned kFirstProbe = 2, kLastProbe = 16;

// err: the context's own (a dot) or init's (AUTO's buffers at create).
static cudot_status advise(cudot_ctx &ctx, const DeviceState &s, bool in_place, ErrorSink err) {
    cudaMemLocation host{};
    host.type = cudaMemLocationTypeHost;
    // The whole allocations (at least 256 bytes, buffers.cu: a context of 0 elements has them too).
    const std::size_t bx = std::max<std::size_t>(ctx.capacity * element_size(ctx.dtype), 256);
    const std::size_t by = std::max<std::size_t>(ctx.capacity * element_size(ctx.y_dtype), 256);
    const cudaMemoryAdvise where = in_place ? cudaMemAdviseSetPreferredLocation : cudaMemAdviseUnsetPreferredLocation;
    const cudaMemoryAdvise who = in_place ? cudaMemAdviseSetAccessedBy : cudaMemAdviseUnsetAccessedBy;
    CUDOT_CUDA_TRY(err, cudaMemAdvise(ctx.x, bx, where, host));
    CUDOT_CUDA_TRY(err, cudaMemAdvise(ctx.y, by, where, host));
    for (const Gpu &g : s.gpus) {
        cudaMemLocation gpu{};
        gpu.type = cudaMemLocationTypeDevice;
        gpu.id = g.device;
        CUDOT_CUDA_TRY(err, cudaMemAdvise(ctx.x, bx, who, gpu));
        CUDOT_CUDA_TRY(err, cudaMemAdvise(ctx.y, by, who, gpu));
    }
    return CUDOT_OK;
}

static cudot_status switch_to(cudot_ctx &ctx, DeviceState &s, bool in_place, ErrorSink err) {
    if (s.in_place == in_place) return CUDOT_OK;
    cudot_status status = advise(ctx, s, in_place, err);
    if (status == CUDOT_OK) s.in_place = in_place;
    return status;
}

// One GPU or several: each GPU computes its run of tiles (prefetch: migrated to it first).
static cudot_status run_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool prefetch, double *result) {
    return s.gpus.size() == 1 ? single_dot(ctx, s, n, prefetch, result) : multi_dot(ctx, s, n, prefetch, result);
}

// AUTO's managed buffers stay advised to live on the host, mapped for every GPU, so that a GPU reads
// pages the host wrote in place over the bus (as MAPPED does) and never faults them over; only AUTO's
// explicit moves put them in GPU memory (src/auto/auto_dot.cpp says when).
cudot_status auto_advise(cudot_ctx &ctx, DeviceState &s, ErrorSink err) { return switch_to(ctx, s, true, err); }

cudot_status auto_gpu_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool move, double *result) {
    return run_dot(ctx, s, n, move, result);
}

cudot_status auto_to_host(cudot_ctx &ctx, DeviceState &s, std::size_t n) {
    ErrorSink err = ctx.sink();
    Gpu &g = s.gpus[0];
    CUDOT_CUDA_TRY_AS(err, use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
    cudaMemLocation host{};
    host.type = cudaMemLocationTypeHost;
    CUDOT_CUDA_TRY(err, cudaMemPrefetchAsync(ctx.x, n * element_size(ctx.dtype), host, 0, g.stream));
    CUDOT_CUDA_TRY(err, cudaMemPrefetchAsync(ctx.y, n * element_size(ctx.y_dtype), host, 0, g.stream));
    return wait_stream(s, g, err);
}

cudot_status managed_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result) {
    const std::size_t bytes = n * (element_size(ctx.dtype) + element_size(ctx.y_dtype));
    return managed_run(ctx, s, bytes, [&](bool prefetch) { return run_dot(ctx, s, n, prefetch, result); });
}

cudot_status managed_run(cudot_ctx &ctx, DeviceState &s, std::size_t bytes, const std::function<cudot_status(bool)> &run) {
    // Without concurrent managed access nothing may prefetch, and a dot reads the pages where they are.
    if (s.sync_after_dot) return run(false);
    if (bytes < kAdaptBytes) return run(false);

    bool probe = false;
    if (s.in_place && --s.probe_wait == 0) {  // drop the advice and bring the inputs over once
        cudot_status status = switch_to(ctx, s, false, ctx.sink());
        if (status != CUDOT_OK) return status;
        probe = true;
    }
    const auto start = std::chrono::steady_clock::now();
    cudot_status status = run(probe);
    if (status != CUDOT_OK || s.in_place) return status;
    if (probe) {  // the next dot, without a migration, tells whether they stayed
        s.judging = true;
        return CUDOT_OK;
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ms <= bytes / (kResidentGBps * 1e6 * s.gpus.size()) + kSlackMs) {  // resident: stay so, probe early next time
        if (s.judging) s.probe_every = kFirstProbe;
        s.judging = false;
        return CUDOT_OK;
    }
    // The host wrote them: read them in place from now on, and probe again later.
    s.probe_every = s.judging ? std::min(kLastProbe, 2 * s.probe_every) : std::max(kFirstProbe, s.probe_every);
    s.judging = false;
    s.probe_wait = s.probe_every;
    return switch_to(ctx, s, true, ctx.sink());
}

}  // namespace cuda
}  // namespace cudot
