// test_bad_input.cpp - the bad-input table: every entry point of include/cudot.h against NULL pointers,
// out-of-range enums, config sizes too small and larger than known, element counts that overflow the
// size computations or exceed memory, dot_n beyond capacity, destroyed and never-created handles, and
// contexts whose previous call failed.
//
// Each row names an entry point and an input, the status it must return and a part of the message it
// must leave (alternatives separated by " | "), plus side conditions checked by the row itself (*ctx set
// to NULL by a failed init, out-parameters left alone by a failed call, ...). Rows that need a GPU are
// reported as skipped on a machine without one; a run in which every selected row was skipped exits 77,
// which CTest reports as skipped.
//
// With CUDOT_TABLE_OUT=path in the environment the program also writes every row it ran or skipped, with
// the status and message it received, as a markdown table (for docs/RELIABILITY.md).
//
// Every context a row creates is destroyed before the row ends, so a leak checker (ASan/LSan, valgrind)
// run over this program sees the library's own leaks only.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "windows_h.hpp"
#if !defined(_WIN32)
#include <unistd.h>
#endif

#include "cudot.h"
#include "isolation.hpp"
#ifdef CUDOT_RELIABILITY_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kPtrdiffMax = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();

// What the library must say when handed a pointer that is not a live context.
const char kNotLive[] = "not a live cudot context";

// ---- rows ---------------------------------------------------------------------------------------------

enum class Need { Any, Gpu, NoGpu };

// What one call did.
struct Outcome {
    bool returns_status = true;  // false for cudot_last_error and cudot_status_string (they return text)
    cudot_status status = CUDOT_OK;
    bool has_message = true;  // false where no message exists to read (a call on NULL, a success)
    std::string message;      // cudot_last_error(...) after the call, or the text returned
    std::string note;         // shown instead of the message when there is none
    std::string problem;      // a violated side condition; empty when all held
};

struct Row {
    std::string entry;     // the entry point under test
    std::string input;     // what it was given, in words
    cudot_status expected = CUDOT_OK;
    std::string required;  // part of the message; alternatives separated by " | "; empty: nothing required
    bool exact = false;    // the message must equal `required`
    bool text = false;     // the entry point returns text, not a status
    Need need = Need::Any;
    std::function<Outcome()> run;
};

Row status_row(std::string entry, std::string input, cudot_status expected, std::string required,
               std::function<Outcome()> run, Need need = Need::Any) {
    Row r;
    r.entry = std::move(entry);
    r.input = std::move(input);
    r.expected = expected;
    r.required = std::move(required);
    r.need = need;
    r.run = std::move(run);
    return r;
}

Row text_row(std::string entry, std::string input, std::string required, bool exact, std::function<Outcome()> run,
             Need need = Need::Any) {
    Row r = status_row(std::move(entry), std::move(input), CUDOT_OK, std::move(required), std::move(run), need);
    r.exact = exact;
    r.text = true;
    return r;
}

// ---- the machine --------------------------------------------------------------------------------------

bool probe_gpu() {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_PINNED;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, 1, &c) != CUDOT_OK) return false;
    cudot_deinit(ctx);
    return true;
}

bool gpu_usable() {
    static const bool usable = probe_gpu();
    return usable;
}

#if defined(_WIN32)
std::size_t physical_memory() {
    MEMORYSTATUSEX status;
    status.dwLength = sizeof status;
    return GlobalMemoryStatusEx(&status) ? static_cast<std::size_t>(status.ullTotalPhys) : 0;
}
#else
std::size_t physical_memory() {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}
#endif

// ---- helpers for the calls ----------------------------------------------------------------------------

std::string text_of(const char *p, Outcome &o, const char *what) {
    if (!p) {
        o.problem = std::string(what) + " returned NULL";
        return std::string();
    }
    return p;
}

// A status-returning call on a live or dead context: the message is whatever cudot_last_error(ctx) says.
Outcome on_ctx(cudot_status status, const cudot_ctx *ctx) {
    Outcome o;
    o.status = status;
    o.message = text_of(cudot_last_error(ctx), o, "cudot_last_error");
    return o;
}

// A call on NULL: there is no context to hold a message.
Outcome on_null(cudot_status status) {
    Outcome o;
    o.status = status;
    o.has_message = false;
    o.note = "(no context to hold a message)";
    return o;
}

Outcome text_outcome(const char *text, const char *what) {
    Outcome o;
    o.returns_status = false;
    o.message = text_of(text, o, what);
    return o;
}

void add_problem(Outcome &o, const std::string &p) { o.problem += (o.problem.empty() ? "" : "; ") + p; }

cudot_config config(int32_t dtype, int32_t memory, int32_t device = 0, int32_t y_dtype = 0) {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.dtype = dtype;
    c.memory = memory;
    c.device = device;
    c.y_dtype = y_dtype;
    return c;
}

cudot_ctx *garbage_handle() { return reinterpret_cast<cudot_ctx *>(std::uintptr_t(0xdead)); }

// cudot_init with *ctx preset to garbage. A failure must reset *ctx to NULL; a success must give a
// context of capacity n, which is destroyed here.
Outcome call_init(std::size_t n, const cudot_config *cfg) {
    cudot_ctx *ctx = garbage_handle();
    Outcome o;
    o.status = cudot_init(&ctx, n, cfg);
    if (o.status == CUDOT_OK) {
        o.has_message = false;
        o.note = "(success)";
        if (!ctx) {
            add_problem(o, "CUDOT_OK but *ctx is NULL");
        } else {
            std::size_t capacity = 0;
            if (cudot_get_capacity(ctx, &capacity) != CUDOT_OK || capacity != n)
                add_problem(o, "the new context's capacity is not n");
            if (cudot_deinit(ctx) != CUDOT_OK) add_problem(o, "cudot_deinit of the new context failed");
        }
    } else {
        o.message = text_of(cudot_last_error(nullptr), o, "cudot_last_error(NULL)");
        if (ctx != nullptr) add_problem(o, "*ctx was not set to NULL");
    }
    return o;
}

Outcome call_init(std::size_t n, cudot_config c) { return call_init(n, &c); }

// cudot_init with a config of `size` bytes in a heap block of exactly `block` bytes, so that ASan and
// valgrind report any read beyond what the caller owns. The fields dtype F32 and memory HOST are written
// where they fit; every other byte is zero except byte `poke` (when >= 0), set to 1.
Outcome call_init_sized(std::size_t n, uint32_t size, std::size_t block, long poke = -1) {
    std::unique_ptr<unsigned char[]> bytes(new unsigned char[block]());
    cudot_config base = config(CUDOT_F32, CUDOT_MEMORY_HOST);
    base.size = size;
    std::memcpy(bytes.get(), &base, block < sizeof base ? block : sizeof base);
    if (poke >= 0) bytes[static_cast<std::size_t>(poke)] = 1;
    return call_init(n, reinterpret_cast<const cudot_config *>(bytes.get()));
}

// A HOST context of n elements, F32, x = 2 and y = 3 (a dot of 6 n), destroyed with the object.
struct Live {
    cudot_ctx *ctx = nullptr;
    explicit Live(std::size_t n = 10, int32_t memory = CUDOT_MEMORY_HOST) {
        cudot_config c = config(CUDOT_F32, memory);
        if (cudot_init(&ctx, n, &c) != CUDOT_OK) {
            ctx = nullptr;
            return;
        }
        void *x = nullptr, *y = nullptr;
        cudot_get_inputs(ctx, &x, &y);
        for (std::size_t i = 0; i < n; ++i) {
            static_cast<float *>(x)[i] = 2.0f;
            static_cast<float *>(y)[i] = 3.0f;
        }
    }
    ~Live() { cudot_deinit(ctx); }
    Live(const Live &) = delete;
    Live &operator=(const Live &) = delete;
};

