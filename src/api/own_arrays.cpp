// own_arrays.cpp - see own_arrays.hpp. Who computes (the header's "Who computes"):
//   device or managed operand        -> its GPU, on the caller's stream
//   page-locked host, n >= 2^20       -> a GPU that maps host memory, reading it in place
//   anything else on the host         -> the CPU threads, reading it in place
#include "own_arrays.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "../core/order.hpp"
#include "../process/process_limits.hpp"
#include "../cpu/cpu_backend.hpp"
#include "../cpu/exact_dot.hpp"
#include "../cpu/fp_env.hpp"
#include "../cpu/readable.hpp"
#include "../cuda/cuda_backend.hpp"

namespace cudot {
namespace arrays {

namespace {

constexpr std::uint32_t kArraysV17Size = offsetof(cudot_arrays, mode);  // 1.7's: the first and smallest
constexpr std::uint32_t kArraysMaxSize = 4096;
// From this many elements page-locked host operands go to a GPU; below it a launch costs more than the
// CPU's whole dot.
constexpr std::size_t kGpuHostMinElements = std::size_t(1) << 20;

const char *place_name(Place p) {
    switch (p) {
        case Place::PageLocked: return "page-locked host memory";
        case Place::Managed: return "managed memory";
        case Place::Device: return "device memory";
        default: return "pageable host memory";
    }
}

cudot_status read_request(const cudot_arrays *a, cudot_arrays &out, const char *call, ErrorSink err) {
    if (!a) return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: the cudot_arrays pointer is NULL", call);
    const std::uint32_t size = a->size;
    if (size < kArraysV17Size || size > kArraysMaxSize)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "%s: cudot_arrays.size is %u; set it to sizeof(cudot_arrays) (%u), or start from "
                    "CUDOT_ARRAYS_INIT", call, size, kArraysV17Size);
    if (size > kArraysV17Size && size < sizeof(cudot_arrays))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "%s: cudot_arrays.size is %u, which cuts its 1.11 fields (mode, reserved2) short: use %u (1.7's) "
                    "or sizeof(cudot_arrays) (%u)", call, size, kArraysV17Size, static_cast<unsigned>(sizeof(cudot_arrays)));
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(a);
    for (std::uint32_t i = sizeof(cudot_arrays); i < size; ++i)
        if (bytes[i] != 0)
            return fail(err, CUDOT_ERROR_UNSUPPORTED,
                        "%s: cudot_arrays has non-zero bytes past what this library (%s) knows: a newer header's "
                        "fields, which it cannot honour", call, cudot_version_string());
    std::memset(&out, 0, sizeof out);  // fields past an older caller's size read as zero
    std::memcpy(&out, a, std::min<std::size_t>(size, sizeof out));
    if (out.reserved != 0 || out.reserved2 != 0)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: cudot_arrays.%s must be 0", call,
                    out.reserved != 0 ? "reserved" : "reserved2");
    if (out.mode != CUDOT_MODE_CANONICAL && out.mode != CUDOT_MODE_EXACT)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "%s: cudot_arrays.mode is %d: use CUDOT_MODE_CANONICAL (0) or CUDOT_MODE_EXACT (1)", call,
                    static_cast<int>(out.mode));
    return CUDOT_OK;
}

cudot_status view(const cudot_array &in, std::size_t n, const char *name, const char *call, Operand &out,
                  ErrorSink err) {
    if (!in.data) return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s.data is NULL with n = %zu", call, name, n);
    out.data = static_cast<const unsigned char *>(in.data);
    out.gpu_data = out.data;
    out.dtype = in.dtype;
    out.stride = in.stride;
    std::uintptr_t lo, hi;
    if (!byte_span(out, n, lo, hi))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "%s: %s spans beyond the address space (n = %zu, stride = %lld elements of %zu bytes)", call, name,
                    n, static_cast<long long>(in.stride), out.size());
    return CUDOT_OK;
}

// Where o lives (cuda::locate). A host operand whose first or last element cannot be read would crash the
// dot: a freed array, or GPU memory the CUDA driver does not know (freed, or no driver to read it).
// Operands on pages this thread already found to be readable pageable memory skip both questions.
cudot_status locate(Operand &o, std::size_t n, const char *name, const char *call, ErrorSink err) {
    const unsigned char *first = o.at(0), *last = o.at(n - 1);
    const cpu::HostRange ends[2] = {{first, o.size()}, {last, o.size()}};
    if (cpu::known_pageable(ends, 2)) return CUDOT_OK;  // Pageable
    if (cudot_status status = cuda::locate(o, n, name, err)) return status;
    if (o.place != Place::Pageable) return CUDOT_OK;
    if (!cpu::host_readable(first, o.size()) || !cpu::host_readable(last, o.size()))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "%s: %s (%p) is neither memory CUDA knows nor host memory this process can read: freed, or a "
                    "device pointer with no GPU or driver to read it", call, name, static_cast<const void *>(o.data));
    cpu::remember_pageable(first, o.size());
    cpu::remember_pageable(last, o.size());
    return CUDOT_OK;
}

