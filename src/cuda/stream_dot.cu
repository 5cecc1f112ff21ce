// stream_dot.cu - dots of the caller's own arrays on a GPU (cuda_backend.hpp, "Dots of the caller's own
// arrays"): where each pointer lives, and one launch on the caller's stream. Every call is a batch of
// rows (a single dot is a batch of one) and takes one road, queue_rows_here: a plan (rows_plan.cu: which
// kernel, the workspace's layout), the stream's workspace, the launch, and for a blocking call the wait.
//
// What a launch needs besides the operands is a workspace: tickets for the joins, one partial per tile,
// a batch's tables. It is kept per stream (keyed by CUDA's process-unique stream id), so launches that
// share it are ordered by their stream, and no call allocates: a stream's workspace is made
// (stream-ordered, cudaMallocAsync) the first time a stream is seen or a larger dot comes, and kept.
// Streams come and go (a caller may make one per dot), so beyond kKeptWorkspaces a new stream's workspace
// replaces the least recently used one that nothing can still touch: one whose dots were all blocking and
// have returned (after the last block publishes the result, no block touches the workspace again). A
// workspace that served an asynchronous dot is never known to be idle, and is kept. A dot captured into
// a graph gets a workspace of its own instead, owned by the graph (a CUDA user object): allocated at
// capture (outside the graph, so replays allocate nothing), and freed once the graph and every
// executable made from it are gone. A blocking call's results come back the way a context's does: each
// row's last block writes its result into a slot of mapped host memory (the staging), which the host
// polls; past kPolledResults rows they are copied back in one transfer.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "device_health.hpp"
#include "gpu_state.hpp"
#include "host_pipeline.hpp"
#include "kernels/rows_kernel.cuh"
#include "rows_plan.hpp"

