// api.cpp - every exported entry point: check the arguments, lock the context, dispatch to a backend,
// and turn anything unexpected into a status. Nothing thrown or printed ever leaves this file.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <thread>

#if !defined(_WIN32)
#include <pthread.h>
#endif
#include <unordered_set>
#include <vector>

#include "../auto/auto_dot.hpp"
#include "../core/context.hpp"
#include "../process/input_buffers.hpp"
#include "messages.hpp"
#include "../core/order.hpp"
#include "own_arrays.hpp"
#include "../core/exact_sum.hpp"
#include "../cpu/cpu_backend.hpp"
#include "../cpu/exact_dot.hpp"
#include "../cpu/fp_env.hpp"
#include "../cpu/thread_pool.hpp"
#include "../cuda/cuda_backend.hpp"
#include "../core/seams.hpp"
#include "../core/types.hpp"

namespace cudot {

std::size_t element_size(int32_t dtype) { return types::size_of(dtype); }

namespace {

// The message of this thread's last failed call without a context to hold it (cudot_init, cudot_deinit,
// cudot_join_partials): what cudot_last_error(NULL) returns.
thread_local char no_context_error[512];

constexpr uint32_t kConfigV1Size = 16;        // size of the first cudot_config: never shrinks
constexpr uint32_t kConfigV11Size = 20;       // 1.1 to 1.4: ended at y_dtype
constexpr uint32_t kConfigV15Size = 24;       // 1.5 to 1.9: ended at wait_ms
constexpr uint32_t kConfigV110Size = 32;      // 1.10 to 1.12: ended at rows
constexpr uint32_t kConfigMaxSize = 4096;     // anything larger is garbage, not a future version

// Every context cudot_init handed out that cudot_deinit has not yet destroyed. Entry points look a
// handle up here instead of reading through it, so a second deinit or a call after deinit is refused
// without touching freed memory. The set is split into shards by the handle's address, each under its
// own lock, so that calls on different contexts do not queue for one process-wide lock. Deliberately
// never destroyed: a caller's atexit handler or a finalizer running at process exit may still call in
// after static destructors.
class Registry {
   public:
    // If ctx is live, takes a reference to it (cudot_deinit waits until it is dropped) and returns true.
    bool take_reference(cudot_ctx *ctx) {
        CUDOT_TEST_SEAM(seams::lookup());
        Shard &shard = shard_of(ctx);
        std::lock_guard<std::mutex> lock(shard.mutex);
        if (shard.contexts.count(ctx) == 0) return false;
        ctx->calls.fetch_add(1, std::memory_order_relaxed);  // ordered against forget() by the shard's lock
        return true;
    }
    static void drop_reference(cudot_ctx *ctx) { ctx->calls.fetch_sub(1, std::memory_order_release); }

    void remember(const cudot_ctx *ctx) {  // may throw std::bad_alloc
        Shard &shard = shard_of(ctx);
        std::lock_guard<std::mutex> lock(shard.mutex);
        shard.contexts.insert(ctx);
    }
    // Removes ctx from the live set; false if it was not there. Exactly one of two racing deinits wins.
    bool forget(const cudot_ctx *ctx) {
        CUDOT_TEST_SEAM(seams::lookup());
        Shard &shard = shard_of(ctx);
        std::lock_guard<std::mutex> lock(shard.mutex);
        return shard.contexts.erase(ctx) != 0;
    }

    // fork() copies only the calling thread: every lock another thread held stays locked in the child,
    // and a set being changed would be half changed. So before fork the forking thread takes every
    // shard (the sets are whole and nobody changes them), and releases them on both sides after it.
    // In the child, each live context gets a fresh lock and a call count of zero (the calls that held
    // them ran on threads the child does not have) and is marked as inherited.
    void before_fork() {
        for (Shard &shard : shards_) shard.mutex.lock();
    }
    void after_fork_parent() {
        for (Shard &shard : shards_) shard.mutex.unlock();
    }
    void after_fork_child() {
        for (Shard &shard : shards_) {
            for (const cudot_ctx *c : shard.contexts) {
                cudot_ctx *ctx = const_cast<cudot_ctx *>(c);
                new (&ctx->mutex) std::mutex;  // the old one may be held by a thread that is not here
                new (&ctx->message_mutex) std::mutex;
                ctx->calls.store(0, std::memory_order_relaxed);
                ctx->forked = true;
            }
            shard.mutex.unlock();
        }
    }