bool on_gpu(const Operand &o) { return o.place == Place::Device || o.place == Place::Managed; }

// The GPU that computes, or -1 for the CPU; a pair no GPU can read is an error.
cudot_status pick_device(const Operands &ops, bool need_gpu, const char *call, int &device, ErrorSink err) {
    device = -1;
    const Operand *g = on_gpu(ops.x) ? &ops.x : on_gpu(ops.y) ? &ops.y : nullptr;
    if (g) {
        const Operand &other = g == &ops.x ? ops.y : ops.x;
        if (on_gpu(other) && other.device != g->device)
            return fail(err, CUDOT_ERROR_UNSUPPORTED,
                        "%s: x is on GPU %d and y on GPU %d: copy one to the other's device", call, ops.x.device,
                        ops.y.device);
        if (other.place == Place::Pageable && !cuda::reads_pageable(g->device))
            return fail(err, CUDOT_ERROR_UNSUPPORTED,
                        "%s: %s is pageable host memory, which GPU %d (holding %s) cannot read: page-lock it "
                        "(cudot_register_host) or copy it to the device", call, &other == &ops.x ? "x" : "y",
                        g->device, g == &ops.x ? "x" : "y");
        device = g->device;
        return CUDOT_OK;
    }
    const bool locked = ops.x.place == Place::PageLocked || ops.y.place == Place::PageLocked;
    if (locked && (need_gpu || ops.n >= kGpuHostMinElements)) {
        const int reader = cuda::host_reader_device();
        const bool both = (ops.x.place == Place::PageLocked && ops.y.place == Place::PageLocked) ||
                          (reader >= 0 && cuda::reads_pageable(reader));
        if (reader >= 0 && both) device = reader;
    }
    if (device < 0 && need_gpu)
        return fail(err, CUDOT_ERROR_UNSUPPORTED,
                    "%s: x (%s) and y (%s) are host memory no GPU here reads in place; the asynchronous form needs "
                    "operands a GPU computes (use cudot_dot_arrays)", call, place_name(ops.x.place),
                    place_name(ops.y.place));
    return CUDOT_OK;
}

// What a thread's CPU dots keep, in one thread_local (each look at one costs a call in a shared library):
// the packed partials, a buffer grown to the largest dot it has run, and the measured choice between the
// calling thread and the pool, per size class.
struct CpuThreadState {
    std::vector<unsigned char> partials;
    cpu::WhereChooser where;
    std::vector<double> staged;  // rows' results before they go to the caller (run_rows)
};
thread_local CpuThreadState cpu_thread;

std::size_t packed_partial_bytes(types::Kind kind) {
    return kind == types::Kind::Dot2 ? sizeof(order::SumF64)
                                     : kind == types::Kind::Exact ? sizeof(order::SumI64) : sizeof(order::SumDouble);
}

// Spreads packed partials into CUDOT_PARTIAL_BYTES slots (zero-padded), as cudot_tile_partials does.
void export_partials(const unsigned char *packed, std::size_t tiles, std::size_t size, void *out) {
    unsigned char *dst = static_cast<unsigned char *>(out);
    for (std::size_t t = tiles; t-- > 0;) {  // backwards: out may be the packed array itself
        unsigned char slot[CUDOT_PARTIAL_BYTES] = {0};
        std::memcpy(slot, packed + t * size, size);
        std::memcpy(dst + t * CUDOT_PARTIAL_BYTES, slot, CUDOT_PARTIAL_BYTES);
    }
}

// The memory the process may use (process_limits.hpp), read once: reading it costs file reads, several
// times a small dot.
std::size_t usable_memory() {
    static const std::size_t usable = limits::usable_memory();
    return usable;
}

// Grows a thread's partials buffer to `bytes` (more than it holds), the partials of n elements, `size`
// bytes each. Operands of stride 0 take no memory of their own, so n alone can ask for more partials than
// the host has (n = SIZE_MAX: 2^51 of them); such an n is refused with what it needs, before an
// allocation granted on credit could fail later, page by page. Called only when the buffer must grow,
// so that the dots that need no growth (nearly all) pay only the comparison.
cudot_status grow_partials(std::vector<unsigned char> &partials, std::size_t n, std::size_t bytes,
                           std::size_t size, const char *call, ErrorSink err) {
    const std::size_t usable = usable_memory();  // 0: not known
    const bool too_much = usable != 0 && bytes > usable;
    if (!too_much) {
        try {
            partials.resize(bytes);
            return CUDOT_OK;
        } catch (const std::bad_alloc &) {
        }
    }
    char why[96];
    if (too_much)
        std::snprintf(why, sizeof why, "more than the %zu bytes this process may use", usable);
    else
        std::snprintf(why, sizeof why, "which could not be allocated");
    return fail(err, CUDOT_ERROR_OUT_OF_MEMORY,
                "%s: n = %zu needs %zu bytes of host memory for its tile partials (%zu bytes per %zu elements), %s",
                call, n, bytes, size, order::kTile, why);
}

