// gpu_state.hpp - the CUDA backend's part of a context (DeviceState, one Gpu per device it uses) and
// the pieces of the contexts' strategies that their files share.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "../core/context.hpp"
#include "../core/exact_sum.hpp"
#include "cuda_backend.hpp"
#include "device_health.hpp"
#include "launch.hpp"

namespace cudot {
namespace cuda {

// The ordinals a context asked for: one, or every visible GPU (or the test override); devices.cu.
cudot_status device_list(int32_t device, std::vector<int> &out, ErrorSink err);
bool can_map(int device);

// One GPU's part of a context.
struct Gpu {
    int device = 0;
    void *d_x = nullptr;  // where this GPU reads: its own device buffers (PINNED, holding the run of
    void *d_y = nullptr;  //   elements it computes at offset 0), or its view of the whole host or managed buffers
    void *stage_x = nullptr;  // MAPPED/MANAGED: device copies for cudot_tile_partials starts that are not
    void *stage_y = nullptr;  //   16-byte aligned (the kernel's vector loads need it); made on first use
    void *d_partials = nullptr;    // this GPU's view of DeviceState::h_partials
    void *d_mapped_x = nullptr;  // PINNED: the GPU's (device) address of the page-locked inputs, for
    void *d_mapped_y = nullptr;  //   reading them in place over the bus
    cudaStream_t stream = nullptr;  // its work, in order; its workspace is kept with the own arrays' (stream_dot.cu)
    cudaEvent_t start = nullptr, stop = nullptr;  // hybrid dots time the GPUs' share
    unsigned blocks = 1;  // the grid of its launches: the blocks of the pair's kernel the device holds at once
    unsigned exact_blocks = 0;  // the same for the pair's exact kernel (a context in the exact mode)
    std::size_t first_tile = 0, last_tile = 0;  // the run of tiles of the current operation
};

struct PinnedPolicy;  // defined where it is used: one_gpu_dot.cu

struct DeviceState {
    std::vector<Gpu> gpus;  // one, or every GPU of a CUDOT_DEVICE_ALL context
    Launcher launcher;
    std::size_t slice_elements = 0;  // elements each GPU's own buffers (PINNED, staging) hold
    void *h_partials = nullptr;      // mapped host array of tile partials, joined on the host
    bool sync_after_dot = false;  // MANAGED without concurrent managed access: the kernel must have ended
    PinnedPolicy *pinned_policy = nullptr;  // PINNED: copy or read in place, by measured times (one_gpu_dot.cu)
    bool in_place = false;          // MANAGED: the inputs are advised to stay on the host (managed_policy.cu),
    unsigned probe_every = 0;       //   how many in-place dots come between two probes, and how many
    unsigned probe_wait = 0;        //   remain until the next one;
    bool judging = false;           //   the last dot was a probe's migration, or the one after it
    bool hung = false;  // a wait gave up on the GPU (wait_ms): only destroy may follow
    std::uint64_t wait_bound_ms = CUDOT_DEFAULT_WAIT_MS;  // the bound of the current call's waits
    std::optional<InFlight> queued;  // AUTO: the GPUs' tiles or rows from queue_* until wait_*
    // Each GPU's queued work, one entry per GPU: AUTO's runs of rows from queue_gpu_rows until
    // wait_gpu_rows, and any operation's tile partials from queue_partials until wait_partials.
    std::vector<PendingRows> pending;
};

// How every call of a context is queued on GPU g (stream_dot.cu's queue_rows): on g's stream, its wait
// bounded by the call's bound; a wait that gives up leaves the context hung.
StreamCall context_call(DeviceState &s, const Gpu &g);
// Waits until everything queued on g's stream has run, as long as the call's bound allows; a failure's
// message goes to err.
cudot_status wait_stream(DeviceState &s, Gpu &g, ErrorSink err);

// Where GPU g reads the elements [at, at + count) of x (or y, of element size `size`) from (`out`), and
// the copy that must come first, if any (added to copies[copy_count++]): PINNED copies them to the start
// of its device buffer; MAPPED and MANAGED read the shared buffers in place, unless `at` would misalign
// the kernel's loads; then the elements are copied to a device staging buffer first.
cudot_status source(cudot_ctx &ctx, DeviceState &s, const void *host, void *view, void *&stage, std::size_t size,
                    std::size_t at, std::size_t count, const void *&out, InputCopy *copies, unsigned &copy_count);

// MANAGED: queues on g's stream the migration of elements [at, at + count) of x and y to GPU g.
cudot_status prefetch_run(cudot_ctx &ctx, Gpu &g, std::size_t at, std::size_t count);

// The dot orchestrations (one_gpu_dot.cu, split_dot.cu, managed_policy.cu).
cudot_status single_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool prefetch, double *result);
cudot_status multi_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool prefetch, double *result);
cudot_status managed_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, double *result);
// MANAGED's policy around any operation that reads `bytes` of the buffers: run(prefetch) runs it, with
// the inputs migrated to the GPUs first where prefetch is set; its time decides where they stay.
cudot_status managed_run(cudot_ctx &ctx, DeviceState &s, std::size_t bytes, const std::function<cudot_status(bool)> &run);
// AUTO on managed buffers (managed_policy.cu): advised to stay on the host, mapped for every GPU, from
// create on; a dot on the GPUs that reads them where they are or migrates them first; a move back.
cudot_status auto_advise(cudot_ctx &ctx, DeviceState &s, ErrorSink err);
cudot_status auto_gpu_dot(cudot_ctx &ctx, DeviceState &s, std::size_t n, bool move, double *result);
cudot_status auto_to_host(cudot_ctx &ctx, DeviceState &s, std::size_t n);
void free_pinned_policy(DeviceState &s);

