// cudot_fuzz.cpp - libFuzzer harness for the public C API of cudot (include/cudot.h).
//
// The fuzz input is a small program: a sequence of API calls with their arguments, run against up to
// kSlots contexts that stay open at once. Every result is checked against the contract in cudot.h and
// docs/ACCURACY.md; any violation prints a line on stderr and executes __builtin_trap().
//
// What is checked:
//  - cudot_init: the status against every reason the contract gives for failing (invalid config fields,
//    config->size rules, n whose byte count overflows or exceeds physical memory, GPU strategies in a
//    build without CUDA); *ctx is NULL after a failure; a failure leaves a message in
//    cudot_last_error(NULL), and a success leaves that message alone; a huge n is refused without a
//    large allocation (ASan allocator hook); a new context reports HOST, its dtypes and its capacity.
//  - cudot_dot / cudot_dot_n: valid calls return CUDOT_OK; NULL result or n beyond capacity give
//    CUDOT_ERROR_INVALID_ARGUMENT, a non-empty cudot_last_error(ctx) and an untouched *result. The value:
//      both sides integer: bitwise equal to the exact 64-bit integer sum, converted to double;
//      either side F64:    |r - s| <= u*|s| + gamma_{n-1}^2 * S  (+ n * 2^-1073 where a product underflows)
//      otherwise:          |r - s| <= gamma_{n-1} * S
//    with s the exact dot (a fixed-point superaccumulator over the whole double range, products formed
//    exactly from the integer significands) and S = sum |x_i y_i|. NaN in a product (Inf * 0 included)
//    or infinite products of both signs give the canonical quiet NaN 0x7ff8000000000000; a lone
//    infinity gives that infinity; n == 0 gives +0.0; no dot returns -0.0. Results are deterministic:
//    the same n on unchanged inputs gives the same bits whatever the thread knobs, dot equals
//    dot_n(capacity), dot_n(k) equals the dot of a fresh context of capacity k holding the same first k
//    values, and concurrent dots agree. A dot never writes into the input buffers.
//  - the getters, cudot_status_string, cudot_version, calls with NULL contexts or NULL out-pointers.
//
// Allocation stays bounded: successful contexts hold at most kMaxN elements; the huge n values tried
// (at least 2^48 elements) must be refused by the library before it allocates anything large.
//
// Environment (optional):
//   CUDOT_FUZZ_TRACE=1          print every operation on stderr (to read a regression input)
//   CUDOT_FUZZ_ALLOW=a,b,...    report but tolerate the named checks (names are printed with each
//                               violation); for fuzzing past a known, already reported finding
//
// Program format (all integers little-endian; reading past the end yields zeros):
//   repeated: op (u8, taken modulo 12), then the op's arguments:
//   0 INIT       slot u8, flags u8 (bit0: ctx out-pointer NULL, bit1: do not fill the buffers),
//                nmode u8, narg u64, sizemode u8, sizearg u16, dtype u8, ydtype u8, memory u8,
//                device u8, tailpos u16, tailbyte u8, fillclass u8, fillseed u32
//   1 DEINIT     slot u8
//   2 FILL       slot u8, which u8 (bit0 x, bit1 y; 0 = both), mode u8, then by mode % 5:
//                0 RAW     start u16, count u16, len u8, len % 32 + 1 pattern bytes
//                1 POINTS  k u8, then k % 16 + 1 times: index u16, code u8 [+ element bytes if code >= 0xE0]
//                2 CONST   code u8 [+ element bytes if code >= 0xE0]
//                3 PRNG    class u8, seed u32
//                4 MIRROR  (no arguments)
//   3 DOT        slot u8, flags u8 (bit0: result NULL, bit1: ctx NULL, bit2: also dot_n(capacity),
//                bit3: under the caller FP mode of bits 4..7: FTZ, DAZ, rounding)
//   4 DOT_N      slot u8, flags u8 (bit0: result NULL), nmode u8, narg u16
//   5 QUERY      slot u8, which u8, flags u8
//   6 HOOKS      slot u8, threads u8, parallel u8
//   7 CLONE      slot u8 (source), slot u8 (target), memory u8, k u16
//   8 MISC       kind u8, value u32
//   9 CONCURRENT slot u8, slot u8
//  10 KERNELS    slot u8, nmode u8, narg u16 (n as for DOT_N, at most the capacity)
//  11 ARRAYS     slot u8, flags u8 (bit0: x.data NULL, bit1: x.dtype 0, bit2: tile partials + join instead
//                of the dot, bit3: size one byte short), nmode u8, narg u16, xcode u8, ycode u8: the slot's
//                shadow values as the caller's own arrays (cudot_dot_arrays), stride {1,-1,0,2,-3,7}[code % 6],
//                element 0 (code / 6) % 8 bytes past an aligned address; the same bits as a HOST context
//                holding the values read. bit4: instead, the same operands as a batch of one row
//                (cudot_dot_rows, strided), the same bits; bit5 (with bit4): also cut into three
//                segments at arg-chosen offsets (segmented rows), each with the bits of cudot_dot_arrays
//                on that segment alone; bit6: in the exact mode (CUDOT_MODE_EXACT), the bits of an exact
//                HOST context (the row and the segments too, as cudot_rows.mode); with bit2 (without bit4)
//                through its one exact partial, after a copy of the partial with one byte changed was
//                joined (refused with the result untouched, or joined)
// tests/fuzz/make_corpus.py writes programs in this format.

#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cpu/tile_kernels.hpp"  // internal: every compiled copy of the CPU inner loop (op KERNELS)
#include "cudot.h"
#include "testing.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUDOT_FUZZ_HAVE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CUDOT_FUZZ_HAVE_ASAN 1
#endif
#if defined(CUDOT_FUZZ_HAVE_ASAN)
#include <sanitizer/allocator_interface.h>
#endif

// Hot loops of the harness itself (decoding, the reference, pseudo-random fills) carry no coverage
// instrumentation: libFuzzer's comparison tracing there cost most of the run time and guides nothing.
#if defined(__clang__)
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

#ifndef CUDOT_FUZZ_WITH_CUDA
#define CUDOT_FUZZ_WITH_CUDA 0
#endif

extern "C" const char *cudot_fuzz_status_string(int status);  // c_calls.c

namespace {

constexpr int kSlots = 4;
constexpr std::size_t kMaxN = (std::size_t(1) << 16) + 64;  // largest capacity ever requested successfully
constexpr std::size_t kTile = 8192;                         // the library's tile (src/core/order.hpp), for boundaries
constexpr std::size_t kBudget = std::size_t(1) << 19;       // element-operations per input (keeps runs fast)
constexpr int kMaxOps = 128;
constexpr std::size_t kHugeAllocLimit = std::size_t(1) << 20;  // what a refused huge init may allocate at most
constexpr uint64_t kCanonicalNaN = 0x7ff8000000000000ull;
constexpr uint64_t kMinusZero = 0x8000000000000000ull;
constexpr std::size_t kConfigBuffer = 8192;  // config sizes up to this are backed by readable zeroed memory

bool g_trace = false;
std::string g_allow;  // ",name,name,"

// ---- violations ---------------------------------------------------------------------------------

bool allowed(const char *name);
void violation(const char *name, int line, const char *format, ...) __attribute__((format(printf, 3, 4)));
void violation(const char *name, int line, const char *format, ...) {
    // A tolerated check is reported once per process, not once per input.
    static std::set<std::string> reported;
    if (allowed(name) && !reported.insert(name).second) return;
    std::fprintf(stderr, "cudot_fuzz: contract violation [%s] (cudot_fuzz.cpp:%d): ", name, line);
    va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fputc('\n', stderr);
    if (allowed(name)) return;
    std::fflush(stderr);
    __builtin_trap();
}

bool allowed(const char *name) { return g_allow.find("," + std::string(name) + ",") != std::string::npos; }

#define CHECK(name, cond, ...)                                                 \
    do {                                                                       \
        if (!(cond)) violation(name, __LINE__, __VA_ARGS__);                   \
    } while (0)

void trace(const char *format, ...) __attribute__((format(printf, 1, 2)));
void trace(const char *format, ...) {
    if (!g_trace) return;
    va_list args;
    va_start(args, format);
    std::fputs("  op: ", stderr);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fputc('\n', stderr);
}

const char *sname(cudot_status s) { return cudot_status_string(s); }

uint64_t bits_of(double d) {
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
}

// ---- allocation watch (ASan builds): the largest single allocation while armed --------------------

std::atomic<bool> g_watch{false};
std::atomic<std::size_t> g_largest{0};

#if defined(CUDOT_FUZZ_HAVE_ASAN)
void on_malloc(const volatile void *, std::size_t size) {
    if (!g_watch.load(std::memory_order_relaxed)) return;
    std::size_t seen = g_largest.load(std::memory_order_relaxed);
    while (size > seen && !g_largest.compare_exchange_weak(seen, size, std::memory_order_relaxed)) {
    }
}
void on_free(const volatile void *) {}
#endif

// ---- reading the program --------------------------------------------------------------------------

struct Reader {
    const uint8_t *p;
    std::size_t n;
    std::size_t i = 0;
    bool done() const { return i >= n; }
    uint8_t u8() { return i < n ? p[i++] : 0; }
    uint16_t u16() {
        uint16_t lo = u8();
        return static_cast<uint16_t>(lo | (uint16_t(u8()) << 8));
    }
    uint32_t u32() {
        uint32_t lo = u16();
        return lo | (uint32_t(u16()) << 16);
    }
    uint64_t u64() {
        uint64_t lo = u32();
        return lo | (uint64_t(u32()) << 32);
    }
    uint64_t bytes(std::size_t k) {  // k <= 8 bytes, little-endian
        uint64_t v = 0;
        for (std::size_t j = 0; j < k; ++j) v |= uint64_t(u8()) << (8 * j);
        return v;
    }
};

// ---- element types, decoded independently of the library -----------------------------------------

bool valid_dtype(int32_t d) { return d >= CUDOT_F32 && d <= CUDOT_U8; }
bool is_int(int32_t d) { return d == CUDOT_I8 || d == CUDOT_U8; }
std::size_t elem_size(int32_t d) {
    switch (d) {
        case CUDOT_F64: return 8;
        case CUDOT_F32: return 4;
        case CUDOT_F16:
        case CUDOT_BF16: return 2;
        default: return 1;
    }
}
const char *dname(int32_t d) {
    static const char *names[] = {"?", "F32", "F64", "F16", "BF16", "I8", "U8"};
    return valid_dtype(d) ? names[d] : "?";
}

enum class Kind { Double, Dot2, Exact };
Kind kind_of(int32_t x, int32_t y) {
    if (x == CUDOT_F64 || y == CUDOT_F64) return Kind::Dot2;
    if (is_int(x) && is_int(y)) return Kind::Exact;
    return Kind::Double;
}

NO_COVERAGE double half_to_double(uint16_t h) {
    const int sign = h >> 15, exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
    double v;
    if (exponent == 0)
        v = std::ldexp(static_cast<double>(fraction), -24);
    else if (exponent == 0x1f)
        v = fraction ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else
        v = std::ldexp(static_cast<double>(fraction | 0x400), exponent - 25);
    return sign ? -v : v;
}

NO_COVERAGE double element(int32_t dtype, const uint8_t *buf, std::size_t i) {
    switch (dtype) {
        case CUDOT_F32: {
            float f;
            std::memcpy(&f, buf + 4 * i, 4);
            return f;
        }
        case CUDOT_F64: {
            double d;
            std::memcpy(&d, buf + 8 * i, 8);
            return d;
        }
        case CUDOT_F16: {
            uint16_t h;
            std::memcpy(&h, buf + 2 * i, 2);
            return half_to_double(h);
        }
        case CUDOT_BF16: {
            uint16_t h;
            std::memcpy(&h, buf + 2 * i, 2);
            uint32_t w = uint32_t(h) << 16;
            float f;
            std::memcpy(&f, &w, 4);
            return f;
        }
        case CUDOT_I8: return static_cast<int8_t>(buf[i]);
        default: return buf[i];
    }
}

NO_COVERAGE int64_t int_element(int32_t dtype, const uint8_t *buf, std::size_t i) {
    return dtype == CUDOT_I8 ? int64_t(static_cast<int8_t>(buf[i])) : int64_t(buf[i]);
}

// Interesting bit patterns per type.
const uint64_t kF32Values[] = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x40000000, 0x3f000000, 0x3eaaaaab,
                               0x7f7fffff, 0xff7fffff, 0x00800000, 0x00000001, 0x80000001, 0x007fffff, 0x7f800000,
                               0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x5a0e1bca, 0xda0e1bca, 0x4b800001,
                               0x24e69595, 0x1f800000, 0x5f800000, 0xc0400000};