Outcome no_context(const char *why = "could not create the context this row needs") {
    Outcome o;
    o.status = CUDOT_ERROR_INTERNAL;
    o.has_message = false;
    o.note = "(row not run)";
    o.problem = why;
    return o;
}

// A context created and destroyed at once: the pointer is dangling. Rows use it before any other
// cudot_init, so no new context can have taken its address.
cudot_ctx *dead_handle(int32_t memory = CUDOT_MEMORY_HOST) {
    cudot_config c = config(CUDOT_F32, memory);
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, 10, &c) != CUDOT_OK) return nullptr;
    if (cudot_deinit(ctx) != CUDOT_OK) return nullptr;
    return ctx;
}

// A pointer that never came from cudot_init: zeroed, 64-byte aligned memory the test owns (readable, so
// even a library that peeks at it stays defined).
cudot_ctx *fake_handle() {
    alignas(64) static unsigned char fake[4096];
    std::memset(fake, 0, sizeof fake);
    return reinterpret_cast<cudot_ctx *>(fake);
}

constexpr double kSentinel = -12345.5;
void *const kPtrSentinel = reinterpret_cast<void *>(std::uintptr_t(0x5e57));

std::string num(std::size_t v) { return std::to_string(v); }

// ---- the rows, grouped by entry point -----------------------------------------------------------------