namespace cudot {
namespace cuda {

namespace {

constexpr int kMaxDevices = 256;

// ---- where a pointer lives (the driver's cuPointerGetAttributes, which needs no current context) ----

using PointerAttributesFn = CUresult (*)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);

PointerAttributesFn pointer_attributes() {
    static const PointerAttributesFn fn = [] {
        void *p = nullptr;
        return driver_entry("cuPointerGetAttributes", &p) == cudaSuccess ? reinterpret_cast<PointerAttributesFn>(p)
                                                                         : nullptr;
    }();
    return fn;
}

struct PointerInfo {
    Place place = Place::Pageable;
    int device = -1;
    std::uintptr_t range_start = 0;
    std::size_t range_size = 0;
};

// Without a driver every pointer is host memory. A pointer CUDA does not know (pageable memory, or
// memory already freed) comes back with a memory type of 0.
PointerInfo pointer_info(const void *p) {
    PointerInfo info;
    PointerAttributesFn get = pointer_attributes();
    if (!get) return info;
    unsigned type = 0, managed = 0;
    int ordinal = -1;
    CUdeviceptr start = 0;
    std::size_t size = 0;
    CUpointer_attribute names[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *values[] = {&type, &managed, &ordinal, &start, &size};
    if (get(5, names, values, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return info;
    if (managed) info.place = Place::Managed;
    else if (type == CU_MEMORYTYPE_DEVICE) info.place = Place::Device;
    else if (type == CU_MEMORYTYPE_HOST) info.place = Place::PageLocked;
    else return info;
    info.device = ordinal;
    info.range_start = static_cast<std::uintptr_t>(start);
    info.range_size = size;
    return info;
}

// ---- per GPU: usability, launch shapes, workspaces, result staging ----

// A stream's workspace. memory, bytes, graphs and zero_tickets belong to the call holding `queueing`; the
// rest to whoever holds the GPU's mutex.
struct Workspace {
    void *memory = nullptr;  // the head (kHeadBytes: ticket, exact digits), then the partials
    std::size_t bytes = 0;
    DotGraphs graphs;            // the stream's dots, replayed (launch.hpp); kept with the workspace
    std::uint64_t last_use = 0;  // ArrayGpu::uses when a dot last took it
    unsigned running = 0;        // blocking dots queued on it that have not returned
    // Bytes from kHeadBytes known to hold zeros: the tickets of the last batch that joined (the batch
    // kernels leave each ticket they take at zero). A batch whose tickets fit needs no zeroing first.
    std::size_t zero_tickets = 0;
    bool served_async = false;   // an asynchronous dot used it: never known to be idle
    unsigned taken = 0;          // calls between taking it and the end of their queueing: not to be evicted
    // Held while a call queues on the stream (the workspace grown, tables, tickets, the launch, the copies),
    // so that calls on one stream queue in order while calls on other streams go at the same time.
    std::mutex queueing;
};

// Workspaces kept per GPU before a new stream's replaces an idle one (see the top of the file).
constexpr std::size_t kKeptWorkspaces = 64;

struct ArrayGpu {
    std::once_flag probed;
    cudot_status usable = CUDOT_ERROR_NO_DEVICE;
    char why[256] = {0};
    int pageable = 0;  // cudaDevAttrPageableMemoryAccess
    std::mutex mutex;  // guards everything below
    std::unordered_map<unsigned long long, Workspace> workspaces;  // by stream id
    std::uint64_t uses = 0;                // dots that took a workspace, for last_use
    cudaEvent_t ready_event = nullptr;     // x_ready / y_ready waits
    cudaStream_t own_stream = nullptr;     // cudot's own (non-blocking): captured dots' workspaces
    std::vector<std::pair<double *, std::size_t>> staging;  // mapped host buffers for blocking batches' results
    unsigned rows_resident[6][6][5] = {};  // the batch kernels' resident blocks per pair: RowsKernel, exact
                                           // parts, exact groups (0: not asked yet)
    std::mutex released_mutex;             // guards `released` (a destructor may run inside a CUDA call)
    std::vector<void *> released;          // workspaces of destroyed graphs, freed on the next call
};

std::atomic<ArrayGpu *> gpus[kMaxDevices];
std::mutex gpus_made;

// Read without a lock once made (every call asks): made once under gpus_made, never destroyed (calls may
// come until the process ends).
ArrayGpu &array_gpu(int device) {
    if (ArrayGpu *made = gpus[device].load(std::memory_order_acquire)) return *made;
    std::lock_guard<std::mutex> lock(gpus_made);
    if (!gpus[device].load(std::memory_order_relaxed)) gpus[device].store(new ArrayGpu, std::memory_order_release);
    return *gpus[device].load(std::memory_order_relaxed);
}

cudot_status check_device(int device, ErrorSink err) {
    if (device < 0 || device >= kMaxDevices)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "GPU ordinal %d is out of range", device);
    ArrayGpu &g = array_gpu(device);
    std::call_once(g.probed, [&] {
        g.usable = probe(device, ErrorSink{g.why, sizeof g.why});
        if (note(cudaDeviceGetAttribute(&g.pageable, cudaDevAttrPageableMemoryAccess, device)) != cudaSuccess)
            g.pageable = 0;
    });
    if (g.usable != CUDOT_OK) return fail(err, g.usable, "%s", g.why);
    return CUDOT_OK;
}

// With kKeptWorkspaces kept, gives back the least recently used idle one (g.mutex held): its memory on
// cudot's own stream (no launch touches it any more), its graphs at once.
void evict_idle_workspace(ArrayGpu &g) {
    if (g.workspaces.size() < kKeptWorkspaces) return;
    auto oldest = g.workspaces.end();
    for (auto it = g.workspaces.begin(); it != g.workspaces.end(); ++it)
        if (!it->second.served_async && it->second.running == 0 && it->second.taken == 0 &&
            (oldest == g.workspaces.end() || it->second.last_use < oldest->second.last_use))
            oldest = it;
    if (oldest == g.workspaces.end()) return;  // none known to be idle: keep them all
    if (!g.own_stream && note(cudaStreamCreateWithFlags(&g.own_stream, cudaStreamNonBlocking)) != cudaSuccess) return;
    if (oldest->second.memory && note(cudaFreeAsync(oldest->second.memory, g.own_stream)) != cudaSuccess) return;
    (void)oldest->second.graphs.clear();
    g.workspaces.erase(oldest);
}

// The stream's workspace, taken (g.mutex held): made if new, and kept from eviction until the caller's
// queueing ends (Workspace::taken).
cudot_status take_workspace(ArrayGpu &g, cudaStream_t stream, Workspace *&out, ErrorSink err) {
    unsigned long long id = 0;
    CUDOT_CUDA_TRY(err, cudaStreamGetId(stream, &id));
    if (g.workspaces.find(id) == g.workspaces.end()) evict_idle_workspace(g);
    Workspace &w = g.workspaces[id];
    w.last_use = ++g.uses;
    ++w.taken;
    out = &w;
    return CUDOT_OK;
}

// A taken workspace grown to `bytes` (its `queueing` held; the old memory freed in stream order, after the
// work that uses it).
cudot_status grow_workspace(Workspace &w, cudaStream_t stream, std::size_t bytes, ErrorSink err) {
    if (w.bytes < bytes) {
        const std::size_t grown = std::max(bytes, 2 * w.bytes);
        void *memory = nullptr;
        // On a failure the new memory (if any was taken) goes back and the old stays the stream's.
        cudaError_t e = checked(cudaMallocAsync(&memory, grown, stream));
        const char *call = "cudaMallocAsync (a stream's workspace)";
        if (e == cudaSuccess) {
            e = checked(cudaMemsetAsync(memory, 0, kHeadBytes, stream));
            call = "cudaMemsetAsync (a stream workspace's head)";
        }
        if (e == cudaSuccess && w.memory) {
            e = checked(cudaFreeAsync(w.memory, stream));
            call = "cudaFreeAsync (a stream's smaller workspace)";
        }
        if (e != cudaSuccess) {
            if (memory) (void)note(cudaFreeAsync(memory, stream));
            return cuda_fail(err, e, call);
        }
        w.memory = memory;
        w.bytes = grown;
        w.zero_tickets = 0;
    }
    return CUDOT_OK;
}

// CUDA's special stream handles (NULL, cudaStreamLegacy, cudaStreamPerThread) belong to whichever device is
// current: here, the operands'.
bool special_stream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }

cudaStream_t ready_handle(void *ready) {
    if (ready == reinterpret_cast<void *>(1)) return cudaStreamLegacy;
    if (ready == reinterpret_cast<void *>(2)) return cudaStreamPerThread;
    return static_cast<cudaStream_t>(ready);
}

cudot_status wait_ready(ArrayGpu &g, void *ready, cudaStream_t stream, ErrorSink err) {
    if (!ready || ready_handle(ready) == stream) return CUDOT_OK;
    if (!g.ready_event) CUDOT_CUDA_TRY(err, cudaEventCreateWithFlags(&g.ready_event, cudaEventDisableTiming));
    CUDOT_CUDA_TRY(err, cudaEventRecord(g.ready_event, ready_handle(ready)));
    CUDOT_CUDA_TRY(err, cudaStreamWaitEvent(stream, g.ready_event, 0));
    return CUDOT_OK;
}

// ---- workspaces of captured dots ----

struct CapturedWorkspace {
    ArrayGpu *gpu;
    void *memory;
};

// A CUDA user object's destructor may make no CUDA call: it hands the memory to the next call on the GPU.
void release_captured(void *p) {
    CapturedWorkspace *c = static_cast<CapturedWorkspace *>(p);
    {
        std::lock_guard<std::mutex> lock(c->gpu->released_mutex);
        c->gpu->released.push_back(c->memory);
    }
    delete c;
}

// Frees the workspaces of graphs destroyed since the last call (g.mutex held; not while capturing).
void free_released(ArrayGpu &g) {
    std::vector<void *> gone;
    {
        std::lock_guard<std::mutex> lock(g.released_mutex);
        gone.swap(g.released);
    }
    for (void *memory : gone) (void)note(cudaFreeAsync(memory, g.own_stream));
}

// A workspace for a dot being captured on `stream`: allocated now on cudot's own stream (the thread's
// capture mode is relaxed for these calls: they are not part of the graph, and must not be) with its
// ticket zeroed, and handed to the graph being captured, which frees it when it goes.
// `fill` (may be empty) is copied into it first: the tables a batch of rows reads, taken from host memory
// now, since the caller's may be gone when the graph replays.
cudot_status captured_workspace(ArrayGpu &g, cudaStream_t stream, std::size_t bytes, void *&out, ErrorSink err,
                                const WorkspaceFill *fill = nullptr, int fills = 0) {
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CUDOT_CUDA_TRY(err, cudaThreadExchangeStreamCaptureMode(&mode));
    void *memory = nullptr;
    cudaError_t e = cudaSuccess;
    if (!g.own_stream) e = note(cudaStreamCreateWithFlags(&g.own_stream, cudaStreamNonBlocking));
    if (e == cudaSuccess) e = checked(cudaMallocAsync(&memory, bytes, g.own_stream));
    if (e == cudaSuccess) e = note(cudaMemsetAsync(memory, 0, kHeadBytes, g.own_stream));
    for (int i = 0; i < fills && e == cudaSuccess; ++i)
        e = note(cudaMemcpyAsync(static_cast<char *>(memory) + fill[i].at, fill[i].from, fill[i].bytes,
                                 cudaMemcpyHostToDevice, g.own_stream));
    if (e == cudaSuccess) e = note(cudaStreamSynchronize(g.own_stream));  // cudot's own stream only
    (void)cudaThreadExchangeStreamCaptureMode(&mode);                      // the caller's mode again
    if (e != cudaSuccess) return cuda_fail(err, e, "cudaMallocAsync (a captured dot's workspace)");
    cudaStreamCaptureStatus status;
    cudaGraph_t graph = nullptr;
    e = note(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph));
    CapturedWorkspace *owner = e == cudaSuccess ? new (std::nothrow) CapturedWorkspace{&g, memory} : nullptr;
    cudaUserObject_t object = nullptr;
    if (owner) e = note(cudaUserObjectCreate(&object, owner, release_captured, 1, cudaUserObjectNoDestructorSync));
    if (owner && e == cudaSuccess) e = note(cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove));
    if (!owner || e != cudaSuccess) {
        if (!object) {
            delete owner;
            std::lock_guard<std::mutex> lock(g.released_mutex);
            g.released.push_back(memory);
        }
        return e != cudaSuccess ? cuda_fail(err, e, "cudaGraphRetainUserObject (a captured dot's workspace)")
                                : fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    out = memory;
    return CUDOT_OK;
}

// `count` results from p: memory GPU `device` can write, in one allocation where CUDA knows its range.
cudot_status check_result_pointer(double *p, std::size_t count, int device, ErrorSink err) {
    const char *name = count == 1 ? "device_result" : "device_results";
    if (reinterpret_cast<std::uintptr_t>(p) % alignof(double) != 0)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s (%p) is not 8-byte aligned", name, static_cast<void *>(p));
    const PointerInfo info = pointer_info(p);
    const bool ok = info.place == Place::Managed || info.place == Place::PageLocked ||
                    (info.place == Place::Device && info.device == device);
    if (!ok)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "%s (%p) is not device memory of GPU %d, managed memory or page-locked host memory", name,
                    static_cast<void *>(p), device);
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p);
    const bool known_range = info.place == Place::Device || info.place == Place::Managed;
    if (known_range && info.range_size != 0 && (count > (info.range_start + info.range_size - at) / sizeof(double)))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %zu results from %p leave its allocation [%p, +%zu)", name,
                    count, static_cast<void *>(p), reinterpret_cast<void *>(info.range_start), info.range_size);
    return CUDOT_OK;
}