const uint64_t kF64Values[] = {0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000,
                               0x4000000000000000, 0x3fe0000000000000, 0x3fd5555555555555, 0x7fefffffffffffff,
                               0xffefffffffffffff, 0x0010000000000000, 0x0000000000000001, 0x8000000000000001,
                               0x000fffffffffffff, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000,
                               0xfff8000000000000, 0x7ff0000000000001, 0x4341c37937e08000, 0xc341c37937e08000,
                               0x3ff0000000000001, 0x3ca0000000000000, 0x5fe1ccf385ebc8a0, 0x1de0000000000000,
                               0x7fe0000000000000, 0x4340000000000000, 0x3c9cd2b297d889bc, 0xc008000000000000};
const uint64_t kF16Values[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x4000, 0x3800, 0x3555, 0x7bff, 0xfbff,
                               0x0400, 0x0001, 0x8001, 0x03ff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01,
                               0x6400, 0xe400, 0x1400, 0x3c01, 0xc200};
const uint64_t kBF16Values[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x4000, 0x3f00, 0x3eab, 0x7f7f, 0xff7f,
                                0x0080, 0x0001, 0x8001, 0x007f, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81,
                                0x5a0e, 0xda0e, 0x1f80, 0x5f80, 0x3f81, 0xc040};
const uint64_t kI8Values[] = {0x00, 0x01, 0xff, 0x7f, 0x80, 0x02, 0xfe, 0x64, 0x9c, 0x40, 0xc0, 0x81};
const uint64_t kU8Values[] = {0x00, 0x01, 0xff, 0xfe, 0x80, 0x7f, 0x02, 0x10, 0xc8, 0x03};

template <std::size_t N>
uint64_t pick(const uint64_t (&table)[N], uint8_t code) {
    return table[code % N];
}

// The bits of an element chosen by a value code (raw bytes from the program above 0xDF).
uint64_t value_bits(int32_t dtype, uint8_t code, Reader &in) {
    if (code >= 0xE0) return in.bytes(elem_size(dtype));
    switch (dtype) {
        case CUDOT_F32: return pick(kF32Values, code);
        case CUDOT_F64: return pick(kF64Values, code);
        case CUDOT_F16: return pick(kF16Values, code);
        case CUDOT_BF16: return pick(kBF16Values, code);
        case CUDOT_I8: return pick(kI8Values, code);
        default: return pick(kU8Values, code);
    }
}