   private:
    static constexpr std::size_t kShardBits = 8;
    struct alignas(64) Shard {  // one cache line or more each: neighbouring shards never share a line
        std::mutex mutex;
        std::unordered_set<const cudot_ctx *> contexts;
    };
    // Fibonacci hashing of the address: contexts allocated one after another land in different shards.
    Shard &shard_of(const cudot_ctx *ctx) {
        const std::uint64_t key = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(ctx) >> 4);
        return shards_[(key * 0x9e3779b97f4a7c15ULL) >> (64 - kShardBits)];
    }
    Shard shards_[std::size_t(1) << kShardBits];
};

Registry &registry() {
    static Registry *r = new Registry;
    return *r;
}

// Whether this process, or the parent it was forked from, has initialised CUDA (cudot asked for a GPU):
// a child of such a process cannot use CUDA at all, so it must not even probe.
std::atomic<bool> cuda_touched{false};
std::atomic<bool> cuda_lost_in_fork{false};

#if !defined(_WIN32)
// Every lock a child could need is taken before the fork, so no thread holds one at that moment; the
// last two are leaves (nothing else is taken while holding them): a deinit's kept buffer ranges and
// cudot_register_host's registered ranges.
void before_fork() {
    registry().before_fork();
    cpu::ThreadPool::before_fork();  // waits for a dot that is sharing work with the pool
    arrays::before_fork();
    buffers::before_fork();
}
void after_fork_parent() {
    buffers::after_fork();
    arrays::after_fork();
    cpu::ThreadPool::after_fork_parent();
    registry().after_fork_parent();
}
void after_fork_child() {
    buffers::after_fork();
    arrays::after_fork();
    cpu::ThreadPool::after_fork_child();
    registry().after_fork_child();
    if (cuda_touched.load(std::memory_order_relaxed)) cuda_lost_in_fork.store(true, std::memory_order_relaxed);
}
// Installed when the library is loaded (glibc removes them again if it is unloaded).
[[maybe_unused]] const bool fork_handlers_installed = pthread_atfork(before_fork, after_fork_parent, after_fork_child) == 0;
#endif

constexpr const char *kForkMessage =
    "CUDA cannot be used in a process forked from one that used it: create GPU contexts in the parent, "
    "or start the child with exec (Python: multiprocessing's 'spawn' or 'forkserver'); HOST contexts work";

// A GPU context this process inherited through fork() cannot run; the message says why.
cudot_status refuse_if_forked_gpu(cudot_ctx &ctx) {
    if (!ctx.forked || ctx.memory == CUDOT_MEMORY_HOST) return CUDOT_OK;
    return fail(ctx.sink(), CUDOT_ERROR_UNSUPPORTED, "this GPU context was created before fork(); %s", kForkMessage);
}

// A reference to a live context for the length of one call (nothing, if the handle is not live).
class ContextRef {
   public:
    explicit ContextRef(const cudot_ctx *ctx)
        : ctx_(ctx && registry().take_reference(const_cast<cudot_ctx *>(ctx)) ? const_cast<cudot_ctx *>(ctx)
                                                                              : nullptr) {}
    ~ContextRef() {
        if (ctx_) Registry::drop_reference(ctx_);
    }
    ContextRef(const ContextRef &) = delete;
    ContextRef &operator=(const ContextRef &) = delete;
    explicit operator bool() const { return ctx_ != nullptr; }
    cudot_ctx &operator*() const { return *ctx_; }

   private:
    cudot_ctx *ctx_;
};

// Waits until every call that took a reference to ctx before cudot_deinit removed it has returned. Calls
// usually take microseconds; a long GPU dot is waited for without burning a core.
void wait_for_calls(const cudot_ctx &ctx) {
    for (unsigned round = 0; ctx.calls.load(std::memory_order_acquire) != 0; ++round) {
        if (round < 64)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

// Copies the caller's config (of whatever version) over the defaults and checks every field.
cudot_status read_config(const cudot_config *config, cudot_config &out, ErrorSink err) {
    out = cudot_config CUDOT_CONFIG_INIT;
    out.y_dtype = out.dtype;
    out.wait_ms = CUDOT_DEFAULT_WAIT_MS;
    if (!config) return CUDOT_OK;
    uint32_t size = config->size;
    // Valid sizes: 16 (version 1.0), 20 (1.1 to 1.4), 24 (1.5 to 1.9), 32 (1.10 to 1.12), 40 (this
    // version), or more from a newer header. Others end inside a field, which no compiler produces:
    // garbage, not a version.
    const bool known = size == kConfigV1Size || size == kConfigV11Size || size == kConfigV15Size ||
                       size == kConfigV110Size || size >= sizeof(cudot_config);
    if (size < kConfigV1Size || size > kConfigMaxSize || !known)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "config->size is %u; set it to sizeof(cudot_config) (%u), or use CUDOT_CONFIG_INIT", size,
                    static_cast<unsigned>(sizeof(cudot_config)));
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(config);
    for (uint32_t i = sizeof(cudot_config); i < size; ++i)
        if (bytes[i] != 0)
            return fail(err, CUDOT_ERROR_UNSUPPORTED,
                        "config->size is %u and byte %u is set: the caller asks for options newer than this "
                        "library (version %s, config size %u)",
                        size, i, cudot_version_string(), static_cast<unsigned>(sizeof(cudot_config)));
    out.y_dtype = 0;  // an older, shorter config leaves it at "same as dtype"
    std::memcpy(&out, config, size < sizeof(cudot_config) ? size : sizeof(cudot_config));
    out.size = sizeof(cudot_config);
    if (out.dtype == 0) out.dtype = CUDOT_F32;
    if (out.wait_ms == 0) out.wait_ms = CUDOT_DEFAULT_WAIT_MS;  // 0, or a config older than the field
    if (!types::valid_dtype(out.dtype))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "config->dtype %d is not an element type (CUDOT_F32 = 1 .. CUDOT_U8 = 6)",
                    static_cast<int>(out.dtype));
    if (out.y_dtype == 0) out.y_dtype = out.dtype;  // also what a 16-byte (version 1.0) config gets
    if (!types::valid_dtype(out.y_dtype))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "config->y_dtype %d is not an element type (0 = same as dtype, CUDOT_F32 = 1 .. CUDOT_U8 = 6)",
                    static_cast<int>(out.y_dtype));
    if (out.memory < CUDOT_MEMORY_AUTO || out.memory > CUDOT_MEMORY_HOST)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "config->memory %d is not a CUDOT_MEMORY_* value (0..4)",
                    static_cast<int>(out.memory));
    if (out.device < CUDOT_DEVICE_ALL && out.memory != CUDOT_MEMORY_HOST)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "config->device %d is negative (the one negative ordinal is CUDOT_DEVICE_ALL, -1)",
                    static_cast<int>(out.device));
    if (out.mode != CUDOT_MODE_CANONICAL && out.mode != CUDOT_MODE_EXACT)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "config->mode %d is not a cudot_mode (CUDOT_MODE_CANONICAL = 0, CUDOT_MODE_EXACT = 1)",
                    static_cast<int>(out.mode));
    if (out.reserved != 0)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "config->reserved is %d; it must be 0",
                    static_cast<int>(out.reserved));
    return CUDOT_OK;
}