std::vector<Row> init_rows() {
    std::vector<Row> rows;
    const char *E = "cudot_init";
    const auto IA = CUDOT_ERROR_INVALID_ARGUMENT;
    const auto OOM = CUDOT_ERROR_OUT_OF_MEMORY;

    // NULL pointers.
    rows.push_back(status_row(E, "ctx = NULL, config = NULL", IA, "NULL", [] {
        Outcome o;
        o.status = cudot_init(nullptr, 10, nullptr);
        o.message = text_of(cudot_last_error(nullptr), o, "cudot_last_error(NULL)");
        return o;
    }));
    rows.push_back(status_row(E, "ctx = NULL, valid HOST config", IA, "NULL", [] {
        cudot_config c = config(CUDOT_F32, CUDOT_MEMORY_HOST);
        Outcome o;
        o.status = cudot_init(nullptr, 10, &c);
        o.message = text_of(cudot_last_error(nullptr), o, "cudot_last_error(NULL)");
        return o;
    }));
    rows.push_back(status_row(E, "config = NULL (all defaults), n = 10", CUDOT_OK, "",
                              [] { return call_init(10, nullptr); }));

    // config->size: too small, the known versions, larger with a zero tail, larger asking for more, absurd.
    for (uint32_t size : {0u, 1u, 4u, 8u, 12u, 15u})
        rows.push_back(status_row(E, "config->size = " + std::to_string(size) + " (below 16, the first version)", IA,
                                  "config->size", [size] { return call_init_sized(10, size, size < 4 ? 4 : size); }));
    rows.push_back(status_row(E, "config->size = 16 (version 1.0 layout, caller owns exactly 16 bytes)", CUDOT_OK, "",
                              [] { return call_init_sized(10, 16, 16); }));
    for (uint32_t size : {17u, 19u})
        rows.push_back(status_row(E, "config->size = " + std::to_string(size) + " (ends inside y_dtype)", IA,
                                  "config->size", [size] { return call_init_sized(10, size, size); }));
    rows.push_back(status_row(E, "config->size = 20 (1.1 to 1.4 layout, caller owns exactly 20 bytes)", CUDOT_OK, "",
                              [] { return call_init_sized(10, 20, 20); }));
    for (uint32_t size : {21u, 23u})
        rows.push_back(status_row(E, "config->size = " + std::to_string(size) + " (ends inside wait_ms)", IA,
                                  "config->size", [size] { return call_init_sized(10, size, size); }));
    rows.push_back(status_row(E, "config->size = 24 (1.5 to 1.9 layout, caller owns exactly 24 bytes)", CUDOT_OK, "",
                              [] { return call_init_sized(10, 24, 24); }));
    for (uint32_t size : {25u, 28u, 31u})
        rows.push_back(status_row(E, "config->size = " + std::to_string(size) + " (ends inside rows)", IA,
                                  "config->size", [size] { return call_init_sized(10, size, size); }));
    rows.push_back(status_row(E, "config->size = 32 (1.10 to 1.12 layout, caller owns exactly 32 bytes)", CUDOT_OK, "",
                              [] { return call_init_sized(10, 32, 32); }));
    for (uint32_t size : {33u, 36u, 39u})
        rows.push_back(status_row(E, "config->size = " + std::to_string(size) + " (ends inside mode or reserved)", IA,
                                  "config->size", [size] { return call_init_sized(10, size, size); }));
    rows.push_back(status_row(E, "config->size = sizeof(cudot_config) = 40", CUDOT_OK, "",
                              [] { return call_init_sized(10, 40, 40); }));
    for (uint32_t size : {48u, 64u, 4096u})
        rows.push_back(status_row(E, "config->size = " + std::to_string(size) + ", every byte past 40 zero", CUDOT_OK,
                                  "", [size] { return call_init_sized(10, size, size); }));
    rows.push_back(status_row(E, "config->size = 48, byte 40 non-zero (an option this version lacks)",
                              CUDOT_ERROR_UNSUPPORTED, "newer than this library",
                              [] { return call_init_sized(10, 48, 48, 40); }));
    rows.push_back(status_row(E, "config->mode = 2 (not a cudot_mode)", IA, "config->mode", [] {
        cudot_config c = config(CUDOT_F32, CUDOT_MEMORY_HOST);
        c.mode = 2;
        return call_init(10, &c);
    }));
    rows.push_back(status_row(E, "config->reserved = 1", IA, "config->reserved", [] {
        cudot_config c = config(CUDOT_F32, CUDOT_MEMORY_HOST);
        c.reserved = 1;
        return call_init(10, &c);
    }));
    rows.push_back(status_row(E, "config->size = 4096, byte 4095 non-zero", CUDOT_ERROR_UNSUPPORTED, "byte 4095",
                              [] { return call_init_sized(10, 4096, 4096, 4095); }));
    for (uint32_t size : {4097u, 65536u, 1u << 31, std::numeric_limits<uint32_t>::max()})
        rows.push_back(status_row(E,
                                  "config->size = " + std::to_string(size) +
                                      " (over 4096: garbage; caller owns only 20 bytes)",
                                  IA, "config->size", [size] { return call_init_sized(10, size, 20); }));

    for (uint64_t many : {uint64_t(1) << 62, ~uint64_t(0)})
        rows.push_back(status_row(E, "config->rows = " + std::to_string(many) + " (rows * n overflows)", IA, "overflows",
                                  [many] {
                                      cudot_config c = config(CUDOT_F32, CUDOT_MEMORY_HOST);
                                      c.rows = many;
                                      return call_init(10, c);
                                  }));

    // Element types.
    for (int32_t dtype : {-1, 7, 99, kInt32Max, kInt32Min})
        rows.push_back(status_row(E, "config->dtype = " + std::to_string(dtype), IA, "config->dtype",
                                  [dtype] { return call_init(10, config(dtype, CUDOT_MEMORY_HOST)); }));
    for (int32_t y_dtype : {-1, 7, kInt32Max, kInt32Min})
        rows.push_back(status_row(E, "config->y_dtype = " + std::to_string(y_dtype), IA, "config->y_dtype",
                                  [y_dtype] { return call_init(10, config(CUDOT_F32, CUDOT_MEMORY_HOST, 0, y_dtype)); }));
    rows.push_back(status_row(E, "config->dtype = 0 (default F32), y_dtype = 0 (same)", CUDOT_OK, "",
                              [] { return call_init(10, config(0, CUDOT_MEMORY_HOST)); }));

    // Memory strategies.
    for (int32_t memory : {-1, 5, 1000, kInt32Max, kInt32Min})
        rows.push_back(status_row(E, "config->memory = " + std::to_string(memory), IA, "config->memory",
                                  [memory] { return call_init(10, config(CUDOT_F32, memory)); }));

    // Devices.
    for (int32_t memory : {CUDOT_MEMORY_AUTO, CUDOT_MEMORY_PINNED}) {
        const std::string m = memory == CUDOT_MEMORY_AUTO ? "AUTO" : "PINNED";
        rows.push_back(status_row(E, m + ", config->device = -1 (CUDOT_DEVICE_ALL, every GPU)", CUDOT_OK, "",
                                  [memory] { return call_init(10, config(CUDOT_F32, memory, CUDOT_DEVICE_ALL)); },
                                  Need::Gpu));
        for (int32_t device : {-2, kInt32Min})
            rows.push_back(status_row(E, m + ", config->device = " + std::to_string(device), IA, "negative",
                                      [memory, device] { return call_init(10, config(CUDOT_F32, memory, device)); }));
    }
    for (int32_t device : {-1, -7, kInt32Min, kInt32Max})
        rows.push_back(status_row(E, "HOST, config->device = " + std::to_string(device) + " (ignored by HOST)",
                                  CUDOT_OK, "",
                                  [device] { return call_init(10, config(CUDOT_F32, CUDOT_MEMORY_HOST, device)); }));
    rows.push_back(status_row(E, "PINNED, config->device = -1 (every GPU), no GPU", CUDOT_ERROR_NO_DEVICE,
                              "no usable GPU | without CUDA",
                              [] { return call_init(10, config(CUDOT_F32, CUDOT_MEMORY_PINNED, CUDOT_DEVICE_ALL)); },
                              Need::NoGpu));
    rows.push_back(status_row(E, "AUTO, config->device = 9999, no GPU (ignored: falls back to HOST)", CUDOT_OK, "",
                              [] { return call_init(10, config(CUDOT_F32, CUDOT_MEMORY_AUTO, 9999)); }, Need::NoGpu));
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED}) {
        const std::string m = memory == CUDOT_MEMORY_PINNED ? "PINNED" : memory == CUDOT_MEMORY_MAPPED ? "MAPPED" : "MANAGED";
        rows.push_back(status_row(E, m + ", no usable GPU", CUDOT_ERROR_NO_DEVICE, "no usable GPU | without CUDA",
                                  [memory] { return call_init(10, config(CUDOT_F32, memory)); }, Need::NoGpu));
        rows.push_back(status_row(E, m + ", config->device = 9999, no usable GPU", CUDOT_ERROR_NO_DEVICE,
                                  "no usable GPU | without CUDA",
                                  [memory] { return call_init(10, config(CUDOT_F32, memory, 9999)); }, Need::NoGpu));
    }

    // n whose byte count overflows (the wider of the two element types counts).
    struct Overflow {
        std::size_t n;
        const char *n_text;
        int32_t dtype, y_dtype;
        const char *types;
    };
    const Overflow overflows[] = {
        {kSizeMax, "SIZE_MAX", CUDOT_F32, 0, "F32"},
        {kSizeMax, "SIZE_MAX", CUDOT_U8, 0, "U8"},
        {kSizeMax / 2, "SIZE_MAX/2", CUDOT_F32, 0, "F32"},
        {kSizeMax / 4, "SIZE_MAX/4", CUDOT_F64, 0, "F64"},
        {kPtrdiffMax / 4 + 1, "PTRDIFF_MAX/4+1", CUDOT_F32, 0, "F32"},
        {kPtrdiffMax / 8 + 1, "PTRDIFF_MAX/8+1", CUDOT_F64, 0, "F64"},
        {kPtrdiffMax / 8 + 1, "PTRDIFF_MAX/8+1", CUDOT_I8, CUDOT_F64, "I8 x, F64 y"},
        {kPtrdiffMax / 8 + 1, "PTRDIFF_MAX/8+1", CUDOT_F64, CUDOT_U8, "F64 x, U8 y"},
        {kPtrdiffMax / 2 + 1, "PTRDIFF_MAX/2+1", CUDOT_F16, 0, "F16"},
        {kPtrdiffMax / 2 + 1, "PTRDIFF_MAX/2+1", CUDOT_BF16, CUDOT_I8, "BF16 x, I8 y"},
        {kPtrdiffMax + 1, "PTRDIFF_MAX+1", CUDOT_I8, 0, "I8"},
        {kPtrdiffMax + 1, "PTRDIFF_MAX+1", CUDOT_U8, 0, "U8"},
    };
    for (const Overflow &v : overflows)
        rows.push_back(status_row(E, std::string("n = ") + v.n_text + " (" + num(v.n) + "), " + v.types + ", HOST", IA,
                                  "overflows", [v] {
                                      return call_init(v.n, config(v.dtype, CUDOT_MEMORY_HOST, 0, v.y_dtype));
                                  }));
    for (int32_t memory : {CUDOT_MEMORY_AUTO, CUDOT_MEMORY_MANAGED})
        rows.push_back(status_row(E, std::string("n = SIZE_MAX, F32, ") + (memory ? "MANAGED" : "AUTO") +
                                         " (refused before any GPU is looked for)",
                                  IA, "overflows",
                                  [memory] { return call_init(kSizeMax, config(CUDOT_F32, memory)); }));

    // Just below the overflow limit, and plainly beyond the machine's memory: refused before allocating.
    rows.push_back(status_row(E, "n = PTRDIFF_MAX/4 (" + num(kPtrdiffMax / 4) + "), F32, HOST: no overflow, too big", OOM,
                              "physical memory",
                              [] { return call_init(kPtrdiffMax / 4, config(CUDOT_F32, CUDOT_MEMORY_HOST)); }));
    rows.push_back(status_row(E, "n = PTRDIFF_MAX (" + num(kPtrdiffMax) + "), I8, HOST", OOM, "physical memory",
                              [] { return call_init(kPtrdiffMax, config(CUDOT_I8, CUDOT_MEMORY_HOST)); }));
    rows.push_back(status_row(E, "n = 2^40, F32, HOST (8 TiB of buffers)", OOM, "physical memory",
                              [] { return call_init(std::size_t(1) << 40, config(CUDOT_F32, CUDOT_MEMORY_HOST)); }));
    rows.push_back(status_row(E, "n = physical memory / 8 + 1, F32, HOST (x alone over half the memory)", OOM,
                              "physical memory", [] {
                                  return call_init(physical_memory() / 8 + 1, config(CUDOT_F32, CUDOT_MEMORY_HOST));
                              }));
    rows.push_back(status_row(E, "n = physical memory / 16 + 1, I8 x, F64 y, HOST (y over half the memory)", OOM,
                              "physical memory", [] {
                                  return call_init(physical_memory() / 16 + 1,
                                                   config(CUDOT_I8, CUDOT_MEMORY_HOST, 0, CUDOT_F64));
                              }));
    rows.push_back(status_row(E, "n = 2^40, F32, AUTO (HOST, or page-locked with a GPU)", OOM,
                              "physical memory | page-lock",
                              [] { return call_init(std::size_t(1) << 40, config(CUDOT_F32, CUDOT_MEMORY_AUTO)); }));
    rows.push_back(status_row(E, "n = 0, F32, HOST", CUDOT_OK, "",
                              [] { return call_init(0, config(CUDOT_F32, CUDOT_MEMORY_HOST)); }));
    return rows;
}

