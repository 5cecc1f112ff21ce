// soak.cpp - cudot-soak: many init/fill/dot/deinit cycles, each result checked, with the process's
// resident memory (and, on a GPU, the device's free memory) compared before and after.
//
//   cudot-soak --memory host|pinned|mapped|managed|auto[,...] --cycles N --n ELEMENTS
//              [--dtype f32|f64|f16|bf16|i8|u8[,...]] [--y-dtype TYPE] [--device D] [--warmup W]
//              [--max-rss-growth-kib K] [--max-device-drop-mib M] [--simulate-leak BYTES] [--trace K]
//
// Lists (comma-separated) are cycled through: cycle i uses memory[i % M] and dtype[(i / M) % D], so
// every combination recurs. Each cycle: cudot_init, fill x and y with small integers (shifted by the
// cycle number, so no cycle sees the previous one's data), cudot_dot and cudot_dot_n(n / 2) compared
// exactly with the integer sums, cudot_deinit.
//
// Memory: measured after the warm-up cycles (default min(500, cycles / 4)), halfway through the rest,
// and after the last cycle; the limits apply to the second half. A leak grows in both halves; what the
// system keeps once after warm-up does not. (Measured on an H100: PINNED, MAPPED and AUTO leave device
// free memory unchanged to the 0.1 MiB over thousands of cycles; with MANAGED contexts of 400 KB it
// swings between 0 and -96 MiB of its starting value with a period of ~8000 cycles, without trend.)
//  - Host: resident set size from /proc/self/statm (Windows: the working set, from GetProcessMemoryInfo;
//    under wine, measured: --simulate-leak 8 fails the 1e5 run as on Linux). Fails when it grew by more than
//    max(1 MiB + 1% of the starting RSS, --max-rss-growth-kib). Why that much: what the library frees,
//    glibc may keep (arena top, free lists, trimmed only past a threshold), so RSS moves by some pages
//    between two measurements even without a leak; 1 MiB covers that for a small process and the 1%
//    covers a large one (the CUDA runtime alone maps hundreds of MiB). A leak shows up well above it:
//    the smallest heap chunk glibc hands out is 32 bytes, so one lost allocation per cycle over the
//    ~50,000 cycles of the second half of the 1e5 CTest run is about 1.5 MiB; every context also owns
//    page-aligned buffers of at least 4 KiB, so losing a whole context costs 8 KiB or more per cycle.
//  - Device (GPU strategies, CUDA builds only): cudaMemGetInfo's free bytes, sampled every 50 cycles.
//    Fails when the lowest reading of the second half is more than 4 MiB (--max-device-drop-mib) below
//    the lowest of the first (MANAGED's pools swing by ~100 MiB, so single readings mislead; a leak
//    lowers the floor, a pool does not). Why 4 MiB: the device allocator works in 2 MiB
//    pages, so two pages is beyond noise, while every PINNED context allocates device buffers and every
//    GPU context a scratch buffer, so a leak of any of them over 5000 cycles costs far more.
// --trace K prints RSS and device free memory every K cycles. --simulate-device-leak BYTES loses a
// cudaMalloc of that size every cycle (the device detector's own check).
// --simulate-leak BYTES loses a malloc of that size every cycle, to show the detector catches it
// (measured: 8 bytes a cycle, in glibc's smallest 32-byte chunk, grows RSS by 7 MiB over the 1e5-cycle
// host run, far past the limit).
// Under AddressSanitizer or ThreadSanitizer the RSS comparison is reported but not enforced (their
// allocators keep freed memory in quarantine on purpose); LeakSanitizer covers leaks there.
//
// Exit status: 0 all cycles right and no growth beyond the thresholds; 1 a failure (message printed);
// 2 bad usage; 77 a GPU strategy was asked for and no usable GPU exists (CTest: skipped).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "windows_h.hpp"
#if defined(_WIN32)
#include <psapi.h>  // after windows.h
#else
#include <unistd.h>
#endif

