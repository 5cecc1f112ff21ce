/*
 * cudot.h - the whole public contract of cudot, a dot-product library with a stable C ABI.
 *
 * Usage, in five calls:
 *
 *     cudot_config cfg = CUDOT_CONFIG_INIT;        (or pass NULL for the defaults)
 *     cudot_ctx *ctx;
 *     if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) { puts(cudot_last_error(NULL)); ... }
 *     float *x, *y;
 *     cudot_get_inputs(ctx, (void **)&x, (void **)&y);   fill x[0..n) and y[0..n) in place
 *     double r;
 *     cudot_dot(ctx, &r);                           as often as you like, refilling between calls
 *     cudot_deinit(ctx);
 *
 * Conventions that hold for every function below:
 *  - Out-parameters come first; every function that can fail returns a cudot_status.
 *  - No function aborts, exits, throws or prints. A failure is a status plus a message: read it with
 *    cudot_last_error(ctx) on the thread that made the call, or cudot_last_error(NULL) after a failed
 *    cudot_init, cudot_deinit or cudot_join_partials.
 *  - Thread-safety: different contexts may be used from any threads at once. Calls on one context from
 *    several threads are serialized by the library (safe; they simply wait for each other). The only
 *    exception is cudot_deinit, which must not race with any other call on the same context: after it
 *    starts, the context is gone.
 *  - Results are deterministic: the value returned by cudot_dot is a pure function of n and the input
 *    values, bitwise identical on every call, for every memory strategy, on the CPU and on any GPU.
 *    docs/DESIGN.md gives the canonical summation order and docs/ACCURACY.md the error bounds.
 *  - A guest in the caller's CUDA program: the GPU strategies touch only the devices their contexts
 *    were created for, and their work (buffers, streams, kernels) runs in those devices' primary
 *    contexts, whatever context the calling thread has current. Every call returns with the calling
 *    thread's current CUDA context as it found it (none, a primary context, or the caller's own
 *    driver-API context), and an error the caller's CUDA code left pending stays pending. The
 *    primary context of a device cudot used is kept until the process ends, as the runtime keeps it.
 *  - The calling thread's floating-point environment changes no result: cudot computes with round to
 *    nearest and no flushing of subnormals whatever the caller set (x86 MXCSR FTZ/DAZ and rounding,
 *    AArch64 FPCR FZ/FZ16/AH and rounding), and every call returns the environment exactly as it found
 *    it, its modes and its sticky exception flags alike: a call neither raises nor clears a flag the
 *    caller can see (fetestexcept reads the same before and after).
 */
#ifndef CUDOT_H
#define CUDOT_H

#include <stddef.h>
#include <stdint.h>

/* Version of this header. cudot_version() returns the version of the library actually loaded. */
#define CUDOT_VERSION_MAJOR 1
#define CUDOT_VERSION_MINOR 14
#define CUDOT_VERSION_PATCH 0
#define CUDOT_VERSION_NUMBER (CUDOT_VERSION_MAJOR * 10000 + CUDOT_VERSION_MINOR * 100 + CUDOT_VERSION_PATCH)

/* CUDOT_API marks exported functions: dllexport/dllimport on Windows, default visibility elsewhere. */
#if defined(_WIN32) || defined(__CYGWIN__)
#  if defined(CUDOT_BUILDING_LIBRARY)
#    define CUDOT_API __declspec(dllexport)
#  elif defined(CUDOT_STATIC)
#    define CUDOT_API
#  else
#    define CUDOT_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define CUDOT_API __attribute__((visibility("default")))
#else
#  define CUDOT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A context: the input buffers for up to n elements and everything needed to compute their dot
 * product on the chosen backend. Opaque; create with cudot_init, destroy with cudot_deinit. */
typedef struct cudot_ctx cudot_ctx;

/* Every status any function returns. Values are fixed forever; new ones may be added at the end. */
typedef enum cudot_status {
    CUDOT_OK = 0,
    CUDOT_ERROR_INVALID_ARGUMENT = 1, /* a NULL pointer, an unknown enum value, n beyond capacity, ... */
    CUDOT_ERROR_OUT_OF_MEMORY = 2,    /* host, pinned, managed or device memory could not be had */
    CUDOT_ERROR_NO_DEVICE = 3,        /* a GPU strategy was asked for and no usable GPU exists */
    CUDOT_ERROR_UNSUPPORTED = 4,      /* a valid request this library or device cannot serve */
    CUDOT_ERROR_CUDA = 5,             /* a CUDA call failed; the message names the call and the error */
    CUDOT_ERROR_INTERNAL = 6          /* a bug in cudot; please report the message */
} cudot_status;

/* Element types (cudot_config.dtype and .y_dtype). Buffers hold the native representation:
 *  F32 float, F64 double, F16 IEEE binary16 and BF16 bfloat16 (each 16 bits, little-endian bits as
 *  uint16_t), I8 int8_t, U8 uint8_t (also Bool data stored as 0/1 bytes). */
enum { CUDOT_F32 = 1, CUDOT_F64 = 2, CUDOT_F16 = 3, CUDOT_BF16 = 4, CUDOT_I8 = 5, CUDOT_U8 = 6 };