// What every call on the caller's stream does first: the GPU usable and current, the stream its own, and
// whether the stream is being captured (a blocking call cannot wait inside a capture: `async_name` says
// what to use instead).
cudot_status enter_stream(int device, const StreamCall &call, const char *async_name, bool &capturing, ErrorSink err) {
    if (cudot_status status = check_device(device, err)) return status;
    if (is_stuck(device)) return refuse_stuck(err, device, "a dot of own arrays");
    CUDOT_CUDA_TRY_AS(err, use_primary_context(device), "cuCtxSetCurrent (the GPU's primary context)");
    capturing = false;
    if (call.own_stream) return CUDOT_OK;  // made by cudot on this GPU, never captured
    cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    CUDOT_CUDA_TRY(err, cudaStreamIsCapturing(stream, &capture));
    capturing = capture != cudaStreamCaptureStatusNone;
    // (CUDA refuses to name a capturing stream's device; a launch on another device's stream fails there.)
    if (!special_stream(stream) && !capturing) {
        int stream_device = -1;
        CUDOT_CUDA_TRY(err, cudaStreamGetDevice(stream, &stream_device));
        if (stream_device != device)
            return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "the stream belongs to GPU %d, the operands to GPU %d",
                        stream_device, device);
    }
    if (capturing && call.device_result == nullptr)
        return fail(err, CUDOT_ERROR_UNSUPPORTED,
                    "the stream is being captured into a CUDA graph: a blocking call cannot wait inside a capture (use "
                    "%s)", async_name);
    return CUDOT_OK;
}