cudot_status cpu_run(const Operands &ops, Want want, void *out, const char *call, ErrorSink err) {
    const types::Kind kind = types::kind_of(ops.x.dtype, ops.y.dtype);
    const std::size_t tiles = order::tile_count(ops.n), size = packed_partial_bytes(kind);
    CpuThreadState &mine = cpu_thread;
    const std::size_t bytes = tiles * size;  // at most 2^51 tiles of 16 bytes: no overflow
    if (mine.partials.size() < bytes)
        if (cudot_status status = grow_partials(mine.partials, ops.n, bytes, size, call, err)) return status;
    const PoolUse pool = cpu::pool_use(ops.x.dtype, ops.y.dtype);
    if (want == Want::Partials) {
        cudot_status status = cpu::compute_packed_partials(ops, 0, tiles, mine.partials.data(), pool);
        if (status == CUDOT_OK) export_partials(mine.partials.data(), tiles, size, out);
        return status;
    }
    return cpu::dot(ops, mine.partials.data(), pool, &mine.where, static_cast<double *>(out));
}

const char *out_name(Want want) {
    return want == Want::Result ? "result" : want == Want::DeviceResult ? "device_result" : "out";
}

}  // namespace

// The exact mode's partial of ops (n = 0: an empty sum), computed on the CPU, into out.
cudot_status write_exact_partial(const Operands &ops, void *out, const char *call, ErrorSink err) {
    std::unique_ptr<exact::Sum> sum(new (std::nothrow) exact::Sum);
    std::unique_ptr<exact::Partial> partial(new (std::nothrow) exact::Partial);
    if (!sum || !partial) return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "%s: out of host memory for an exact partial", call);
    exact::clear(*sum);
    if (ops.n > 0 && cpu::exact_sum(ops, *sum) != CUDOT_OK)
        return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the CPU threads' exact sums", call);
    exact::to_partial(*sum, *partial);
    std::memcpy(out, partial.get(), sizeof *partial);
    return CUDOT_OK;
}

cudot_status run(const cudot_arrays *request, Want want, void *out, const char *call, ErrorSink err) {
    cudot_arrays a;
    if (cudot_status status = read_request(request, a, call, err)) return status;
    const std::size_t n = a.n;
    const bool exact = a.mode == CUDOT_MODE_EXACT;
    if (!out && (n > 0 || want != Want::Partials || exact))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", call, out_name(want));
    for (const cudot_array *o : {&a.x, &a.y})
        if (!types::valid_dtype(o->dtype) || o->reserved != 0)
            return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s.%s", call, o == &a.x ? "x" : "y",
                        o->reserved != 0 ? "reserved must be 0" : "dtype is not CUDOT_F32 = 1 .. CUDOT_U8 = 6");
    if (n == 0 && exact && want == Want::Partials) return write_exact_partial(Operands{}, out, call, err);
    if (n == 0 && want != Want::DeviceResult) {
        if (want == Want::Result) *static_cast<double *>(out) = 0.0;
        return CUDOT_OK;
    }
    Operands ops;
    ops.n = n;
    int device = -1;
    if (n > 0) {
        if (cudot_status status = view(a.x, n, "x", call, ops.x, err)) return status;
        if (cudot_status status = view(a.y, n, "y", call, ops.y, err)) return status;
        // Host arrays dotted again (the common case of small dots) skip locate: one look at this thread's
        // memory of pageable pages answers for both ends of both operands.
        const cpu::HostRange ends[4] = {{ops.x.at(0), ops.x.size()}, {ops.x.at(n - 1), ops.x.size()},
                                        {ops.y.at(0), ops.y.size()}, {ops.y.at(n - 1), ops.y.size()}};
        if (!cpu::known_pageable(ends, 4)) {
            if (cudot_status status = locate(ops.x, n, "x", call, err)) return status;
            if (cudot_status status = locate(ops.y, n, "y", call, err)) return status;
        }
        // The exact mode computes host arrays on the CPU; arrays a GPU holds, and asynchronous dots, where
        // the canonical mode would.
        if (!exact || on_gpu(ops.x) || on_gpu(ops.y) || want == Want::DeviceResult)
            if (cudot_status status = pick_device(ops, want == Want::DeviceResult, call, device, err)) return status;
    } else {  // an asynchronous empty dot: +0.0 written on the GPU of the result
        Operand result = dense_operand(out, CUDOT_F64);
        if (cudot_status status = cuda::locate(result, 1, "device_result", err)) return status;
        device = on_gpu(result) ? result.device : cuda::host_reader_device();
        if (device < 0)
            return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                        "%s: device_result (%p) is not memory a GPU here can write", call, out);
    }
    cpu::DefaultFpEnv fp_env;  // the caller's FTZ/DAZ or rounding mode must not change the result
    cudot_status status;
    if (exact && device < 0 && want == Want::Partials) {
        return write_exact_partial(ops, out, call, err);
    } else if (exact && device < 0) {
        status = cpu::exact_dot(ops, static_cast<double *>(out));
        if (status == CUDOT_ERROR_OUT_OF_MEMORY)
            return fail(err, status, "%s: out of host memory for the CPU threads' exact sums", call);
    } else if (device < 0) {
        status = cpu_run(ops, want, out, call, err);
    } else {
        cuda::StreamCall c;  // a batch of one row, on the batches' road
        c.stream = a.stream;
        c.x_ready = a.x_ready;
        c.y_ready = a.y_ready;
        c.host_result = want == Want::Result ? static_cast<double *>(out) : nullptr;
        c.device_result = want == Want::DeviceResult ? static_cast<double *>(out) : nullptr;
        c.partials = want == Want::Partials ? out : nullptr;
        c.async_name = "cudot_dot_arrays_async";
        status = cuda::stream_rows(Rows::one(ops, exact), device, c, err);
        if (status == CUDOT_OK && want == Want::Partials && !exact) {
            const std::size_t size = packed_partial_bytes(types::kind_of(ops.x.dtype, ops.y.dtype));
            export_partials(static_cast<unsigned char *>(out), order::tile_count(n), size, out);
        }
    }
    double *result = static_cast<double *>(out);
    if (status == CUDOT_OK && want == Want::Result && std::isnan(*result))
        *result = std::numeric_limits<double>::quiet_NaN();  // one NaN for every backend
    return status;
}