/* Memory strategies (cudot_config.memory): where the input buffers live and who computes.
 *  AUTO    - with a usable GPU: host buffers every GPU reads in place: mapped page-locked memory
 *            (cudot_get_memory() reports MAPPED). Opt-in, while it is measured: with the environment
 *            variable CUDOT_AUTO_MANAGED=1 at init, managed memory instead (reports MANAGED) where the
 *            GPUs share managed memory with the host while kernels run and the buffers fit in the
 *            GPUs' free memory. A dot of fewer than 2^14 elements runs on the CPU threads alone. From
 *            2^14 elements on, the context measures, per power-of-two size class, the CPU threads
 *            alone, the GPU alone (reading over the bus) and (from 16 tiles, 2^17 elements) both at
 *            once, each taking a share of the tiles, and takes the fastest, re-measuring now and
 *            then. With managed buffers it also moves the inputs into GPU memory after a dot whose
 *            result has the same bits as the last one of its size (the sign of inputs left alone);
 *            while the host leaves them alone, every dot reads them there, and once the host writes
 *            them they go back to the host (a move that did not pay waits longer before the next, up
 *            to 256 dots of that size). Every path gives the same bits. Without a GPU: HOST.
 *            Good for data the host rewrites before each dot; with CUDOT_AUTO_MANAGED=1, also for
 *            data it leaves alone (docs/PERFORMANCE.md has what each costs).
 *            (A GPU that cannot map host memory gets PINNED, without the CPU share.)
 *  PINNED  - page-locked host buffers (cudaMallocHost) plus device buffers; each dot copies the
 *            first n elements to the GPU, then computes there. Good for fresh data every call.
 *  MAPPED  - page-locked host buffers mapped into the GPU's address space (zero-copy); the kernel
 *            reads host memory over the bus. Good for fresh data every call, no device memory used.
 *  MANAGED - unified memory (cudaMallocManaged); pages migrate to the GPU and stay there while the
 *            host leaves them alone. Good when the inputs change rarely. When a dot finds that the
 *            host rewrote them, the next dots read them in place over the bus (as MAPPED does), and
 *            now and then one migrates them back to find out whether they stay there. Refused
 *            (OUT_OF_MEMORY), before allocating, when the buffers would not fit in the device's free
 *            memory.
 *  HOST    - ordinary aligned host memory, computed on the CPU by a persistent thread pool. Works
 *            everywhere, no GPU or driver needed. The pool has one thread per CPU the process may use
 *            (its affinity mask, lowered to its cgroup's CPU quota), the calling thread included;
 *            the environment variable CUDOT_NUM_THREADS (1 to 1024, read when the pool starts) sets
 *            the count instead, and any other value of it is ignored. */
enum {
    CUDOT_MEMORY_AUTO = 0,
    CUDOT_MEMORY_PINNED = 1,
    CUDOT_MEMORY_MAPPED = 2,
    CUDOT_MEMORY_MANAGED = 3,
    CUDOT_MEMORY_HOST = 4
};

/* cudot_config.device value meaning "every visible GPU" (CUDA_VISIBLE_DEVICES decides which are
 * visible): the buffers are shared by all of them (PINNED/MAPPED page-locked memory registered for every
 * GPU; MANAGED unified memory, which each GPU reads its part of in place or migrates to itself, as one
 * GPU does), and each dot splits its tiles into one contiguous run per GPU, each GPU with its own stream;
 * the host joins the runs' partials in the canonical order, so the result is the same bits as on one GPU
 * or the CPU. PINNED copies each GPU's run only, or reads it in place, whichever measured faster at that
 * size (device memory per GPU: about 1/count of the buffers). AUTO's CPU+GPU split uses every GPU. With
 * one visible GPU it behaves as device 0. Since 1.3. */
#define CUDOT_DEVICE_ALL (-1)

/* Device value reported by cudot_get_memory() for a context that runs on the CPU. */
#define CUDOT_DEVICE_NONE (-2)

/* Options for cudot_init. Start from CUDOT_CONFIG_INIT, or zero-fill the struct and set size:
 * a zero in any field after size means "the default". The size field lets the struct grow: the
 * library reads only the first `size` bytes and uses defaults for fields an older caller lacks. */
typedef struct cudot_config {
    uint32_t size;    /* sizeof(cudot_config): 16 (the first version, which ended at `device`), 20 (1.1,
                         which ended at `y_dtype`), 24 (1.5, at `wait_ms`), 32 (1.10, at `rows`), 40
                         (1.13, at `reserved`), or more from a newer header, at most 4096;
                         bytes past what this library knows must be zero (they would ask for features
                         it lacks) */
    int32_t  dtype;   /* element type of x (and of y unless y_dtype says otherwise); 0 means CUDOT_F32 */
    int32_t  memory;  /* a CUDOT_MEMORY_* value; 0 means CUDOT_MEMORY_AUTO */
    int32_t  device;  /* CUDA device ordinal (0-based), or CUDOT_DEVICE_ALL (-1): every visible GPU;
                         ignored by HOST, and by AUTO when no GPU exists */
    int32_t  y_dtype; /* element type of y; 0 means "the same as dtype". Since 1.1; a caller compiled
                         against 1.0 passes size 16 and gets the default. */
    uint32_t wait_ms; /* GPU strategies: the longest one call waits for the GPU, in milliseconds; 0 (or
                         CUDOT_DEFAULT_WAIT_MS) means the default: one minute plus 2 s for every GiB the
                         call reads, so that no healthy dot of any size
                         runs out of it. A call that waits longer (a hung or stalled GPU) returns
                         CUDOT_ERROR_CUDA, and the context is then unusable: every later call on it but
                         cudot_deinit returns CUDOT_ERROR_CUDA, and cudot_deinit destroys it without
                         waiting for the GPU (leaving the GPU memory that the unfinished kernel may
                         still use allocated). The GPU is then marked for the whole process until that
                         kernel ends: calls of other contexts that would wait on it (a dot, an init, the
                         frees of a deinit) return CUDOT_ERROR_CUDA at once, saying so; a deinit
                         refused so still destroys the context, leaving its GPU and page-locked memory
                         allocated. Since 1.5. */
    uint64_t rows;    /* rows of the buffers, each of n elements (cudot_init's n): the buffers hold
                         rows * n elements, row-major (row r starts at element r * n); 0 means 1.
                         cudot_dot_each_row dots them row by row; cudot_dot, cudot_dot_n and
                         cudot_tile_partials see each buffer as one vector of rows * n elements. Since
                         1.10 (a config of size 24, from 1.5 to 1.9, has one row). */
    int32_t  mode;    /* a cudot_mode (below): how cudot_dot, cudot_dot_n and cudot_tile_partials sum;
                         0 means CUDOT_MODE_CANONICAL. Since 1.13 (a config of size 32 or less gets the
                         canonical mode). */
    int32_t  reserved; /* must be 0 */
} cudot_config;

#define CUDOT_DEFAULT_WAIT_MS 60000u /* the default bound's fixed part: one minute (see wait_ms) */