// ---- batches of rows ----

// Mapped host memory for `count` results (g.mutex held): the smallest kept buffer large enough (a single
// dot does not hold a large batch's), or a new one.
cudot_status take_staging(ArrayGpu &g, std::size_t count, std::pair<double *, std::size_t> &out, ErrorSink err) {
    std::size_t best = g.staging.size();
    for (std::size_t i = 0; i < g.staging.size(); ++i)
        if (g.staging[i].second >= count && (best == g.staging.size() || g.staging[i].second < g.staging[best].second))
            best = i;
    if (best < g.staging.size()) {
        out = g.staging[best];
        g.staging.erase(g.staging.begin() + static_cast<std::ptrdiff_t>(best));
        return CUDOT_OK;
    }
    const std::size_t size = std::max<std::size_t>(count, 4096 / sizeof(double));
    void *p = nullptr;
    CUDOT_CUDA_TRY_AS(err, cudaHostAlloc(&p, size * sizeof(double), cudaHostAllocMapped | cudaHostAllocPortable),
                      "cudaHostAlloc (a batch's results)");
    out = {static_cast<double *>(p), size};
    return CUDOT_OK;
}

// `kind` in the exact mode: Short for its groups' kernel, Tile for its parts'.
cudot_status rows_resident(ArrayGpu &g, int device, int32_t x_dtype, int32_t y_dtype, RowsKernel kind, bool exact,
                           unsigned &out, ErrorSink err) {
    const int which = exact ? 3 + (kind == RowsKernel::Short ? 1 : 0) : static_cast<int>(kind);
    unsigned &kept = g.rows_resident[x_dtype - 1][y_dtype - 1][which];
    if (kept == 0) {
        int per_sm = 0, sms = 0;
        CUDOT_CUDA_TRY_AS(err, exact ? exact_rows_occupancy(x_dtype, y_dtype, kind == RowsKernel::Short, &per_sm)
                                     : rows_occupancy(x_dtype, y_dtype, kind, &per_sm),
                          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        kept = static_cast<unsigned>(std::max(1, per_sm) * std::max(1, sms));
    }
    out = kept;
    return CUDOT_OK;
}

// Waits for a queued blocking batch and copies its results out, then gives back what it took: the
// staging once nothing can still write it (the batch ended, or nothing was launched), the workspace once
// the batch ended. A batch whose queueing failed (not `queued`) only gives back; one answered while it
// was queued (the host pipeline's, or empty rows) has nothing to wait for.
cudot_status finish_rows_here(PendingRows &pending, bool launched, ErrorSink err) {
    if (pending.answered) {
        pending = PendingRows{};
        return CUDOT_OK;
    }
    cudot_status status = CUDOT_ERROR_INTERNAL;
    if (pending.queued) {
        GpuWait wait;
        wait.device = pending.device;
        wait.stream = static_cast<cudaStream_t>(pending.stream);
        wait.slot = pending.polled ? reinterpret_cast<const Completion *>(pending.staging.first) : nullptr;
        wait.slots = pending.polled ? pending.count : 1;
        wait.deadline = deadline_in(pending.bound_ms);
        wait.bound_ms = pending.bound_ms;
        wait.what = pending.what;
        wait.then = pending.then;
        wait.gave_up = pending.gave_up;
        double ignored = 0;
        status = wait_gpu(wait, &ignored, err);
        if (status == CUDOT_OK && pending.staging.first)
            std::memcpy(pending.results, pending.staging.first, pending.count * sizeof(double));
    }
    const bool ended = pending.queued && status == CUDOT_OK;
    const bool staging_free = pending.staging.first && (ended || !launched);
    Workspace *w = static_cast<Workspace *>(pending.workspace);
    if (staging_free || (w && ended)) {
        ArrayGpu &g = array_gpu(pending.device);
        std::lock_guard<std::mutex> lock(g.mutex);
        if (staging_free) g.staging.push_back(pending.staging);
        if (w && ended) --w->running;
    }
    pending = PendingRows{};
    return status;
}


// The batch's plan (rows_plan.cu) and the blocks its kernel runs (`resident`: the caller's grid, or the
// GPU's resident blocks of the kernel where it gave none); `results_in_workspace` for a blocking batch
// whose results are copied back in one transfer.
cudot_status plan_batch(const Rows &rows, int device, const StreamCall &call, bool one, bool results_in_workspace,
                        ArrayGpu &g, unsigned &resident, RowsPlan &plan, ErrorSink err) {
    const bool partials_out = call.partials || call.gpu_partials;
    if (one && !resident) {
        if (cudot_status status = resident_blocks(device, rows.x.dtype, rows.y.dtype, &resident, err, rows.exact))
            return status;
    } else if (!one && rows.exact) {  // the exact plan cuts rows by the blocks the GPU holds
        std::lock_guard<std::mutex> lock(g.mutex);
        if (cudot_status status = rows_resident(g, device, rows.x.dtype, rows.y.dtype, RowsKernel::Tile, true, resident, err))
            return status;
    }
    const std::size_t partial_bytes = launcher_for(rows.x.dtype, rows.y.dtype).partial_bytes;
    try {
        if (one) plan_one(rows, partial_bytes, resident, partials_out, call.gpu_partials != nullptr, plan);
        else plan_rows(rows, partial_bytes, results_in_workspace, resident, plan);
    } catch (const std::bad_alloc &) {
        return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the tables of %zu rows", rows.count);
    }
    return CUDOT_OK;
}

// Under g.mutex: the workspace (the stream's, `w`, taken; or, while capturing, one the graph owns, its
// tables copied now) and, for `staged_rows` > 0, the mapped staging of a blocking batch's results.
// Nothing is taken on failure.
cudot_status take_batch_memory(ArrayGpu &g, cudaStream_t stream, bool capturing, const RowsPlan &plan,
                               std::size_t staged_rows, void *&workspace, Workspace *&w,
                               std::pair<double *, std::size_t> &staging, ErrorSink err) {
    if (!capturing) free_released(g);
    if (capturing) {
        if (cudot_status status = captured_workspace(g, stream, plan.bytes, workspace, err, plan.fill, plan.fills)) return status;
    } else if (cudot_status status = take_workspace(g, stream, w, err)) {
        return status;
    }
    if (staged_rows > 0)
        if (cudot_status status = take_staging(g, staged_rows, staging, err)) {
            if (w) --w->taken;
            w = nullptr;
            return status;
        }
    return CUDOT_OK;
}

// What a batch reads, for the bound of its wait.
std::size_t bytes_read(const Rows &rows) {
    std::size_t elements = rows.count * rows.n;
    if (rows.layout == Rows::Layout::Segmented)
        for (std::size_t i = elements = 0; i < rows.count; ++i) elements += rows.length(i);
    return elements * (rows.x.size() + rows.y.size()) + rows.count * 8;
}

// The stream's workspace (w; null while capturing, whose workspace the graph owns and is filled) made
// large enough for the plan, its tables copied in (from pageable memory: staged before the call
// returns), the plan aimed at it, and the tickets zeroed unless the last batch on this stream left them
// so (in stream order: the caller holds the stream's queueing lock). Whatever else a launch writes after
// the head is not zero after it, so the count of zero tickets is cleared until the launch sets it.
cudot_status fill_workspace(Workspace *w, cudaStream_t stream, bool one, std::size_t ticket_bytes, RowsPlan &plan,
                            void *&workspace, ErrorSink err) {
    cudot_status status = CUDOT_OK;
    if (w) {
        status = grow_workspace(*w, stream, plan.bytes, err);
        workspace = w->memory;
        for (int i = 0; i < plan.fills && status == CUDOT_OK; ++i) {
            const WorkspaceFill &f = plan.fill[i];
            const cudaError_t e = checked(cudaMemcpyAsync(static_cast<char *>(workspace) + f.at, f.from, f.bytes,
                                                          cudaMemcpyHostToDevice, stream));
            if (e != cudaSuccess) status = cuda_fail(err, e, "cudaMemcpyAsync (a batch's tables to the GPU)");
        }
    }
    if (status == CUDOT_OK && !one) aim_rows(plan, workspace);
    if (status == CUDOT_OK && plan.joins && (!w || w->zero_tickets < ticket_bytes)) {
        if (w) w->zero_tickets = 0;  // (until the memset is queued)
        const cudaError_t e = checked(cudaMemsetAsync(plan.p.tickets, 0, ticket_bytes, stream));
        if (e != cudaSuccess) status = cuda_fail(err, e, "cudaMemsetAsync (a batch's tickets)");
    }
    if (w) w->zero_tickets = 0;
    return status;
}

// A single row's partials from the workspace to the caller's host array.
cudot_status copy_partials_out(const RowsPlan &plan, const void *workspace, void *to, cudaStream_t stream,
                               ErrorSink err) {
    const std::size_t bytes = plan.bytes - plan.partials_at;
    const void *from = static_cast<const char *>(workspace) + plan.partials_at;
    CUDOT_CUDA_TRY_AS(err, cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToHost, stream),
                      "cudaMemcpyAsync (the partials to the host)");
    return CUDOT_OK;
}

