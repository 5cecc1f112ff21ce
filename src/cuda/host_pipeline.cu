// host_pipeline.cu - dots of large page-locked host arrays (cudot_register_host, cudaHostAlloc) through
// the copy engines.
//
// A GPU can read page-locked host memory in place (stream_dot.cu's launch does), but its loads cross the
// bus slower than its copy engines move the same bytes. Here the arrays travel by
// cudaMemcpyAsync instead, in chunks of kChunkElements, into two
// slots of device staging: while chunk k is copied on cudot's copy stream, the kernel computes the tile
// partials of chunk k - 1 on the caller's stream, so the dot costs the copy plus one chunk's kernel. Each
// chunk starts on a tile boundary and a tile's partial depends only on its elements, so the partials are
// the ones one launch over the whole arrays would give; the host joins them in the canonical order.
#include "host_pipeline.hpp"

#include <algorithm>
#include <mutex>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "device_health.hpp"

namespace cudot {
namespace cuda {

namespace {

constexpr std::size_t kChunkElements = std::size_t(1) << 20;          // 128 tiles
constexpr std::size_t kPipelineMinElements = std::size_t(1) << 22;    // four chunks: copies overlap compute
constexpr int kSlots = 2;
constexpr std::size_t kSlotBytes = kChunkElements * 8;                 // one operand's chunk of the widest type
constexpr int kMaxDevices = 256;

struct Pipeline {
    std::mutex mutex;             // one pipelined dot at a time per GPU: they share the staging
    cudaStream_t copy = nullptr;  // cudot's copy stream (non-blocking)
    void *staging = nullptr;      // device: kSlots slots of (x chunk, y chunk)
    void *partials = nullptr;     // mapped host memory: one packed partial per tile, written by the kernel
    std::size_t partial_bytes = 0;
    cudaEvent_t start = nullptr;  // the caller's stream at the call: the copies begin after its earlier work
    cudaEvent_t copied[kSlots] = {}, used[kSlots] = {};
};

Pipeline *pipelines[kMaxDevices];
std::mutex pipelines_made;

Pipeline &pipeline(int device) {
    std::lock_guard<std::mutex> lock(pipelines_made);
    if (!pipelines[device]) pipelines[device] = new Pipeline;  // kept until the process ends, as workspaces are
    return *pipelines[device];
}

cudot_status prepare(Pipeline &p, std::size_t partial_bytes, ErrorSink err) {
    if (!p.copy) CUDOT_CUDA_TRY(err, cudaStreamCreateWithFlags(&p.copy, cudaStreamNonBlocking));
    if (!p.staging) CUDOT_CUDA_TRY(err, cudaMalloc(&p.staging, kSlots * 2 * kSlotBytes));
    if (!p.start) {
        CUDOT_CUDA_TRY(err, cudaEventCreateWithFlags(&p.start, cudaEventDisableTiming));
        for (int s = 0; s < kSlots; ++s) {
            CUDOT_CUDA_TRY(err, cudaEventCreateWithFlags(&p.copied[s], cudaEventDisableTiming));
            CUDOT_CUDA_TRY(err, cudaEventCreateWithFlags(&p.used[s], cudaEventDisableTiming));
        }
    }
    if (p.partial_bytes < partial_bytes) {  // no dot is using them: dots on this GPU hold p.mutex to the end
        const std::size_t grown = std::max(partial_bytes, 2 * p.partial_bytes);
        if (p.partials) CUDOT_CUDA_TRY(err, cudaFreeHost(p.partials));
        p.partials = nullptr;
        p.partial_bytes = 0;
        CUDOT_CUDA_TRY(err, cudaHostAlloc(&p.partials, grown, cudaHostAllocMapped | cudaHostAllocPortable));
        p.partial_bytes = grown;
    }
    return CUDOT_OK;
}

// Waits, within the bound, until both streams have finished what this dot queued.
cudot_status drain(int device, Pipeline &p, cudaStream_t stream, std::uint64_t bound_ms, ErrorSink err) {
    GpuWait w;
    w.device = device;
    w.deadline = deadline_in(bound_ms);
    w.bound_ms = bound_ms;
    w.what = "the copy-engine pipeline";
    for (cudaStream_t s : {p.copy, stream}) {
        w.stream = s;
        if (cudot_status status = wait_gpu(w, nullptr, err)) return status;
    }
    return CUDOT_OK;
}

// Queues every chunk's copies and launch.
cudot_status queue_chunks(const Operands &ops, int device, Pipeline &p, cudaStream_t stream, const Launcher &launcher,
                          unsigned blocks, void *partials_on_gpu, ErrorSink err) {
    const std::size_t sx = ops.x.size(), sy = ops.y.size();
    const auto *x = static_cast<const unsigned char *>(ops.x.data);
    const auto *y = static_cast<const unsigned char *>(ops.y.data);
    unsigned char *staging = static_cast<unsigned char *>(p.staging);
    CUDOT_CUDA_TRY(err, cudaEventRecord(p.start, stream));
    CUDOT_CUDA_TRY(err, cudaStreamWaitEvent(p.copy, p.start, 0));
    std::size_t k = 0;
    for (std::size_t first = 0; first < ops.n; first += kChunkElements, ++k) {
        const std::size_t count = std::min(kChunkElements, ops.n - first);
        const int s = static_cast<int>(k % kSlots);
        unsigned char *stage_x = staging + (2 * s) * kSlotBytes, *stage_y = stage_x + kSlotBytes;
        if (k >= kSlots) CUDOT_CUDA_TRY(err, cudaStreamWaitEvent(p.copy, p.used[s], 0));  // its kernel has read it
        CUDOT_CUDA_TRY(err, cudaMemcpyAsync(stage_x, x + first * sx, count * sx, cudaMemcpyHostToDevice, p.copy));
        CUDOT_CUDA_TRY(err, cudaMemcpyAsync(stage_y, y + first * sy, count * sy, cudaMemcpyHostToDevice, p.copy));
        CUDOT_CUDA_TRY(err, cudaEventRecord(p.copied[s], p.copy));
        CUDOT_CUDA_TRY(err, cudaStreamWaitEvent(stream, p.copied[s], 0));
        const Operands chunk{count, dense_operand(stage_x, ops.x.dtype), dense_operand(stage_y, ops.y.dtype)};
        KernelCall call;  // partials only: the host joins them
        unsigned char *chunk_partials =
            static_cast<unsigned char *>(partials_on_gpu) + (first / order::kTile) * launcher.partial_bytes;
        launcher.prepare(dot_launch(chunk, blocks, chunk_partials), call);
        if (cudot_status status = launch(call, device, stream, err)) return status;
        CUDOT_CUDA_TRY(err, cudaEventRecord(p.used[s], stream));
    }
    return CUDOT_OK;
}

}  // namespace

bool pipeline_serves(const Operands &ops) {
    const bool locked = ops.x.place == Place::PageLocked && ops.y.place == Place::PageLocked;
    const bool dense = ops.x.stride == 1 && ops.y.stride == 1;
#if defined(CUDOT_TESTING)
    if (const int mode = seams::host_pipeline_mode()) return mode == 2 && locked && dense;
#endif
    return locked && dense && ops.n >= kPipelineMinElements;
}

cudot_status pipelined_host_dot(const Operands &ops, int device, cudaStream_t stream, const Launcher &launcher,
                                unsigned blocks, double *result, ErrorSink err) {
    Pipeline &p = pipeline(device);
    std::lock_guard<std::mutex> lock(p.mutex);
    const std::size_t tiles = order::tile_count(ops.n);
    if (cudot_status status = prepare(p, tiles * launcher.partial_bytes, err)) return status;
    void *partials_on_gpu = nullptr;
    CUDOT_CUDA_TRY(err, cudaHostGetDevicePointer(&partials_on_gpu, p.partials, 0));
    const std::uint64_t bound = default_wait_ms(ops.n * (ops.x.size() + ops.y.size()));
    const cudot_status queued = queue_chunks(ops, device, p, stream, launcher, blocks, partials_on_gpu, err);
    // Whatever was queued ends before the staging can be used again, even after a failure.
    char why[256];  // after a failure to queue, that failure keeps the message
    const cudot_status drained = drain(device, p, stream, bound, queued == CUDOT_OK ? err : ErrorSink{why, sizeof why});
    if (queued != CUDOT_OK) return queued;
    if (drained != CUDOT_OK) return drained;
    *result = order::join_packed_partials(types::kind_of(ops.x.dtype, ops.y.dtype), p.partials, tiles);
    return CUDOT_OK;
}

void release_host_pipeline(int device) {
    Pipeline *p = nullptr;
    {
        std::lock_guard<std::mutex> lock(pipelines_made);
        p = pipelines[device];
    }
    if (!p) return;
    std::lock_guard<std::mutex> lock(p->mutex);
    if (p->copy) (void)note(cudaStreamSynchronize(p->copy));
    if (p->staging) (void)note(cudaFree(p->staging));
    if (p->partials) (void)note(cudaFreeHost(p->partials));
    for (cudaEvent_t e : {p->start, p->copied[0], p->copied[1], p->used[0], p->used[1]})
        if (e) (void)note(cudaEventDestroy(e));
    if (p->copy) (void)note(cudaStreamDestroy(p->copy));
    p->copy = nullptr;
    p->staging = p->partials = nullptr;
    p->partial_bytes = 0;
    p->start = p->copied[0] = p->copied[1] = p->used[0] = p->used[1] = nullptr;
}

}  // namespace cuda
}  // namespace cudot