#define CUDOT_CONFIG_INIT { (uint32_t)sizeof(cudot_config), CUDOT_F32, CUDOT_MEMORY_AUTO, 0, 0, 0, 0, 0, 0 }

/*! cudot_init: create a context with input buffers for n elements (config->rows rows of n: rows * n).
 * @param ctx    out: the new context, or NULL on any failure. Must not be NULL itself.
 * @param n      elements of a row; the capacity is rows * n (0 is allowed: every dot is then 0.0).
 * @param config options, read only during the call; NULL means all defaults (F32, AUTO, device 0).
 * @return CUDOT_OK;
 *         CUDOT_ERROR_INVALID_ARGUMENT  ctx NULL, config->size below 16, 17..19, 21..23, 25..31,
 *                                       33..39 or above 4096, unknown dtype, y_dtype, memory or mode,
 *                                       reserved not 0,
 *                                       device below -1 or beyond the GPUs present, rows * n so large
 *                                       the byte count overflows;
 *         CUDOT_ERROR_OUT_OF_MEMORY     the buffers cannot be allocated, or would exceed the host's
 *                                       physical memory (HOST, PINNED, MAPPED) or the device's free
 *                                       memory (MANAGED, checked before allocating);
 *         CUDOT_ERROR_NO_DEVICE         a GPU strategy without a usable GPU (no driver, no device, a GPU
 *                                       older than this build supports, or a build without CUDA);
 *         CUDOT_ERROR_UNSUPPORTED       config->size larger than this library knows with non-zero bytes
 *                                       beyond; a device cannot do what the strategy needs (e.g. mapped
 *                                       memory, or MANAGED shared by several GPUs without concurrent
 *                                       managed access);
 *         CUDOT_ERROR_CUDA              a CUDA call failed; CUDOT_ERROR_INTERNAL.
 * On failure the reason is in cudot_last_error(NULL) on the same thread. Every strategy's buffers read
 * zero after init (since 1.8; before, their contents were unspecified). */
CUDOT_API cudot_status cudot_init(cudot_ctx **ctx, size_t n, const cudot_config *config);

/*! cudot_get_inputs: the two input buffers, each of capacity elements: x of the context's dtype, y of
 * its y_dtype (float for CUDOT_F32, double for CUDOT_F64, 16-bit patterns for F16/BF16, int8_t, uint8_t),
 * aligned to at least 64 bytes. The library owns them:
 * write into them in place; they stay valid and at the same address until cudot_deinit. Do not free them.
 * After cudot_deinit, HOST, PINNED and MAPPED buffers stay mapped, as fresh zero pages whose memory went
 * back to the system: a view that outlives the context (a garbage-collected slice, span or array) reads
 * zeros, and its writes reach nothing else, for the last 4096 buffers destroyed (older ranges are
 * released; since 1.8). MANAGED buffers are CUDA's (cudaMallocManaged) and are freed at deinit: a view
 * used after it is a use after free.
 * Either out-pointer may be NULL if you do not need it. With n == 0 both are non-NULL and must not be
 * dereferenced. Do not write to them while a dot on this context is running in another thread.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT if ctx is NULL or not a live context. */
CUDOT_API cudot_status cudot_get_inputs(cudot_ctx *ctx, void **x, void **y);

/*! cudot_dot: *result = sum of x[i] * y[i] over all capacity elements, using what the host last wrote.
 * Accuracy, by the pair of element types:
 *  - either side F64: compensated (Dot2), as if computed in twice the working precision, rounded once,
 *    while every product and every partial sum (in the canonical order) stays within the double range.
 *    Where one overflows, the result is the plain double sum's: +Inf or -Inf, or NaN where infinities of
 *    both signs meet, whatever the exact value: [1e300, 1e300, -1e300].[1e10, 1e10, 1e10] (exactly
 *    1e310, so +Inf once rounded) and [1e308, 1e308].[10, -10] (exactly 0) give NaN,
 *    [1e308, 1e308, -1e308].[1, 1, 1] (exactly 1e308) gives +Inf;
 *  - both sides integer (I8, U8): the exact sum in 64-bit integers, converted to double (exact up to
 *    2^53 in magnitude, correctly rounded beyond; the integer sum cannot overflow at any n that fits
 *    in memory);
 *  - otherwise (F32, F16, BF16, and integers with those): each product exact in double, sums in double. NaN in any product gives NaN (always
 * the same quiet NaN), a lone infinity gives that infinity, Inf * 0 gives NaN. An empty dot is +0.0.
 * A context made with cudot_config.mode = CUDOT_MODE_EXACT returns the exact mode's dot instead, for every
 * pair (see cudot_mode below).
 * @param result out: the dot product; written only on CUDOT_OK.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT (ctx or result NULL, ctx not live);
 *         CUDOT_ERROR_CUDA (a CUDA call failed: see cudot_last_error(ctx)); CUDOT_ERROR_INTERNAL. */
CUDOT_API cudot_status cudot_dot(cudot_ctx *ctx, double *result);

/*! cudot_dot_n: like cudot_dot over the first n elements only (n <= capacity). Only those n elements
 * are read, and copied to the GPU where the strategy copies. The result equals what a context of
 * capacity n would return for the same values.
 * @return as cudot_dot, plus CUDOT_ERROR_INVALID_ARGUMENT when n > capacity. */
CUDOT_API cudot_status cudot_dot_n(cudot_ctx *ctx, size_t n, double *result);

/*! cudot_deinit: destroy the context and free its buffers; pointers from cudot_get_inputs become invalid.
 * NULL is a no-op returning CUDOT_OK. Destroying a context twice, or using it afterwards, is a bug in
 * the caller, but a harmless one: the library keeps a registry of live contexts, so every entry point
 * answers a destroyed handle with CUDOT_ERROR_INVALID_ARGUMENT without reading freed memory. The one
 * case it cannot tell apart: a later cudot_init may return the same address, and the stale handle
 * then names that new context.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT (not a live context); CUDOT_ERROR_CUDA when freeing
 *         GPU memory reported an error (the context is destroyed anyway); CUDOT_ERROR_INTERNAL (the
 *         context is then still live). On failure the reason is in cudot_last_error(NULL) on the same
 *         thread, as after cudot_init: the context that could have held it is gone. */