// A blocking batch's results, written into the workspace, to its mapped staging in one transfer.
cudot_status copy_results_out(const RowsPlan &plan, std::size_t count, double *staging, cudaStream_t stream,
                              ErrorSink err) {
    CUDOT_CUDA_TRY_AS(err, cudaMemcpyAsync(staging, plan.p.results, count * sizeof(double), cudaMemcpyDeviceToHost, stream),
                      "cudaMemcpyAsync (a batch's results to the host)");
    return CUDOT_OK;
}

// Queues a batch on call.stream; a blocking one is left in `pending` for finish_rows. Every dot of own
// arrays comes here, a single dot as a batch of one row: one workspace per stream, one mapped staging for
// blocking results, one wait. `own_call`: the caller's own blocking call (not a context's run), which
// large page-locked host rows of one may answer through the copy engines (host_pipeline.cu) instead.
cudot_status queue_rows_here(const Rows &rows, int device, const StreamCall &call, bool own_call, PendingRows &pending,
                             ErrorSink err) {
    bool capturing = false;
    if (cudot_status status = enter_stream(device, call, call.async_name, capturing, err)) return status;
    cudaStream_t stream = static_cast<cudaStream_t>(call.stream);
    const bool blocking = call.device_result == nullptr;
    if (!blocking)
        if (cudot_status status = check_result_pointer(call.device_result, rows.count, device, err)) return status;
    if (rows.layout != Rows::Layout::Segmented && rows.n == 0) {  // empty rows: zeros, no kernel
        if (blocking) {
            std::fill(call.host_result, call.host_result + rows.count, 0.0);
            pending.answered = true;
            return CUDOT_OK;
        }
        CUDOT_CUDA_TRY(err, cudaMemsetAsync(call.device_result, 0, rows.count * sizeof(double), stream));
        return CUDOT_OK;
    }
    const bool one = rows.count == 1 && rows.length(0) > 0;
    const bool partials_out = call.partials || call.gpu_partials;  // (one row only)
    const bool polled = blocking && !partials_out && rows.count <= kPolledResults;
    ArrayGpu &g = array_gpu(device);
    unsigned resident = call.blocks;
    RowsPlan plan;
    if (cudot_status status = plan_batch(rows, device, call, one, blocking && !polled, g, resident, plan, err))
        return status;

    std::unique_lock<std::mutex> lock(g.mutex);
    if (cudot_status status = wait_ready(g, call.x_ready, stream, err)) return status;
    if (cudot_status status = wait_ready(g, call.y_ready, stream, err)) return status;
    if (one && own_call && blocking && !partials_out && !rows.exact && pipeline_serves(plan.row)) {
        lock.unlock();
        const cudot_status status = pipelined_host_dot(plan.row, device, stream, launcher_for(rows.x.dtype, rows.y.dtype),
                                                       resident, call.host_result, err);
        pending.answered = status == CUDOT_OK;
        return status;
    }
    if (!one)
        if (cudot_status status = rows_resident(g, device, rows.x.dtype, rows.y.dtype, plan.kernel, rows.exact,
                                                resident, err))
            return status;
    void *workspace = nullptr;
    Workspace *w = nullptr;
    std::pair<double *, std::size_t> staging{nullptr, 0};
    if (cudot_status status = take_batch_memory(g, stream, capturing, plan, blocking && !partials_out ? rows.count : 0,
                                                workspace, w, staging, err))
        return status;
    // The rest holds only the stream's own lock: calls on other streams (other contexts' GPUs, other
    // callers' streams) queue meanwhile; calls on this stream queue in order.
    lock.unlock();
    std::unique_lock<std::mutex> queueing;
    if (w) queueing = std::unique_lock<std::mutex>(w->queueing);
    const std::size_t ticket_bytes = plan.joins ? rows.count * sizeof(unsigned) : 0;
    cudot_status status = fill_workspace(w, stream, one, ticket_bytes, plan, workspace, err);
    if (blocking && !partials_out) {
        if (polled)  // one slot a row, each written once (Completion)
            for (std::size_t i = 0; i < rows.count; ++i)
                reinterpret_cast<Completion *>(staging.first)[i].result_bits = kNoResult;
        plan.p.results = polled ? staging.first : reinterpret_cast<double *>(static_cast<char *>(workspace) + plan.results_at);
    } else {
        plan.p.results = call.device_result;
    }
    bool launched = false;
    if (status == CUDOT_OK) {
        KernelCall kernel;
        void *partials = call.gpu_partials ? call.gpu_partials
                         : call.partials   ? static_cast<char *>(workspace) + plan.partials_at
                                           : nullptr;
        prepare_plan(plan, rows, resident, workspace, reinterpret_cast<Completion *>(plan.p.results), partials, kernel);
        status = launch(kernel, device, stream, err, capturing ? nullptr : &w->graphs, call.copies, call.copy_count);
        launched = status == CUDOT_OK;
    }
    if (w && launched) w->zero_tickets = ticket_bytes;
    // Copies queued before another call on the stream could grow (free) the workspace.
    if (status == CUDOT_OK && call.partials) status = copy_partials_out(plan, workspace, call.partials, stream, err);
    else if (status == CUDOT_OK && blocking && !polled && !partials_out)
        status = copy_results_out(plan, rows.count, staging.first, stream, err);
    if (queueing.owns_lock()) queueing.unlock();
    lock.lock();
    if (w) {
        --w->taken;
        // A blocking dot keeps it busy until its wait ends (finish_rows_here); one that was launched but
        // then failed, or an asynchronous one, is never known to be idle again.
        if (launched && blocking && status == CUDOT_OK) ++w->running;
        else if (launched) w->served_async = true;
    }
    lock.unlock();
    if (!blocking) return status;
    pending.device = device;
    pending.stream = stream;
    pending.workspace = w;
    pending.staging = staging;
    pending.polled = polled;
    pending.count = rows.count;
    pending.results = call.host_result;
    pending.what = partials_out ? "the partials" : one ? "the dot" : "the batch";
    pending.bound_ms = call.bound_ms ? call.bound_ms : default_wait_ms(bytes_read(rows));
    pending.then = call.then;
    pending.gave_up = call.gave_up;
    pending.queued = status == CUDOT_OK;
    if (status != CUDOT_OK) (void)finish_rows_here(pending, launched, ErrorSink{nullptr, 0});  // gives back what it can
    return status;
}

