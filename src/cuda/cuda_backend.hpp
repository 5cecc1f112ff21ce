// cuda_backend.hpp - the GPU strategies (PINNED, MAPPED, MANAGED, AUTO with a GPU): what the API layer calls.
// Built from the .cu files beside it (cuda_backend.cu says which holds what), or from no_cuda.cpp when
// the library is configured without CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "../core/context.hpp"
#include "../core/operands.hpp"
#include "../core/rows.hpp"

namespace cudot {
namespace exact {
struct Sum;  // the exact mode's unrounded sum (src/core/exact_sum.hpp)
}
}  // namespace cudot

namespace cudot {
namespace cuda {

// Whether a usable GPU with this ordinal exists (CUDOT_DEVICE_ALL: whether every visible GPU is usable).
// On false, writes why into err (status returned: NO_DEVICE, or INVALID_ARGUMENT for an ordinal beyond
// the devices present).
cudot_status probe(int32_t device, ErrorSink err);
// The strategy AUTO resolves to on this device (after a successful probe) for n elements of x_size and
// y_size bytes.
int32_t auto_strategy(int32_t device, std::size_t n, std::size_t x_size, std::size_t y_size);
// Whether MANAGED buffers of these sizes (one GPU's share) fit in a GPU with free_bytes free, with room
// kept in reserve (oversubscribed managed memory can stall the whole GPU).
bool managed_fits(std::size_t free_bytes, std::size_t x_bytes, std::size_t y_bytes);
// Allocates the buffers and device state for ctx.memory on ctx.device (one GPU, or every visible GPU
// for CUDOT_DEVICE_ALL); on failure frees what it took.
cudot_status create(cudot_ctx &ctx, ErrorSink err);
// Frees everything create took; reports the first CUDA error, if any, but always finishes.
cudot_status destroy(cudot_ctx &ctx, ErrorSink err);
// The canonical dot of the first n elements (1 <= n <= capacity) on the GPU(s) alone: on one GPU in one
// kernel launch; on several, split into one run of tiles per GPU.
cudot_status dot(cudot_ctx &ctx, std::size_t n, double *result);
// The partials of the tiles of elements [first, first + n) (n >= 1), computed on the context's GPU(s);
// *partials points to them, packed, in the context's own host array (valid until the next call).
cudot_status tile_partials(cudot_ctx &ctx, std::size_t first, std::size_t n, void **partials);
// The same for a context in the exact mode: the exact sum of elements [first, first + n) (n >= 1), each
// GPU one run, added to `sum`.
cudot_status exact_tile_partial(cudot_ctx &ctx, std::size_t first, std::size_t n, exact::Sum &sum);
// cudot_dot_each_row on the context's GPU(s): `rows`, a strided batch over the context's buffers (host
// addresses), each GPU one run of them; results in host memory.
cudot_status dot_rows(cudot_ctx &ctx, const Rows &rows, double *results);
// For AUTO (src/auto/auto_dot.cpp), which chooses between the CPU, the GPU and both:
// the GPUs' part of a batch of rows: queue_gpu_rows queues it and returns at once, wait_gpu_rows waits for its
// results (*gpu_ms: the slowest GPU's time, from CUDA events);
// the mapped host array the GPUs write tile partials into, also a CPU dot's scratch for such a context;
void *host_partials(cudot_ctx &ctx);
// the GPUs' part of a dot of the first n elements: queue_tiles queues the partials of tiles [0, gpu_tiles)
// into host_partials(ctx) and returns at once (the host may compute the other tiles' partials there
// meanwhile); wait_tiles waits for them, and *gpu_ms gets the slowest GPU's time (CUDA events, so no
// launch latency or wake-up of the host's thread lengthens it).
// In the exact mode each GPU leaves one exact partial of its run, which add_gpu_exact_sums adds to a
// sum after wait_tiles.
cudot_status queue_tiles(cudot_ctx &ctx, std::size_t n, std::size_t gpu_tiles);
cudot_status wait_tiles(cudot_ctx &ctx, std::size_t n, float *gpu_ms);
cudot_status add_gpu_exact_sums(cudot_ctx &ctx, exact::Sum &sum);
cudot_status queue_gpu_rows(cudot_ctx &ctx, const Rows &rows, double *results);
cudot_status wait_gpu_rows(cudot_ctx &ctx, std::size_t elements, float *gpu_ms);
// AUTO on managed buffers: the GPUs' dot of the first n elements where they lie (HBM for pages in GPU
// memory, over the bus for pages on the host), after migrating them to the GPUs if `move` (each GPU its
// run of tiles); and the migration of the first n elements back to the host.
cudot_status auto_gpu_dot(cudot_ctx &ctx, std::size_t n, bool move, double *result);
cudot_status auto_to_host(cudot_ctx &ctx, std::size_t n);
// The default bound of a call's GPU waits when it reads `bytes`: CUDOT_DEFAULT_WAIT_MS plus the time to
// read them at the slowest rate a healthy GPU reads its inputs (below a PCIe 3.0 x1 link, or managed
// memory faulted in page by page on an embedded GPU). At that rate a 1 TiB context is read in about
// 35 minutes, so no dot of any size the library accepts runs out of its default bound.
constexpr double kSlowestHealthyRead = 512.0 * 1024 * 1024;  // bytes per second
inline std::uint64_t default_wait_ms(std::size_t bytes) {
    return CUDOT_DEFAULT_WAIT_MS + static_cast<std::uint64_t>(static_cast<double>(bytes) / kSlowestHealthyRead * 1000.0);
}


// ---- Dots of the caller's own arrays (cudot_dot_arrays; stream_dot.cu) ----
// Fills o.place, o.device and o.gpu_data from CUDA's pointer attributes (without a CUDA driver every
// pointer is pageable host memory), and for device and managed memory checks that the operand's n
// elements stay inside the allocation CUDA made. `name` ("x", "y") names it in messages.
cudot_status locate(Operand &o, std::size_t n, const char *name, ErrorSink err);
// For `anchor` in device or managed memory: whether the bytes [lo, hi) (a batch's rows around it) stay
// inside its allocation (INVALID_ARGUMENT otherwise, naming `name`).
cudot_status check_within(const void *anchor, std::uintptr_t lo, std::uintptr_t hi, const char *name, ErrorSink err);
// The GPU that reads page-locked host operands: the first usable one that can map host memory; -1: none.
int host_reader_device();
// Whether GPU `device` can read pageable host memory in place (HMM or ATS).
bool reads_pageable(int device);
struct InputCopy;  // launch.hpp
// How a call on own arrays (or a context's dot, partials or run of rows) is queued on GPU `device`.
struct StreamCall {
    void *stream = nullptr;           // cudaStream_t (CUDA's handle values)
    void *x_ready = nullptr, *y_ready = nullptr;  // streams the operands were written on, or nullptr
    double *host_result = nullptr;    // blocking: the result, in host memory
    double *device_result = nullptr;  // asynchronous: where the result lands, in stream order
    void *partials = nullptr;         // blocking, one row: the packed tile partials instead of the result
                                      // (in the exact mode, one exact::Partial), copied to host memory
    const char *async_name = "cudot_dot_rows_async";  // what a blocking call inside a capture is told to use
    // A context's calls (one_gpu_dot.cu, split_dot.cu, context_rows.cu): its bound on the wait (0: by the
    // bytes read), what the message says on giving up, and where giving up is reported;
    std::uint64_t bound_ms = 0;
    const char *then = "";
    bool *gave_up = nullptr;
    // one row's partials written by the kernel itself where the GPU sees them (mapped host memory; in
    // place of `partials`);
    void *gpu_partials = nullptr;
    // copies (at most two) queued before the kernel, in the same submission: PINNED's inputs to the GPU;
    const InputCopy *copies = nullptr;
    unsigned copy_count = 0;
    // the grid of one row's kernel (0: as many blocks as the GPU holds at once): the context's own figure;
    unsigned blocks = 0;
    // the stream is a context's GPU's own (made by cudot on `device`, never captured): not asked about.
    bool own_stream = false;
};
// A batch of rows on GPU `device` (in its memory, managed memory, or page-locked host memory it reads in
// place), in one launch on call.stream: results into call.host_result (count, blocking) or
// call.device_result (count, in stream order). A single dot is a batch of one row (Rows::one): the same
// queue, where the plan picks the single-dot kernel, and a blocking one of large page-locked host arrays
// may go through the copy engines (host_pipeline.hpp).
cudot_status stream_rows(const Rows &rows, int device, const StreamCall &call, ErrorSink err);
// The two halves of a blocking stream_rows, so that several batches (one per GPU, or runs of one
// context's rows) are all queued before the first wait: queue_rows queues on call.stream (on failure
// nothing is left pending), finish_rows waits for the results and copies them to call.host_result.
// Called with the rows' GPU current (inside a CallerCudaState).
struct PendingRows {
    int device = 0;
    void *stream = nullptr;
    void *workspace = nullptr;  // the stream's workspace, busy until the batch ends
    std::pair<double *, std::size_t> staging{nullptr, 0};  // mapped host memory the results land in
    bool polled = false;        // one slot a row in staging (else a copy of them all)
    bool queued = false;
    bool answered = false;      // the results were written while queueing: nothing to wait for
    const char *what = "the batch";  // in a failed wait's message
    std::size_t count = 0;
    double *results = nullptr;
    std::uint64_t bound_ms = 0;
    const char *then = "";
    bool *gave_up = nullptr;
};
cudot_status queue_rows(const Rows &rows, int device, const StreamCall &call, PendingRows &pending, ErrorSink err);
cudot_status finish_rows(PendingRows &pending, ErrorSink err);
// A context's stream: its workspace made now, at least `bytes` (so that its dots allocate nothing), and
// given back when the context goes (the stream's work must have ended).
cudot_status reserve_stream_workspace(int device, void *stream, std::size_t bytes, ErrorSink err);
cudot_status release_stream_workspace(int device, void *stream, ErrorSink err);
// Page-locks and maps [p, p + bytes) for every GPU (cudaHostRegister); OK without a GPU (nothing done;
// *locked says which).
cudot_status register_host(const void *p, std::size_t bytes, bool *locked, ErrorSink err);
cudot_status unregister_host(const void *p, ErrorSink err);
#if defined(CUDOT_TESTING)  // the test build's unit (src/testing/) only
// How many per-stream workspaces dots of own arrays keep on GPU `device`.
std::size_t kept_stream_workspaces(int device);
// Frees what dots of own arrays keep until the process ends (per-stream workspaces and graphs, result
// staging), so that a leak checker at exit sees only real leaks. No dot may be running.
void release_stream_state();
#endif

}  // namespace cuda
}  // namespace cudot