CUDOT_API cudot_status cudot_deinit(cudot_ctx *ctx);

/*! cudot_get_memory: what the context actually uses.
 * @param memory out (may be NULL): the resolved strategy, never CUDOT_MEMORY_AUTO.
 * @param device out (may be NULL): the CUDA device ordinal, CUDOT_DEVICE_ALL for a context on every
 *               visible GPU, or CUDOT_DEVICE_NONE for HOST.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT if ctx is NULL or not a live context. */
CUDOT_API cudot_status cudot_get_memory(const cudot_ctx *ctx, int32_t *memory, int32_t *device);

/*! cudot_get_mode: *mode = the context's cudot_mode (cudot_config.mode). Since 1.13.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT if ctx or mode is NULL or ctx is not a live context. */
CUDOT_API cudot_status cudot_get_mode(const cudot_ctx *ctx, int32_t *mode);

/*! cudot_get_dtypes: the element types of x and y (either out-pointer may be NULL).
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT if ctx is NULL or not a live context. */
CUDOT_API cudot_status cudot_get_dtypes(const cudot_ctx *ctx, int32_t *x_dtype, int32_t *y_dtype);

/*! cudot_get_capacity: *n = the capacity: the elements of each buffer (rows * n of cudot_init).
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT if ctx or n is NULL or ctx is not a live context. */
CUDOT_API cudot_status cudot_get_capacity(const cudot_ctx *ctx, size_t *n);

/*! cudot_get_rows: the rows of the buffers and the elements of each, as cudot_init made them (a context
 * made without rows has one row of its capacity). Either out-pointer may be NULL. Since 1.10.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT if ctx is NULL or not a live context. */
CUDOT_API cudot_status cudot_get_rows(const cudot_ctx *ctx, size_t *rows, size_t *n);

/*! cudot_dot_each_row: results[i] = the dot of the first n elements of row i of the buffers, for each of
 * the first `rows` rows (n at most the row length, rows at most the context's rows), using what the host
 * last wrote. Each result has the bits of that row's own dot (cudot_dot_arrays on it alone, the
 * accuracy of cudot_dot), whatever the strategy, the device or the number of rows. The results go to
 * host memory the caller owns: `rows` doubles, 8-byte aligned, outside the buffers. Where the rows are
 * computed:
 *  HOST    - the CPU threads, rows spread over them;
 *  PINNED  - each GPU copies its run of the rows (the first n elements of each) into its own buffers
 *            and dots them in one launch (a run longer than those buffers is read in place over the
 *            bus instead);
 *  MAPPED  - each GPU reads its run of the rows in place over the bus, in one launch;
 *  MANAGED - each GPU migrates its run of the rows to itself (cudaMemPrefetchAsync, which moves nothing
 *            that is already there) and dots them in one launch;
 *  AUTO    - with MAPPED buffers: the rows split between the CPU threads and the GPUs, each side a run,
 *            the split set from how fast each side went in the previous calls; with MANAGED buffers:
 *            as MANAGED.
 * With CUDOT_DEVICE_ALL the GPUs take one run of rows each. Since 1.10. A context in CUDOT_MODE_EXACT
 * gives each row its exact dot (cudot_mode), computed where the canonical rows would be (since 1.14).
 * @return CUDOT_OK (rows = 0 writes nothing; n = 0 writes +0.0s);
 *         CUDOT_ERROR_INVALID_ARGUMENT  ctx NULL or not live, results NULL (rows > 0), misaligned or
 *                                       overlapping the buffers, rows or n beyond the context's;
 *         CUDOT_ERROR_OUT_OF_MEMORY; CUDOT_ERROR_CUDA (see cudot_dot); CUDOT_ERROR_INTERNAL.
 * On failure no result is written (the message is in cudot_last_error(ctx)). */
CUDOT_API cudot_status cudot_dot_each_row(cudot_ctx *ctx, size_t rows, size_t n, double *results);

/* ---- Building blocks for distributed dots (cudot_mpi.h is built on them; other transports can be) ----
 * The canonical order (docs/DESIGN.md) cuts a vector into tiles of CUDOT_TILE_ELEMENTS elements, computes
 * one partial sum per tile, and joins the partials in tile order. Processes that each hold part of a
 * vector can compute the partials of the tiles they hold whole, and one process joins all partials: the
 * result is the same bits as one context holding the whole vector. Since 1.2. */
#define CUDOT_TILE_ELEMENTS 8192 /* element i of a vector belongs to tile i / CUDOT_TILE_ELEMENTS */
#define CUDOT_PARTIAL_BYTES 16   /* size of one tile's partial sum */
/* The exact mode has no tiles: its sum is the same in any order, so a process's whole share is one
 * exact partial, the unrounded exact sum (about 2,200 bits of fixed point, the flags of infinite and NaN
 * products, and a tag), joined exactly by cudot_join_exact_partials. Since 1.13. */
#define CUDOT_EXACT_PARTIAL_BYTES 1120

/*! cudot_tile_partials: the partial sums of the tiles of elements [first, first + n) of ctx's buffers,
 * element `first` taken as the first element of a tile (only the last of these tiles may be short).
 * @param out receives ceil(n / CUDOT_TILE_ELEMENTS) partials of CUDOT_PARTIAL_BYTES each (host memory).
 *            Opaque bytes: only cudot_join_partials of a library of the same major version, on a machine
 *            of the same byte order, may read them.
 * Every strategy (since 1.3; HOST only before): GPU contexts compute on their GPU(s). MAPPED and MANAGED
 * read the buffers in place when element `first` starts on a 16-byte boundary of both buffers, and
 * otherwise copy the elements to a device staging buffer first (kept until deinit).
 * A context in CUDOT_MODE_EXACT writes one exact partial of CUDOT_EXACT_PARTIAL_BYTES instead, for
 * cudot_join_exact_partials, whatever n and `first` (n = 0 writes the partial of an empty sum; out must
 * not be NULL), with the same opaqueness. Since 1.13.
 * @return CUDOT_OK (n = 0 writes nothing in the canonical mode); CUDOT_ERROR_INVALID_ARGUMENT (ctx not
 *         live, out NULL with n > 0 or in the exact mode, first + n beyond the capacity);
 *         CUDOT_ERROR_OUT_OF_MEMORY; CUDOT_ERROR_CUDA. */