// Decides the strategy and backend and allocates everything. `ctx` is fresh; `err` is init's own buffer.
cudot_status build_context(cudot_ctx &ctx, const cudot_config &config, ErrorSink err) {
    int32_t memory = config.memory;
    if (memory != CUDOT_MEMORY_HOST && cuda_lost_in_fork.load(std::memory_order_relaxed)) {
        if (memory != CUDOT_MEMORY_AUTO) return fail(err, CUDOT_ERROR_NO_DEVICE, "no usable GPU: %s", kForkMessage);
        memory = CUDOT_MEMORY_HOST;  // AUTO without a usable GPU
    }
    if (memory != CUDOT_MEMORY_HOST) cuda_touched.store(true, std::memory_order_relaxed);
    if (memory == CUDOT_MEMORY_AUTO) {
        cudot_status probe = cuda::probe(config.device, err);
        if (probe == CUDOT_ERROR_INVALID_ARGUMENT) return probe;  // GPUs exist but not this ordinal
        memory = probe == CUDOT_OK ? cuda::auto_strategy(config.device, ctx.capacity, element_size(config.dtype),
                                                         element_size(config.y_dtype))
                                   : CUDOT_MEMORY_HOST;
        // MANAGED or MAPPED: the CPU threads and the GPUs share the work (auto_dot.cpp). PINNED (a GPU that
        // cannot map host memory): the GPU alone.
        ctx.hybrid = memory == CUDOT_MEMORY_MAPPED || memory == CUDOT_MEMORY_MANAGED;
        err.text[0] = '\0';  // a missing GPU is not an error for AUTO (err is init's local buffer)
    } else if (memory != CUDOT_MEMORY_HOST) {
        cudot_status probe = cuda::probe(config.device, err);
        if (probe != CUDOT_OK) return probe;
    }
    ctx.memory = memory;
    if (memory == CUDOT_MEMORY_HOST) {
        ctx.device = CUDOT_DEVICE_NONE;
        return cpu::create(ctx, err);
    }
    ctx.device = config.device;
    return cuda::create(ctx, err);
}

// Frees what build_context took; the cudot_ctx itself stays for the caller to delete. `err` is a buffer of
// the calling thread: the context that would hold a message is going away.
cudot_status destroy_backend(cudot_ctx &ctx, ErrorSink err) {
    if (ctx.memory == CUDOT_MEMORY_HOST) {
        cpu::destroy(ctx);
        return CUDOT_OK;
    }
    free_auto_state(ctx);  // host memory only
    // Inherited through fork(): no CUDA call may run here, and the parent owns the device memory.
    // The host-side bookkeeping is left allocated.
    if (ctx.forked) return CUDOT_OK;
    return cuda::destroy(ctx, err);
}

cudot_status build_and_register(cudot_ctx **out, std::size_t n, const cudot_config *config, ErrorSink err) {
    if (!out) return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_init: ctx (the out-pointer) is NULL");
    *out = nullptr;
    cudot_config cfg;
    cudot_status status = read_config(config, cfg, err);
    if (status != CUDOT_OK) return status;
    std::size_t size = std::max(element_size(cfg.dtype), element_size(cfg.y_dtype));
    const std::uint64_t rows = cfg.rows == 0 ? 1 : cfg.rows;
    const std::size_t most = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / size;
    if (rows > most || (n > 0 && n > most / static_cast<std::size_t>(rows)))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "rows * n = %llu * %zu elements of %zu bytes overflows the address space",
                    static_cast<unsigned long long>(rows), n, size);
    cudot_ctx *ctx = new (std::nothrow) cudot_ctx;
    if (!ctx) return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the context");
    ctx->serial = messages::next_serial();
    ctx->rows = static_cast<std::size_t>(rows);
    ctx->row_length = n;
    ctx->capacity = ctx->rows * n;
    ctx->dtype = cfg.dtype;
    ctx->y_dtype = cfg.y_dtype;
    ctx->mode = cfg.mode;
    ctx->wait_ms = cfg.wait_ms;
    ctx->pool = cpu::pool_use(cfg.dtype, cfg.y_dtype);
    status = build_context(*ctx, cfg, err);
    if (status == CUDOT_OK) {
        try {
            registry().remember(ctx);
        } catch (const std::bad_alloc &) {
            destroy_backend(*ctx, ErrorSink{nullptr, 0});  // keep the registry's message
            status = fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the context registry");
        }
    }
    if (status != CUDOT_OK) {
        delete ctx;  // build_context freed whatever it had taken
        return status;
    }
    *out = ctx;
    return CUDOT_OK;
}