cudot_status stream_rows_here(const Rows &rows, int device, const StreamCall &call, ErrorSink err) {
    PendingRows pending;
    if (cudot_status status = queue_rows_here(rows, device, call, true, pending, err)) return status;
    return call.device_result ? CUDOT_OK : finish_rows_here(pending, true, err);
}

}  // namespace

cudot_status locate(Operand &o, std::size_t n, const char *name, ErrorSink err) {
    const PointerInfo info = pointer_info(o.data);
    o.place = info.place;
    o.device = info.device;
    o.gpu_data = o.data;  // unified addressing: page-locked and managed memory have one address for all
    if (info.place != Place::Device && info.place != Place::Managed) return CUDOT_OK;
    std::uintptr_t lo = 0, hi = 0;
    byte_span(o, n, lo, hi);  // checked by the caller
    if (lo < info.range_start || hi > info.range_start + info.range_size)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "%s: its %zu elements (stride %lld) reach bytes [%p, %p), outside its allocation [%p, %p) on GPU %d",
                    name, n, static_cast<long long>(o.stride), reinterpret_cast<void *>(lo), reinterpret_cast<void *>(hi),
                    reinterpret_cast<void *>(info.range_start),
                    reinterpret_cast<void *>(info.range_start + info.range_size), info.device);
    return CUDOT_OK;
}