// Rows for the entry points that take a context: NULL, a destroyed handle, a never-created handle.
void handle_rows(std::vector<Row> &rows, const std::string &entry,
                 const std::function<cudot_status(cudot_ctx *, Outcome &)> &call) {
    const auto IA = CUDOT_ERROR_INVALID_ARGUMENT;
    rows.push_back(status_row(entry, "ctx = NULL", IA, "", [call] {
        Outcome o;
        cudot_status s = call(nullptr, o);
        Outcome r = on_null(s);
        r.problem = o.problem;
        return r;
    }));
    rows.push_back(status_row(entry, "ctx destroyed by cudot_deinit (use after deinit)", IA, kNotLive, [call] {
        cudot_ctx *dead = dead_handle();
        if (!dead) return no_context();
        Outcome o;
        cudot_status s = call(dead, o);
        Outcome r = on_ctx(s, dead);
        r.problem = o.problem;
        return r;
    }));
    rows.push_back(status_row(entry, "ctx never returned by cudot_init (zeroed memory)", IA, kNotLive, [call] {
        cudot_ctx *fake = fake_handle();
        Outcome o;
        cudot_status s = call(fake, o);
        Outcome r = on_ctx(s, fake);
        r.problem = o.problem;
        return r;
    }));
}

std::vector<Row> get_inputs_rows() {
    std::vector<Row> rows;
    const char *E = "cudot_get_inputs";
    // On failure the out-pointers must be left alone.
    handle_rows(rows, E, [](cudot_ctx *ctx, Outcome &o) {
        void *x = kPtrSentinel, *y = kPtrSentinel;
        cudot_status s = cudot_get_inputs(ctx, &x, &y);
        if (x != kPtrSentinel || y != kPtrSentinel) add_problem(o, "out-pointers written by a failed call");
        return s;
    });
    rows.push_back(status_row(E, "ctx = NULL, x = y = NULL", CUDOT_ERROR_INVALID_ARGUMENT, "",
                              [] { return on_null(cudot_get_inputs(nullptr, nullptr, nullptr)); }));
    rows.push_back(status_row(E, "live ctx, x = y = NULL (neither wanted)", CUDOT_OK, "", [] {
        Live c;
        if (!c.ctx) return no_context();
        return on_ctx(cudot_get_inputs(c.ctx, nullptr, nullptr), c.ctx);
    }));
    rows.push_back(status_row(E, "live ctx, x only / y only", CUDOT_OK, "", [] {
        Live c;
        if (!c.ctx) return no_context();
        void *x = nullptr, *y = nullptr, *x2 = nullptr, *y2 = nullptr;
        cudot_status s1 = cudot_get_inputs(c.ctx, &x, nullptr);
        cudot_status s2 = cudot_get_inputs(c.ctx, nullptr, &y);
        cudot_get_inputs(c.ctx, &x2, &y2);
        Outcome o = on_ctx(s1 != CUDOT_OK ? s1 : s2, c.ctx);
        if (!x || !y || x != x2 || y != y2) add_problem(o, "buffers missing or not stable");
        return o;
    }));
    rows.push_back(status_row(E, "live ctx with n = 0", CUDOT_OK, "", [] {
        Live c(0);
        if (!c.ctx) return no_context();
        void *x = nullptr, *y = nullptr;
        Outcome o = on_ctx(cudot_get_inputs(c.ctx, &x, &y), c.ctx);
        if (!x || !y) add_problem(o, "n = 0 must still give non-NULL pointers");
        return o;
    }));
    return rows;
}

std::vector<Row> dot_rows() {
    std::vector<Row> rows;
    const char *E = "cudot_dot";
    const auto IA = CUDOT_ERROR_INVALID_ARGUMENT;
    handle_rows(rows, E, [](cudot_ctx *ctx, Outcome &o) {
        double r = kSentinel;
        cudot_status s = cudot_dot(ctx, &r);
        if (r != kSentinel) add_problem(o, "result written by a failed call");
        return s;
    });
    rows.push_back(status_row(E, "ctx = NULL, result = NULL", IA, "", [] { return on_null(cudot_dot(nullptr, nullptr)); }));
    rows.push_back(status_row(E, "live ctx, result = NULL", IA, "result", [] {
        Live c;
        if (!c.ctx) return no_context();
        return on_ctx(cudot_dot(c.ctx, nullptr), c.ctx);
    }));
    rows.push_back(status_row(E, "live ctx, n = 0: +0.0", CUDOT_OK, "", [] {
        Live c(0);
        if (!c.ctx) return no_context();
        double r = kSentinel;
        Outcome o = on_ctx(cudot_dot(c.ctx, &r), c.ctx);
        if (r != 0.0 || std::signbit(r)) add_problem(o, "empty dot is not +0.0");
        return o;
    }));
    return rows;
}

std::vector<Row> dot_n_rows() {
    std::vector<Row> rows;
    const char *E = "cudot_dot_n";
    const auto IA = CUDOT_ERROR_INVALID_ARGUMENT;
    handle_rows(rows, E, [](cudot_ctx *ctx, Outcome &o) {
        double r = kSentinel;
        cudot_status s = cudot_dot_n(ctx, 1, &r);
        if (r != kSentinel) add_problem(o, "result written by a failed call");
        return s;
    });
    rows.push_back(status_row(E, "live ctx, result = NULL", IA, "result", [] {
        Live c;
        if (!c.ctx) return no_context();
        return on_ctx(cudot_dot_n(c.ctx, 5, nullptr), c.ctx);
    }));
    struct Beyond {
        std::size_t capacity, n;
        std::string text;
    };
    const Beyond beyond[] = {
        {10, 11, "capacity 10, n = 11"},
        {10, kSizeMax, "capacity 10, n = SIZE_MAX"},
        {10, kSizeMax / 2, "capacity 10, n = SIZE_MAX/2"},
        {10, kPtrdiffMax / 4 + 1, "capacity 10, n = PTRDIFF_MAX/4+1"},
        {0, 1, "capacity 0, n = 1"},
        {0, kSizeMax, "capacity 0, n = SIZE_MAX"},
    };
    for (const Beyond &b : beyond)
        rows.push_back(status_row(E, b.text + " (beyond capacity)", IA, "capacity", [b] {
            Live c(b.capacity);
            if (!c.ctx) return no_context();
            double r = kSentinel;
            Outcome o = on_ctx(cudot_dot_n(c.ctx, b.n, &r), c.ctx);
            if (r != kSentinel) add_problem(o, "result written by a failed call");
            return o;
        }));
    rows.push_back(status_row(E, "capacity 10, n = 10 and n = 0 (the limits themselves)", CUDOT_OK, "", [] {
        Live c(10);
        if (!c.ctx) return no_context();
        double r10 = kSentinel, r0 = kSentinel;
        cudot_status s = cudot_dot_n(c.ctx, 10, &r10);
        if (s == CUDOT_OK) s = cudot_dot_n(c.ctx, 0, &r0);
        Outcome o = on_ctx(s, c.ctx);
        if (r10 != 60.0 || r0 != 0.0) add_problem(o, "wrong values");
        return o;
    }));
    return rows;
}