// ---- rows (cudot_dot_rows) ----

namespace {

constexpr std::uint32_t kRowsV1Size = offsetof(cudot_rows, mode);  // 1.10's, the smallest: canonical rows

// a * b into out, false where it overflows int64.
bool mul_i64(std::int64_t a, std::int64_t b, std::int64_t &out) {
    if (a == 0 || b == 0) {
        out = 0;
        return true;
    }
    const std::int64_t max = std::numeric_limits<std::int64_t>::max();
    const std::uint64_t ua = a < 0 ? 0 - static_cast<std::uint64_t>(a) : static_cast<std::uint64_t>(a);
    const std::uint64_t ub = b < 0 ? 0 - static_cast<std::uint64_t>(b) : static_cast<std::uint64_t>(b);
    if (ua > static_cast<std::uint64_t>(max) / ub) return false;
    out = static_cast<std::int64_t>(ua * ub);
    if ((a < 0) != (b < 0)) out = -out;
    return true;
}

// The bytes [lo, hi) that `count` rows of `n` elements touch, row i at element i * row_stride of o and
// its elements o.stride apart (n, count >= 1); false where that leaves the address space.
bool batch_span(const Operand &o, std::size_t count, std::size_t n, std::int64_t row_stride, std::uintptr_t &lo,
                std::uintptr_t &hi) {
    const std::int64_t half = std::numeric_limits<std::int64_t>::max() / 2;
    if (count - 1 > static_cast<std::uint64_t>(half) || n - 1 > static_cast<std::uint64_t>(half)) return false;
    std::int64_t a, b;  // element offsets: of the last row's element 0, and of a row's last element
    if (!mul_i64(static_cast<std::int64_t>(count - 1), row_stride, a) || a < -half || a > half) return false;
    if (!mul_i64(static_cast<std::int64_t>(n - 1), o.stride, b) || b < -half || b > half) return false;
    const std::int64_t low = std::min<std::int64_t>(0, a) + std::min<std::int64_t>(0, b);   // fits: each half
    const std::int64_t high = std::max<std::int64_t>(0, a) + std::max<std::int64_t>(0, b);
    const std::int64_t size = static_cast<std::int64_t>(o.size());
    std::int64_t low_bytes, high_bytes;
    if (!mul_i64(low, size, low_bytes) || !mul_i64(high, size, high_bytes) || high_bytes > 2 * half - size)
        return false;
    const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(o.data);
    const std::uint64_t down = 0 - static_cast<std::uint64_t>(low_bytes), up = static_cast<std::uint64_t>(high_bytes + size);
    if (base < down || base > UINTPTR_MAX - up) return false;
    lo = base - down;
    hi = base + up;
    return true;
}

// The address of o's element `index` (>= 0), false where it lies beyond the address space.
bool element_at(const Operand &o, std::int64_t index, const unsigned char *&out) {
    std::int64_t elements, bytes;
    if (!mul_i64(index, o.stride, elements) || !mul_i64(elements, static_cast<std::int64_t>(o.size()), bytes)) return false;
    const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(o.data);
    const std::uint64_t step = bytes < 0 ? 0 - static_cast<std::uint64_t>(bytes) : static_cast<std::uint64_t>(bytes);
    if (bytes < 0 ? base < step : base > UINTPTR_MAX - step) return false;
    out = reinterpret_cast<const unsigned char *>(bytes < 0 ? base - step : base + step);
    return true;
}

bool overlaps(std::uintptr_t a_lo, std::uintptr_t a_hi, std::uintptr_t b_lo, std::uintptr_t b_hi) {
    return a_lo < b_hi && b_lo < a_hi;
}

// Where the bytes [lo, hi) live, checked as an operand's ends are (locate above): a host range whose
// first or last byte cannot be read is refused, and so is device or managed memory leaving its allocation.
// `anchor` (default lo) is an address the span must contain, such as its first row's element 0: a span
// reaching below a device allocation is named as leaving it, not as memory nobody knows.
cudot_status locate_span(std::uintptr_t lo, std::uintptr_t hi, const char *name, const char *call, Operand &where,
                         ErrorSink err, const void *anchor = nullptr) {
    where = dense_operand(reinterpret_cast<const void *>(lo), CUDOT_U8);
    if (anchor && reinterpret_cast<std::uintptr_t>(anchor) != lo) {
        const cpu::HostRange ends[2] = {{reinterpret_cast<const unsigned char *>(lo), 1},
                                        {reinterpret_cast<const unsigned char *>(hi - 1), 1}};
        if (!cpu::known_pageable(ends, 2)) {
            Operand at = dense_operand(anchor, CUDOT_U8);
            if (cudot_status status = cuda::locate(at, 1, name, err)) return status;
            if (on_gpu(at)) {
                where.place = at.place;
                where.device = at.device;
                return cuda::check_within(anchor, lo, hi, name, err);
            }
        }
    }
    return locate(where, hi - lo, name, call, err);
}

// A table the library reads on the host (offsets, row pointers): `bytes` from p in readable host memory.
cudot_status host_table(const void *p, std::size_t bytes, const char *name, const char *call, ErrorSink err) {
    const std::uintptr_t lo = reinterpret_cast<std::uintptr_t>(p);
    if (lo > UINTPTR_MAX - bytes)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s spans beyond the address space", call, name);
    Operand where;
    if (cudot_status status = locate_span(lo, lo + bytes, name, call, where, err)) return status;
    if (on_gpu(where))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is in %s of GPU %d; it must be host memory", call,
                    name, p, place_name(where.place), where.device);
    return CUDOT_OK;
}