NO_COVERAGE uint64_t splitmix(uint64_t &state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Exponent and fraction widths of the floating types.
struct FloatShape {
    int ebits, mbits;
};
NO_COVERAGE FloatShape shape(int32_t dtype) {
    switch (dtype) {
        case CUDOT_F64: return {11, 52};
        case CUDOT_F16: return {5, 10};
        case CUDOT_BF16: return {8, 7};
        default: return {8, 23};
    }
}

// A small integer v (|v| <= 64) in the bits of dtype.
NO_COVERAGE uint64_t small_int_bits(int32_t dtype, int v) {
    switch (dtype) {
        case CUDOT_I8: return static_cast<uint8_t>(static_cast<int8_t>(v));
        case CUDOT_U8: return static_cast<uint8_t>(v < 0 ? -v : v);
        case CUDOT_F64: return bits_of(static_cast<double>(v));
        default: break;
    }
    float f = static_cast<float>(v);
    uint32_t w;
    std::memcpy(&w, &f, 4);
    if (dtype == CUDOT_F32) return w;
    if (dtype == CUDOT_BF16) return w >> 16;  // exact for small integers
    // F16: rebuild sign, exponent and the top 10 fraction bits (exact for |v| <= 2048).
    if (v == 0) return 0;
    uint32_t sign = (w >> 31) << 15;
    int e = static_cast<int>((w >> 23) & 0xff) - 127;
    uint32_t frac = (w >> 13) & 0x3ff;
    return sign | (uint32_t(e + 15) << 10) | frac;
}

// One pseudo-random element of a class.
NO_COVERAGE uint64_t random_bits(int32_t dtype, uint8_t cls, uint64_t &state) {
    uint64_t r = splitmix(state);
    const std::size_t size = elem_size(dtype);
    const uint64_t mask = size == 8 ? ~0ull : ((1ull << (8 * size)) - 1);
    switch (cls % 6) {
        case 0: return r & mask;  // raw bits: NaN and Inf included
        case 1: return small_int_bits(dtype, static_cast<int>(r % 17) - 8);
        case 2:
        case 3: {  // finite values, exponents within +-spread of 1, random signs and fractions
            if (is_int(dtype)) return r & mask;
            FloatShape s = shape(dtype);
            const int bias = (1 << (s.ebits - 1)) - 1;
            const int spread = (cls % 6) == 2 ? 4 : bias - 1;
            int e = bias + static_cast<int>((r >> 8) % uint64_t(2 * spread + 1)) - spread;
            if (e < 1) e = 1;
            if (e > 2 * bias) e = 2 * bias;
            uint64_t frac = splitmix(state) & ((1ull << s.mbits) - 1);
            uint64_t sign = r & 1;
            return (sign << (s.ebits + s.mbits)) | (uint64_t(e) << s.mbits) | frac;
        }
        case 4: return small_int_bits(dtype, (r & 1) ? 1 : -1);
        default: {  // mostly ones, some large magnitudes of either sign (cancellation)
            if ((r & 7) != 0) return small_int_bits(dtype, 1);
            if (is_int(dtype)) return (r >> 8) & mask;
            FloatShape s = shape(dtype);
            const int bias = (1 << (s.ebits - 1)) - 1;
            int e = bias + static_cast<int>((r >> 8) % uint64_t(bias));
            uint64_t sign = (r >> 4) & 1;
            return (sign << (s.ebits + s.mbits)) | (uint64_t(e) << s.mbits) | ((r >> 20) & ((1ull << s.mbits) - 1));
        }
    }
}

// ---- the exact reference: a fixed-point accumulator over every product of two doubles -------------

// Digit k (32 bits, kept in an int64 so that additions need no immediate carry) weighs 2^(32k + kEmin).
// The smallest product of two doubles is 2^-2148, the largest below 2^2048; n <= 2^17 adds 17 bits.
class ExactSum {
   public:
    static constexpr int kEmin = -2272;
    static constexpr int kDigits = 148;

    void clear() { std::memset(d_, 0, sizeof d_); }
    ExactSum() { clear(); }

    // Adds sign * m * 2^e, m < 2^128.
    NO_COVERAGE void add(unsigned __int128 m, int e, bool negative) {
        if (m == 0) return;
        const int b = e - kEmin;
        const int k = b >> 5, s = b & 31;
        for (int j = 0; j < 4; ++j) {
            uint64_t c = static_cast<uint64_t>(m >> (32 * j)) & 0xffffffffull;
            if (!c) continue;
            uint64_t v = c << s;
            int64_t lo = static_cast<int64_t>(v & 0xffffffffull), hi = static_cast<int64_t>(v >> 32);
            if (negative) {
                d_[k + j] -= lo;
                d_[k + j + 1] -= hi;
            } else {
                d_[k + j] += lo;
                d_[k + j + 1] += hi;
            }
        }
    }

    // Splits a finite double into integer significand and exponent: v = m * 2^e.
    NO_COVERAGE static void split(double v, uint64_t &m, int &e, bool &negative) {
        uint64_t b = bits_of(v);
        negative = (b >> 63) != 0;
        int exponent = static_cast<int>((b >> 52) & 0x7ff);
        uint64_t fraction = b & ((1ull << 52) - 1);
        if (exponent == 0) {
            m = fraction;
            e = -1074;
        } else {
            m = fraction | (1ull << 52);
            e = exponent - 1075;
        }
    }

    NO_COVERAGE void add_product(double a, double b) {
        uint64_t ma, mb;
        int ea, eb;
        bool na, nb;
        split(a, ma, ea, na);
        split(b, mb, eb, nb);
        add(static_cast<unsigned __int128>(ma) * mb, ea + eb, na != nb);
    }
    NO_COVERAGE void add_double(double a, bool subtract) {
        uint64_t m;
        int e;
        bool neg;
        split(a, m, e, neg);
        add(m, e, neg != subtract);
    }

    // The value, to about 64 bits (long double), after carrying. Exact zero is reported as 0.
    NO_COVERAGE long double value() const {
        int64_t t[kDigits];
        std::memcpy(t, d_, sizeof t);
        carry(t);
        bool negative = t[kDigits - 1] < 0;
        if (negative) {
            for (int i = 0; i < kDigits; ++i) t[i] = -t[i];
            carry(t);
        }
        int top = kDigits - 1;
        while (top >= 0 && t[top] == 0) --top;
        if (top < 0) return 0.0L;
        long double v = 0;
        for (int i = top; i >= 0 && i >= top - 3; --i) v += std::ldexp(static_cast<long double>(t[i]), 32 * i + kEmin);
        return negative ? -v : v;
    }

    NO_COVERAGE bool is_zero() const {
        int64_t t[kDigits];
        std::memcpy(t, d_, sizeof t);
        carry(t);
        for (int i = 0; i < kDigits; ++i)
            if (t[i]) return false;
        return true;
    }

   private:
    NO_COVERAGE static void carry(int64_t *t) {
        for (int i = 0; i + 1 < kDigits; ++i) {
            int64_t c = t[i] >> 32;  // floor division by 2^32
            t[i] -= c * (int64_t(1) << 32);
            t[i + 1] += c;
        }
    }
    int64_t d_[kDigits];
};

// ---- the contexts ----------------------------------------------------------------------------------

struct Slot {
    cudot_ctx *ctx = nullptr;
    std::size_t cap = 0;
    int32_t dx = CUDOT_F32, dy = CUDOT_F32;
    std::size_t ex = 4, ey = 4;
    uint8_t *x = nullptr, *y = nullptr;
    std::vector<uint8_t> sx, sy;  // what the harness wrote (shadows of the library's buffers)
    bool kx = false, ky = false;  // every element of x / y written since init
    std::map<std::size_t, uint64_t> results;  // n -> bits of the dot, for the current contents
    std::string error;  // what cudot_last_error(ctx) must return
};

struct State {
    Slot slot[kSlots];
    std::size_t budget = kBudget;
    bool spend(std::size_t n) {
        if (n > budget) return false;
        budget -= n;
        return true;
    }
};

// The message a failed cudot_init left on this thread; cudot_last_error(NULL) must return it.
std::string g_init_error;

void check_init_error_unchanged(const char *where) {
    const char *m = cudot_last_error(nullptr);
    CHECK("last-error-null", m != nullptr, "cudot_last_error(NULL) returned NULL (%s)", where);
    CHECK("init-error-kept", g_init_error == m,
          "cudot_last_error(NULL) changed without a failed cudot_init (%s): was \"%s\", now \"%s\"", where,
          g_init_error.c_str(), m);
    g_init_error = m;  // if tolerated, follow the library from here on
}

// After a call on a live context: a success leaves the message alone, a failure leaves a non-empty one.
void check_ctx_error(Slot &s, cudot_status status, const char *call, const char *name = "failure-message") {
    const char *m = cudot_last_error(s.ctx);
    CHECK("last-error-null", m != nullptr, "cudot_last_error(ctx) returned NULL after %s", call);
    if (status == CUDOT_OK) {
        CHECK("ctx-error-kept", s.error == m, "a successful %s changed cudot_last_error(ctx) from \"%s\" to \"%s\"",
              call, s.error.c_str(), m);
    } else {
        CHECK(name, m[0] != '\0', "%s failed with %s but cudot_last_error(ctx) is empty", call, sname(status));
    }
    s.error = m;
}

void contents_changed(Slot &s) { s.results.clear(); }

void deinit_slot(Slot &s) {
    if (!s.ctx) return;
    cudot_status st = cudot_deinit(s.ctx);
    CHECK("deinit", st == CUDOT_OK, "cudot_deinit of a live context returned %s", sname(st));
    s = Slot();
}

// ---- the dot check ----------------------------------------------------------------------------------

NO_COVERAGE int64_t integer_dot(const Slot &s, std::size_t n) {
    int64_t sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += int_element(s.dx, s.sx.data(), i) * int_element(s.dy, s.sy.data(), i);
    return sum;
}

// What the floating pairs are checked against: the exact sum of the finite products, S = sum |x_i y_i|
// (long double), and which special products occur.
struct Reference {
    bool nan = false, pos_inf = false, neg_inf = false, underflow = false;
    long double S = 0;
    ExactSum exact;
};

NO_COVERAGE void reference(const Slot &s, std::size_t n, Reference &ref) {
    const uint8_t *x = s.sx.data(), *y = s.sy.data();
    for (std::size_t i = 0; i < n; ++i) {
        const double a = element(s.dx, x, i), b = element(s.dy, y, i);
        const double p = a * b;  // as the library forms it (exact for the Double kind)
        if (std::isnan(p)) {
            ref.nan = true;
        } else if (std::isinf(p)) {
            (p > 0 ? ref.pos_inf : ref.neg_inf) = true;
        } else {
            ref.exact.add_product(a, b);
            const long double ap = std::fabs(static_cast<long double>(a) * static_cast<long double>(b));
            ref.S += ap;
            if (ap != 0 && ap < 0x1p-969L) ref.underflow = true;  // TwoProduct is not exact down there
        }
    }
}

void check_value(Slot &s, std::size_t n, double r, const char *call) {
    const uint64_t rb = bits_of(r);
    CHECK("no-minus-zero", rb != kMinusZero, "%s returned -0.0", call);
    if (std::isnan(r))
        CHECK("canonical-nan", rb == kCanonicalNaN, "%s returned a NaN with bits %016" PRIx64, call, rb);
    if (n == 0) {
        CHECK("empty-dot", rb == 0, "%s over 0 elements returned %a (bits %016" PRIx64 ")", call, r, rb);
        return;
    }
    // Determinism: the same n on the same contents gives the same bits.
    auto it = s.results.find(n);
    if (it != s.results.end())
        CHECK("deterministic", it->second == rb,
              "%s(n=%zu) returned %016" PRIx64 ", earlier %016" PRIx64 " on the same inputs", call, n, rb, it->second);
    else
        s.results[n] = rb;

    if (!s.kx || !s.ky) return;  // contents not fully written: no reference
    // The library must not have written into the inputs.
    CHECK("inputs-untouched", std::memcmp(s.x, s.sx.data(), s.cap * s.ex) == 0 &&
                                  std::memcmp(s.y, s.sy.data(), s.cap * s.ey) == 0,
          "%s changed the input buffers", call);

    const Kind kind = kind_of(s.dx, s.dy);
    if (kind == Kind::Exact) {
        const int64_t sum = integer_dot(s, n);
        const double expected = static_cast<double>(sum);
        CHECK("exact-integer", rb == bits_of(expected),
              "%s %s x %s n=%zu: %.17g, the exact sum is %" PRId64, call, dname(s.dx), dname(s.dy), n, r, sum);
        return;
    }

    Reference ref;
    reference(s, n, ref);
    const bool nan = ref.nan, pos_inf = ref.pos_inf, neg_inf = ref.neg_inf, underflow = ref.underflow;
    const long double S = ref.S;
    ExactSum &exact = ref.exact;
    // Only with S near the top of the double range can a partial sum, or a TwoSum's intermediate s - a,
    // overflow (Double-kind products are below 2^256, so only Dot2 gets there). The Dot2 bound assumes
    // no overflow anywhere: then a finite result is not held to it, and a non-finite one is allowed.
    const bool may_overflow = kind == Kind::Dot2 && S >= 0x1p1021L;
    const char *pair = kind == Kind::Dot2 ? "Dot2" : "Double";
    if (nan || (pos_inf && neg_inf)) {
        CHECK("nan-product", rb == kCanonicalNaN, "%s %s x %s n=%zu: a product is NaN (or +Inf and -Inf meet), got %a",
              call, dname(s.dx), dname(s.dy), n, r);
        return;
    }
    if (pos_inf || neg_inf) {
        const double inf = pos_inf ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
        if (may_overflow)
            CHECK("lone-inf", r == inf || std::isnan(r), "%s %s x %s n=%zu: lone %g with overflowing rest, got %a",
                  call, dname(s.dx), dname(s.dy), n, inf, r);
        else
            CHECK("lone-inf", r == inf, "%s %s x %s n=%zu: a lone %g product, got %a", call, dname(s.dx),
                  dname(s.dy), n, inf, r);
        return;
    }
    if (!std::isfinite(r)) {
        CHECK("finite", may_overflow, "%s %s x %s n=%zu: finite inputs (S = %Lg) gave %a", call, dname(s.dx),
              dname(s.dy), n, S, r);
        return;
    }
    if (may_overflow) return;
    const long double sv = exact.value();
    exact.add_double(r, true);  // now holds s - r, exactly
    if (exact.is_zero()) return;
    const long double err = std::fabs(exact.value());
    const long double u = 0x1p-53L;
    const long double k = static_cast<long double>(n - 1);
    const long double gamma = k * u / (1 - k * u);
    long double bound;
    if (kind == Kind::Dot2)
        bound = u * std::fabs(sv) + gamma * gamma * S + (underflow ? static_cast<long double>(n) * 0x1p-1073L : 0.0L);
    else
        bound = gamma * S;
    bound *= 1 + 0x1p-30L;  // the reference's own roundings (S and the conversions), far below the bound
    CHECK("accuracy", err <= bound,
          "%s %s x %s (%s) n=%zu: result %a, exact %La, error %Lg exceeds the bound %Lg (S = %Lg)", call,
          dname(s.dx), dname(s.dy), pair, n, r, sv, err, bound, S);
}

void do_dot(State &st, Slot &s, std::size_t n, bool whole, bool null_result) {
    if (!st.spend(n)) return;
    const double sentinel = 12345.5;
    double r = sentinel;
    cudot_status status = whole ? cudot_dot(s.ctx, null_result ? nullptr : &r)
                                : cudot_dot_n(s.ctx, n, null_result ? nullptr : &r);
    const char *call = whole ? "cudot_dot" : "cudot_dot_n";
    trace("%s(slot ctx %p, n=%zu%s) -> %s %a", call, static_cast<void *>(s.ctx), n, null_result ? ", NULL" : "",
          sname(status), r);
    const bool valid = !null_result && n <= s.cap;
    if (valid) {
        CHECK("valid-call-ok", status == CUDOT_OK, "%s(n=%zu, capacity %zu) returned %s: %s", call, n, s.cap,
              sname(status), cudot_last_error(s.ctx));
    } else {
        CHECK("invalid-call", status == CUDOT_ERROR_INVALID_ARGUMENT,
              "%s(n=%zu, capacity %zu, result %s) returned %s, not CUDOT_ERROR_INVALID_ARGUMENT", call, n, s.cap,
              null_result ? "NULL" : "given", sname(status));
        CHECK("result-untouched", bits_of(r) == bits_of(sentinel), "failed %s wrote %a into *result", call, r);
    }
    check_ctx_error(s, status, call);
    if (status == CUDOT_OK && !null_result) check_value(s, n, r, call);
}

// ---- operations -----------------------------------------------------------------------------------

const std::size_t kHugeN[] = {SIZE_MAX,
                              SIZE_MAX - 1,
                              SIZE_MAX / 2,
                              SIZE_MAX / 2 + 1,
                              static_cast<std::size_t>(PTRDIFF_MAX),
                              static_cast<std::size_t>(PTRDIFF_MAX) / 2 + 1,
                              static_cast<std::size_t>(PTRDIFF_MAX) / 4 + 1,
                              static_cast<std::size_t>(PTRDIFF_MAX) / 8,
                              static_cast<std::size_t>(PTRDIFF_MAX) / 8 + 1,
                              SIZE_MAX / 8 + 1,
                              SIZE_MAX / 4,
                              std::size_t(1) << 48,
                              std::size_t(1) << 50,
                              std::size_t(1) << 56,
                              (std::size_t(1) << 60) + 7,
                              std::size_t(1) << 62,
                              std::size_t(1) << 63,
                              (std::size_t(1) << 61) + 1};

const int32_t kBadDtype[] = {7, 8, -1, -2, 100, 255, 256, INT32_MIN, INT32_MAX, 0x101, -7, 1 << 16, 0x100, 0x10001,
                             -256, 0x7fffff00};
const int32_t kBadMemory[] = {5, 6, -1, 100, INT32_MIN, INT32_MAX, 0x100, -5, 255, 0x104, 0x10000, -256,
                              7, 0x7fffffff, 1 << 24, 9};
const int32_t kDevice[] = {1, 2, 7, 255, INT32_MAX, -1, -2, -3, INT32_MIN, 16, -1, -1, 0x100, 3, -100, 1 << 20};

int32_t decode_dtype(uint8_t b) { return b < 0xF0 ? b % 7 : kBadDtype[b - 0xF0]; }
int32_t decode_memory(uint8_t b) { return b < 0xF0 ? b % 5 : kBadMemory[b - 0xF0]; }
int32_t decode_device(uint8_t b) { return b < 0xC0 ? 0 : kDevice[(b - 0xC0) % 16]; }

NO_COVERAGE void fill_random(std::vector<uint8_t> &shadow, uint8_t *buf, std::size_t n, int32_t dtype, std::size_t es,
                             uint8_t cls, uint64_t &state) {
    for (std::size_t i = 0; i < n; ++i) {
        uint64_t b = random_bits(dtype, cls, state);
        std::memcpy(shadow.data() + i * es, &b, es);
    }
    if (n) std::memcpy(buf, shadow.data(), n * es);
}

void fill_prng(Slot &s, bool fx, bool fy, uint8_t cls, uint32_t seed) {
    uint64_t state = seed;
    if (fx) {
        fill_random(s.sx, s.x, s.cap, s.dx, s.ex, cls, state);
        s.kx = true;
    }
    if (fy) {
        fill_random(s.sy, s.y, s.cap, s.dy, s.ey, cls, state);
        s.ky = true;
    }
    contents_changed(s);
}

void op_init(State &st, Reader &in) {
    Slot &s = st.slot[in.u8() % kSlots];
    const uint8_t flags = in.u8();
    const uint8_t nmode = in.u8();
    const uint64_t narg = in.u64();
    const uint8_t sizemode = in.u8();
    const uint16_t sizearg = in.u16();
    const int32_t dtype = decode_dtype(in.u8());
    const int32_t ydtype = decode_dtype(in.u8());
    const int32_t memory = decode_memory(in.u8());
    const int32_t device = decode_device(in.u8());
    const uint16_t tailpos = in.u16();
    const uint8_t tailbyte = in.u8();
    const uint8_t fillclass = in.u8();
    const uint32_t fillseed = in.u32();

    deinit_slot(s);

    bool huge = false;
    std::size_t n;
    switch (nmode % 8) {
        case 0:
        case 1: n = narg % 256; break;
        case 2: n = narg % (kMaxN + 1); break;
        case 3: {
            long long v = static_cast<long long>(narg % 9) * kTile + static_cast<long long>((narg >> 8) % 7) - 3;
            n = v < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(v), kMaxN);
            break;
        }
        case 4: n = 0; break;
        case 5:
            n = kHugeN[narg % (sizeof kHugeN / sizeof kHugeN[0])];
            huge = true;
            break;
        case 6:
            n = narg | (uint64_t(1) << 48);
            huge = true;
            break;
        default: n = narg % 17; break;
    }

    // The config, in a zeroed buffer large enough for any size we pass.
    alignas(8) static uint8_t buffer[kConfigBuffer];
    std::memset(buffer, 0, sizeof buffer);
    bool null_config = false;
    uint32_t size = sizeof(cudot_config);
    switch (sizemode % 12) {
        case 4: size = 16; break;
        case 5: size = 17 + sizearg % 3; break;
        case 6: size = sizearg % 16; break;
        case 7: size = 21 + sizearg % 64; break;
        case 8: size = 4096; break;
        case 9: size = 4097 + sizearg % (kConfigBuffer - 4096); break;
        case 10: size = sizearg % (kConfigBuffer + 1); break;
        case 11: null_config = true; break;
        default: break;
    }
    cudot_config cfg{size, dtype, memory, device, ydtype};
    std::memcpy(buffer, &cfg, sizeof cfg);
    bool tail_set = false;
    if (tailbyte && size > sizeof(cudot_config)) {
        buffer[sizeof(cudot_config) + tailpos % (size - sizeof(cudot_config))] = tailbyte;
        tail_set = true;
    }

    // What the contract allows. `must`: reasons the call has to fail; `may`: statuses tolerated.
    unsigned must = 0, may = 0;
    auto bit = [](cudot_status s) { return 1u << s; };
    const bool null_out = flags & 1;
    if (null_out) must |= bit(CUDOT_ERROR_INVALID_ARGUMENT);

    int32_t rx = CUDOT_F32, ry = CUDOT_F32, rmem = CUDOT_MEMORY_AUTO, rdev = 0;
    bool config_ok = true;
    if (!null_config) {
        if (size < 16 || (size > 16 && size < 20) || (size > 20 && size < 24) || (size > 24 && size < 32) ||
            (size > 32 && size < 40) || size > 4096) {
            // cudot.h: sizes below 16, 17..19 (ending inside y_dtype), 21..23 (inside wait_ms), 25..31
            // (inside rows), 33..39 (inside mode or reserved) and above 4096 are invalid.
            must |= bit(CUDOT_ERROR_INVALID_ARGUMENT);
            config_ok = false;
            // Whether the other fields are still looked at is not specified: allow what they would give.
            may |= bit(CUDOT_ERROR_UNSUPPORTED);
        } else {
            if (tail_set) must |= bit(CUDOT_ERROR_UNSUPPORTED);
            rx = dtype == 0 ? CUDOT_F32 : dtype;
            if (!valid_dtype(rx)) {
                must |= bit(CUDOT_ERROR_INVALID_ARGUMENT);
                config_ok = false;
            }
            ry = rx;
            if (size >= 20) {  // a 16-byte (version 1.0) config has no y_dtype: "same as dtype"
                if (ydtype != 0) ry = ydtype;
                if (!valid_dtype(ry)) {
                    must |= bit(CUDOT_ERROR_INVALID_ARGUMENT);
                    config_ok = false;
                }
            }
            rmem = memory;
            if (memory < CUDOT_MEMORY_AUTO || memory > CUDOT_MEMORY_HOST) {
                must |= bit(CUDOT_ERROR_INVALID_ARGUMENT);
                config_ok = false;
            }
            rdev = device;
            // cudot.h: -1 is CUDOT_DEVICE_ALL (every GPU); devices below it are refused, but AUTO also
            // "ignores" the device without a GPU.
            if (rmem != CUDOT_MEMORY_HOST && device < CUDOT_DEVICE_ALL) {
                if (rmem == CUDOT_MEMORY_AUTO && !CUDOT_FUZZ_WITH_CUDA) {
                    may |= bit(CUDOT_ERROR_INVALID_ARGUMENT);
                } else {
                    must |= bit(CUDOT_ERROR_INVALID_ARGUMENT);
                    config_ok = false;
                }
            }
        }
    }
    const bool gpu_strategy = rmem == CUDOT_MEMORY_PINNED || rmem == CUDOT_MEMORY_MAPPED || rmem == CUDOT_MEMORY_MANAGED;
    if (config_ok && gpu_strategy) {
        if (!CUDOT_FUZZ_WITH_CUDA) {
            must |= bit(CUDOT_ERROR_NO_DEVICE);
            if (rdev != 0) may |= bit(CUDOT_ERROR_INVALID_ARGUMENT);  // out-of-range ordinal
        } else {
            may |= bit(CUDOT_ERROR_NO_DEVICE) | bit(CUDOT_ERROR_INVALID_ARGUMENT) | bit(CUDOT_ERROR_UNSUPPORTED) |
                   bit(CUDOT_ERROR_CUDA) | bit(CUDOT_ERROR_OUT_OF_MEMORY);
        }
    }
    if (huge) {
        // Any element size: at least 2^48 bytes, beyond any machine's memory.
        const std::size_t es = std::max(elem_size(rx), elem_size(ry));
        if (valid_dtype(rx) && valid_dtype(ry) && n > SIZE_MAX / es) {
            must |= bit(CUDOT_ERROR_INVALID_ARGUMENT);
        } else {
            must |= bit(CUDOT_ERROR_OUT_OF_MEMORY);
            may |= bit(CUDOT_ERROR_INVALID_ARGUMENT);  // beyond PTRDIFF_MAX
        }
        if (gpu_strategy) may |= bit(CUDOT_ERROR_NO_DEVICE);
    }

    cudot_ctx *sentinel = reinterpret_cast<cudot_ctx *>(uintptr_t(0x10));
    cudot_ctx *ctx = sentinel;
    g_largest.store(0);
    g_watch.store(huge);
    cudot_status status = cudot_init(null_out ? nullptr : &ctx, n, null_config ? nullptr : reinterpret_cast<const cudot_config *>(buffer));
    g_watch.store(false);
    trace("cudot_init(%s, n=%zu, config %s size=%u dtype=%d y_dtype=%d memory=%d device=%d tail=%s) -> %s",
          null_out ? "NULL" : "&ctx", n, null_config ? "NULL" : "given", size, dtype, ydtype, memory, device,
          tail_set ? "set" : "zero", sname(status));

    CHECK("status-range", status >= CUDOT_OK && status <= CUDOT_ERROR_INTERNAL, "cudot_init returned %d",
          static_cast<int>(status));
    if (must) {
        CHECK("init-must-fail", status != CUDOT_OK && (bit(status) & (must | may)),
              "cudot_init(n=%zu, size=%u, dtype=%d, y_dtype=%d, memory=%d, device=%d, tail=%d, out %s) returned %s "
              "(allowed mask %#x): %s",
              n, size, dtype, ydtype, memory, device, tail_set, null_out ? "NULL" : "given", sname(status),
              must | may, cudot_last_error(nullptr));
    } else {
        CHECK("init-valid", status == CUDOT_OK || (bit(status) & may),
              "cudot_init(n=%zu, size=%u, dtype=%d, y_dtype=%d, memory=%d, device=%d) returned %s: %s", n, size,
              dtype, ydtype, memory, device, sname(status), cudot_last_error(nullptr));
    }
    if (huge)
        CHECK("huge-no-alloc", g_largest.load() <= kHugeAllocLimit,
              "cudot_init(n=%zu) allocated %zu bytes in one piece before refusing", n, g_largest.load());

    if (status != CUDOT_OK) {
        if (!null_out) CHECK("null-ctx-on-failure", ctx == nullptr, "failed cudot_init left *ctx = %p", static_cast<void *>(ctx));
        const char *m = cudot_last_error(nullptr);
        CHECK("last-error-null", m != nullptr, "cudot_last_error(NULL) returned NULL");
        CHECK("failure-message", m[0] != '\0', "cudot_init failed with %s and left no message", sname(status));
        g_init_error = m;
        return;
    }
    if (null_out || huge || ctx == nullptr || ctx == sentinel || n > kMaxN) {
        // Already reported (if tolerated): do not use the context.
        CHECK("init-result", false, "cudot_init succeeded with ctx %p for n=%zu", static_cast<void *>(ctx), n);
        if (!null_out && ctx && ctx != sentinel) cudot_deinit(ctx);
        return;
    }
    check_init_error_unchanged("after a successful cudot_init");

    s.ctx = ctx;
    s.cap = n;
    CHECK("fresh-error", cudot_last_error(ctx) && cudot_last_error(ctx)[0] == '\0',
          "a new context has cudot_last_error(ctx) = \"%s\"", cudot_last_error(ctx));
    s.error = cudot_last_error(ctx);

    int32_t qmem = -100, qdev = -100, qx = -100, qy = -100;
    std::size_t qcap = 12345;
    CHECK("getter-ok", cudot_get_memory(ctx, &qmem, &qdev) == CUDOT_OK, "cudot_get_memory failed");
    CHECK("getter-ok", cudot_get_dtypes(ctx, &qx, &qy) == CUDOT_OK, "cudot_get_dtypes failed");
    CHECK("getter-ok", cudot_get_capacity(ctx, &qcap) == CUDOT_OK, "cudot_get_capacity failed");
    CHECK("capacity", qcap == n, "cudot_get_capacity = %zu, init asked for %zu", qcap, n);
    if (!CUDOT_FUZZ_WITH_CUDA || rmem == CUDOT_MEMORY_HOST)
        CHECK("memory", qmem == CUDOT_MEMORY_HOST && qdev == CUDOT_DEVICE_NONE,
              "without a GPU the context reports memory %d device %d (HOST = 4, NONE = -2)", qmem, qdev);
    else
        CHECK("memory", qmem >= CUDOT_MEMORY_PINNED && qmem <= CUDOT_MEMORY_HOST, "memory %d", qmem);
    CHECK("dtypes", qx == rx && qy == ry, "context dtypes %d/%d, expected %d/%d", qx, qy, rx, ry);
    s.dx = valid_dtype(qx) ? qx : rx;
    s.dy = valid_dtype(qy) ? qy : rx;
    s.ex = elem_size(s.dx);
    s.ey = elem_size(s.dy);

    void *px = nullptr, *py = nullptr;
    cudot_status gi = cudot_get_inputs(ctx, &px, &py);
    CHECK("getter-ok", gi == CUDOT_OK, "cudot_get_inputs returned %s", sname(gi));
    CHECK("inputs", px && py && (reinterpret_cast<uintptr_t>(px) % 64) == 0 && (reinterpret_cast<uintptr_t>(py) % 64) == 0,
          "cudot_get_inputs gave %p, %p (non-NULL and 64-byte aligned expected)", px, py);
    if (!px || !py) {  // tolerated: cannot go on with this context
        deinit_slot(s);
        return;
    }
    s.x = static_cast<uint8_t *>(px);
    s.y = static_cast<uint8_t *>(py);
    s.sx.assign(n * s.ex, 0);
    s.sy.assign(n * s.ey, 0);
    s.kx = s.ky = false;
    if (!(flags & 2) && st.spend(n)) fill_prng(s, true, true, fillclass, fillseed);
}