// A call without a context (init, deinit) writes its messages into a local buffer, which reaches the
// thread's no_context_error only if the call fails: a success leaves the previous failure's message in
// place (and AUTO's failed GPU probe, which is not an error for AUTO, never shows).
struct ThreadMessage {
    char text[sizeof no_context_error];
    ThreadMessage() { text[0] = '\0'; }  // not the whole buffer: every call on own arrays makes one
    ErrorSink sink() { return ErrorSink{text, sizeof text}; }
    cudot_status keep_if_failed(cudot_status status, const char *call) {
        if (status == CUDOT_OK) return status;
        if (text[0] == '\0')
            std::snprintf(text, sizeof text, "%s failed (%s) without a message", call, cudot_status_string(status));
        std::memcpy(no_context_error, text, std::strlen(text) + 1);
        return status;
    }
};

cudot_status init_impl(cudot_ctx **out, std::size_t n, const cudot_config *config) {
    ThreadMessage message;
    return message.keep_if_failed(build_and_register(out, n, config, message.sink()), "cudot_init");
}

// A HOST context's exact dot (cpu::exact_dot), its one failure named.
cudot_status exact_on_host(cudot_ctx &ctx, std::size_t n, double *value) {
    const cudot_status status = cpu::exact_dot(ctx.operands(n), value);
    if (status == CUDOT_ERROR_OUT_OF_MEMORY)
        return fail(ctx.sink(), status, "out of host memory for the CPU threads' exact sums");
    return status;
}

// How many elements a dot covers: all of them (cudot_dot), or the first n (cudot_dot_n).
struct DotRange {
    bool whole;
    std::size_t n;
};

cudot_status dot_impl(cudot_ctx &ctx, DotRange range, double *result) {
    std::lock_guard<std::mutex> lock(ctx.mutex);
    if (cudot_status refused = refuse_if_forked_gpu(ctx)) return refused;
    if (!result) return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "result is NULL");
    const std::size_t n = range.whole ? ctx.capacity : range.n;
    if (n > ctx.capacity)
        return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "cudot_dot_n: n = %zu exceeds the capacity %zu", n,
                    ctx.capacity);
    if (n == 0) {
        *result = 0.0;
        return CUDOT_OK;
    }
    double value = 0.0;
    cpu::DefaultFpEnv fp_env;  // the caller's FTZ/DAZ or rounding mode must not change the result
    const bool exact_on_cpu = ctx.mode == CUDOT_MODE_EXACT && ctx.memory == CUDOT_MEMORY_HOST;
    cudot_status status = exact_on_cpu                    ? exact_on_host(ctx, n, &value)
                          : ctx.memory == CUDOT_MEMORY_HOST ? cpu::dot(ctx, n, &value)
                          : ctx.hybrid                    ? auto_dot(ctx, n, &value)
                                                          : cuda::dot(ctx, n, &value);
    if (status != CUDOT_OK) return status;
    // One NaN for every backend: x86 and GPUs make NaNs with different signs and payloads.
    *result = std::isnan(value) ? std::numeric_limits<double>::quiet_NaN() : value;
    return CUDOT_OK;
}