// The request checked and turned into Rows, with the byte ranges the rows touch (for the overlap check),
// and who can compute them: `device` >= 0 when every row is on that GPU, -1 when every row is host memory.
struct CheckedRows {
    Rows rows;
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans;
    std::size_t longest = 0;
    int device = -1;
    bool on_host = false;
    bool all_locked = true;  // every row is page-locked host memory (a GPU can read it in place)
};

cudot_status check_rows(const cudot_rows &r, const char *call, CheckedRows &out, ErrorSink err) {
    Rows &rows = out.rows;
    rows.count = r.count;
    rows.n = r.n;
    for (const cudot_array *o : {&r.x, &r.y}) {
        Operand &v = o == &r.x ? rows.x : rows.y;
        v.data = static_cast<const unsigned char *>(o->data);
        v.gpu_data = v.data;
        v.dtype = o->dtype;
        v.stride = o->stride;
    }
    const auto span_of = [&](const Operand &o, std::size_t count, std::size_t n, std::int64_t row_stride,
                             const char *name) -> cudot_status {
        std::uintptr_t lo, hi;
        if (!batch_span(o, count, n, row_stride, lo, hi))
            return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                        "%s: the rows of %s span beyond the address space (count = %zu, n = %zu, row stride %lld, "
                        "stride %lld)", call, name, count, n, static_cast<long long>(row_stride),
                        static_cast<long long>(o.stride));
        Operand where;
        if (cudot_status status = locate_span(lo, hi, name, call, where, err, o.data)) return status;
        out.spans.emplace_back(lo, hi);
        if (where.place != Place::PageLocked) out.all_locked = false;
        if (!on_gpu(where)) {
            out.on_host = true;
        } else if (out.device >= 0 && out.device != where.device) {
            return fail(err, CUDOT_ERROR_UNSUPPORTED, "%s: rows on GPU %d and on GPU %d: copy them to one GPU", call,
                        out.device, where.device);
        } else {
            out.device = where.device;
        }
        if (out.on_host && out.device >= 0)
            return fail(err, CUDOT_ERROR_UNSUPPORTED, "%s: some rows are in host memory and some on GPU %d: a batch is "
                        "computed in one place", call, out.device);
        return CUDOT_OK;
    };
    switch (r.layout) {
        case CUDOT_ROWS_STRIDED:
            rows.layout = Rows::Layout::Strided;
            if (r.offsets || r.x_rows || r.y_rows)
                return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: offsets, x_rows and y_rows must be NULL for "
                            "CUDOT_ROWS_STRIDED", call);
            rows.x_row_stride = r.x_row_stride;
            rows.y_row_stride = r.y_row_stride;
            out.longest = r.n;
            if (r.n == 0) return CUDOT_OK;
            if (!r.x.data || !r.y.data)
                return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s.data is NULL with n = %zu", call,
                            r.x.data ? "y" : "x", r.n);
            if (cudot_status status = span_of(rows.x, r.count, r.n, r.x_row_stride, "x")) return status;
            return span_of(rows.y, r.count, r.n, r.y_row_stride, "y");
        case CUDOT_ROWS_SEGMENTED: {
            rows.layout = Rows::Layout::Segmented;
            if (r.n != 0 || r.x_row_stride != 0 || r.y_row_stride != 0 || r.x_rows || r.y_rows)
                return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: n, the row strides, x_rows and y_rows must be 0 "
                            "for CUDOT_ROWS_SEGMENTED", call);
            if (!r.offsets) return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: offsets is NULL", call);
            if (r.count >= SIZE_MAX / sizeof(std::int64_t))
                return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: count = %zu offsets span beyond the address space",
                            call, r.count);
            if (cudot_status status = host_table(r.offsets, (r.count + 1) * sizeof(std::int64_t), "offsets", call, err))
                return status;
            if (r.offsets[0] < 0)
                return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: offsets[0] is %lld, below 0", call,
                            static_cast<long long>(r.offsets[0]));
            for (std::size_t i = 0; i < r.count; ++i) {
                if (r.offsets[i + 1] < r.offsets[i])
                    return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: offsets[%zu] (%lld) is below offsets[%zu] (%lld)",
                                call, i + 1, static_cast<long long>(r.offsets[i + 1]), i,
                                static_cast<long long>(r.offsets[i]));
                out.longest = std::max(out.longest, static_cast<std::size_t>(r.offsets[i + 1] - r.offsets[i]));
            }
            rows.offsets = r.offsets;
            const std::size_t first = static_cast<std::size_t>(r.offsets[0]);
            const std::size_t total = static_cast<std::size_t>(r.offsets[r.count]) - first;
            if (total == 0) return CUDOT_OK;
            if (!r.x.data || !r.y.data)
                return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s.data is NULL with rows of elements", call,
                            r.x.data ? "y" : "x");
            // The elements [first, first + total) of each long vector: one row starting at element `first`.
            for (const Operand *v : {&rows.x, &rows.y}) {
                Operand from = *v;
                if (!element_at(*v, static_cast<std::int64_t>(first), from.data))
                    return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: element offsets[0] = %zu of %s lies beyond "
                                "the address space", call, first, v == &rows.x ? "x" : "y");
                if (cudot_status status = span_of(from, 1, total, 0, v == &rows.x ? "x" : "y")) return status;
            }
            return CUDOT_OK;
        }
        case CUDOT_ROWS_POINTERS:
            rows.layout = Rows::Layout::Pointers;
            if (r.x.data || r.y.data || r.offsets || r.x_row_stride != 0 || r.y_row_stride != 0)
                return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: x.data, y.data, offsets and the row strides must be "
                            "0 for CUDOT_ROWS_POINTERS", call);
            if (!r.x_rows || !r.y_rows)
                return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", call, r.x_rows ? "y_rows" : "x_rows");
            if (r.count > SIZE_MAX / sizeof(void *))
                return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: count = %zu row pointers span beyond the address "
                            "space", call, r.count);
            if (cudot_status status = host_table(r.x_rows, r.count * sizeof(void *), "x_rows", call, err)) return status;
            if (cudot_status status = host_table(r.y_rows, r.count * sizeof(void *), "y_rows", call, err)) return status;
            rows.x_rows = r.x_rows;
            rows.y_rows = r.y_rows;
            out.longest = r.n;
            if (r.n == 0) return CUDOT_OK;
            for (std::size_t i = 0; i < r.count; ++i) {
                if (!r.x_rows[i] || !r.y_rows[i])
                    return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s[%zu] is NULL", call,
                                r.x_rows[i] ? "y_rows" : "x_rows", i);
                const Operands ops = rows.row(i);
                if (cudot_status status = span_of(ops.x, 1, r.n, 0, "a row of x")) return status;
                if (cudot_status status = span_of(ops.y, 1, r.n, 0, "a row of y")) return status;
            }
            return CUDOT_OK;
        default:
            return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: layout %d is not CUDOT_ROWS_STRIDED, _SEGMENTED or "
                        "_POINTERS", call, static_cast<int>(r.layout));
    }
}

}  // namespace

