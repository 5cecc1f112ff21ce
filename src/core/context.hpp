// context.hpp - the internal shape of a cudot_ctx and the error plumbing every layer shares.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "cudot.h"
#include "operands.hpp"

namespace cudot {

// Where a failing call writes its message. A context's message (ctx set, by cudot_ctx::sink()) goes
// through src/api/messages.hpp, which keeps it for the failing thread and for the context; a call without a
// context (init, deinit, join) writes into `text`, a buffer of the calling thread; neither: dropped.
struct ErrorSink {
    char *text;
    std::size_t size;
    cudot_ctx *ctx = nullptr;
};

// Formats the message into the sink and returns the status, so failures read as one line:
//   return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "n (%zu) exceeds capacity (%zu)", n, cap);
cudot_status fail(ErrorSink err, cudot_status status, const char *format, ...)
#if defined(__MINGW32__)  // MinGW's own printf (__USE_MINGW_ANSI_STDIO), which knows %zu
    __attribute__((format(gnu_printf, 3, 4)))
#elif defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

std::size_t element_size(int32_t dtype);

struct AutoState;  // what AUTO learned about a context with a GPU (src/auto/auto_dot.cpp)
namespace cuda {
struct DeviceState;  // the CUDA backend's part of a context (src/cuda/gpu_state.hpp)
}
namespace cpu {
struct HostState;  // the CPU backend's part of a context (src/cpu/cpu_backend.cpp)
}

// How the CPU dots of a context (or of one call on the caller's arrays) use the thread pool:
// cpu::pool_use() gives the library's choice for a pair of element types.
struct PoolUse {
    unsigned max_threads = ~0u;   // threads one dot may use, the calling thread's included
    std::size_t from_bytes = 0;   // dots that read fewer bytes of x and y together stay on the calling thread
    bool measured = true;         // in the band of sizes where either way can win, the faster one as measured
};

}  // namespace cudot

struct cudot_ctx {
    std::mutex mutex;                  // serializes calls on this context
    std::atomic<unsigned> calls{0};    // entry points running on this context (cudot_deinit waits for 0)
    std::size_t capacity = 0;          // elements of each buffer: rows * row_length
    std::size_t rows = 1;              // cudot_config.rows (row r at element r * row_length)
    std::size_t row_length = 0;        // cudot_init's n
    int32_t dtype = CUDOT_F32;    // element type of x
    int32_t y_dtype = CUDOT_F32;  // element type of y
    int32_t mode = CUDOT_MODE_CANONICAL;  // cudot_config.mode: how its dots sum
    int32_t memory = CUDOT_MEMORY_HOST;  // resolved: never AUTO
    int32_t device = CUDOT_DEVICE_NONE;
    bool hybrid = false;  // AUTO with a GPU: MAPPED buffers, each dot split between CPU threads and the GPU
    bool forked = false;  // this process got the context from its parent through fork() (api.cpp)
    uint32_t wait_ms = CUDOT_DEFAULT_WAIT_MS;  // the longest a call waits for the GPU (cudot_config.wait_ms)
    void *x = nullptr;  // the buffers handed to the caller
    void *y = nullptr;
    cudot::cpu::HostState *host = nullptr;      // set for HOST
    cudot::cuda::DeviceState *gpu = nullptr;    // set for PINNED, MAPPED, MANAGED
    cudot::AutoState *auto_state = nullptr;     // AUTO with a GPU, from its first timed dot
    cudot::PoolUse pool;                        // how its CPU dots use the thread pool (set by init)
    // Unique in the process, unlike the address (which a later cudot_init may reuse): it tags the
    // messages a thread keeps for this context (src/api/messages.hpp).
    std::uint64_t serial = 0;
    std::mutex message_mutex;  // guards last_message; not `mutex`, so reading it never waits for a dot
    char last_message[512] = {0};  // the latest failure's message on this context, from any thread

    cudot::ErrorSink sink() { return cudot::ErrorSink{nullptr, 0, this}; }
    // The first n elements of the buffers, as the operand views every backend reads (operands.hpp).
    cudot::Operands operands(std::size_t n) const {
        cudot::Operands ops;
        ops.n = n;
        ops.x = cudot::dense_operand(x, dtype);
        ops.y = cudot::dense_operand(y, y_dtype);
        return ops;
    }
};