cudot_status check_within(const void *anchor, std::uintptr_t lo, std::uintptr_t hi, const char *name, ErrorSink err) {
    const PointerInfo info = pointer_info(anchor);
    if (info.place != Place::Device && info.place != Place::Managed) return CUDOT_OK;
    if (lo < info.range_start || hi > info.range_start + info.range_size)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "%s reach bytes [%p, %p), outside the allocation [%p, %p) on GPU %d that holds the first row", name,
                    reinterpret_cast<void *>(lo), reinterpret_cast<void *>(hi), reinterpret_cast<void *>(info.range_start),
                    reinterpret_cast<void *>(info.range_start + info.range_size), info.device);
    return CUDOT_OK;
}

int host_reader_device() {
    static const int reader = [] {
        CallerCudaState caller;
        int count = 0;
        if (note(cudaGetDeviceCount(&count)) != cudaSuccess) return -1;
        for (int d = 0; d < count && d < kMaxDevices; ++d) {
            char why[256];
            if (check_device(d, ErrorSink{why, sizeof why}) == CUDOT_OK && can_map(d)) return d;
        }
        return -1;
    }();
    return reader;
}

bool reads_pageable(int device) {
    char why[256];
    return check_device(device, ErrorSink{why, sizeof why}) == CUDOT_OK && array_gpu(device).pageable != 0;
}