std::vector<Row> deinit_rows() {
    std::vector<Row> rows;
    const char *E = "cudot_deinit";
    rows.push_back(status_row(E, "ctx = NULL (a no-op)", CUDOT_OK, "", [] { return on_null(cudot_deinit(nullptr)); }));
    rows.push_back(status_row(E, "live ctx", CUDOT_OK, "", [] {
        cudot_config c = config(CUDOT_F32, CUDOT_MEMORY_HOST);
        cudot_ctx *ctx = nullptr;
        if (cudot_init(&ctx, 10, &c) != CUDOT_OK) return no_context();
        Outcome o;
        o.status = cudot_deinit(ctx);
        o.has_message = false;
        o.note = "(context gone)";
        return o;
    }));
    rows.push_back(status_row(E, "the same ctx twice (second call)", CUDOT_ERROR_INVALID_ARGUMENT, kNotLive, [] {
        cudot_config c = config(CUDOT_F32, CUDOT_MEMORY_HOST);
        cudot_ctx *ctx = nullptr;
        if (cudot_init(&ctx, 10, &c) != CUDOT_OK) return no_context();
        cudot_status first = cudot_deinit(ctx);
        Outcome o = on_ctx(cudot_deinit(ctx), ctx);
        if (first != CUDOT_OK) add_problem(o, "the first cudot_deinit failed");
        return o;
    }));
    rows.push_back(status_row(E, "the same ctx three times (third call)", CUDOT_ERROR_INVALID_ARGUMENT, kNotLive, [] {
        cudot_ctx *dead = dead_handle();
        if (!dead) return no_context();
        cudot_status second = cudot_deinit(dead);
        Outcome o = on_ctx(cudot_deinit(dead), dead);
        if (second != CUDOT_ERROR_INVALID_ARGUMENT) add_problem(o, "the second cudot_deinit did not fail");
        return o;
    }));
    rows.push_back(status_row(E, "ctx never returned by cudot_init (zeroed memory)", CUDOT_ERROR_INVALID_ARGUMENT,
                              kNotLive, [] {
                                  cudot_ctx *fake = fake_handle();
                                  return on_ctx(cudot_deinit(fake), fake);
                              }));
    rows.push_back(status_row(E, "a ctx of capacity 0", CUDOT_OK, "", [] {
        cudot_config c = config(CUDOT_F64, CUDOT_MEMORY_HOST);
        cudot_ctx *ctx = nullptr;
        if (cudot_init(&ctx, 0, &c) != CUDOT_OK) return no_context();
        Outcome o;
        o.status = cudot_deinit(ctx);
        o.has_message = false;
        o.note = "(context gone)";
        return o;
    }));
    return rows;
}

// The rows of a getter with two optional out-parameters (cudot_get_memory, cudot_get_dtypes): refused
// handles leave both untouched; a live HOST F32 context gives `want_a` and `want_b`.
using PairGetter = cudot_status (*)(const cudot_ctx *, int32_t *, int32_t *);
std::vector<Row> pair_getter_rows(const char *E, PairGetter get, const std::string &outs, int32_t want_a,
                                  int32_t want_b) {
    std::vector<Row> rows;
    handle_rows(rows, E, [get](cudot_ctx *ctx, Outcome &o) {
        int32_t a = 77, b = 77;
        cudot_status s = get(ctx, &a, &b);
        if (a != 77 || b != 77) add_problem(o, "out-parameters written by a failed call");
        return s;
    });
    rows.push_back(status_row(E, "ctx = NULL, " + outs + " = NULL", CUDOT_ERROR_INVALID_ARGUMENT, "",
                              [get] { return on_null(get(nullptr, nullptr, nullptr)); }));
    rows.push_back(status_row(E, "live HOST ctx, " + outs + " = NULL", CUDOT_OK, "", [get] {
        Live c;
        if (!c.ctx) return no_context();
        return on_ctx(get(c.ctx, nullptr, nullptr), c.ctx);
    }));
    rows.push_back(status_row(E, "live HOST ctx, each out-pointer alone", CUDOT_OK, "", [get, want_a, want_b] {
        Live c;
        if (!c.ctx) return no_context();
        int32_t a = 77, b = 77;
        cudot_status s1 = get(c.ctx, &a, nullptr);
        cudot_status s2 = get(c.ctx, nullptr, &b);
        Outcome o = on_ctx(s1 != CUDOT_OK ? s1 : s2, c.ctx);
        if (a != want_a || b != want_b) add_problem(o, "wrong values");
        return o;
    }));
    return rows;
}

std::vector<Row> get_memory_rows() {
    return pair_getter_rows("cudot_get_memory", cudot_get_memory, "memory = device", CUDOT_MEMORY_HOST,
                            CUDOT_DEVICE_NONE);
}

std::vector<Row> get_dtypes_rows() {
    return pair_getter_rows("cudot_get_dtypes", cudot_get_dtypes, "x_dtype = y_dtype", CUDOT_F32, CUDOT_F32);
}

std::vector<Row> get_capacity_rows() {
    std::vector<Row> rows;
    const char *E = "cudot_get_capacity";
    const auto IA = CUDOT_ERROR_INVALID_ARGUMENT;
    handle_rows(rows, E, [](cudot_ctx *ctx, Outcome &o) {
        std::size_t n = 77;
        cudot_status s = cudot_get_capacity(ctx, &n);
        if (n != 77) add_problem(o, "n written by a failed call");
        return s;
    });
    rows.push_back(status_row(E, "ctx = NULL, n = NULL", IA, "", [] { return on_null(cudot_get_capacity(nullptr, nullptr)); }));
    // Every failure is a status plus a message (cudot.h, "Conventions"): n = NULL on a live context too.
    rows.push_back(status_row(E, "live ctx, n = NULL", IA, "NULL", [] {
        Live c;
        if (!c.ctx) return no_context();
        return on_ctx(cudot_get_capacity(c.ctx, nullptr), c.ctx);
    }));
    rows.push_back(status_row(E, "live ctx of capacity 0", CUDOT_OK, "", [] {
        Live c(0);
        if (!c.ctx) return no_context();
        std::size_t n = 77;
        Outcome o = on_ctx(cudot_get_capacity(c.ctx, &n), c.ctx);
        if (n != 0) add_problem(o, "capacity is not 0");
        return o;
    }));
    return rows;
}

