// classic.cpp - libcudot_classic: the four functions of the widely copied tutorial DLL, on top of cudot,
// so existing callers work unchanged. Float32 only. The strategy comes from the CUDOT_MEMORY environment
// variable (pinned / mapped / managed / host / auto; unset or empty means auto), read at each init.
//
// These signatures cannot report errors, so: init leaves *p NULL on any failure (including an unknown
// CUDOT_MEMORY value); getInputs on a NULL context writes NULL pointers; dot on a NULL context, or when
// the dot fails, writes NaN. Every other symbol is hidden (cmake/cudot_classic.map).
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cudot.h"

#if defined(_WIN32)
#define CLASSIC_API extern "C" __declspec(dllexport)
#else
#define CLASSIC_API extern "C" __attribute__((visibility("default")))
#endif

typedef cudot_ctx Ctx;  // the tutorial's opaque context type

// ASCII case-insensitive equality (strcasecmp is POSIX only; MSVC spells it _stricmp).
static bool same_word(const char *a, const char *b) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    for (; *a && *b; ++a, ++b)
        if (lower(*a) != lower(*b)) return false;
    return *a == *b;
}

static bool memory_from_environment(int32_t *memory) {
    const char *value = std::getenv("CUDOT_MEMORY");
    if (!value || !*value || same_word(value, "auto")) return *memory = CUDOT_MEMORY_AUTO, true;
    if (same_word(value, "pinned")) return *memory = CUDOT_MEMORY_PINNED, true;
    if (same_word(value, "mapped")) return *memory = CUDOT_MEMORY_MAPPED, true;
    if (same_word(value, "managed")) return *memory = CUDOT_MEMORY_MANAGED, true;
    if (same_word(value, "host")) return *memory = CUDOT_MEMORY_HOST, true;
    return false;
}

CLASSIC_API void init(Ctx **p, size_t n) {
    if (!p) return;
    *p = nullptr;
    cudot_config config = CUDOT_CONFIG_INIT;
    if (!memory_from_environment(&config.memory)) return;
    cudot_init(p, n, &config);  // leaves *p NULL on failure
}

CLASSIC_API void getInputs(Ctx *ctx, float **px, float **py) {
    void *x = nullptr, *y = nullptr;
    if (ctx) cudot_get_inputs(ctx, &x, &y);
    if (px) *px = static_cast<float *>(x);
    if (py) *py = static_cast<float *>(y);
}

CLASSIC_API void dot(Ctx *ctx, float *r) {
    if (!r) return;
    double result = 0.0;
    *r = ctx && cudot_dot(ctx, &result) == CUDOT_OK ? static_cast<float>(result) : std::nanf("");
}

CLASSIC_API void deinit(Ctx *ctx) { cudot_deinit(ctx); }