void op_fill(State &st, Reader &in) {
    Slot &s = st.slot[in.u8() % kSlots];
    uint8_t which = in.u8() & 3;
    if (!which) which = 3;
    const bool fx = which & 1, fy = which & 2;
    const uint8_t mode = in.u8() % 5;
    // Read the arguments even when the slot is empty, so the program stays aligned.
    auto for_each = [&](auto &&body) {
        if (fx) body(s.sx, s.x, s.dx, s.ex, s.kx);
        if (fy) body(s.sy, s.y, s.dy, s.ey, s.ky);
    };
    switch (mode) {
        case 0: {  // RAW
            const uint16_t start = in.u16(), count = in.u16();
            const std::size_t len = in.u8() % 32 + 1;
            uint8_t pattern[32];
            for (std::size_t i = 0; i < len; ++i) pattern[i] = in.u8();
            if (!s.ctx || s.cap == 0 || !st.spend(s.cap)) return;
            const std::size_t first = start % s.cap;
            const std::size_t last = count == 0 ? s.cap : std::min(s.cap, first + count);
            trace("fill raw slot %p [%zu, %zu) which=%d", static_cast<void *>(s.ctx), first, last, which);
            for_each([&](std::vector<uint8_t> &shadow, uint8_t *buf, int32_t, std::size_t es, bool &known) NO_COVERAGE {
                for (std::size_t b = first * es, j = 0; b < last * es; ++b, ++j) shadow[b] = pattern[j % len];
                std::memcpy(buf + first * es, shadow.data() + first * es, (last - first) * es);
                if (first == 0 && last == s.cap) known = true;
            });
            break;
        }
        case 1: {  // POINTS
            const int k = in.u8() % 16 + 1;
            for (int j = 0; j < k; ++j) {
                const uint16_t index = in.u16();
                const uint8_t code = in.u8();
                // The raw bytes of a code >= 0xE0 belong to x's type, or y's when only y is written.
                const int32_t dtype = s.ctx ? (fx ? s.dx : s.dy) : CUDOT_F32;
                const uint64_t bx = value_bits(dtype, code, in);
                if (!s.ctx || s.cap == 0) continue;
                const std::size_t i = index % s.cap;
                for_each([&](std::vector<uint8_t> &shadow, uint8_t *buf, int32_t d, std::size_t es, bool &) NO_COVERAGE {
                    uint64_t b = d == dtype ? bx : value_bits(d, code < 0xE0 ? code : code % 0xE0, in);
                    std::memcpy(shadow.data() + i * es, &b, es);
                    std::memcpy(buf + i * es, &b, es);
                });
            }
            trace("fill %d points slot %p which=%d", k, static_cast<void *>(s.ctx), which);
            break;
        }
        case 2: {  // CONST
            const uint8_t code = in.u8();
            const int32_t dtype = s.ctx ? (fx ? s.dx : s.dy) : CUDOT_F32;
            const uint64_t bx = value_bits(dtype, code, in);
            if (!s.ctx || !st.spend(s.cap)) return;
            trace("fill const slot %p which=%d", static_cast<void *>(s.ctx), which);
            for_each([&](std::vector<uint8_t> &shadow, uint8_t *buf, int32_t d, std::size_t es, bool &known) NO_COVERAGE {
                uint64_t b = d == dtype ? bx : value_bits(d, code < 0xE0 ? code : code % 0xE0, in);
                for (std::size_t i = 0; i < s.cap; ++i) std::memcpy(shadow.data() + i * es, &b, es);
                if (s.cap) std::memcpy(buf, shadow.data(), s.cap * es);
                known = true;
            });
            break;
        }
        case 3: {  // PRNG
            const uint8_t cls = in.u8();
            const uint32_t seed = in.u32();
            if (!s.ctx || !st.spend(s.cap)) return;
            trace("fill prng class %d slot %p which=%d", cls % 6, static_cast<void *>(s.ctx), which);
            fill_prng(s, fx, fy, cls, seed);
            break;
        }
        default: {  // MIRROR: second half = first half with y negated, so the exact dot cancels to 0
            if (!s.ctx || !s.kx || !s.ky || !st.spend(s.cap)) return;
            trace("fill mirror slot %p", static_cast<void *>(s.ctx));
            const std::size_t h = s.cap / 2;
            for (std::size_t i = 0; i < h; ++i) {
                std::memcpy(s.sx.data() + (h + i) * s.ex, s.sx.data() + i * s.ex, s.ex);
                uint64_t b = 0;
                std::memcpy(&b, s.sy.data() + i * s.ey, s.ey);
                if (s.dy == CUDOT_I8) {
                    const int v = static_cast<int8_t>(b);
                    b = static_cast<uint8_t>(static_cast<int8_t>(v == -128 ? 127 : -v));  // -(-128) is not an I8
                } else if (s.dy != CUDOT_U8) {  // (U8 cannot be negated: the copy doubles the dot instead)
                    b ^= 1ull << (8 * s.ey - 1);  // flip the sign bit
                }
                std::memcpy(s.sy.data() + (h + i) * s.ey, &b, s.ey);
            }
            if (s.cap) {
                std::memcpy(s.x, s.sx.data(), s.cap * s.ex);
                std::memcpy(s.y, s.sy.data(), s.cap * s.ey);
            }
            break;
        }
    }
    if (s.ctx) contents_changed(s);
}