CUDOT_API cudot_status cudot_tile_partials(cudot_ctx *ctx, size_t first, size_t n, void *out);

/*! cudot_join_partials: the dot product of a vector from the partials of all its tiles, in tile order,
 * exactly as cudot_dot returns it (tiles = 0 gives +0.0).
 * @param x_dtype, y_dtype the element types the partials were computed for (y_dtype 0: same as x_dtype).
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT (unknown element type, partials NULL with tiles > 0,
 *         result NULL). A failure's message is read with cudot_last_error(NULL), as after cudot_init. */
CUDOT_API cudot_status cudot_join_partials(int32_t x_dtype, int32_t y_dtype, const void *partials, size_t tiles,
                                           double *result);

/*! cudot_join_exact_partials: the exact mode's dot from `count` exact partials (CUDOT_EXACT_PARTIAL_BYTES
 * each, back to back, any order, any element types), their exact sum rounded once: the bits one
 * context or one cudot_dot_arrays call in CUDOT_MODE_EXACT gives for all their elements (count = 0
 * gives +0.0). Since 1.13.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT (partials NULL with count > 0, result NULL, a partial
 *         that no cudot of this major version wrote: the message gives its index); nothing is written
 *         to result on failure. The message is read with cudot_last_error(NULL). */
CUDOT_API cudot_status cudot_join_exact_partials(const void *partials, size_t count, double *result);

/* ---- Dots on your own arrays (since 1.7) ----
 * The same dot, with the same bits, on arrays the caller already has: a numpy array, a Go slice, a C#
 * span, a CuPy array, a PyTorch tensor, any cudaMalloc'd buffer. No context, no copy of the data.
 *
 * Where each operand lives is found out, not declared: the library asks CUDA (cudaPointerGetAttributes)
 * whether it is ordinary (pageable) host memory, page-locked host memory (cudaMallocHost, cudaHostAlloc,
 * or registered with cudaHostRegister or cudot_register_host), managed memory (cudaMallocManaged), or
 * the memory of a GPU, and of which. Without a GPU or a CUDA driver every pointer is taken for host
 * memory.
 *
 * Who computes:
 *  - Device and managed operands: their GPU, in its primary context, on the caller's stream (below).
 *    Both operands must be on the same GPU (UNSUPPORTED otherwise: copy one to the other's device).
 *  - Pageable host operands: the CPU threads (HOST's pool), reading them in place.
 *  - Page-locked host operands: from 2^20 elements on, the GPU (the first GPU that can map host memory,
 *    unless the other operand decides it), reading them in place over the bus; a blocking dot of two
 *    such operands with stride 1 and 2^22 elements or more instead copies them to the GPU in chunks
 *    through its copy engines, each chunk's kernel overlapping the next copy. Below 2^20, the CPU.
 *  - A mix of device (or managed) and host operands: the device's GPU, if it can read the host operand
 *    (page-locked, or pageable on a GPU with pageable memory access); UNSUPPORTED otherwise.
 * Results are the bits a HOST context holding the same n values returns (cudot_dot), whoever computes.
 *
 * Streams (device and managed operands, and host operands the GPU reads): the work is queued on
 * cudot_arrays.stream, a cudaStream_t passed as void * (its values are CUDA's own: NULL is the legacy
 * default stream, cudaStreamLegacy (1) and cudaStreamPerThread (2) name those streams of the operands'
 * GPU). So it runs after everything queued on that stream before the call. The library never
 * synchronises the device, never uses the legacy default stream unless given it, and allocates nothing
 * per call: each stream it has been given on a GPU gets a small workspace (16 bytes per 8192 elements of
 * the largest dot on it, plus 256) and a one-kernel CUDA graph per kernel it ran there (replayed: it
 * reaches the GPU sooner than a launch). Beyond 64 streams on a GPU, a new stream's replaces those of
 * the least recently used stream whose dots were all blocking and have returned, so a caller that makes
 * a stream per blocking dot does not grow; a stream that had an asynchronous dot keeps its own until the
 * process ends (cudot cannot tell when that dot is over). Calls on different streams, from
 * any threads, never share a workspace. The stream must belong to the operands' GPU (INVALID_ARGUMENT).
 *  - cudot_dot_arrays waits for its result and returns it in host memory; it is refused (UNSUPPORTED)
 *    on a stream that is being captured into a CUDA graph.
 *  - cudot_dot_arrays_async returns once the work is queued; the result lands, in stream order, in a
 *    double of device, managed or mapped memory of the operands' GPU. It may be captured into a graph
 *    and replayed (the captured work gets a workspace of its own, freed with the graph).
 *
 * Ranges: for device and managed operands CUDA knows the allocation, and an operand whose n elements
 * (with its stride) leave it is refused (INVALID_ARGUMENT). For host memory the caller's n and strides
 * are trusted, as BLAS trusts them; the library only checks that the first and last elements can be
 * read, so that a freed array or a device pointer without a GPU to read it gets a status, not a crash.
 * That check is a system call, which costs several times a small dot, so each thread makes it the
 * first time it meets the pages of those elements and then remembers them (the pages of its last few
 * operands, forgotten by every thread when cudot_register_host registers a range). What it does not
 * detect: memory unmapped after a dot of it on the same thread (a freed large array, whose pages malloc
 * gives back to the system) may be read all the same, and the read kills the process (SIGSEGV), as any
 * use after free may; memory freed but still mapped (most small malloc blocks) is read as it is;
 * elements between the first and the last are never checked. */