cudot_status run_rows(const cudot_rows *request, Want want, double *results, const char *call, ErrorSink err) {
    if (!request) return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: the cudot_rows pointer is NULL", call);
    const std::uint32_t size = request->size;
    if (size < kRowsV1Size || (size > kRowsV1Size && size < sizeof(cudot_rows)) || size > kArraysMaxSize)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "%s: cudot_rows.size is %u; set it to sizeof(cudot_rows) (%u), or start from CUDOT_ROWS_INIT", call,
                    size, static_cast<unsigned>(sizeof(cudot_rows)));
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(request);
    for (std::uint32_t i = sizeof(cudot_rows); i < size; ++i)
        if (bytes[i] != 0)
            return fail(err, CUDOT_ERROR_UNSUPPORTED,
                        "%s: cudot_rows has non-zero bytes past what this library (%s) knows: a newer header's "
                        "fields, which it cannot honour", call, cudot_version_string());
    cudot_rows r;
    std::memset(&r, 0, sizeof r);  // an older caller's: the fields it lacks read as zero (the canonical mode)
    std::memcpy(&r, request, std::min<std::size_t>(size, sizeof r));
    if (r.mode != CUDOT_MODE_CANONICAL && r.mode != CUDOT_MODE_EXACT)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: mode is %d, not CUDOT_MODE_CANONICAL (0) or CUDOT_MODE_EXACT (1)",
                    call, static_cast<int>(r.mode));
    if (r.reserved != 0) return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: reserved must be 0", call);
    for (const cudot_array *o : {&r.x, &r.y})
        if (!types::valid_dtype(o->dtype) || o->reserved != 0)
            return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s.%s", call, o == &r.x ? "x" : "y",
                        o->reserved != 0 ? "reserved must be 0" : "dtype is not CUDOT_F32 = 1 .. CUDOT_U8 = 6");
    if (r.count == 0) return CUDOT_OK;
    const bool async = want == Want::DeviceResult;
    const char *name = async ? "device_results" : "results";
    if (!results) return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", call, name);
    if (reinterpret_cast<std::uintptr_t>(results) % alignof(double) != 0)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is not 8-byte aligned", call, name,
                    static_cast<void *>(results));
    if (r.count > SIZE_MAX / sizeof(double) ||
        reinterpret_cast<std::uintptr_t>(results) > UINTPTR_MAX - r.count * sizeof(double))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %zu results span beyond the address space", call, r.count);
    CheckedRows checked;
    if (cudot_status status = check_rows(r, call, checked, err)) return status;
    checked.rows.exact = r.mode == CUDOT_MODE_EXACT;
    const std::uintptr_t out_lo = reinterpret_cast<std::uintptr_t>(results), out_hi = out_lo + r.count * sizeof(double);
    Operand out;
    if (cudot_status status = locate_span(out_lo, out_hi, name, call, out, err)) return status;
    if (!async && on_gpu(out))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: results (%p) is in %s of GPU %d: pass host memory, or use "
                    "cudot_dot_rows_async for results on a GPU", call, static_cast<void *>(results),
                    place_name(out.place), out.device);
    for (const auto &span : checked.spans)
        if (overlaps(out_lo, out_hi, span.first, span.second))
            return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: %s [%p, %p) overlap the rows' bytes [%p, %p)",
                        call, name, static_cast<void *>(results), reinterpret_cast<void *>(out_hi),
                        reinterpret_cast<void *>(span.first), reinterpret_cast<void *>(span.second));
    if (checked.on_host && checked.all_locked && !checked.spans.empty()) {
        // Page-locked rows: a GPU reads them in place over the bus, as it reads a single dot's (from
        // kGpuHostMinElements elements on, below which the CPU answers sooner).
        const std::size_t elements = r.layout == CUDOT_ROWS_SEGMENTED
                                         ? static_cast<std::size_t>(r.offsets[r.count] - r.offsets[0])
                                         : (r.n != 0 && r.count > SIZE_MAX / r.n ? SIZE_MAX : r.count * r.n);
        const int reader = async || elements >= kGpuHostMinElements ? cuda::host_reader_device() : -1;
        if (reader >= 0) {
            checked.on_host = false;
            checked.device = reader;
        }
    }
    if (async && checked.on_host)
        return fail(err, CUDOT_ERROR_UNSUPPORTED, "%s: the rows are host memory that is not page-locked, which only the "
                    "CPU computes here (use cudot_dot_rows, or page-lock them with cudot_register_host)", call);
    if (async && checked.device < 0) {  // no row has elements: zeros, written by the results' GPU
        checked.device = on_gpu(out) ? out.device : cuda::host_reader_device();
        if (checked.device < 0)
            return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "%s: device_results (%p) is not memory a GPU here can write",
                        call, static_cast<void *>(results));
    }
    if (checked.device >= 0) {
        cuda::StreamCall c;
        c.stream = r.stream;
        c.x_ready = r.x_ready;
        c.y_ready = r.y_ready;
        c.host_result = async ? nullptr : results;
        c.device_result = async ? results : nullptr;
        return cuda::stream_rows(checked.rows, checked.device, c, err);
    }
    // The longest row's partials, in this thread's kept buffer (rows computed inside pool tasks use
    // buffers of their own). Views that are not dense gather their tiles into buffers a thread may fail
    // to get; then nothing may have been written: the results go to a buffer of the thread's first.
    const Rows &rows = checked.rows;
    const types::Kind kind = types::kind_of(rows.x.dtype, rows.y.dtype);
    const std::size_t psize = packed_partial_bytes(kind), tiles = order::tile_count(checked.longest);
    CpuThreadState &mine = cpu_thread;
    if (!rows.exact && mine.partials.size() < tiles * psize)  // (the exact mode has no tiles)
        if (cudot_status status = grow_partials(mine.partials, checked.longest, tiles * psize, psize, call, err))
            return status;
    // (Rows of one view share its alignment; row pointers each have their own.)
    const bool may_fail = rows.exact || rows.layout == Rows::Layout::Pointers || !(rows.x.dense() && rows.y.dense());
    double *into = results;
    if (may_fail) {
        try {
            mine.staged.resize(r.count);
        } catch (const std::bad_alloc &) {
            return fail(err, CUDOT_ERROR_OUT_OF_MEMORY, "%s: out of host memory for %zu results", call, r.count);
        }
        into = mine.staged.data();
    }
    cpu::DefaultFpEnv fp_env;  // the caller's FTZ/DAZ or rounding mode must not change the results
    const cudot_status status = cpu::dot_rows(rows, into, mine.partials.data());
    if (status == CUDOT_ERROR_OUT_OF_MEMORY)
        return fail(err, status, "%s: a thread could not get its buffers (%s)", call,
                    rows.exact ? "the exact mode's sums" : "for rows that are not dense");
    if (status != CUDOT_OK) return status;
    for (std::size_t i = 0; i < r.count; ++i)
        results[i] = std::isnan(into[i]) ? std::numeric_limits<double>::quiet_NaN() : into[i];  // one NaN everywhere
    return CUDOT_OK;
}