// cudot_dot_each_row. The GPU roads write each run's results as it lands: they go to a buffer of the
// calling thread first, so that a failure leaves the caller's results untouched.
cudot_status each_row_impl(cudot_ctx &ctx, std::size_t count, std::size_t n, double *results) {
    std::lock_guard<std::mutex> lock(ctx.mutex);
    if (cudot_status refused = refuse_if_forked_gpu(ctx)) return refused;
    const char *call = "cudot_dot_each_row";
    if (count > ctx.rows || n > ctx.row_length)
        return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "%s: %zu rows of %zu elements exceed the context's %zu "
                    "rows of %zu", call, count, n, ctx.rows, ctx.row_length);
    if (count == 0) return CUDOT_OK;
    if (!results) return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "%s: results is NULL", call);
    const std::uintptr_t lo = reinterpret_cast<std::uintptr_t>(results);
    if (lo % alignof(double) != 0)
        return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "%s: results (%p) is not 8-byte aligned", call,
                    static_cast<void *>(results));
    if (lo > UINTPTR_MAX - count * sizeof(double))
        return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "%s: %zu results span beyond the address space", call, count);
    const std::uintptr_t hi = lo + count * sizeof(double);
    for (const void *buffer : {ctx.x, ctx.y}) {
        const std::uintptr_t b = reinterpret_cast<std::uintptr_t>(buffer);
        const std::size_t bytes = ctx.capacity * element_size(buffer == ctx.x ? ctx.dtype : ctx.y_dtype);
        if (lo < b + bytes && b < hi)
            return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "%s: results [%p, %p) overlap the context's %s buffer",
                        call, static_cast<void *>(results), reinterpret_cast<void *>(hi), buffer == ctx.x ? "x" : "y");
    }
    if (n == 0) {
        std::fill(results, results + count, 0.0);
        return CUDOT_OK;
    }
    Rows rows;
    rows.layout = Rows::Layout::Strided;
    rows.count = count;
    rows.n = n;
    rows.x = dense_operand(ctx.x, ctx.dtype);
    rows.y = dense_operand(ctx.y, ctx.y_dtype);
    rows.x_row_stride = rows.y_row_stride = static_cast<std::int64_t>(ctx.row_length);
    rows.exact = ctx.mode == CUDOT_MODE_EXACT;
    cpu::DefaultFpEnv fp_env;  // the caller's FTZ/DAZ or rounding mode must not change the results
    double *into = results;
    static thread_local std::vector<double> staged;
    if (ctx.memory != CUDOT_MEMORY_HOST || rows.exact) {  // (the CPU's exact rows may run out of memory midway)
        try {
            if (staged.size() < count) staged.resize(count);
        } catch (const std::bad_alloc &) {
            return fail(ctx.sink(), CUDOT_ERROR_OUT_OF_MEMORY, "%s: out of host memory for %zu results", call, count);
        }
        into = staged.data();
    }
    const cudot_status status = ctx.memory == CUDOT_MEMORY_HOST ? cpu::dot_rows(rows, into, cpu::partial_scratch(ctx))
                                : ctx.hybrid                    ? auto_dot_rows(ctx, rows, into)
                                                                : cuda::dot_rows(ctx, rows, into);
    if (status == CUDOT_ERROR_OUT_OF_MEMORY && ctx.memory == CUDOT_MEMORY_HOST)
        return fail(ctx.sink(), status, "%s: out of host memory for the CPU threads' exact sums", call);
    if (status != CUDOT_OK) return status;
    for (std::size_t i = 0; i < count; ++i)  // one NaN for every backend
        results[i] = std::isnan(into[i]) ? std::numeric_limits<double>::quiet_NaN() : into[i];
    return CUDOT_OK;
}

// Bytes of one tile partial of a pair's kind, as the backends store them (packed, no padding).
std::size_t packed_partial_bytes(types::Kind kind) {
    return kind == types::Kind::Dot2 ? sizeof(order::SumF64)
                                     : kind == types::Kind::Exact ? sizeof(order::SumI64) : sizeof(order::SumDouble);
}
static_assert(order::kMaxPartialBytes <= CUDOT_PARTIAL_BYTES, "the exported partial must hold every kind");
static_assert(order::kTile == CUDOT_TILE_ELEMENTS, "the header's tile is the canonical order's tile");

// cudot_tile_partials of a context in the exact mode: one exact partial of elements [first, first + n).
cudot_status exact_partial_of_context(cudot_ctx &ctx, std::size_t first, std::size_t n, void *out) {
    if (!out) return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "cudot_tile_partials: out is NULL");
    cpu::DefaultFpEnv fp_env;
    std::unique_ptr<exact::Sum> sum(new (std::nothrow) exact::Sum);
    std::unique_ptr<exact::Partial> partial(new (std::nothrow) exact::Partial);
    if (!sum || !partial) return fail(ctx.sink(), CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for an exact partial");
    exact::clear(*sum);
    if (n > 0 && ctx.memory == CUDOT_MEMORY_HOST) {
        Operands ops = ctx.operands(n);
        ops.x.data = ops.x.at(first);
        ops.y.data = ops.y.at(first);
        if (cpu::exact_sum(ops, *sum) != CUDOT_OK)
            return fail(ctx.sink(), CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory for the CPU threads' exact sums");
    } else if (n > 0) {
        if (cudot_status status = cuda::exact_tile_partial(ctx, first, n, *sum)) return status;
    }
    exact::to_partial(*sum, *partial);
    std::memcpy(out, partial.get(), sizeof *partial);
    return CUDOT_OK;
}

cudot_status tile_partials_impl(cudot_ctx &ctx, std::size_t first, std::size_t n, void *out) {
    std::lock_guard<std::mutex> lock(ctx.mutex);
    if (cudot_status refused = refuse_if_forked_gpu(ctx)) return refused;
    if (first > ctx.capacity || n > ctx.capacity - first)
        return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT,
                    "cudot_tile_partials: elements [%zu, %zu + %zu) reach beyond the capacity %zu", first, first, n,
                    ctx.capacity);
    if (ctx.mode == CUDOT_MODE_EXACT) return exact_partial_of_context(ctx, first, n, out);
    if (n == 0) return CUDOT_OK;
    if (!out) return fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "cudot_tile_partials: out is NULL");
    cpu::DefaultFpEnv fp_env;
    const types::Kind kind = types::kind_of(ctx.dtype, ctx.y_dtype);
    const std::size_t tiles = order::tile_count(n), packed = packed_partial_bytes(kind);
    // Both backends leave the partials, packed, in the context's own array, which holds the tiles of its
    // capacity, so of any n within it.
    void *scratch = nullptr;
    if (ctx.memory == CUDOT_MEMORY_HOST) {
        Operands ops = ctx.operands(n);
        ops.x.data = ops.x.at(first);
        ops.y.data = ops.y.at(first);
        scratch = cpu::partial_scratch(ctx);
        if (cudot_status status = cpu::compute_packed_partials(ops, 0, tiles, scratch, ctx.pool)) return status;
    } else {
        cudot_status status = cuda::tile_partials(ctx, first, n, &scratch);
        if (status != CUDOT_OK) return status;
    }
    unsigned char *dst = static_cast<unsigned char *>(out);
    const unsigned char *src = static_cast<const unsigned char *>(scratch);
    for (std::size_t t = 0; t < tiles; ++t) {
        std::memset(dst + t * CUDOT_PARTIAL_BYTES, 0, CUDOT_PARTIAL_BYTES);
        std::memcpy(dst + t * CUDOT_PARTIAL_BYTES, src + t * packed, packed);
    }
    return CUDOT_OK;
}

