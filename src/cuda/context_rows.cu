// context_rows.cu - a context's rows on its GPUs (cudot_dot_each_row): each GPU takes one run of the rows,
// brings it to where its kernel reads (PINNED copies it into the GPU's buffers, MANAGED migrates it when
// its policy says so, managed_policy.cu; MAPPED and AUTO read it in place) and dots it as a batch of own-array rows (stream_dot.cu's queue_rows
// and finish_rows, on the GPU's stream), so a context's row has the bits of the same row as own arrays.
// Every run is queued before the first wait, so the GPUs work at once.
#include <algorithm>
#include <vector>

#include "cuda_check.hpp"
#include "gpu_state.hpp"

namespace cudot {
namespace cuda {

namespace {

// Rows [first, first + count) of `rows` (a strided batch), as a batch of their own whose elements GPU g
// reads at `x` and `y` with row strides `x_stride` and `y_stride` (elements).
Rows run_of(const Rows &rows, std::size_t count, const void *x, const void *y, std::int64_t x_stride,
            std::int64_t y_stride) {
    Rows run = rows;
    run.count = count;
    run.x.data = run.x.gpu_data = static_cast<const unsigned char *>(x);
    run.y.data = run.y.gpu_data = static_cast<const unsigned char *>(y);
    run.x_row_stride = x_stride;
    run.y_row_stride = y_stride;
    return run;
}

// Queues rows [first, first + count) on GPU g, bracketed by g's start and stop events where `timed`; a
// run PINNED cannot hold in g's buffers is read in place.
cudot_status queue_run(cudot_ctx &ctx, DeviceState &s, Gpu &g, const Rows &rows, std::size_t first, std::size_t count,
                       bool timed, bool prefetch, double *results, PendingRows &pending) {
    ErrorSink err = ctx.sink();
    CUDOT_CUDA_TRY_AS(err, use_primary_context(g.device), "cuCtxSetCurrent (the GPU's primary context)");
    if (timed) CUDOT_CUDA_TRY(err, cudaEventRecord(g.start, g.stream));  // (on g's context, current now)
    const std::size_t sx = element_size(ctx.dtype), sy = element_size(ctx.y_dtype);
    const std::size_t pitch = ctx.row_length, m = rows.n, at = first * pitch;
    const std::size_t span = (count - 1) * pitch + m;  // elements from the run's first to its last read
    Rows run;
    if (ctx.memory == CUDOT_MEMORY_PINNED && count * m <= s.slice_elements) {
        // The first m elements of each row, packed, at the start of g's buffers.
        CUDOT_CUDA_TRY(err, cudaMemcpy2DAsync(g.d_x, m * sx, static_cast<const char *>(ctx.x) + at * sx, pitch * sx,
                                              m * sx, count, cudaMemcpyHostToDevice, g.stream));
        CUDOT_CUDA_TRY(err, cudaMemcpy2DAsync(g.d_y, m * sy, static_cast<const char *>(ctx.y) + at * sy, pitch * sy,
                                              m * sy, count, cudaMemcpyHostToDevice, g.stream));
        run = run_of(rows, count, g.d_x, g.d_y, static_cast<std::int64_t>(m), static_cast<std::int64_t>(m));
    } else {
        const void *x = ctx.memory == CUDOT_MEMORY_PINNED ? g.d_mapped_x : g.d_x;  // the GPU's view of the buffers
        const void *y = ctx.memory == CUDOT_MEMORY_PINNED ? g.d_mapped_y : g.d_y;
        if (!x || !y)
            return fail(err, CUDOT_ERROR_UNSUPPORTED, "cudot_dot_each_row: %zu rows of %zu elements do not fit in GPU %d's "
                        "buffers, and it cannot read host memory in place", count, m, g.device);
        if (prefetch)
            if (cudot_status status = prefetch_run(ctx, g, at, span)) return status;
        run = run_of(rows, count, static_cast<const char *>(x) + at * sx, static_cast<const char *>(y) + at * sy,
                     static_cast<std::int64_t>(pitch), static_cast<std::int64_t>(pitch));
    }
    StreamCall call = context_call(s, g);
    call.host_result = results + first;
    if (cudot_status status = queue_rows(run, g.device, call, pending, err)) return status;
    if (timed) CUDOT_CUDA_TRY(err, cudaEventRecord(g.stop, g.stream));
    return CUDOT_OK;
}

}  // namespace

cudot_status queue_each_row(cudot_ctx &ctx, DeviceState &s, const Rows &rows, double *results, bool timed,
                            bool prefetch) {
    const std::size_t gpus = s.gpus.size();
    std::vector<PendingRows> &pending = s.pending;
    pending.assign(gpus, PendingRows{});
    for (std::size_t i = 0; i < gpus; ++i) {
        const std::size_t first = rows.count * i / gpus, end = rows.count * (i + 1) / gpus;
        if (first == end) continue;
        if (cudot_status status = queue_run(ctx, s, s.gpus[i], rows, first, end - first, timed, prefetch, results,
                                            pending[i])) {
            drop_each_row(pending.data(), pending.size());  // the runs queued before it
            return status;
        }
    }
    return CUDOT_OK;
}

cudot_status finish_each_row(cudot_ctx &ctx, DeviceState &s, PendingRows *pending, std::size_t count) {
    cudot_status first_failure = CUDOT_OK;
    for (std::size_t i = 0; i < count; ++i) {
        PendingRows &p = pending[i];
        if (!p.queued) continue;  // (one answered while queueing holds nothing)
        // Every queued run is waited for, also after a failure: nothing may still write the results.
        const ErrorSink err = first_failure == CUDOT_OK ? ctx.sink() : ErrorSink{nullptr, 0};
        cudot_status status = use_primary_context(p.device) == cudaSuccess ? finish_rows(p, err) : CUDOT_ERROR_CUDA;
        if (status == CUDOT_OK && s.sync_after_dot) {  // without concurrent managed access the kernel must have ended
            for (Gpu &g : s.gpus)
                if (g.device == p.device && status == CUDOT_OK) status = wait_stream(s, g, err);
        }
        if (first_failure == CUDOT_OK) first_failure = status;
    }
    return first_failure;
}

void drop_each_row(PendingRows *pending, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i)
        if (pending[i].queued && use_primary_context(pending[i].device) == cudaSuccess)
            (void)finish_rows(pending[i], ErrorSink{nullptr, 0});
}

}  // namespace cuda
}  // namespace cudot