/* How a dot is summed.
 *  CUDOT_MODE_CANONICAL: cudot's canonical order (see "Accuracy" above): the same bits everywhere cudot
 *      runs, within the documented error bound of the exact value. The default.
 *  CUDOT_MODE_EXACT: the exact sum of the exact products x_i * y_i (products beyond the double range
 *      included), rounded once to the nearest double, ties to even: the correctly rounded dot, the one
 *      number any correct implementation gives, whatever the order of the elements. A sum that rounds
 *      past the largest double gives +-inf; an exact zero gives +0.0. A NaN product (a NaN element, or
 *      inf * 0) or infinite products of both signs give NaN; otherwise infinite products of one sign
 *      give that infinity. The same bits whoever computes it: cudot_dot_arrays computes operands in
 *      host memory (pageable, page-locked or registered, whatever their size) on the CPU, and operands a
 *      GPU holds (device or managed memory, or one of them page-locked) on that GPU;
 *      cudot_dot_arrays_async computes it on the GPU, as in the canonical mode;
 *      cudot_tile_partials_arrays writes one exact partial (CUDOT_EXACT_PARTIAL_BYTES) where the dot
 *      would be computed. A context (cudot_config.mode) computes it where its strategy computes:
 *      HOST on the CPU threads; PINNED, MAPPED and MANAGED on the GPU, each GPU of a
 *      CUDOT_DEVICE_ALL context one run, joined exactly on the host; AUTO as its canonical dots go
 *      (the CPU threads, the GPUs, or both at once, joined exactly). Batches of rows take it since 1.14:
 *      cudot_rows.mode, and cudot_dot_each_row of an exact context; each row gets its own exact dot,
 *      computed where the canonical row would be. */
typedef enum cudot_mode { CUDOT_MODE_CANONICAL = 0, CUDOT_MODE_EXACT = 1 } cudot_mode;

/* One operand: n elements of one type, element i at data + i * stride elements. */
typedef struct cudot_array {
    const void *data; /* element 0; any address (not even the element type's alignment is required). May
                         be NULL only when n is 0. */
    int32_t dtype;    /* CUDOT_F32 .. CUDOT_U8 */
    int32_t reserved; /* must be 0 */
    int64_t stride;   /* in elements, signed: 1 contiguous, -1 reversed (numpy x[::-1]: data is element 0,
                         the last in memory), 0 one value repeated (numpy broadcast_to; the same bits as
                         n copies). BLAS callers with incx < 0, whose pointer is the lowest address,
                         pass data = x + (n - 1) * -incx and stride = incx. Note that 0 is a value, not
                         "the default": start from CUDOT_ARRAYS_INIT, which sets 1. */
} cudot_array;

/* A dot of two caller-owned operands. Like cudot_config it can grow: set size to sizeof(cudot_arrays)
 * (CUDOT_ARRAYS_INIT does); fields past a caller's size read as zero, and bytes past what the library
 * knows must be zero. */
typedef struct cudot_arrays {
    uint32_t size;      /* sizeof(cudot_arrays): 88 in 1.7, 96 since 1.11 (64-bit platforms); at most 4096 */
    uint32_t reserved;  /* must be 0 */
    size_t n;           /* elements of each operand (0: the dot is +0.0; nothing is read) */
    cudot_array x, y;
    void *stream;       /* cudaStream_t of the operands' GPU (see "Streams" above); NULL: the legacy
                           default stream. Ignored when the CPU computes. */
    void *x_ready;      /* NULL, or a cudaStream_t on which x was written (e.g. a producer's stream
                           named by __cuda_array_interface__): the dot waits for the work queued on it
                           so far (an event recorded there, waited on by `stream`). Unlike `stream`,
                           NULL here means "nothing to wait for": name the legacy default stream as
                           (void *)1 (cudaStreamLegacy), the per-thread one as (void *)2. */
    void *y_ready;      /* the same for y */
    int32_t mode;       /* a cudot_mode: CUDOT_MODE_CANONICAL (0) or CUDOT_MODE_EXACT. Since 1.11 (size 96);
                           a caller compiled against an older header gets the canonical mode */
    int32_t reserved2;  /* must be 0 */
} cudot_arrays;

#define CUDOT_ARRAYS_INIT                                                                                  \
    { (uint32_t)sizeof(cudot_arrays), 0, 0, { NULL, CUDOT_F32, 0, 1 }, { NULL, CUDOT_F32, 0, 1 }, NULL, NULL, \
      NULL, CUDOT_MODE_CANONICAL, 0 }

/*! cudot_dot_arrays: *result = the dot of a->x and a->y, the same bits as cudot_dot of a HOST context
 * holding the same n values (NaN, Inf and the empty dot alike), for every type pair, stride and place.
 * x and y may overlap or be the same array: both are only read.
 * @return CUDOT_OK;
 *         CUDOT_ERROR_INVALID_ARGUMENT  a or result NULL, a->size below 1.7's (88), between 88 and 96 or
 *                                       above 4096, unknown dtype, unknown mode, reserved fields not 0, data NULL with n > 0, n * stride
 *                                       overflowing, a device or managed operand running past its
 *                                       allocation, a host operand whose first or last element cannot be
 *                                       read (freed, or device memory with no GPU to read it) on pages
 *                                       this thread has not found readable before (see "Ranges": memory
 *                                       unmapped after this thread's earlier dot of it is not detected,
 *                                       and reading it kills the process with SIGSEGV), a stream of
 *                                       another GPU;
 *         CUDOT_ERROR_NO_DEVICE         a device or managed operand with no usable GPU;
 *         CUDOT_ERROR_UNSUPPORTED       operands on two GPUs; a host operand the GPU of the other cannot
 *                                       read; the stream is being captured; size larger than this library
 *                                       knows with non-zero bytes beyond;
 *         CUDOT_ERROR_OUT_OF_MEMORY     memory for the dot's tile partials cannot be had: one partial per
 *                                       CUDOT_TILE_ELEMENTS elements of n, whatever the strides (two
 *                                       stride-0 operands read one element each, yet n = SIZE_MAX needs
 *                                       2^51 partials on a 64-bit system). When the CPU computes: 8 bytes
 *                                       each (16 when either side is F64) of host memory, refused before
 *                                       allocating where they exceed the memory the process may use (the
 *                                       message says what n needs); when a GPU computes: the stream's
 *                                       workspace in GPU memory (see "Streams") could not be allocated;
 *                                       CUDOT_MODE_EXACT on the CPU: the CPU threads' exact sums (about
 *                                       1.2 KiB each, four per thread) could not be allocated;
 *         CUDOT_ERROR_CUDA              a CUDA call failed (the message names it); CUDOT_ERROR_INTERNAL.
 * The message of a failure is read with cudot_last_error(NULL) on the same thread. */