// cudot_last_error returns text: the rows check the text itself.
std::vector<Row> last_error_rows() {
    std::vector<Row> rows;
    const char *E = "cudot_last_error";
    const char *W = "cudot_last_error";
    rows.push_back(text_row(E, "NULL, on a thread that never called cudot_init", "", true, [W] {
        std::string text;
        bool null = false;
        std::thread([&] {
            const char *p = cudot_last_error(nullptr);
            null = p == nullptr;
            if (p) text = p;
        }).join();
        Outcome o = text_outcome(null ? nullptr : text.c_str(), W);
        return o;
    }));
    rows.push_back(text_row(E, "NULL, after a failed cudot_init on this thread", "config->dtype 77", false, [W] {
        cudot_ctx *ctx = nullptr;
        cudot_config c = config(77, CUDOT_MEMORY_HOST);
        cudot_init(&ctx, 10, &c);
        return text_outcome(cudot_last_error(nullptr), W);
    }));
    rows.push_back(text_row(E, "NULL, after this thread's failed init and another thread's failed init",
                            "config->dtype 78", false, [W] {
                                cudot_ctx *ctx = nullptr;
                                cudot_config c = config(78, CUDOT_MEMORY_HOST);
                                cudot_init(&ctx, 10, &c);
                                std::thread([] {
                                    cudot_ctx *other = nullptr;
                                    cudot_config d = config(CUDOT_F32, 99);
                                    cudot_init(&other, 10, &d);
                                }).join();
                                return text_outcome(cudot_last_error(nullptr), W);
                            }));
    rows.push_back(text_row(E, "NULL, after a failed init then a successful HOST init", "config->dtype 79", false, [W] {
        cudot_ctx *ctx = nullptr;
        cudot_config bad = config(79, CUDOT_MEMORY_HOST);
        cudot_init(&ctx, 10, &bad);
        cudot_config good = config(CUDOT_F32, CUDOT_MEMORY_HOST);
        Outcome o;
        if (cudot_init(&ctx, 10, &good) != CUDOT_OK) return no_context();
        o = text_outcome(cudot_last_error(nullptr), W);
        cudot_deinit(ctx);
        return o;
    }));
    // "A successful call does not clear a message" (cudot.h): a successful init leaves it, AUTO included.
    rows.push_back(text_row(E, "NULL, after a failed init then a successful AUTO init", "config->dtype 80", false, [W] {
        cudot_ctx *ctx = nullptr;
        cudot_config bad = config(80, CUDOT_MEMORY_HOST);
        cudot_init(&ctx, 10, &bad);
        cudot_config good = config(CUDOT_F32, CUDOT_MEMORY_AUTO);
        Outcome o;
        if (cudot_init(&ctx, 10, &good) != CUDOT_OK) return no_context();
        o = text_outcome(cudot_last_error(nullptr), W);
        cudot_deinit(ctx);
        return o;
    }));
    rows.push_back(text_row(E, "live ctx, no call has failed", "", true, [W] {
        Live c;
        if (!c.ctx) return no_context();
        double r;
        cudot_dot(c.ctx, &r);
        return text_outcome(cudot_last_error(c.ctx), W);
    }));
    rows.push_back(text_row(E, "live ctx, after a failed cudot_dot_n", "capacity", false, [W] {
        Live c;
        if (!c.ctx) return no_context();
        double r;
        cudot_dot_n(c.ctx, 11, &r);
        return text_outcome(cudot_last_error(c.ctx), W);
    }));
    rows.push_back(text_row(E, "live ctx, after two different failures (the latest wins)", "result", false, [W] {
        Live c;
        if (!c.ctx) return no_context();
        double r;
        cudot_dot_n(c.ctx, 11, &r);
        cudot_dot(c.ctx, nullptr);
        Outcome o = text_outcome(cudot_last_error(c.ctx), W);
        if (o.message.find("capacity") != std::string::npos) add_problem(o, "the older message is still there");
        return o;
    }));
    rows.push_back(text_row(E, "live ctx, another context failed meanwhile", "", true, [W] {
        Live a, b;
        if (!a.ctx || !b.ctx) return no_context();
        double r;
        cudot_dot_n(b.ctx, 11, &r);
        return text_outcome(cudot_last_error(a.ctx), W);
    }));
    rows.push_back(text_row(E, "ctx destroyed by cudot_deinit", kNotLive, false, [W] {
        cudot_ctx *dead = dead_handle();
        if (!dead) return no_context();
        return text_outcome(cudot_last_error(dead), W);
    }));
    rows.push_back(text_row(E, "ctx destroyed after a failed call", kNotLive, false, [W] {
        cudot_config c = config(CUDOT_F32, CUDOT_MEMORY_HOST);
        cudot_ctx *ctx = nullptr;
        if (cudot_init(&ctx, 10, &c) != CUDOT_OK) return no_context();
        double r;
        cudot_dot_n(ctx, 11, &r);
        cudot_deinit(ctx);
        return text_outcome(cudot_last_error(ctx), W);
    }));
    rows.push_back(text_row(E, "ctx never returned by cudot_init (zeroed memory)", kNotLive, false,
                            [W] { return text_outcome(cudot_last_error(fake_handle()), W); }));
    return rows;
}

std::vector<Row> status_string_rows() {
    std::vector<Row> rows;
    const char *E = "cudot_status_string";
    const char *W = "cudot_status_string";
    const char *names[] = {"CUDOT_OK",           "CUDOT_ERROR_INVALID_ARGUMENT", "CUDOT_ERROR_OUT_OF_MEMORY",
                           "CUDOT_ERROR_NO_DEVICE", "CUDOT_ERROR_UNSUPPORTED",  "CUDOT_ERROR_CUDA",
                           "CUDOT_ERROR_INTERNAL"};
    for (int v = 0; v <= 6; ++v)
        rows.push_back(text_row(E, std::to_string(v), names[v], true,
                                [v, W] { return text_outcome(cudot_status_string(static_cast<cudot_status>(v)), W); }));
    // Out-of-range values arrive through the C ABI as plain ints.
    for (int v : {-1, 7, 42, kInt32Max, kInt32Min})
        rows.push_back(text_row(E, std::to_string(v) + " (not a status)", "CUDOT_ERROR_UNKNOWN", true,
                                [v, W] { return text_outcome(cudot_status_string(static_cast<cudot_status>(v)), W); }));
    return rows;
}