#include "cudot.h"
#ifdef CUDOT_SOAK_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CUDOT_SOAK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CUDOT_SOAK_SANITIZED 1
#endif
#endif
#ifndef CUDOT_SOAK_SANITIZED
#define CUDOT_SOAK_SANITIZED 0
#endif
// Valgrind holds freed blocks back on purpose too (its free-list quarantine): like the sanitizers, it
// finds leaks itself, so RSS is reported but not enforced under it.
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

namespace {

struct Named {
    const char *name;
    int32_t value;
};
const Named kMemories[] = {{"auto", CUDOT_MEMORY_AUTO},     {"pinned", CUDOT_MEMORY_PINNED}, {"mapped", CUDOT_MEMORY_MAPPED},
                           {"managed", CUDOT_MEMORY_MANAGED}, {"host", CUDOT_MEMORY_HOST}};
const Named kDtypes[] = {{"f32", CUDOT_F32}, {"f64", CUDOT_F64}, {"f16", CUDOT_F16},
                         {"bf16", CUDOT_BF16}, {"i8", CUDOT_I8}, {"u8", CUDOT_U8}};

template <std::size_t N>
bool parse_list(const char *text, const Named (&table)[N], std::vector<int32_t> &out) {
    out.clear();
    std::string s(text);
    std::size_t start = 0;
    for (;;) {
        std::size_t comma = s.find(',', start);
        std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        bool found = false;
        for (const Named &n : table)
            if (item == n.name) {
                out.push_back(n.value);
                found = true;
            }
        if (!found) return false;
        if (comma == std::string::npos) return !out.empty();
        start = comma + 1;
    }
}

const char *name_of(int32_t value, const Named *table, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i)
        if (table[i].value == value) return table[i].name;
    return "?";
}
const char *memory_name(int32_t m) { return name_of(m, kMemories, sizeof kMemories / sizeof kMemories[0]); }
const char *dtype_name(int32_t d) { return name_of(d, kDtypes, sizeof kDtypes / sizeof kDtypes[0]); }

bool parse_size(const char *text, unsigned long long &out) {
    if (!text || !*text) return false;
    char *end = nullptr;
    // Accepts 100000 and 1e5.
    double v = std::strtod(text, &end);
    if (!end || *end != '\0' || !(v >= 0) || v > 1e18 || v != static_cast<double>(static_cast<unsigned long long>(v)))
        return false;
    out = static_cast<unsigned long long>(v);
    return true;
}

std::size_t element_size(int32_t dtype) {
    switch (dtype) {
        case CUDOT_F64: return 8;
        case CUDOT_F32: return 4;
        case CUDOT_F16:
        case CUDOT_BF16: return 2;
        default: return 1;
    }
}

// The element-type encoding of a small integer v (|v| < 2048, v >= 0 for U8), written into p.
void encode(int32_t dtype, int v, unsigned char *p) {
    const float f = static_cast<float>(v);
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    switch (dtype) {
        case CUDOT_F32: std::memcpy(p, &f, 4); break;
        case CUDOT_F64: {
            const double d = v;
            std::memcpy(p, &d, 8);
            break;
        }
        case CUDOT_BF16: {  // the top half of the float: exact for small integers
            const std::uint16_t h = static_cast<std::uint16_t>(bits >> 16);
            std::memcpy(p, &h, 2);
            break;
        }
        case CUDOT_F16: {  // re-biased exponent, top 10 mantissa bits: exact for small integers
            std::uint16_t h = 0;
            if (v != 0) {
                const std::uint32_t sign = bits >> 31, exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
                h = static_cast<std::uint16_t>((sign << 15) | ((exponent - 127 + 15) << 10) | (mantissa >> 13));
            }
            std::memcpy(p, &h, 2);
            break;
        }
        case CUDOT_I8: *reinterpret_cast<std::int8_t *>(p) = static_cast<std::int8_t>(v); break;
        default: *p = static_cast<unsigned char>(v); break;
    }
}