CUDOT_API cudot_status cudot_dot_arrays(const cudot_arrays *a, double *result);

/*! cudot_dot_arrays_async: queues the dot on a->stream and returns; the result (one double) is written in
 * stream order to device_result, which must be 8-byte aligned device, managed or mapped (page-locked)
 * memory the operands' GPU can write. The operands must be ones a GPU computes (device or managed
 * memory, page-locked host memory, or a mix the GPU can read); n = 0 queues a write of +0.0. Works
 * during stream capture: the captured dot replays with the same bits.
 * @return as cudot_dot_arrays, plus CUDOT_ERROR_INVALID_ARGUMENT (device_result NULL, misaligned, or
 *         not memory the GPU can write) and CUDOT_ERROR_UNSUPPORTED (operands only the CPU can read). A
 *         status other than CUDOT_OK means nothing was queued. */
CUDOT_API cudot_status cudot_dot_arrays_async(const cudot_arrays *a, double *device_result);

/*! cudot_tile_partials_arrays: the partial sums of the tiles of a->x and a->y (element 0 taken as the
 * first element of a tile), as cudot_tile_partials gives them for a context: ceil(n / CUDOT_TILE_ELEMENTS)
 * partials of CUDOT_PARTIAL_BYTES each, into out (host memory), for cudot_join_partials. A blocking call.
 * In CUDOT_MODE_EXACT (since 1.13): one exact partial of CUDOT_EXACT_PARTIAL_BYTES, for
 * cudot_join_exact_partials, n = 0 included.
 * @return as cudot_dot_arrays (out NULL with n > 0, or in the exact mode: INVALID_ARGUMENT). */
CUDOT_API cudot_status cudot_tile_partials_arrays(const cudot_arrays *a, void *out);

/* ---- Many dots in one call: rows ----------------------------------------------------------------
 *
 * A batch of `count` dots ("rows") of caller-owned operands in one call, each row with the bits of its own
 * dot: row i's result is exactly what cudot_dot_arrays returns for row i's two operands alone, whatever
 * the count, the row's place in the batch, the layout, the strides and who computes. Three layouts:
 *  - CUDOT_ROWS_STRIDED: every row has n elements; row i of x starts at element i * x_row_stride of x
 *    (x.data + i * x_row_stride * element size), its elements x.stride apart; likewise y. A row stride of
 *    0 repeats one vector for every row (one x against count y's), read in place, never copied.
 *  - CUDOT_ROWS_SEGMENTED: one long x and one long y cut by count + 1 offsets: row i is elements
 *    [offsets[i], offsets[i + 1]) of both (element k at data + k * stride elements); rows may differ in
 *    length, and an empty row's dot is +0.0.
 *  - CUDOT_ROWS_POINTERS: every row has n elements; row i of x starts at x_rows[i], of y at y_rows[i]
 *    (arrays of count pointers in host memory), with x.stride and y.stride; x.data and y.data unused.
 * offsets, x_rows and y_rows are host memory (the library reads them before it queues anything).
 * Where the rows live is found out as for cudot_dot_arrays (see "Who computes" and "Ranges" there: for
 * host memory each row's first and last elements are checked as an operand's are; for device and
 * managed memory every row must lie in its allocation):
 *  - rows in device or managed memory: their GPU computes the whole batch in one launch, on r->stream
 *    after x_ready and y_ready, as "Streams" says for one dot; all rows of x and y on one GPU;
 *  - rows in page-locked or registered host memory, 2^20 elements or more in all (any number for
 *    cudot_dot_rows_async): the first GPU that can map host memory, reading them in place over the bus,
 *    in one launch (a batch of one row is a single dot, and may go through the copy engines as one);
 *  - rows in pageable host memory, and smaller page-locked batches: the CPU threads. */
typedef enum cudot_rows_layout {
    CUDOT_ROWS_STRIDED = 0,
    CUDOT_ROWS_SEGMENTED = 1,
    CUDOT_ROWS_POINTERS = 2
} cudot_rows_layout;

/* A batch of dots. Like cudot_arrays it can grow: set size to sizeof(cudot_rows) (CUDOT_ROWS_INIT does);
 * bytes past what the library knows must be zero. Fields a layout does not use must be zero. */
typedef struct cudot_rows {
    uint32_t size;         /* sizeof(cudot_rows): 136 in 1.10, 144 since 1.14 (64-bit platforms); at most
                              4096 */
    int32_t layout;        /* a cudot_rows_layout */
    size_t count;          /* rows (0: nothing is read and nothing written) */
    size_t n;              /* STRIDED and POINTERS: elements of every row; SEGMENTED: 0 */
    cudot_array x, y;      /* dtype and element stride of every row; data: row 0 (STRIDED), element 0 of the
                              long vector (SEGMENTED), NULL (POINTERS) */
    int64_t x_row_stride;  /* STRIDED: elements from row i's element 0 to row i + 1's; signed; 0 repeats */
    int64_t y_row_stride;
    const int64_t *offsets;       /* SEGMENTED: count + 1 offsets, each >= 0 and none below the one before */
    const void *const *x_rows;    /* POINTERS: count row pointers for x */
    const void *const *y_rows;    /* POINTERS: count row pointers for y */
    void *stream;          /* as cudot_arrays.stream, x_ready and y_ready: for rows a GPU computes; ignored */
    void *x_ready;         /* when the CPU computes */
    void *y_ready;
    int32_t mode;          /* a cudot_mode: every row's dot in that mode. Since 1.14 (size 144; 136 before,
                              which gets the canonical mode) */
    int32_t reserved;      /* must be 0 */
} cudot_rows;