cudot_status join_partials_impl(int32_t x_dtype, int32_t y_dtype, const void *partials, std::size_t tiles,
                                double *result) {
    ErrorSink err{no_context_error, sizeof no_context_error};
    if (y_dtype == 0) y_dtype = x_dtype;
    if (!types::valid_dtype(x_dtype) || !types::valid_dtype(y_dtype))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_join_partials: element types %d x %d are not both "
                    "CUDOT_F32 = 1 .. CUDOT_U8 = 6", static_cast<int>(x_dtype), static_cast<int>(y_dtype));
    if (!result) return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_join_partials: result is NULL");
    if (tiles > 0 && !partials)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_join_partials: partials is NULL");
    // tiles partials of CUDOT_PARTIAL_BYTES must fit in the address space (the copy below multiplies).
    if (tiles > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / CUDOT_PARTIAL_BYTES)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "cudot_join_partials: %zu tiles of %d bytes exceed the address space", tiles, CUDOT_PARTIAL_BYTES);
    if (tiles == 0) {
        *result = 0.0;
        return CUDOT_OK;
    }
    const types::Kind kind = types::kind_of(x_dtype, y_dtype);
    const std::size_t packed = packed_partial_bytes(kind);
    std::vector<unsigned char> compact(tiles * packed);  // bad_alloc: guarded() says OUT_OF_MEMORY
    const unsigned char *src = static_cast<const unsigned char *>(partials);
    for (std::size_t t = 0; t < tiles; ++t) std::memcpy(&compact[t * packed], src + t * CUDOT_PARTIAL_BYTES, packed);
    cpu::DefaultFpEnv fp_env;
    const double value = order::join_packed_partials(kind, compact.data(), tiles);
    *result = std::isnan(value) ? std::numeric_limits<double>::quiet_NaN() : value;
    return CUDOT_OK;
}

cudot_status join_exact_partials_impl(const void *partials, std::size_t count, double *result) {
    ErrorSink err{no_context_error, sizeof no_context_error};
    if (!result) return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_join_exact_partials: result is NULL");
    if (count > 0 && !partials)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_join_exact_partials: partials is NULL");
    std::unique_ptr<exact::Sum> sum(new exact::Sum);  // bad_alloc: guarded() says OUT_OF_MEMORY
    std::unique_ptr<exact::Partial> one(new exact::Partial);
    exact::clear(*sum);
    const unsigned char *src = static_cast<const unsigned char *>(partials);
    for (std::size_t i = 0; i < count; ++i) {
        std::memcpy(one.get(), src + i * sizeof *one, sizeof *one);  // the caller's bytes may be unaligned
        if (!exact::add_partial(*sum, *one))
            return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                        "cudot_join_exact_partials: partial %zu is not an exact partial of this version (written by "
                        "cudot_tile_partials or cudot_tile_partials_arrays in CUDOT_MODE_EXACT)", i);
    }
    *result = exact::round(*sum);
    return CUDOT_OK;
}

// Runs body and turns an escaping exception into a status (with a message when there is a sink).
template <class Body>
cudot_status guarded(ErrorSink err, Body body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "out of host memory");
    } catch (const std::exception &e) {
        return fail(err, CUDOT_ERROR_INTERNAL, "unexpected C++ exception: %s", e.what());
    } catch (...) {
        return fail(err, CUDOT_ERROR_INTERNAL, "unexpected C++ exception");
    }
}

// Runs body(context) for a live handle, holding a reference to it, with exceptions turned into a status
// recorded on the context; INVALID_ARGUMENT for a handle that is not live.
// The handle's lookup can throw too (std::system_error from a lock): it runs inside a guard, whose
// message has nowhere to go before the context is known, so the status alone says INTERNAL.
template <class Body>
cudot_status on_live_context(const cudot_ctx *handle, Body body) noexcept {
    try {
        ContextRef ref(handle);
        if (!ref) return CUDOT_ERROR_INVALID_ARGUMENT;
        cudot_ctx &ctx = *ref;
        messages::CallOn call(ctx);
        return call.finish(guarded(ctx.sink(), [&] { return body(ctx); }));
    } catch (...) {
        return CUDOT_ERROR_INTERNAL;
    }
}