std::size_t decode_dot_n(Slot &s, uint8_t mode, uint16_t arg) {
    switch (mode % 8) {
        case 0: return arg % (s.cap + 1);
        case 1: return s.cap;
        case 2: return s.cap + 1 + (arg & 0xff);
        case 3: return SIZE_MAX - (arg & 0xff);
        case 4: return 0;
        case 5: {
            long long v = static_cast<long long>(arg % 9) * kTile + static_cast<long long>((arg >> 8) % 7) - 3;
            return v < 0 ? 0 : static_cast<std::size_t>(v);
        }
        case 6: return std::size_t(1) << (arg % 64);
        default: return s.cap - (arg % (s.cap + 1));
    }
}

// cudot.h / ACCURACY.md: a caller that switched on flush-to-zero, denormals-are-zero or another rounding
// mode gets the same bits, and its own mode is restored on return. flags: 0x10 FTZ, 0x20 DAZ, 0xC0 the
// rounding mode.
void dot_in_caller_fp_env(State &st, Slot &s, uint8_t flags) {
#if defined(__x86_64__) || defined(__i386__)
    if (!st.spend(2 * s.cap)) return;
    const unsigned mode = 0x1f80u | ((flags & 0x10) ? 0x8000u : 0u) | ((flags & 0x20) ? 0x40u : 0u) |
                          (static_cast<unsigned>((flags >> 6) & 3) << 13);
    double r = 0;
    const unsigned saved = _mm_getcsr();
    _mm_setcsr(mode);
    const cudot_status status = cudot_dot(s.ctx, &r);
    const unsigned after = _mm_getcsr();
    _mm_setcsr(saved);
    trace("cudot_dot with MXCSR %#x -> %s %a", mode, sname(status), r);
    CHECK("fp-env-restored", (after & ~0x3fu) == mode, "cudot_dot left MXCSR %#x, the caller had %#x", after, mode);
    CHECK("valid-call-ok", status == CUDOT_OK, "cudot_dot under MXCSR %#x returned %s", mode, sname(status));
    check_ctx_error(s, status, "cudot_dot (caller FP mode)");
    if (status != CUDOT_OK) return;
    double plain = 0;
    const cudot_status again = cudot_dot(s.ctx, &plain);
    CHECK("valid-call-ok", again == CUDOT_OK, "cudot_dot returned %s", sname(again));
    CHECK("fp-env-independent", again != CUDOT_OK || bits_of(plain) == bits_of(r),
          "cudot_dot under MXCSR %#x gave %a, in the default mode %a", mode, r, plain);
    check_value(s, s.cap, r, "cudot_dot (caller FP mode)");
#else
    do_dot(st, s, s.cap, true, flags & 1);
#endif
}