// A failed call must leave the context usable, and its message in place until the next failure.
std::vector<Row> after_failure_rows() {
    std::vector<Row> rows;
    // The failures each row starts with, and the message part they leave.
    struct Failure {
        const char *what;
        const char *leaves;
        std::function<void(cudot_ctx *)> fail;
    };
    const std::vector<Failure> failures = {
        {"cudot_dot_n beyond capacity", "capacity",
         [](cudot_ctx *ctx) {
             double r;
             cudot_dot_n(ctx, 11, &r);
         }},
        {"cudot_dot with result = NULL", "result", [](cudot_ctx *ctx) { cudot_dot(ctx, nullptr); }},
    };
    struct Next {
        const char *entry;
        std::function<std::string(cudot_ctx *, cudot_status &)> call;  // returns a problem, if any
    };
    const std::vector<Next> nexts = {
        {"cudot_dot",
         [](cudot_ctx *ctx, cudot_status &s) {
             double r = kSentinel;
             s = cudot_dot(ctx, &r);
             return r == 60.0 ? std::string() : "dot is " + std::to_string(r) + ", not 60";
         }},
        {"cudot_dot_n",
         [](cudot_ctx *ctx, cudot_status &s) {
             double r = kSentinel;
             s = cudot_dot_n(ctx, 4, &r);
             return r == 24.0 ? std::string() : "dot_n(4) is " + std::to_string(r) + ", not 24";
         }},
        {"cudot_get_inputs",
         [](cudot_ctx *ctx, cudot_status &s) {
             void *x = nullptr, *y = nullptr;
             s = cudot_get_inputs(ctx, &x, &y);
             if (!x || !y) return std::string("no buffers");
             // Refill and check the next dot sees it.
             for (int i = 0; i < 10; ++i) static_cast<float *>(x)[i] = 1.0f;
             double r = 0;
             cudot_dot(ctx, &r);
             for (int i = 0; i < 10; ++i) static_cast<float *>(x)[i] = 2.0f;
             return r == 30.0 ? std::string() : "refilled dot is " + std::to_string(r) + ", not 30";
         }},
        {"cudot_get_memory",
         [](cudot_ctx *ctx, cudot_status &s) {
             int32_t m = 77, d = 77;
             s = cudot_get_memory(ctx, &m, &d);
             return m == CUDOT_MEMORY_HOST && d == CUDOT_DEVICE_NONE ? std::string() : "wrong memory or device";
         }},
        {"cudot_get_dtypes",
         [](cudot_ctx *ctx, cudot_status &s) {
             int32_t xd = 77, yd = 77;
             s = cudot_get_dtypes(ctx, &xd, &yd);
             return xd == CUDOT_F32 && yd == CUDOT_F32 ? std::string() : "wrong element types";
         }},
        {"cudot_get_capacity",
         [](cudot_ctx *ctx, cudot_status &s) {
             std::size_t n = 77;
             s = cudot_get_capacity(ctx, &n);
             return n == 10 ? std::string() : "wrong capacity";
         }},
    };
    for (const Failure &f : failures)
        for (const Next &next : nexts)
            rows.push_back(status_row(next.entry, std::string("live ctx (x = 2, y = 3, n = 10) after ") + f.what, CUDOT_OK,
                                      f.leaves, [f, next] {
                                          Live c;
                                          if (!c.ctx) return no_context();
                                          f.fail(c.ctx);
                                          cudot_status s = CUDOT_ERROR_INTERNAL;
                                          std::string problem = next.call(c.ctx, s);
                                          Outcome o = on_ctx(s, c.ctx);
                                          if (!problem.empty()) add_problem(o, problem);
                                          return o;
                                      }));
    for (const Failure &f : failures)
        rows.push_back(status_row("cudot_deinit", std::string("live ctx after ") + f.what, CUDOT_OK, "", [f] {
            cudot_config c = config(CUDOT_F32, CUDOT_MEMORY_HOST);
            cudot_ctx *ctx = nullptr;
            if (cudot_init(&ctx, 10, &c) != CUDOT_OK) return no_context();
            f.fail(ctx);
            Outcome o;
            o.status = cudot_deinit(ctx);
            o.has_message = false;
            o.note = "(context gone)";
            return o;
        }));
    rows.push_back(status_row("cudot_dot", "live ctx after 1000 failed calls of every kind", CUDOT_OK, "result", [] {
        Live c;
        if (!c.ctx) return no_context();
        double r = kSentinel;
        for (int i = 0; i < 1000; ++i) {
            cudot_dot_n(c.ctx, 11 + static_cast<std::size_t>(i), &r);
            cudot_get_capacity(c.ctx, nullptr);
            cudot_dot(c.ctx, nullptr);
        }
        Outcome o = on_ctx(cudot_dot(c.ctx, &r), c.ctx);
        if (r != 60.0) add_problem(o, "wrong dot");
        return o;
    }));
    rows.push_back(status_row("cudot_init", "after a failed cudot_init on this thread", CUDOT_OK, "", [] {
        cudot_ctx *ctx = nullptr;
        cudot_config bad = config(CUDOT_F32, 9);
        cudot_init(&ctx, 10, &bad);
        return call_init(10, config(CUDOT_F32, CUDOT_MEMORY_HOST));
    }));
    return rows;
}

// Rows that need a GPU: sizes beyond the device's (and page-lockable host) memory, device ordinals that
// do not exist, and the handle rules on GPU contexts.
const char *strategy_name(int32_t memory) {
    switch (memory) {
        case CUDOT_MEMORY_PINNED: return "PINNED";
        case CUDOT_MEMORY_MAPPED: return "MAPPED";
        case CUDOT_MEMORY_MANAGED: return "MANAGED";
        case CUDOT_MEMORY_AUTO: return "AUTO";
        default: return "HOST";
    }
}

// The device's free or total memory in bytes (0 in a build without CUDA, where no GPU row runs).
std::size_t device_memory(bool total) {
#ifdef CUDOT_RELIABILITY_WITH_CUDA
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaSetDevice(0) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return total ? total_bytes : free_bytes;
#else
    (void)total;
    return 0;
#endif
}

std::vector<Row> gpu_rows() {
    std::vector<Row> rows;
    const auto IA = CUDOT_ERROR_INVALID_ARGUMENT;
    const auto OOM = CUDOT_ERROR_OUT_OF_MEMORY;
    const Need G = Need::Gpu;
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO}) {
        const std::string m = strategy_name(memory);
        const char *too_big = memory == CUDOT_MEMORY_MANAGED ? "free memory" : "page-lock";
        rows.push_back(status_row("cudot_init", m + ", config->device = 9999 (no such GPU)", IA, "does not exist",
                                  [memory] { return call_init(10, config(CUDOT_F32, memory, 9999)); }, G));
        rows.push_back(status_row("cudot_init", m + ", n = 2^40, F32 (8 TiB of buffers)", OOM, too_big, [memory] {
            return call_init(std::size_t(1) << 40, config(CUDOT_F32, memory));
        }, G));
        if (memory == CUDOT_MEMORY_MANAGED) {
            rows.push_back(status_row("cudot_init", m + ", F32, n = device free memory / 4 (x alone fills it)", OOM,
                                      "free memory", [memory] {
                                          std::size_t free_bytes = device_memory(false);
                                          if (free_bytes == 0) return no_context("cudaMemGetInfo unavailable");
                                          return call_init(free_bytes / 4, config(CUDOT_F32, memory));
                                      }, G));
            rows.push_back(status_row("cudot_init", m + ", I8 x, F64 y, n = device free memory / 8 (y alone fills it)",
                                      OOM, "free memory", [memory] {
                                          std::size_t free_bytes = device_memory(false);
                                          if (free_bytes == 0) return no_context("cudaMemGetInfo unavailable");
                                          return call_init(free_bytes / 8, config(CUDOT_I8, memory, 0, CUDOT_F64));
                                      }, G));
        } else {
            // Each buffer larger than the device and than a quarter of the host: refused before pinning.
            rows.push_back(status_row("cudot_init",
                                      m + ", F32, n = max(device memory, host memory) / 4 + 1 (beyond the device)", OOM,
                                      "page-lock", [memory] {
                                          std::size_t total = device_memory(true);
                                          if (total == 0) return no_context("cudaMemGetInfo unavailable");
                                          std::size_t host = physical_memory();
                                          return call_init((total > host ? total : host) / 4 + 1,
                                                           config(CUDOT_F32, memory));
                                      }, G));
        }
        rows.push_back(status_row("cudot_dot_n", m + " ctx, capacity 10, n = 11", IA, "capacity", [memory] {
            Live c(10, memory);
            if (!c.ctx) return no_context();
            double r = kSentinel;
            Outcome o = on_ctx(cudot_dot_n(c.ctx, 11, &r), c.ctx);
            if (r != kSentinel) add_problem(o, "result written by a failed call");
            return o;
        }, G));
        rows.push_back(status_row("cudot_dot", m + " ctx, result = NULL", IA, "result", [memory] {
            Live c(10, memory);
            if (!c.ctx) return no_context();
            return on_ctx(cudot_dot(c.ctx, nullptr), c.ctx);
        }, G));
        rows.push_back(status_row("cudot_dot", m + " ctx after a failed cudot_dot_n", CUDOT_OK, "capacity", [memory] {
            Live c(10, memory);
            if (!c.ctx) return no_context();
            double r = kSentinel;
            cudot_dot_n(c.ctx, 11, &r);
            Outcome o = on_ctx(cudot_dot(c.ctx, &r), c.ctx);
            if (r != 60.0) add_problem(o, "dot is not 60");
            return o;
        }, G));
        rows.push_back(status_row("cudot_dot", m + " ctx destroyed by cudot_deinit", IA, kNotLive, [memory] {
            cudot_ctx *dead = dead_handle(memory);
            if (!dead) return no_context();
            double r = kSentinel;
            Outcome o = on_ctx(cudot_dot(dead, &r), dead);
            if (r != kSentinel) add_problem(o, "result written by a failed call");
            return o;
        }, G));
        rows.push_back(status_row("cudot_deinit", m + " ctx, the second call", IA, kNotLive, [memory] {
            cudot_ctx *dead = dead_handle(memory);
            if (!dead) return no_context();
            return on_ctx(cudot_deinit(dead), dead);
        }, G));
    }
    return rows;
}