// Every failure leaves its message in the thread's no_context_error: the context that could have held it
// is gone, or (a failed lookup) not known to be live.
cudot_status deinit_impl(cudot_ctx *ctx) {
    ThreadMessage message;
    try {
        if (!registry().forget(ctx))
            return message.keep_if_failed(
                fail(message.sink(), CUDOT_ERROR_INVALID_ARGUMENT,
                     "cudot_deinit: not a live cudot context (already destroyed, or not from cudot_init)"),
                "cudot_deinit");
    } catch (const std::exception &e) {  // the context is still live: a later deinit can destroy it
        return message.keep_if_failed(fail(message.sink(), CUDOT_ERROR_INTERNAL,
                                           "cudot_deinit: the context's lookup failed (%s); it is still live",
                                           e.what()),
                                      "cudot_deinit");
    }
    wait_for_calls(*ctx);  // no new call can find ctx now; let those already inside finish
    cudot_status status = guarded(message.sink(), [&] { return destroy_backend(*ctx, message.sink()); });
    delete ctx;
    return message.keep_if_failed(status, "cudot_deinit");
}

}  // namespace


}  // namespace cudot

using namespace cudot;

extern "C" {

CUDOT_API cudot_status cudot_init(cudot_ctx **ctx, size_t n, const cudot_config *config) {
    return guarded(ErrorSink{no_context_error, sizeof no_context_error},
                   [&] { return init_impl(ctx, n, config); });
}

CUDOT_API cudot_status cudot_get_inputs(cudot_ctx *ctx, void **x, void **y) {
    return on_live_context(ctx, [&](cudot_ctx &c) {
        // CUDA's page-locked and managed memory is not mapped in a forked child.
        if (cudot_status refused = refuse_if_forked_gpu(c)) return refused;
        if (x) *x = c.x;
        if (y) *y = c.y;
        return CUDOT_OK;
    });
}

CUDOT_API cudot_status cudot_dot(cudot_ctx *ctx, double *result) {
    return on_live_context(ctx, [&](cudot_ctx &c) { return dot_impl(c, DotRange{true, 0}, result); });
}

CUDOT_API cudot_status cudot_dot_n(cudot_ctx *ctx, size_t n, double *result) {
    return on_live_context(ctx, [&](cudot_ctx &c) { return dot_impl(c, DotRange{false, n}, result); });
}

CUDOT_API cudot_status cudot_dot_each_row(cudot_ctx *ctx, size_t rows, size_t n, double *results) {
    return on_live_context(ctx, [&](cudot_ctx &c) { return each_row_impl(c, rows, n, results); });
}

CUDOT_API cudot_status cudot_tile_partials(cudot_ctx *ctx, size_t first, size_t n, void *out) {
    return on_live_context(ctx, [&](cudot_ctx &c) { return tile_partials_impl(c, first, n, out); });
}

CUDOT_API cudot_status cudot_join_partials(int32_t x_dtype, int32_t y_dtype, const void *partials, size_t tiles,
                                           double *result) {
    return guarded(ErrorSink{no_context_error, sizeof no_context_error},
                   [&] { return join_partials_impl(x_dtype, y_dtype, partials, tiles, result); });
}

CUDOT_API cudot_status cudot_join_exact_partials(const void *partials, size_t count, double *result) {
    return guarded(ErrorSink{no_context_error, sizeof no_context_error},
                   [&] { return join_exact_partials_impl(partials, count, result); });
}

// Dots of the caller's own arrays (own_arrays.cpp): no context, so messages go to cudot_last_error(NULL).
static cudot_status no_context_call(const char *call, cudot_status (*body)(ErrorSink, const void *), const void *args) {
    ThreadMessage message;
    return message.keep_if_failed(guarded(message.sink(), [&] { return body(message.sink(), args); }), call);
}

struct ArraysCall {
    const cudot_arrays *a;
    arrays::Want want;
    void *out;
    const char *name;
};
static cudot_status arrays_call(const ArraysCall &c) {
    return no_context_call(c.name, [](ErrorSink err, const void *args) {
        const ArraysCall &call = *static_cast<const ArraysCall *>(args);
        return arrays::run(call.a, call.want, call.out, call.name, err);
    }, &c);
}

CUDOT_API cudot_status cudot_dot_arrays(const cudot_arrays *a, double *result) {
    return arrays_call({a, arrays::Want::Result, result, "cudot_dot_arrays"});
}

CUDOT_API cudot_status cudot_dot_arrays_async(const cudot_arrays *a, double *device_result) {
    return arrays_call({a, arrays::Want::DeviceResult, device_result, "cudot_dot_arrays_async"});
}

CUDOT_API cudot_status cudot_tile_partials_arrays(const cudot_arrays *a, void *out) {
    return arrays_call({a, arrays::Want::Partials, out, "cudot_tile_partials_arrays"});
}

struct RowsCall {
    const cudot_rows *r;
    arrays::Want want;
    double *results;
    const char *name;
};
static cudot_status rows_call(const RowsCall &c) {
    return no_context_call(c.name, [](ErrorSink err, const void *args) {
        const RowsCall &call = *static_cast<const RowsCall *>(args);
        return arrays::run_rows(call.r, call.want, call.results, call.name, err);
    }, &c);
}
CUDOT_API cudot_status cudot_dot_rows(const cudot_rows *r, double *results) {
    return rows_call({r, arrays::Want::Result, results, "cudot_dot_rows"});
}
CUDOT_API cudot_status cudot_dot_rows_async(const cudot_rows *r, double *device_results) {
    return rows_call({r, arrays::Want::DeviceResult, device_results, "cudot_dot_rows_async"});
}

struct RegisterCall {
    const void *p;
    size_t bytes;
};
CUDOT_API cudot_status cudot_register_host(const void *p, size_t bytes) {
    RegisterCall c{p, bytes};
    return no_context_call("cudot_register_host", [](ErrorSink err, const void *args) {
        const RegisterCall &r = *static_cast<const RegisterCall *>(args);
        return arrays::register_host(r.p, r.bytes, err);
    }, &c);
}

CUDOT_API cudot_status cudot_unregister_host(const void *p) {
    return no_context_call("cudot_unregister_host", [](ErrorSink err, const void *args) {
        return arrays::unregister_host(args, err);
    }, p);
}

CUDOT_API cudot_status cudot_deinit(cudot_ctx *ctx) {
    if (!ctx) return CUDOT_OK;
    return guarded(ErrorSink{no_context_error, sizeof no_context_error}, [&] { return deinit_impl(ctx); });
}

CUDOT_API cudot_status cudot_get_memory(const cudot_ctx *ctx, int32_t *memory, int32_t *device) {
    return on_live_context(ctx, [&](cudot_ctx &c) {
        if (memory) *memory = c.memory;
        if (device) *device = c.device;
        return CUDOT_OK;
    });
}

CUDOT_API cudot_status cudot_get_mode(const cudot_ctx *ctx, int32_t *mode) {
    return on_live_context(ctx, [&](cudot_ctx &c) {
        if (!mode) return fail(c.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "cudot_get_mode: mode is NULL");
        *mode = c.mode;
        return CUDOT_OK;
    });
}

CUDOT_API cudot_status cudot_get_dtypes(const cudot_ctx *ctx, int32_t *x_dtype, int32_t *y_dtype) {
    return on_live_context(ctx, [&](cudot_ctx &c) {
        if (x_dtype) *x_dtype = c.dtype;
        if (y_dtype) *y_dtype = c.y_dtype;
        return CUDOT_OK;
    });
}

CUDOT_API cudot_status cudot_get_capacity(const cudot_ctx *ctx, size_t *n) {
    return on_live_context(ctx, [&](cudot_ctx &c) {
        if (!n)  // the one query whose out-pointer is required
            return fail(c.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "cudot_get_capacity: n (the out-pointer) is NULL");
        *n = c.capacity;
        return CUDOT_OK;
    });
}

CUDOT_API cudot_status cudot_get_rows(const cudot_ctx *ctx, size_t *rows, size_t *n) {
    return on_live_context(ctx, [&](cudot_ctx &c) {
        if (rows) *rows = c.rows;
        if (n) *n = c.row_length;
        return CUDOT_OK;
    });
}

CUDOT_API const char *cudot_status_string(cudot_status status) {
    // Switch on the integer: C callers and bindings may pass any int, and loading an out-of-range
    // value as the enum type is undefined in C++ (the fuzzer's UBSan build caught it).
    int value;
    std::memcpy(&value, &status, sizeof value);
    switch (value) {
        case CUDOT_OK: return "CUDOT_OK";
        case CUDOT_ERROR_INVALID_ARGUMENT: return "CUDOT_ERROR_INVALID_ARGUMENT";
        case CUDOT_ERROR_OUT_OF_MEMORY: return "CUDOT_ERROR_OUT_OF_MEMORY";
        case CUDOT_ERROR_NO_DEVICE: return "CUDOT_ERROR_NO_DEVICE";
        case CUDOT_ERROR_UNSUPPORTED: return "CUDOT_ERROR_UNSUPPORTED";
        case CUDOT_ERROR_CUDA: return "CUDOT_ERROR_CUDA";
        case CUDOT_ERROR_INTERNAL: return "CUDOT_ERROR_INTERNAL";
    }
    return "CUDOT_ERROR_UNKNOWN";
}

CUDOT_API const char *cudot_last_error(const cudot_ctx *ctx) {
    if (!ctx) return no_context_error;
    try {
        ContextRef ref(ctx);
        if (!ref) return "not a live cudot context (NULL, already destroyed, or not from cudot_init)";
        return messages::read(*ref);
    } catch (...) {
        return "cudot_last_error: the context's lookup failed (an internal error)";
    }
}

CUDOT_API uint32_t cudot_version(void) { return CUDOT_VERSION_NUMBER; }

#define CUDOT_STR2(x) #x
#define CUDOT_STR(x) CUDOT_STR2(x)
CUDOT_API const char *cudot_version_string(void) {
    return CUDOT_STR(CUDOT_VERSION_MAJOR) "." CUDOT_STR(CUDOT_VERSION_MINOR) "." CUDOT_STR(CUDOT_VERSION_PATCH);
}

}  // extern "C"