cudot_status reserve_stream_workspace(int device, void *stream, std::size_t bytes, ErrorSink err) {
    ArrayGpu &g = array_gpu(device);
    std::unique_lock<std::mutex> lock(g.mutex);
    Workspace *w = nullptr;
    if (cudot_status status = take_workspace(g, static_cast<cudaStream_t>(stream), w, err)) return status;
    lock.unlock();
    cudot_status status = CUDOT_OK;
    {
        std::lock_guard<std::mutex> queueing(w->queueing);
        status = grow_workspace(*w, static_cast<cudaStream_t>(stream), bytes, err);
    }
    lock.lock();
    --w->taken;
    return status;
}

cudot_status release_stream_workspace(int device, void *stream, ErrorSink err) {
    ArrayGpu &g = array_gpu(device);
    std::lock_guard<std::mutex> lock(g.mutex);
    unsigned long long id = 0;
    const cudaError_t named = checked(cudaStreamGetId(static_cast<cudaStream_t>(stream), &id));
    cudaError_t graphs = cudaSuccess, memory = cudaSuccess;
    const auto it = g.workspaces.find(id);
    if (it != g.workspaces.end()) {
        graphs = it->second.graphs.clear();
        if (it->second.memory) memory = checked(cudaFree(it->second.memory));
        g.workspaces.erase(it);
    }
    // The stream-ordered pool keeps what the stream's workspaces gave back until it is trimmed: given
    // back to the GPU now, so that a context leaves the device's free memory as it found it.
    cudaMemPool_t pool = nullptr;
    if (note(cudaDeviceGetDefaultMemPool(&pool, device)) == cudaSuccess) (void)note(cudaMemPoolTrimTo(pool, 0));
    if (named != cudaSuccess) return cuda_fail(err, named, "cudaStreamGetId (a context's stream)");
    if (graphs != cudaSuccess) return cuda_fail(err, graphs, "cudaGraphExecDestroy (a context's stream)");
    if (memory != cudaSuccess) return cuda_fail(err, memory, "cudaFree (a context's stream workspace)");
    return CUDOT_OK;
}

#if defined(CUDOT_TESTING)  // the test build's unit (src/testing/) only
std::size_t kept_stream_workspaces(int device) {
    if (device < 0 || device >= kMaxDevices) return 0;
    std::lock_guard<std::mutex> made(gpus_made);
    ArrayGpu *g = gpus[device].load();
    if (!g) return 0;
    std::lock_guard<std::mutex> lock(g->mutex);
    return g->workspaces.size();
}

void release_stream_state() {
    CallerCudaState caller;
    std::lock_guard<std::mutex> made(gpus_made);
    for (int d = 0; d < kMaxDevices; ++d) {
        ArrayGpu *g = gpus[d].load();
        if (!g || use_primary_context(d) != cudaSuccess) continue;
        std::lock_guard<std::mutex> lock(g->mutex);
        (void)note(cudaDeviceSynchronize());  // tests only: every stream's work is over anyway
        release_host_pipeline(d);
        for (auto &entry : g->workspaces) {
            (void)entry.second.graphs.clear();
            if (entry.second.memory) (void)note(cudaFree(entry.second.memory));
        }
        g->workspaces.clear();
        free_released(*g);
        if (g->own_stream) (void)note(cudaStreamSynchronize(g->own_stream));
        for (const auto &buffer : g->staging) (void)note(cudaFreeHost(buffer.first));
        g->staging.clear();
        if (g->ready_event) (void)note(cudaEventDestroy(g->ready_event));
        g->ready_event = nullptr;
    }
}
#endif

cudot_status stream_rows(const Rows &rows, int device, const StreamCall &call, ErrorSink err) {
    CallerCudaState caller;
    return caller.restore(stream_rows_here(rows, device, call, err), err);
}

cudot_status queue_rows(const Rows &rows, int device, const StreamCall &call, PendingRows &pending, ErrorSink err) {
    return queue_rows_here(rows, device, call, false, pending, err);
}

cudot_status finish_rows(PendingRows &pending, ErrorSink err) { return finish_rows_here(pending, true, err); }

cudot_status register_host(const void *p, std::size_t bytes, bool *locked, ErrorSink err) {
    *locked = false;
    const PointerInfo info = pointer_info(p);
    if (info.place == Place::Device || info.place == Place::Managed)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_register_host: %p is %s memory, not host memory", p,
                    info.place == Place::Device ? "device" : "managed");
    if (host_reader_device() < 0) return CUDOT_OK;  // no GPU: only the range is recorded
    CallerCudaState caller;
    cudot_status status = CUDOT_OK;
    cudaError_t e = use_primary_context(host_reader_device());
    if (e == cudaSuccess)
        e = checked(cudaHostRegister(const_cast<void *>(p), bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
    if (e != cudaSuccess) status = cuda_fail(err, e, "cudaHostRegister");
    else *locked = true;
    return caller.restore(status, err);
}

cudot_status unregister_host(const void *p, ErrorSink err) {
    CallerCudaState caller;
    cudot_status status = CUDOT_OK;
    cudaError_t e = use_primary_context(host_reader_device());
    if (e == cudaSuccess) e = checked(cudaHostUnregister(const_cast<void *>(p)));
    if (e != cudaSuccess) status = cuda_fail(err, e, "cudaHostUnregister");
    return caller.restore(status, err);
}

}  // namespace cuda
}  // namespace cudot