// ---- running the rows and writing the table -------------------------------------------------------------

struct Result {
    std::string entry, input, expected, status, message, verdict;
};

std::vector<Result> g_results;
int g_ran = 0, g_skipped = 0, g_failed = 0;

std::vector<std::string> alternatives(const std::string &required) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        std::size_t bar = required.find(" | ", start);
        out.push_back(required.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
        if (bar == std::string::npos) return out;
        start = bar + 3;
    }
}

bool message_ok(const Row &row, const Outcome &o) {
    if (row.exact) return o.has_message && o.message == row.required;
    if (row.required.empty()) return true;
    if (!o.has_message) return false;
    for (const std::string &part : alternatives(row.required))
        if (o.message.find(part) != std::string::npos) return true;
    return false;
}

std::string expected_text(const Row &row) {
    std::string parts;
    for (const std::string &part : alternatives(row.required))
        parts += (parts.empty() ? "" : " or ") + ("\"" + part + "\"");
    if (row.exact) return "returns " + parts;
    const std::string head = row.text ? "returns text" : cudot_status_string(row.expected);
    return row.required.empty() ? head : head + ", message has " + parts;
}

void run_rows(const std::vector<Row> &rows) {
    int ran = 0;
    std::string skipped;  // why, when no row could run here
    for (const Row &row : rows) {
        Result res;
        res.entry = row.entry;
        res.input = row.input;
        res.expected = expected_text(row);
        const bool gpu = gpu_usable();
        if ((row.need == Need::Gpu && !gpu) || (row.need == Need::NoGpu && gpu)) {
            res.status = "-";
            res.message = "-";
            res.verdict = row.need == Need::Gpu ? "skipped: needs a usable GPU" : "skipped: needs a machine without a GPU";
            ++g_skipped;
            g_results.push_back(res);
            skipped = res.verdict;
            continue;
        }
        ++g_ran;
        ++ran;
        const Outcome o = row.run();
        const bool status_ok = !o.returns_status || o.status == row.expected;
        const bool text_ok = message_ok(row, o);
        res.status = o.returns_status ? cudot_status_string(o.status) : "(text)";
        res.message = o.has_message ? "`" + o.message + "`" : o.note;
        if (o.has_message && o.message.empty()) res.message = "`\"\"`";
        res.verdict = status_ok && text_ok && o.problem.empty() ? "ok" : "FAILED";
        if (!o.problem.empty()) res.verdict += " (" + o.problem + ")";
        if (res.verdict != "ok") ++g_failed;
        g_results.push_back(res);

        INFO(row.entry << " | " << row.input << " | expected " << res.expected << " | got " << res.status << ", "
                       << res.message);
        CHECK(status_ok);
        CHECK(text_ok);
        CHECK(o.problem == "");
    }
    if (ran == 0 && !skipped.empty()) test::skip_case("every row " + skipped.substr(std::string("skipped: ").size()));
}

std::string cell(const std::string &s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else if (c == '\n' || c == '\r') out += ' ';
        else out += c;
    }
    return out;
}

bool write_table(const char *path) {
    std::ofstream out(path);
    if (!out) return false;
    out << "<!-- written by tests/reliability/test_bad_input (CUDOT_TABLE_OUT); do not edit by hand -->\n";
    out << "Bad-input table: cudot " << cudot_version_string() << ", "
#ifdef CUDOT_RELIABILITY_WITH_CUDA
        << "built with CUDA, "
#else
        << "built without CUDA, "
#endif
        << (gpu_usable() ? "a usable GPU present" : "no usable GPU") << ". " << g_results.size() << " rows: " << g_ran
        << " run, " << g_skipped << " skipped, " << g_failed << " failed.\n\n";
    out << "| # | Entry point | Input | Expected | Status received | Message received | Verdict |\n";
    out << "|---|---|---|---|---|---|---|\n";
    int i = 0;
    for (const Result &r : g_results)
        out << "| " << ++i << " | `" << r.entry << "` | " << cell(r.input) << " | " << cell(r.expected) << " | "
            << cell(r.status) << " | " << cell(r.message) << " | " << cell(r.verdict) << " |\n";
    return static_cast<bool>(out);
}

}  // namespace

TEST_CASE("bad input: cudot_init", "[reliability][bad-input]") { run_rows(init_rows()); }
TEST_CASE("bad input: cudot_get_inputs", "[reliability][bad-input]") { run_rows(get_inputs_rows()); }
TEST_CASE("bad input: cudot_dot", "[reliability][bad-input]") { run_rows(dot_rows()); }
TEST_CASE("bad input: cudot_dot_n", "[reliability][bad-input]") { run_rows(dot_n_rows()); }
TEST_CASE("bad input: cudot_deinit", "[reliability][bad-input]") { run_rows(deinit_rows()); }
TEST_CASE("bad input: cudot_get_memory", "[reliability][bad-input]") { run_rows(get_memory_rows()); }
TEST_CASE("bad input: cudot_get_dtypes", "[reliability][bad-input]") { run_rows(get_dtypes_rows()); }
TEST_CASE("bad input: cudot_get_capacity", "[reliability][bad-input]") { run_rows(get_capacity_rows()); }
TEST_CASE("bad input: cudot_last_error", "[reliability][bad-input]") { run_rows(last_error_rows()); }
TEST_CASE("bad input: cudot_status_string", "[reliability][bad-input]") { run_rows(status_string_rows()); }
TEST_CASE("bad input: calls after a failed call", "[reliability][bad-input]") { run_rows(after_failure_rows()); }
TEST_CASE("bad input: GPU strategies", "[reliability][bad-input][gpu]") { run_rows(gpu_rows()); }

int main(int argc, char **argv) {
    Catch::Session session;
    int rc = session.applyCommandLine(argc, argv);
    if (rc != 0) return rc;
    test::check_after_every_case(false);  // state a row leaves changed fails it (isolation.hpp)
    int result = session.run();
    if (g_results.empty()) return result;  // listing, or nothing selected

    std::printf("bad-input table: %zu rows, %d run, %d skipped, %d failed\n", g_results.size(), g_ran, g_skipped,
                g_failed);
    if (const char *path = std::getenv("CUDOT_TABLE_OUT")) {
        if (*path && !write_table(path)) {
            std::printf("cannot write the table to %s\n", path);
            return 1;
        }
        if (*path) std::printf("table written to %s\n", path);
    }
    if (result == 0 && g_ran == 0 && g_skipped > 0) {
        std::printf("SKIPPED: every selected row needs a usable GPU\n");
        return 77;
    }
    return result;
}