void op_dot(State &st, Reader &in) {
    Slot &s = st.slot[in.u8() % kSlots];
    const uint8_t flags = in.u8();
    if (!s.ctx || (flags & 2)) {  // NULL context
        double r = 7.25;
        cudot_status status = cudot_dot(nullptr, (flags & 1) ? nullptr : &r);
        trace("cudot_dot(NULL) -> %s", sname(status));
        CHECK("null-ctx", status == CUDOT_ERROR_INVALID_ARGUMENT, "cudot_dot(NULL, ...) returned %s", sname(status));
        CHECK("result-untouched", r == 7.25, "cudot_dot(NULL) wrote %a into *result", r);
        check_init_error_unchanged("after cudot_dot(NULL)");
        return;
    }
    if (flags & 8) {
        dot_in_caller_fp_env(st, s, flags);
        return;
    }
    do_dot(st, s, s.cap, true, flags & 1);
    // dot equals dot_n(capacity)
    if (!(flags & 1) && (flags & 4)) do_dot(st, s, s.cap, false, false);
}

void op_dot_n(State &st, Reader &in) {
    Slot &s = st.slot[in.u8() % kSlots];
    const uint8_t flags = in.u8();
    const uint8_t mode = in.u8();
    const uint16_t arg = in.u16();
    if (!s.ctx) {
        double r = 7.25;
        cudot_status status = cudot_dot_n(nullptr, arg, &r);
        trace("cudot_dot_n(NULL) -> %s", sname(status));
        CHECK("null-ctx", status == CUDOT_ERROR_INVALID_ARGUMENT, "cudot_dot_n(NULL, ...) returned %s", sname(status));
        CHECK("result-untouched", r == 7.25, "cudot_dot_n(NULL) wrote %a into *result", r);
        check_init_error_unchanged("after cudot_dot_n(NULL)");
        return;
    }
    const std::size_t n = decode_dot_n(s, mode, arg);
    if (n > s.cap) {  // refused without reading: costs nothing
        const double sentinel = -3.5;
        double r = sentinel;
        cudot_status status = cudot_dot_n(s.ctx, n, (flags & 1) ? nullptr : &r);
        trace("cudot_dot_n(n=%zu > capacity %zu) -> %s", n, s.cap, sname(status));
        CHECK("invalid-call", status == CUDOT_ERROR_INVALID_ARGUMENT,
              "cudot_dot_n(n=%zu, capacity %zu) returned %s, not CUDOT_ERROR_INVALID_ARGUMENT", n, s.cap,
              sname(status));
        CHECK("result-untouched", bits_of(r) == bits_of(sentinel), "failed cudot_dot_n wrote %a", r);
        check_ctx_error(s, status, "cudot_dot_n beyond capacity");
        return;
    }
    do_dot(st, s, n, false, flags & 1);
}

void op_query(State &st, Reader &in) {
    Slot &s = st.slot[in.u8() % kSlots];
    const uint8_t which = in.u8();
    const uint8_t flags = in.u8();
    cudot_ctx *ctx = (flags & 0x80) ? nullptr : s.ctx;
    const bool live = ctx != nullptr;
    const bool n1 = flags & 1, n2 = flags & 2;
    cudot_status status = CUDOT_OK;
    const char *call = "";
    switch (which % 5) {
        case 0: {
            call = "cudot_get_inputs";
            void *px = reinterpret_cast<void *>(0x20), *py = reinterpret_cast<void *>(0x20);
            status = cudot_get_inputs(ctx, n1 ? nullptr : &px, n2 ? nullptr : &py);
            if (live && status == CUDOT_OK) {
                if (!n1) CHECK("inputs", px == s.x, "cudot_get_inputs moved x: %p, was %p", px, static_cast<void *>(s.x));
                if (!n2) CHECK("inputs", py == s.y, "cudot_get_inputs moved y: %p, was %p", py, static_cast<void *>(s.y));
            }
            break;
        }
        case 1: {
            call = "cudot_get_memory";
            int32_t m = -100, d = -100;
            status = cudot_get_memory(ctx, n1 ? nullptr : &m, n2 ? nullptr : &d);
            if (live && status == CUDOT_OK && !CUDOT_FUZZ_WITH_CUDA) {
                if (!n1) CHECK("memory", m == CUDOT_MEMORY_HOST, "cudot_get_memory: memory %d", m);
                if (!n2) CHECK("memory", d == CUDOT_DEVICE_NONE, "cudot_get_memory: device %d", d);
            }
            break;
        }
        case 2: {
            call = "cudot_get_dtypes";
            int32_t x = -100, y = -100;
            status = cudot_get_dtypes(ctx, n1 ? nullptr : &x, n2 ? nullptr : &y);
            if (live && status == CUDOT_OK) {
                if (!n1) CHECK("dtypes", x == s.dx, "cudot_get_dtypes: x %d, was %d", x, s.dx);
                if (!n2) CHECK("dtypes", y == s.dy, "cudot_get_dtypes: y %d, was %d", y, s.dy);
            }
            break;
        }
        case 3: {
            call = "cudot_get_capacity";
            std::size_t n = 777;
            status = cudot_get_capacity(ctx, n1 ? nullptr : &n);
            if (live && !n1) CHECK("capacity", status == CUDOT_OK && n == s.cap, "cudot_get_capacity: %s, %zu (capacity %zu)",
                                   sname(status), n, s.cap);
            if (live && n1)
                CHECK("invalid-call", status == CUDOT_ERROR_INVALID_ARGUMENT, "cudot_get_capacity(ctx, NULL) returned %s",
                      sname(status));
            if (!live) CHECK("result-untouched", n == 777, "failed cudot_get_capacity wrote %zu", n);
            break;
        }
        default: {
            call = "cudot_last_error";
            const char *m = cudot_last_error(ctx);
            CHECK("last-error-null", m != nullptr, "cudot_last_error returned NULL");
            if (live) CHECK("ctx-error-kept", s.error == m, "cudot_last_error(ctx) = \"%s\", expected \"%s\"", m, s.error.c_str());
            else check_init_error_unchanged("cudot_last_error(NULL)");
            return;
        }
    }
    trace("%s(%s, %s, %s) -> %s", call, live ? "ctx" : "NULL", n1 ? "NULL" : "&a", n2 ? "NULL" : "&b", sname(status));
    if (!live) {
        CHECK("null-ctx", status == CUDOT_ERROR_INVALID_ARGUMENT, "%s(NULL, ...) returned %s", call, sname(status));
        check_init_error_unchanged(call);
    } else {
        if (which % 5 != 3 || !n1) CHECK("valid-call-ok", status == CUDOT_OK, "%s on a live context returned %s", call, sname(status));
        const bool capacity_null = which % 5 == 3 && n1;
        check_ctx_error(s, status, call, capacity_null ? "capacity-null-message" : "failure-message");
    }
    (void)st;
}

void op_hooks(State &st, Reader &in) {
    Slot &s = st.slot[in.u8() % kSlots];
    const unsigned threads = in.u8() % 9;
    const bool parallel = in.u8() & 1;
    if (!s.ctx) return;
    trace("hooks slot %p threads=%u parallel=%d", static_cast<void *>(s.ctx), threads, parallel);
    cudot::testing::set_cpu_threads(s.ctx, threads);
    cudot::testing::set_cpu_always_parallel(s.ctx, parallel);
    (void)st;
}