// x[i] = X[(i + shift) % 7], y[i] = Y[i % 5]: small integers, non-negative for U8.
int x_value(int32_t dtype, std::size_t k) { return dtype == CUDOT_U8 ? static_cast<int>(k) : static_cast<int>(k) - 3; }
int y_value(int32_t dtype, std::size_t k) { return dtype == CUDOT_U8 ? static_cast<int>(k) : static_cast<int>(k) - 2; }

// The exact dot of the first m elements, as an integer (the products repeat every 35).
long long expected_dot(int32_t xd, int32_t yd, std::size_t shift, std::size_t m) {
    long long period = 0, head = 0;
    for (std::size_t i = 0; i < 35; ++i) {
        const long long p = static_cast<long long>(x_value(xd, (i + shift) % 7)) * y_value(yd, i % 5);
        period += p;
        if (i < m % 35) head += p;
    }
    return static_cast<long long>(m / 35) * period + head;
}

// One period-aligned block of encoded values per (type, shift), copied over the buffer.
void fill(unsigned char *out, std::size_t n, int32_t dtype, std::size_t period, std::size_t shift, bool is_x) {
    const std::size_t size = element_size(dtype), block = period * 64;
    unsigned char encoded[7 * 64 * 8];
    for (std::size_t i = 0; i < block; ++i)
        encode(dtype, is_x ? x_value(dtype, (i + shift) % period) : y_value(dtype, i % period), encoded + i * size);
    for (std::size_t i = 0; i < n; i += block) std::memcpy(out + i * size, encoded, (n - i < block ? n - i : block) * size);
}

#if defined(_WIN32)
// Windows has no /proc: the working set (the pages resident in memory, what RSS is on Linux) from
// GetProcessMemoryInfo. Under wine this is the Linux RSS of the wine process.
long rss_kib() {
    PROCESS_MEMORY_COUNTERS counters;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) return -1;
    return static_cast<long>(counters.WorkingSetSize / 1024);
}
#else
long rss_kib() {
    std::FILE *f = std::fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size = 0, resident = 0;
    const int got = std::fscanf(f, "%ld %ld", &size, &resident);
    std::fclose(f);
    return got == 2 ? resident * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}
#endif

// Free device memory in MiB, or -1 where it cannot be read (no CUDA in this build, no GPU in use).
double device_free_mib(int32_t device) {
#ifdef CUDOT_SOAK_WITH_CUDA
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return static_cast<double>(free_bytes) / (1024.0 * 1024.0);
#else
    (void)device;
    return -1;
#endif
}

int usage(const char *why) {
    std::fprintf(stderr,
                 "cudot-soak: %s\n"
                 "usage: cudot-soak --memory host|pinned|mapped|managed|auto[,...] --cycles N --n ELEMENTS\n"
                 "                  [--dtype f32|f64|f16|bf16|i8|u8[,...]] [--y-dtype TYPE] [--device D]\n"
                 "                  [--warmup W] [--max-rss-growth-kib K] [--max-device-drop-mib M]\n"
                 "                  [--simulate-leak BYTES] [--simulate-device-leak BYTES] [--trace K]\n",
                 why);
    return 2;
}

struct Options {
    std::vector<int32_t> memories{CUDOT_MEMORY_HOST};
    std::vector<int32_t> dtypes{CUDOT_F32};
    int32_t y_dtype = 0;  // 0: the same as each cycle's dtype
    int32_t device = 0;
    unsigned long long cycles = 0, n = 0;
    long long warmup = -1;  // -1: min(500, cycles / 4)
    double max_rss_growth_kib = -1;
    double max_device_drop_mib = 4;
    unsigned long long simulate_leak = 0;  // bytes lost on purpose per cycle (checks the detector itself)
    unsigned long long simulate_device_leak = 0;  // device bytes lost on purpose per cycle (cudaMalloc)
    unsigned long long trace = 0;  // print RSS and device free memory every `trace` cycles (0: never)
};