// A context's rows (context_rows.cu): each GPU's run of `rows` (a strided batch over the context's
// buffers) queued into s.pending, its results to go to results + its first row (on failure the runs
// queued before it are waited for and given back). `timed`: each GPU's run is bracketed by its start and
// stop events; `prefetch` (MANAGED): each GPU migrates its run first.
cudot_status queue_each_row(cudot_ctx &ctx, DeviceState &s, const Rows &rows, double *results, bool timed,
                            bool prefetch);
// Every queued entry of pending[0, count) waited for and its results copied out (after a failure too:
// the first failure is returned); without concurrent managed access, each GPU's stream waited for too.
cudot_status finish_each_row(cudot_ctx &ctx, DeviceState &s, PendingRows *pending, std::size_t count);
// The same quietly, after a failure whose message was already written.
void drop_each_row(PendingRows *pending, std::size_t count);

// PINNED's choice between copying the inputs to the GPU and reading them in place, per size, from
// measured times (one_gpu_dot.cu): pinned_in_place says which way the next dot of n elements goes
// (false without every GPU able to map host memory), pinned_took records how long it took.
bool pinned_in_place(DeviceState &s, std::size_t n);
void pinned_took(DeviceState &s, std::size_t n, bool in_place, double us);

// Partials of tiles [0, gpu_tiles) of the n elements at `first`, each GPU one run (a batch of one row
// queued into s.pending), into h_partials; wait with wait_partials (*slowest_ms, if given, gets the
// longest GPU's time). MANAGED with prefetch: each GPU migrates its run first; PINNED with
// pinned_in_place: each GPU reads its run of the page-locked buffers over its own link instead of copying
// it (`first` must then be 0).
// In the exact mode each GPU leaves one exact partial of its run instead, at h_partials + its index *
// kExactPartialBytes, which add_exact_partials adds to a sum.
cudot_status queue_partials(cudot_ctx &ctx, DeviceState &s, std::size_t first, std::size_t n, std::size_t gpu_tiles,
                            bool timed, bool prefetch, bool pinned_in_place = false);
cudot_status add_exact_partials(cudot_ctx &ctx, DeviceState &s, exact::Sum &sum);
cudot_status wait_partials(cudot_ctx &ctx, DeviceState &s, float *slowest_ms);

}  // namespace cuda
}  // namespace cudot