void op_clone(State &st, Reader &in) {
    const int ia = in.u8() % kSlots, ib = in.u8() % kSlots;
    const int32_t memory = (in.u8() & 1) ? CUDOT_MEMORY_HOST : CUDOT_MEMORY_AUTO;
    const uint16_t karg = in.u16();
    Slot &a = st.slot[ia];
    if (ia == ib || !a.ctx || !a.kx || !a.ky) return;
    Slot &b = st.slot[ib];
    const std::size_t k = karg % (a.cap + 1);
    if (!st.spend(3 * k)) return;
    deinit_slot(b);
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = a.dx;
    cfg.y_dtype = a.dy;
    cfg.memory = memory;
    cudot_ctx *ctx = nullptr;
    cudot_status status = cudot_init(&ctx, k, &cfg);
    trace("clone %zu of %zu elements into a new context -> %s", k, a.cap, sname(status));
    CHECK("init-valid", status == CUDOT_OK && ctx, "cudot_init(n=%zu, %s x %s) for a clone returned %s: %s", k,
          dname(a.dx), dname(a.dy), sname(status), cudot_last_error(nullptr));
    if (status != CUDOT_OK || !ctx) {
        g_init_error = cudot_last_error(nullptr);
        return;
    }
    check_init_error_unchanged("after a successful cudot_init (clone)");
    void *px = nullptr, *py = nullptr;
    cudot_get_inputs(ctx, &px, &py);
    b.ctx = ctx;
    b.cap = k;
    b.dx = a.dx;
    b.dy = a.dy;
    b.ex = a.ex;
    b.ey = a.ey;
    b.x = static_cast<uint8_t *>(px);
    b.y = static_cast<uint8_t *>(py);
    b.sx.assign(a.sx.begin(), a.sx.begin() + k * a.ex);
    b.sy.assign(a.sy.begin(), a.sy.begin() + k * a.ey);
    if (k) {
        std::memcpy(b.x, b.sx.data(), k * b.ex);
        std::memcpy(b.y, b.sy.data(), k * b.ey);
    }
    b.kx = b.ky = true;
    b.error = cudot_last_error(ctx);
    double ra = 1.5, rb = 2.5;
    cudot_status sa = cudot_dot_n(a.ctx, k, &ra);
    cudot_status sb = cudot_dot(b.ctx, &rb);
    CHECK("valid-call-ok", sa == CUDOT_OK && sb == CUDOT_OK, "clone dots returned %s, %s", sname(sa), sname(sb));
    if (sa != CUDOT_OK || sb != CUDOT_OK) return;
    CHECK("prefix-equals-capacity", bits_of(ra) == bits_of(rb),
          "%s x %s: cudot_dot_n(ctx of capacity %zu, %zu) = %a but a context of capacity %zu gives %a", dname(a.dx),
          dname(a.dy), a.cap, k, ra, k, rb);
    check_value(a, k, ra, "cudot_dot_n");
    check_value(b, k, rb, "cudot_dot (clone)");
}

void op_misc(State &st, Reader &in) {
    const uint8_t kind = in.u8();
    const uint32_t value = in.u32();
    (void)st;
    switch (kind % 3) {
        case 0: {
            const int v = static_cast<int>(value % 16) - 4;
            int32_t s = (kind & 0x80) ? static_cast<int32_t>(value) : v;
            // Values outside 0..7 (the range of the enum's values) are legal from C; tolerate the known
            // undefined behaviour of passing them by testing only 0..7 when "status-string-range" is allowed.
            if (allowed("status-string-range")) s &= 7;
            const char *name = cudot_fuzz_status_string(s);
            static const char *names[] = {"CUDOT_OK",
                                          "CUDOT_ERROR_INVALID_ARGUMENT",
                                          "CUDOT_ERROR_OUT_OF_MEMORY",
                                          "CUDOT_ERROR_NO_DEVICE",
                                          "CUDOT_ERROR_UNSUPPORTED",
                                          "CUDOT_ERROR_CUDA",
                                          "CUDOT_ERROR_INTERNAL"};
            CHECK("status-string", name != nullptr, "cudot_status_string(%d) returned NULL", s);
            const char *expected = s >= 0 && s <= 6 ? names[s] : "CUDOT_ERROR_UNKNOWN";
            CHECK("status-string", name && std::strcmp(name, expected) == 0, "cudot_status_string(%d) = \"%s\"", s,
                  name ? name : "(null)");
            break;
        }
        case 1: {
            CHECK("version", cudot_version() == CUDOT_VERSION_NUMBER, "cudot_version() = %u, header %d", cudot_version(),
                  CUDOT_VERSION_NUMBER);
            char expected[32];
            std::snprintf(expected, sizeof expected, "%d.%d.%d", CUDOT_VERSION_MAJOR, CUDOT_VERSION_MINOR,
                          CUDOT_VERSION_PATCH);
            const char *v = cudot_version_string();
            CHECK("version", v && std::strcmp(v, expected) == 0, "cudot_version_string() = \"%s\"", v ? v : "(null)");
            break;
        }
        default: {
            CHECK("deinit", cudot_deinit(nullptr) == CUDOT_OK, "cudot_deinit(NULL) is not CUDOT_OK");
            check_init_error_unchanged("after cudot_deinit(NULL)");
            break;
        }
    }
}

void op_concurrent(State &st, Reader &in) {
    Slot &a = st.slot[in.u8() % kSlots];
    Slot &b = st.slot[in.u8() % kSlots];
    if (!a.ctx || !b.ctx || !st.spend(a.cap + b.cap)) return;
    trace("concurrent dots on %p and %p", static_cast<void *>(a.ctx), static_cast<void *>(b.ctx));
    double ra = 0, rb = 0;
    cudot_status sa = CUDOT_OK, sb = CUDOT_OK;
    std::thread other([&] { sa = cudot_dot(a.ctx, &ra); });
    sb = cudot_dot(b.ctx, &rb);
    other.join();
    CHECK("valid-call-ok", sa == CUDOT_OK && sb == CUDOT_OK, "concurrent dots returned %s, %s", sname(sa), sname(sb));
    if (sa == CUDOT_OK) check_value(a, a.cap, ra, "cudot_dot (thread)");
    if (sb == CUDOT_OK) check_value(b, b.cap, rb, "cudot_dot (concurrent)");
}

// Internal (src/cpu/tile_kernels.hpp): every copy of the CPU inner loop built into the library and runnable
// here (baseline, AVX2+FMA+F16C) must give the same tile partials. Only the widest copy is reachable
// through the API, so the others are called directly on the context's data. NaN partials may differ in
// payload (the result is canonicalized), and a Dot2 partial's error term means nothing once its sum is
// not finite (finish() ignores it), so those compare by class.
void op_kernels(State &st, Reader &in) {
    Slot &s = st.slot[in.u8() % kSlots];
    const uint8_t mode = in.u8();
    const uint16_t arg = in.u16();
    if (!s.ctx || !s.kx || !s.ky) return;
    const std::size_t n = std::min(decode_dot_n(s, mode, arg), s.cap);
    const cudot::cpu::TileKernels *variants[4];
    const int count = cudot::cpu::tile_kernel_variants(variants, 4);
    if (count < 2 || n == 0 || !st.spend(count * n)) return;
    const std::size_t tiles = cudot::order::tile_count(n);
    const Kind kind = kind_of(s.dx, s.dy);
    const std::size_t words = kind == Kind::Dot2 ? 2 : 1;  // 8-byte words per partial
    std::vector<uint64_t> first(tiles * words), other(tiles * words);
    variants[0]->get(s.dx, s.dy, n)(s.sx.data(), s.sy.data(), n, 0, tiles, first.data());
    trace("kernels: %d variants, %s x %s, n=%zu", count, dname(s.dx), dname(s.dy), n);
    auto is_nan = [](uint64_t b) { return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b << 12) != 0; };
    auto finite = [](uint64_t b) { return (b & 0x7ff0000000000000ull) != 0x7ff0000000000000ull; };
    for (int v = 1; v < count; ++v) {
        variants[v]->get(s.dx, s.dy, n)(s.sx.data(), s.sy.data(), n, 0, tiles, other.data());
        for (std::size_t t = 0; t < tiles; ++t) {
            const uint64_t a = first[t * words], b = other[t * words];
            bool same;
            if (kind == Kind::Exact)
                same = a == b;
            else if (is_nan(a) || is_nan(b))
                same = is_nan(a) && is_nan(b);
            else
                same = a == b && (kind != Kind::Dot2 || !finite(a) || first[t * words + 1] == other[t * words + 1]);
            CHECK("kernel-variants", same,
                  "%s x %s n=%zu tile %zu: %s partial %016" PRIx64 "/%016" PRIx64 ", %s partial %016" PRIx64 "/%016" PRIx64,
                  dname(s.dx), dname(s.dy), n, t, variants[0]->isa, a, words > 1 ? first[t * words + 1] : 0,
                  variants[v]->isa, b, words > 1 ? other[t * words + 1] : 0);
            if (!same) return;
        }
    }
}


// The slot's shadow values as caller-owned arrays, laid out with a stride and a misalignment; the result
// must be the bits of a HOST context holding the values the layout reads (n copies of element 0 for a
// stride of 0), and bad requests fail with a status, a message in cudot_last_error(NULL) and *result
// untouched.
struct ArrayLayout {
    std::vector<uint8_t> storage;
    const uint8_t *element0 = nullptr;
    std::vector<uint8_t> read;  // the n values the layout reads, contiguous
};

ArrayLayout lay_out_array(const std::vector<uint8_t> &values, std::size_t size, std::size_t n, uint8_t code) {
    static const int64_t strides[] = {1, -1, 0, 2, -3, 7};
    const int64_t stride = strides[code % 6];
    const std::size_t offset = (code / 6) % 8, step = static_cast<std::size_t>(stride < 0 ? -stride : stride);
    ArrayLayout l;
    l.storage.assign(((n - 1) * step + 1) * size + offset + 64, 0xEE);
    uint8_t *base = l.storage.data() + (64 - reinterpret_cast<uintptr_t>(l.storage.data()) % 64) % 64 + offset;
    uint8_t *e0 = stride < 0 ? base + (n - 1) * step * size : base;
    l.read.resize(n * size);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t from = stride == 0 ? 0 : i;
        std::memcpy(e0 + static_cast<std::ptrdiff_t>(i) * stride * static_cast<std::ptrdiff_t>(size),
                    values.data() + from * size, size);
        std::memcpy(l.read.data() + i * size, values.data() + from * size, size);
    }
    l.element0 = e0;
    return l;
}