namespace {

// The ranges cudot_register_host registered: start -> bytes, and whether CUDA page-locked them.
struct Registered {
    std::size_t bytes;
    bool locked;
};
std::mutex registered_mutex;
std::map<std::uintptr_t, Registered> &registered() {
    static auto *ranges = new std::map<std::uintptr_t, Registered>;  // never destroyed: see api.cpp's Registry
    return *ranges;
}

}  // namespace

cudot_status register_host(const void *p, std::size_t bytes, ErrorSink err) {
    if (!p || bytes == 0)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_register_host: %s", p ? "bytes is 0" : "p is NULL");
    const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(p);
    if (start > UINTPTR_MAX - bytes)
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT, "cudot_register_host: the range passes the address space's end");
    // Host memory is memory mapped in this process, every page of it: without a GPU nothing else would
    // find out that a range is not (freed, or a device address). Device and managed memory are CUDA's
    // to refuse, below.
    Operand first = dense_operand(p, CUDOT_U8);
    if (cudot_status status = cuda::locate(first, 1, "p", err)) return status;
    if (!on_gpu(first) && !cpu::host_range_mapped(p, bytes))
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "cudot_register_host: [%p, +%zu) is not host memory: a page of it is not mapped in this process "
                    "(freed, or a device address with no GPU or driver to know it)", p, bytes);
    std::lock_guard<std::mutex> lock(registered_mutex);
    auto &ranges = registered();
    auto next = ranges.lower_bound(start);
    const bool overlaps_next = next != ranges.end() && next->first < start + bytes;
    const bool overlaps_previous = next != ranges.begin() && std::prev(next)->first + std::prev(next)->second.bytes > start;
    if (overlaps_next || overlaps_previous) {
        const auto &other = overlaps_next ? *next : *std::prev(next);
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "cudot_register_host: [%p, +%zu) overlaps the range registered at %p (+%zu bytes)", p, bytes,
                    reinterpret_cast<const void *>(other.first), other.second.bytes);
    }
    bool locked = false;
    if (cudot_status status = cuda::register_host(p, bytes, &locked, err)) return status;
    cpu::forget_pageable();  // these pages are page-locked now
    ranges.emplace(start, Registered{bytes, locked});  // bad_alloc: OUT_OF_MEMORY (the range stays locked)
    return CUDOT_OK;
}

void before_fork() { registered_mutex.lock(); }
void after_fork() { registered_mutex.unlock(); }  // in the child, the forking thread is the one that holds it

#if defined(CUDOT_TESTING)
void hold_lock(unsigned ms, std::atomic<bool> *held) {
    std::lock_guard<std::mutex> lock(registered_mutex);
    held->store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}
#endif

cudot_status unregister_host(const void *p, ErrorSink err) {
    std::lock_guard<std::mutex> lock(registered_mutex);
    auto &ranges = registered();
    auto it = ranges.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == ranges.end())
        return fail(err, CUDOT_ERROR_INVALID_ARGUMENT,
                    "cudot_unregister_host: %p is not the start of a range cudot_register_host registered", p);
    const bool locked = it->second.locked;
    ranges.erase(it);
    return locked ? cuda::unregister_host(p, err) : CUDOT_OK;
}

}  // namespace arrays
}  // namespace cudot