#define CUDOT_ROWS_INIT                                                                                  \
    { (uint32_t)sizeof(cudot_rows), CUDOT_ROWS_STRIDED, 0, 0, { NULL, CUDOT_F32, 0, 1 },                 \
      { NULL, CUDOT_F32, 0, 1 }, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, CUDOT_MODE_CANONICAL, 0 }

/*! cudot_dot_rows: results[i] = the dot of row i (see "Many dots in one call"), for i < r->count, into
 * host memory the caller owns (count doubles, 8-byte aligned, not overlapping any row). A blocking call.
 * On any failure no result is written.
 * @return CUDOT_OK;
 *         CUDOT_ERROR_INVALID_ARGUMENT  r NULL, results NULL (count > 0) or misaligned or overlapping a
 *                                       row, r->size below 136, between 136 and 144 or above 4096,
 *                                       unknown layout, dtype or mode, reserved or unused fields not 0, data or a row pointer NULL where a row has elements,
 *                                       offsets NULL, negative or decreasing, a row or the whole batch
 *                                       spanning beyond the address space (count * row stride
 *                                       overflowing), a host row whose first or last element cannot be
 *                                       read (as cudot_dot_arrays), offsets, x_rows or y_rows not host
 *                                       memory (or not readable), a device or managed
 *                                       row leaving its allocation, a stream of another GPU;
 *         CUDOT_ERROR_NO_DEVICE         rows in device or managed memory with no usable GPU;
 *         CUDOT_ERROR_UNSUPPORTED       rows on two GPUs, or some on a GPU and some in host memory; the
 *                                       stream is being captured; size larger than this library knows
 *                                       with non-zero bytes beyond;
 *         CUDOT_ERROR_OUT_OF_MEMORY     host memory for the tile partials of the longest row, as
 *                                       cudot_dot_arrays says (in the exact mode: the CPU threads' exact
 *                                       sums); GPU memory for the batch's workspace (the stream's, grown to
 *                                       16 bytes per tile of every row plus 8 per row; in the exact mode,
 *                                       where rows are cut into several parts, about 1.1 KiB per part of
 *                                       at least 4096 elements);
 *         CUDOT_ERROR_CUDA; CUDOT_ERROR_INTERNAL.
 * The message of a failure is read with cudot_last_error(NULL) on the same thread. Thread-safe. */
CUDOT_API cudot_status cudot_dot_rows(const cudot_rows *r, double *results);

/*! cudot_dot_rows_async: queues the batch on r->stream and returns; results[i] is written in stream order
 * to device_results (count doubles, 8-byte aligned device, managed or mapped memory the rows' GPU can
 * write, not overlapping any row). The rows must be in device or managed memory. count = 0 queues
 * nothing. Works during stream capture: the captured batch replays with the same bits.
 * @return as cudot_dot_rows, plus CUDOT_ERROR_INVALID_ARGUMENT (device_results NULL, misaligned, or not
 *         memory the rows' GPU can write) and CUDOT_ERROR_UNSUPPORTED (rows in host memory). A status
 *         other than CUDOT_OK means nothing was queued. */
CUDOT_API cudot_status cudot_dot_rows_async(const cudot_rows *r, double *device_results);

/*! cudot_register_host: page-locks bytes of host memory from p, once (cudaHostRegister, which costs
 * about as much as reading the range several times: never do it per dot), and maps it for every GPU, so
 * that dots on arrays in it run at the bus's speed or better. Without a GPU it only records the range.
 * Either way it first asks the system whether every page of the range is mapped in the process (on
 * Windows: committed); no page is read. Release it with cudot_unregister_host(p) before freeing the
 * memory.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT (p NULL, bytes 0, the range passes the end of the
 *         address space, overlaps a range registered already, is device or managed memory, or is not
 *         host memory: a page of it is not mapped, such as a freed array's or a device address with no
 *         GPU to know it); CUDOT_ERROR_OUT_OF_MEMORY; CUDOT_ERROR_CUDA. Messages with
 *         cudot_last_error(NULL). */
CUDOT_API cudot_status cudot_register_host(const void *p, size_t bytes);

/*! cudot_unregister_host: releases a range cudot_register_host registered, named by the same p. Wait for
 * any dot that reads the range to finish first.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT (p is not the start of a range registered by
 *         cudot_register_host); CUDOT_ERROR_CUDA. */
CUDOT_API cudot_status cudot_unregister_host(const void *p);

/*! cudot_status_string: a constant English name for a status, e.g. "CUDOT_ERROR_NO_DEVICE".
 * Never NULL; unknown values give "CUDOT_ERROR_UNKNOWN". Static storage: never free it. Thread-safe. */
CUDOT_API const char *cudot_status_string(cudot_status status);

/*! cudot_last_error: the message of a failed call. Read it on the thread that made the call (bindings
 * whose threads may move, like Go's goroutines, read it in the same native call).
 * With ctx: the message of the calling thread's most recent failed call on ctx, whatever other threads
 * did on ctx meanwhile (a thread keeps its own message for each of the last 4 contexts it failed on). A
 * thread with no failure of its own on ctx among those gets the message of the most recent failed call
 * on ctx by any thread ("" if none has failed). A successful call does not clear a message.
 * With ctx NULL: the message of the calling thread's last failed call without a context to hold it
 * (cudot_init, cudot_deinit, cudot_join_partials; "" if none).
 * A ctx that is not live gives a fixed message saying so. Never returns NULL. The text is in storage of
 * the library: valid until the calling thread's next cudot call (copy it to keep it). Reading it is
 * thread-safe and never waits for a dot running on another thread. */
CUDOT_API const char *cudot_last_error(const cudot_ctx *ctx);

/*! cudot_version: the loaded library's version as major * 10000 + minor * 100 + patch. Bindings compare
 * its major part (version / 10000) with the one they were written for. Thread-safe. */
CUDOT_API uint32_t cudot_version(void);

/*! cudot_version_string: the same version as text, e.g. "1.0.0". Static storage; never NULL. */
CUDOT_API const char *cudot_version_string(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUDOT_H */