// The operands of `a` cut into three segments at offsets chosen from `arg` (segmented rows): each
// segment's result has the bits of cudot_dot_arrays on that segment alone (empty ones: +0.0).
void check_segments(const cudot_arrays &a, std::size_t n, uint16_t arg) {
    const int64_t c1 = static_cast<int64_t>((arg & 0xff) % (n + 1)), c2 = c1 + static_cast<int64_t>((arg >> 8) % (n + 1 - c1));
    const int64_t offsets[4] = {0, c1, c2, static_cast<int64_t>(n)};
    cudot_rows b = CUDOT_ROWS_INIT;
    b.layout = CUDOT_ROWS_SEGMENTED;
    b.count = 3;
    b.x = a.x;
    b.y = a.y;
    b.offsets = offsets;
    b.mode = a.mode;
    double got[3] = {-5.5, -5.5, -5.5};
    const cudot_status status = cudot_dot_rows(&b, got);
    CHECK("segments-ok", status == CUDOT_OK, "segmented rows returned %s: %s", sname(status), cudot_last_error(nullptr));
    if (status != CUDOT_OK) {
        g_init_error = cudot_last_error(nullptr);
        return;
    }
    for (int i = 0; i < 3; ++i) {
        cudot_arrays one = CUDOT_ARRAYS_INIT;  // not `a`, whose size a flag may have cut short
        one.x = a.x;
        one.y = a.y;
        one.mode = a.mode;
        one.n = static_cast<std::size_t>(offsets[i + 1] - offsets[i]);
        one.x.data = static_cast<const uint8_t *>(a.x.data) + offsets[i] * a.x.stride * static_cast<int64_t>(elem_size(a.x.dtype));
        one.y.data = static_cast<const uint8_t *>(a.y.data) + offsets[i] * a.y.stride * static_cast<int64_t>(elem_size(a.y.dtype));
        double want = 0.0;
        const cudot_status alone = one.n > 0 ? cudot_dot_arrays(&one, &want) : CUDOT_OK;
        CHECK("segments-alone-ok", alone == CUDOT_OK, "a segment's own dot returned %s: %s", sname(alone),
              cudot_last_error(nullptr));
        if (alone != CUDOT_OK) {
            g_init_error = cudot_last_error(nullptr);
            return;
        }
        CHECK("segments-bits", bits_of(got[i]) == bits_of(want), "segment %d [%lld, %lld) of n=%zu: rows gave %a, alone %a",
              i, static_cast<long long>(offsets[i]), static_cast<long long>(offsets[i + 1]), n, got[i], want);
    }
}

void op_arrays(State &st, Reader &in) {
    Slot &s = st.slot[in.u8() % kSlots];
    const uint8_t flags = in.u8(), mode = in.u8();
    const uint16_t arg = in.u16();
    const uint8_t xcode = in.u8(), ycode = in.u8();
    if (!s.ctx) return;
    const std::size_t n = std::min(decode_dot_n(s, mode, arg), s.cap);
    if (n == 0 || !st.spend(4 * n)) return;
    static const int64_t strides[] = {1, -1, 0, 2, -3, 7};
    ArrayLayout x = lay_out_array(s.sx, s.ex, n, xcode), y = lay_out_array(s.sy, s.ey, n, ycode);
    cudot_arrays a = CUDOT_ARRAYS_INIT;
    a.n = n;
    a.x.data = (flags & 1) ? nullptr : x.element0;
    a.x.dtype = (flags & 2) ? 0 : s.dx;
    a.x.stride = strides[xcode % 6];
    a.y.data = y.element0;
    a.y.dtype = s.dy;
    a.y.stride = strides[ycode % 6];
    if (flags & 8) a.size -= 1;
    const bool rows = (flags & 16) != 0;
    const bool exact = (flags & 64) != 0;  // rows too: every row's exact dot
    if (exact) a.mode = CUDOT_MODE_EXACT;
    const bool bad = (flags & (1 | 2 | (rows ? 0 : 8))) != 0;
    const double sentinel = -5.5;
    double r = sentinel;
    cudot_status status;
    std::vector<uint8_t> partials;
    if (rows) {
        cudot_rows b = CUDOT_ROWS_INIT;
        b.count = 1;
        b.n = n;
        b.x = a.x;
        b.y = a.y;
        b.mode = a.mode;
        status = cudot_dot_rows(&b, &r);
        if (status == CUDOT_OK && (flags & 32)) check_segments(a, n, arg);
    } else if ((flags & 4) && exact) {
        partials.assign(CUDOT_EXACT_PARTIAL_BYTES, 0);
        status = cudot_tile_partials_arrays(&a, partials.data());
        if (status == CUDOT_OK) {
            std::vector<uint8_t> changed(partials);
            changed[arg % CUDOT_EXACT_PARTIAL_BYTES] ^= static_cast<uint8_t>(xcode | 1);
            double d = sentinel;
            const cudot_status joined = cudot_join_exact_partials(changed.data(), 1, &d);
            CHECK("exact-partial-changed",
                  joined == CUDOT_OK || (joined == CUDOT_ERROR_INVALID_ARGUMENT && bits_of(d) == bits_of(sentinel)),
                  "a changed exact partial gave %s and %a", sname(joined), d);
            if (joined != CUDOT_OK) g_init_error = cudot_last_error(nullptr);  // the refusal's message, as expected
            status = cudot_join_exact_partials(partials.data(), 1, &r);
        }
    } else if (flags & 4) {
        partials.assign(cudot::order::tile_count(n) * CUDOT_PARTIAL_BYTES, 0);
        status = cudot_tile_partials_arrays(&a, partials.data());
        if (status == CUDOT_OK) status = cudot_join_partials(s.dx, s.dy, partials.data(), partials.size() / CUDOT_PARTIAL_BYTES, &r);
    } else {
        status = cudot_dot_arrays(&a, &r);
    }
    trace("arrays %s x %s n=%zu strides %lld, %lld flags %u -> %s", dname(s.dx), dname(s.dy), n,
          static_cast<long long>(a.x.stride), static_cast<long long>(a.y.stride), flags, sname(status));
    if (bad) {
        CHECK("arrays-refused", status == CUDOT_ERROR_INVALID_ARGUMENT,
              "a bad cudot_arrays (flags %u) returned %s, not CUDOT_ERROR_INVALID_ARGUMENT", flags, sname(status));
        CHECK("result-untouched", bits_of(r) == bits_of(sentinel), "a refused dot of arrays wrote %a", r);
        const char *m = cudot_last_error(nullptr);
        CHECK("failure-message", m && m[0] != '\0', "a refused dot of arrays left no message");
        g_init_error = m ? m : "";
        return;
    }
    CHECK("valid-call-ok", status == CUDOT_OK, "cudot_dot_arrays (flags %u) returned %s: %s", flags, sname(status),
          cudot_last_error(nullptr));
    check_init_error_unchanged("after a successful dot of arrays");
    if (status != CUDOT_OK) return;
    // The reference: a HOST context holding the values the layouts read.
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = s.dx;
    cfg.y_dtype = s.dy;
    cfg.memory = CUDOT_MEMORY_HOST;
    cfg.mode = exact ? CUDOT_MODE_EXACT : CUDOT_MODE_CANONICAL;
    cudot_ctx *ref = nullptr;
    if (cudot_init(&ref, n, &cfg) != CUDOT_OK) {
        g_init_error = cudot_last_error(nullptr);
        return;
    }
    void *rx = nullptr, *ry = nullptr;
    cudot_get_inputs(ref, &rx, &ry);
    std::memcpy(rx, x.read.data(), x.read.size());
    std::memcpy(ry, y.read.data(), y.read.size());
    double want = 0;
    const cudot_status ref_status = cudot_dot(ref, &want);
    cudot_deinit(ref);
    CHECK("arrays-bits", ref_status == CUDOT_OK && bits_of(r) == bits_of(want),
          "%s x %s n=%zu strides %lld, %lld%s: cudot_dot_arrays gave %a, a HOST context %a", dname(s.dx), dname(s.dy),
          n, static_cast<long long>(a.x.stride), static_cast<long long>(a.y.stride), exact ? " (exact)" : "", r, want);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    const char *t = std::getenv("CUDOT_FUZZ_TRACE");
    g_trace = t && *t && *t != '0';
    const char *allow = std::getenv("CUDOT_FUZZ_ALLOW");
    g_allow = "," + std::string(allow ? allow : "") + ",";
#if defined(CUDOT_FUZZ_HAVE_ASAN)
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
#endif
    g_init_error = cudot_last_error(nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
    Reader in{data, size};
    State st;
    // Each input starts from the same state, so that a crash input reproduces by itself: a failed
    // cudot_init (NULL out-pointer) leaves a known message in cudot_last_error(NULL).
    const cudot_status primed = cudot_init(nullptr, 0, nullptr);
    CHECK("init-must-fail", primed == CUDOT_ERROR_INVALID_ARGUMENT, "cudot_init(NULL, 0, NULL) returned %s",
          sname(primed));
    g_init_error = cudot_last_error(nullptr);
    CHECK("failure-message", !g_init_error.empty(), "cudot_init(NULL, 0, NULL) left no message");
    for (int ops = 0; ops < kMaxOps && !in.done() && st.budget > 0; ++ops) {
        switch (in.u8() % 12) {
            case 0: op_init(st, in); break;
            case 1: {
                Slot &s = st.slot[in.u8() % kSlots];
                trace("deinit %p", static_cast<void *>(s.ctx));
                if (s.ctx)
                    deinit_slot(s);
                else
                    CHECK("deinit", cudot_deinit(nullptr) == CUDOT_OK, "cudot_deinit(NULL) is not CUDOT_OK");
                break;
            }
            case 2: op_fill(st, in); break;
            case 3: op_dot(st, in); break;
            case 4: op_dot_n(st, in); break;
            case 5: op_query(st, in); break;
            case 6: op_hooks(st, in); break;
            case 7: op_clone(st, in); break;
            case 8: op_misc(st, in); break;
            case 9: op_concurrent(st, in); break;
            case 10: op_kernels(st, in); break;
            default: op_arrays(st, in); break;
        }
    }
    for (Slot &s : st.slot) deinit_slot(s);
    return 0;
}