void *volatile g_leak_sink;  // keeps the simulated leak from being optimized away

}  // namespace

int main(int argc, char **argv) {
    Options o;
    bool have_cycles = false, have_n = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
        unsigned long long number = 0;
        if (!value) return usage(("missing value after " + arg).c_str());
        ++i;
        if (arg == "--memory") {
            if (!parse_list(value, kMemories, o.memories)) return usage("unknown --memory");
        } else if (arg == "--dtype") {
            if (!parse_list(value, kDtypes, o.dtypes)) return usage("unknown --dtype");
        } else if (arg == "--y-dtype") {
            std::vector<int32_t> one;
            if (!parse_list(value, kDtypes, one) || one.size() != 1) return usage("unknown --y-dtype");
            o.y_dtype = one[0];
        } else if (arg == "--cycles") {
            if (!parse_size(value, o.cycles) || o.cycles == 0) return usage("bad --cycles");
            have_cycles = true;
        } else if (arg == "--n") {
            if (!parse_size(value, o.n)) return usage("bad --n");
            have_n = true;
        } else if (arg == "--device") {
            if (!parse_size(value, number) || number > 1024) return usage("bad --device");
            o.device = static_cast<int32_t>(number);
        } else if (arg == "--warmup") {
            if (!parse_size(value, number)) return usage("bad --warmup");
            o.warmup = static_cast<long long>(number);
        } else if (arg == "--max-rss-growth-kib") {
            if (!parse_size(value, number)) return usage("bad --max-rss-growth-kib");
            o.max_rss_growth_kib = static_cast<double>(number);
        } else if (arg == "--simulate-leak") {
            if (!parse_size(value, o.simulate_leak)) return usage("bad --simulate-leak");
        } else if (arg == "--simulate-device-leak") {
            if (!parse_size(value, o.simulate_device_leak)) return usage("bad --simulate-device-leak");
        } else if (arg == "--trace") {
            if (!parse_size(value, number)) return usage("bad --trace");
            o.trace = static_cast<unsigned long long>(number);
        } else if (arg == "--max-device-drop-mib") {
            if (!parse_size(value, number)) return usage("bad --max-device-drop-mib");
            o.max_device_drop_mib = static_cast<double>(number);
        } else {
            return usage(("unknown option " + arg).c_str());
        }
    }
    if (!have_cycles || !have_n) return usage("--cycles and --n are required");
    const unsigned long long warmup =
        o.warmup >= 0 ? static_cast<unsigned long long>(o.warmup) : (o.cycles / 4 < 500 ? o.cycles / 4 : 500);
    if (warmup >= o.cycles) return usage("--warmup must be below --cycles");

    // A GPU strategy without a GPU is a skip, not a failure; AUTO without a GPU runs as HOST. Each
    // strategy is tried once, which also tells whether device memory is to be watched.
    bool used_gpu = false;
    int32_t gpu_device = o.device;
    for (int32_t m : o.memories) {
        if (m == CUDOT_MEMORY_HOST) continue;
        cudot_config c = CUDOT_CONFIG_INIT;
        c.memory = m;
        c.device = o.device;
        cudot_ctx *ctx = nullptr;
        const cudot_status s = cudot_init(&ctx, 1, &c);
        if (s == CUDOT_ERROR_NO_DEVICE && m != CUDOT_MEMORY_AUTO) {
            std::printf("SKIPPED: --memory %s needs a usable GPU: %s\n", memory_name(m), cudot_last_error(nullptr));
            return 77;
        }
        if (s != CUDOT_OK) {
            std::printf("cudot-soak: FAILED: probing %s: %s: %s\n", memory_name(m), cudot_status_string(s),
                        cudot_last_error(nullptr));
            return 1;
        }
        int32_t resolved = CUDOT_MEMORY_HOST, device = CUDOT_DEVICE_NONE;
        cudot_get_memory(ctx, &resolved, &device);
        if (resolved != CUDOT_MEMORY_HOST) {
            used_gpu = true;
            gpu_device = device;
        }
        cudot_deinit(ctx);
    }

    // Measured after the warm-up, halfway through the rest, and at the end. A leak grows in both halves;
    // the device's own pools (unified memory keeps tens of MiB of page bookkeeping after heavy MANAGED
    // churn, reaching a plateau) only in the first. The limits apply to the second half.
    long rss_start = -1, rss_mid = -1, rss_end = -1;
    double dev_start = -1, dev_mid = -1, dev_end = -1;
    const unsigned long long mid = warmup + (o.cycles - warmup) / 2;
    // Unified memory's pools breathe: free device memory swings by up to ~100 MiB with a period of
    // thousands of MANAGED cycles (measured), so single readings mislead. The lowest free memory seen
    // in each half is compared instead: a leak lowers the floor, a breathing pool does not.
    constexpr unsigned long long kDeviceSampleEvery = 50;
    double dev_low_first = -1, dev_low_second = -1;
    auto t_start = std::chrono::steady_clock::now();
    const std::size_t nm = o.memories.size(), nd = o.dtypes.size();

    for (unsigned long long cycle = 0; cycle < o.cycles; ++cycle) {
        if (cycle == warmup) {
            rss_start = rss_kib();
            if (used_gpu) dev_start = device_free_mib(gpu_device);
            t_start = std::chrono::steady_clock::now();
        }
        if (cycle == mid) {
            rss_mid = rss_kib();
            if (used_gpu) dev_mid = device_free_mib(gpu_device);
        }
        if (used_gpu && cycle >= warmup && cycle % kDeviceSampleEvery == 0) {
            double &low = cycle < mid ? dev_low_first : dev_low_second;
            const double now = device_free_mib(gpu_device);
            if (low < 0 || now < low) low = now;
        }
        if (o.trace && cycle % o.trace == 0)
            std::printf("cudot-soak: trace cycle=%llu rss_kib=%ld device_free_mib=%.1f\n", cycle, rss_kib(),
                        used_gpu ? device_free_mib(gpu_device) : -1.0);
        const int32_t memory = o.memories[cycle % nm];
        const int32_t xd = o.dtypes[(cycle / nm) % nd];
        const int32_t yd = o.y_dtype ? o.y_dtype : xd;
        cudot_config c = CUDOT_CONFIG_INIT;
        c.memory = memory;
        c.dtype = xd;
        c.y_dtype = yd;
        c.device = o.device;
        cudot_ctx *ctx = nullptr;
        cudot_status s = cudot_init(&ctx, static_cast<std::size_t>(o.n), &c);
        if (s != CUDOT_OK) {
            std::printf("cudot-soak: FAILED: cycle %llu: cudot_init(%s, %s): %s: %s\n", cycle, memory_name(memory),
                        dtype_name(xd), cudot_status_string(s), cudot_last_error(nullptr));
            return 1;
        }
        void *x = nullptr, *y = nullptr;
        cudot_get_inputs(ctx, &x, &y);
        const std::size_t n = static_cast<std::size_t>(o.n), shift = cycle % 7;
        fill(static_cast<unsigned char *>(x), n, xd, 7, shift, true);
        fill(static_cast<unsigned char *>(y), n, yd, 5, 0, false);
        double whole = -1, half = -1;
        s = cudot_dot(ctx, &whole);
        cudot_status s_half = s == CUDOT_OK ? cudot_dot_n(ctx, n / 2, &half) : s;
        const double want = static_cast<double>(expected_dot(xd, yd, shift, n));
        const double want_half = static_cast<double>(expected_dot(xd, yd, shift, n / 2));
        if (s != CUDOT_OK || s_half != CUDOT_OK || whole != want || half != want_half) {
            std::printf("cudot-soak: FAILED: cycle %llu (%s, %s x %s, n %zu): %s, dot %.17g (expected %.17g), "
                        "dot_n(%zu) %.17g (expected %.17g): %s\n",
                        cycle, memory_name(memory), dtype_name(xd), dtype_name(yd), n,
                        cudot_status_string(s != CUDOT_OK ? s : s_half), whole, want, n / 2, half, want_half,
                        cudot_last_error(ctx));
            cudot_deinit(ctx);
            return 1;
        }
#ifdef CUDOT_SOAK_WITH_CUDA
        if (o.simulate_device_leak) {
            void *lost = nullptr;
            if (cudaMalloc(&lost, static_cast<std::size_t>(o.simulate_device_leak)) != cudaSuccess) (void)cudaGetLastError();
        }
#endif
        if (o.simulate_leak) {
            void *lost = std::malloc(static_cast<std::size_t>(o.simulate_leak));
            if (lost) std::memset(lost, 1, static_cast<std::size_t>(o.simulate_leak));
            g_leak_sink = lost;
        }
        s = cudot_deinit(ctx);
        if (s != CUDOT_OK) {
            std::printf("cudot-soak: FAILED: cycle %llu: cudot_deinit: %s\n", cycle, cudot_status_string(s));
            return 1;
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    rss_end = rss_kib();
    if (used_gpu) dev_end = device_free_mib(gpu_device);

    const double rss_limit = o.max_rss_growth_kib >= 0 ? o.max_rss_growth_kib : 1024.0 + 0.01 * static_cast<double>(rss_start);
    const long rss_growth = rss_end - rss_mid;
    const bool rss_checked = !CUDOT_SOAK_SANITIZED && !RUNNING_ON_VALGRIND;
    const bool rss_ok = rss_mid >= 0 && rss_end >= 0 && (!rss_checked || rss_growth <= rss_limit);
    if (used_gpu && (dev_low_second < 0 || dev_end < dev_low_second)) dev_low_second = dev_end;
    const double dev_drop = dev_low_first - dev_low_second;
    const bool dev_ok = !used_gpu || dev_low_first < 0 || dev_drop <= o.max_device_drop_mib;

    std::string memories, dtypes;
    for (int32_t m : o.memories) memories += (memories.empty() ? "" : ",") + std::string(memory_name(m));
    for (int32_t d : o.dtypes) dtypes += (dtypes.empty() ? "" : ",") + std::string(dtype_name(d));
    char device_text[160] = "device_free_mib=-/-/-";
    if (used_gpu && dev_start >= 0 && dev_end >= 0)
        std::snprintf(device_text, sizeof device_text,
                      "device_free_mib=%.1f/%.1f/%.1f lowest_first/second_half=%.1f/%.1f drop_mib=%.1f (limit %.1f)",
                      dev_start, dev_mid, dev_end, dev_low_first, dev_low_second, dev_drop, o.max_device_drop_mib);
    std::printf("cudot-soak: memory=%s dtype=%s n=%llu cycles=%llu (measured %llu after %llu warm-up) seconds=%.2f "
                "rss_kib=%ld/%ld/%ld (start/mid/end) second_half_growth_kib=%ld (limit %.0f%s) %s result=%s\n",
                memories.c_str(), dtypes.c_str(), o.n, o.cycles, o.cycles - warmup, warmup, seconds, rss_start, rss_mid,
                rss_end, rss_growth, rss_limit, rss_checked ? "" : ", not enforced under a sanitizer or valgrind",
                device_text, rss_ok && dev_ok ? "PASS" : "FAIL");
    if (!rss_ok) std::printf("cudot-soak: FAILED: resident memory grew by %ld KiB in the second half\n", rss_growth);
    if (!dev_ok)
        std::printf("cudot-soak: FAILED: the lowest free device memory fell by %.1f MiB from the first half to the second\n",
                    dev_drop);
    return rss_ok && dev_ok ? 0 : 1;
}
