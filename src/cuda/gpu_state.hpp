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
    void *scratch = nullptr;  // the kernel's ticket, then one partial per tile (single-GPU dots)
    Completion *d_done = nullptr;  // this GPU's view of DeviceState::h_done
    void *d_partials = nullptr;    // this GPU's view of DeviceState::h_partials
    void *d_mapped_x = nullptr;  // PINNED: the GPU's (device) address of the page-locked inputs, for
    void *d_mapped_y = nullptr;  //   reading them in place over the bus
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;  // hybrid dots time the GPUs' share
    unsigned blocks = 1;  // the grid of its launches: the blocks of the pair's kernel the device holds at once
    unsigned exact_blocks = 0;  // the same for the pair's exact kernel (a context in the exact mode)
    DotGraphs graphs;  // its single-GPU dots, replayed (launch.hpp)
    std::size_t first_tile = 0, last_tile = 0;  // the run of tiles of the current operation
};

struct PinnedPolicy;  // defined where it is used: one_gpu_dot.cu

struct DeviceState {
    std::vector<Gpu> gpus;  // one, or every GPU of a CUDOT_DEVICE_ALL context
    Launcher launcher;
    std::size_t slice_elements = 0;  // elements each GPU's own buffers (PINNED, staging) hold
    Completion *h_done = nullptr;    // mapped host word a single-GPU dot's last block writes
    void *h_partials = nullptr;      // mapped host array of tile partials, joined on the host
    bool sync_after_dot = false;  // MANAGED without concurrent managed access: the kernel must have ended
    PinnedPolicy *pinned_policy = nullptr;  // PINNED: copy or read in place, by measured times (one_gpu_dot.cu)
    bool in_place = false;          // MANAGED: the inputs are advised to stay on the host (managed_policy.cu),
    unsigned probe_every = 0;       //   how many in-place dots come between two probes, and how many
    unsigned probe_wait = 0;        //   remain until the next one;
    bool judging = false;           //   the last dot was a probe's migration, or the one after it
    bool hung = false;  // a wait gave up on the GPU (wait_ms): only destroy may follow
    std::uint64_t wait_bound_ms = CUDOT_DEFAULT_WAIT_MS;  // the bound of the current call's waits
    std::optional<InFlight> queued;  // AUTO: the GPUs' tiles from queue_tiles until wait_tiles
    std::vector<PendingRows> rows_pending;  // AUTO: the GPUs' runs of rows from queue_gpu_rows until wait_gpu_rows
};

// Marks the result slot empty; call before queueing a dot that joins on the device. No kernel that
// could still write the slot may be pending then: a dot that fails drains its streams (cuda_backend.cu).
inline void expect_result(const DeviceState &s) {
    reinterpret_cast<volatile std::uint64_t *>(&s.h_done->result_bits)[0] = kNoResult;
}
// Waits until the last block has published the result (polling the mapped slot, with the stream
// checked for errors and the wait bounded), then returns it.
cudot_status wait_for_result(cudot_ctx &ctx, DeviceState &s, Gpu &g, double *result);
// Waits until everything queued on g's stream has run, as long as the call's bound allows; a failure's
// message goes to err.
cudot_status wait_stream(DeviceState &s, Gpu &g, ErrorSink err);

// Where GPU g reads the elements [at, at + count) of x (or y, of element size `size`) from, after queueing
// whatever copy that needs on `stream`: PINNED copies them into its device buffer at the same offset
// less `base`; MAPPED and MANAGED read the shared buffers in place, unless `at` would misalign the
// kernel's loads; then the elements are copied to a device staging buffer first.
cudot_status source(cudot_ctx &ctx, DeviceState &s, Gpu &g, const void *host, void *view, void *&stage,
                    std::size_t size, std::size_t at, std::size_t count, cudaStream_t stream, const void *&out);

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
// buffers) queued, its results to go to results + its first row; every queued run waited for and its
// results copied out (after a failure too: the first failure is returned). `timed`: each GPU's run is
// bracketed by its start and stop events; `prefetch` (MANAGED): each GPU migrates its run first.
cudot_status queue_each_row(cudot_ctx &ctx, DeviceState &s, const Rows &rows, double *results, bool timed,
                            bool prefetch, std::vector<PendingRows> &pending, bool *gave_up);
cudot_status finish_each_row(cudot_ctx &ctx, DeviceState &s, std::vector<PendingRows> &pending);

// PINNED's choice between copying the inputs to the GPU and reading them in place, per size, from
// measured times (one_gpu_dot.cu): pinned_in_place says which way the next dot of n elements goes
// (false without every GPU able to map host memory), pinned_took records how long it took.
bool pinned_in_place(DeviceState &s, std::size_t n);
void pinned_took(DeviceState &s, std::size_t n, bool in_place, double us);

// Partials of tiles [0, gpu_tiles) of the n elements at `first`, each GPU one run, into h_partials;
// wait with wait_partials (*slowest_ms, if given, gets the longest GPU's time). MANAGED with prefetch:
// each GPU migrates its run first; PINNED with pinned_in_place: each GPU reads its run of the page-locked
// buffers over its own link instead of copying it (`first` must then be 0).
// In the exact mode each GPU leaves one exact partial of its run instead, at h_partials + its index *
// kExactPartialBytes, which add_exact_partials adds to a sum.
cudot_status queue_partials(cudot_ctx &ctx, DeviceState &s, std::size_t first, std::size_t n, std::size_t gpu_tiles,
                            bool timed, bool prefetch, bool pinned_in_place = false);
cudot_status add_exact_partials(cudot_ctx &ctx, DeviceState &s, exact::Sum &sum);
cudot_status wait_partials(cudot_ctx &ctx, DeviceState &s, float *slowest_ms);

}  // namespace cuda
}  // namespace cudot
