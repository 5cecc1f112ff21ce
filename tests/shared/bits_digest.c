/* bits_digest.c - one hash of the bits of many HOST dots on fixed inputs, so that builds for different
 * systems (Linux, Windows with MinGW under wine) and CPUs can be compared: cudot promises the same bits
 * for the same inputs everywhere. CTest runs it in every build against the committed value.
 *
 *   test_bits_digest [EXPECTED]   prints one digest per element-type pair and the total; with EXPECTED
 *                                 (16 hex digits) exits 1 unless the total equals it.
 *
 * Inputs: every pair of the six element types, at sizes from one element to past the thread pool's
 * threshold, filled from a fixed xorshift stream with random bit patterns of each type (finite values
 * of a limited exponent range, so that sums cancel and round without overflowing); cudot_dot and
 * cudot_dot_n on a few prefixes. The hash is FNV-1a over the 64 bits of every result. */
#include <cudot.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static uint64_t state;
static uint64_t next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* A random finite value of the type: random sign and mantissa, the exponent within +-20 of 1.0 (F16:
 * any finite exponent, its range is small), stored in the type's native bits. */
static void fill(int32_t dtype, void *buffer, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = next();
        const uint64_t sign = r >> 63, shift = (r >> 8) % 41; /* exponent offset 0..40, centred below */
        switch (dtype) {
            case CUDOT_F32: {
                const uint32_t bits = (uint32_t)(sign << 31) | (uint32_t)((127 - 20 + shift) << 23) | (uint32_t)(r >> 20 & 0x7fffff);
                memcpy((uint32_t *)buffer + i, &bits, 4);
                break;
            }
            case CUDOT_F64: {
                const uint64_t bits = sign << 63 | (1023 - 20 + shift) << 52 | (next() & 0xfffffffffffffULL);
                memcpy((uint64_t *)buffer + i, &bits, 8);
                break;
            }
            case CUDOT_F16: { /* exponent field 0..30: subnormals included, never Inf or NaN */
                const uint16_t bits = (uint16_t)(sign << 15 | (r >> 20) % 31 << 10 | (r >> 40 & 0x3ff));
                memcpy((uint16_t *)buffer + i, &bits, 2);
                break;
            }
            case CUDOT_BF16: {
                const uint16_t bits = (uint16_t)(sign << 15 | (127 - 20 + shift) << 7 | (r >> 20 & 0x7f));
                memcpy((uint16_t *)buffer + i, &bits, 2);
                break;
            }
            default: /* I8, U8: any byte */
                ((unsigned char *)buffer)[i] = (unsigned char)(r >> 32);
                break;
        }
    }
}

static uint64_t fnv1a_bits(uint64_t hash, uint64_t bits) {
    for (int b = 0; b < 8; ++b) hash = (hash ^ (bits >> (8 * b) & 0xff)) * 0x100000001b3ULL;
    return hash;
}

static uint64_t fnv1a(uint64_t hash, double value) {
    uint64_t bits;
    memcpy(&bits, &value, 8);
    return fnv1a_bits(hash, bits);
}

int main(int argc, char **argv) {
    static const int32_t types[6] = {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_BF16, CUDOT_I8, CUDOT_U8};
    static const char *const names[6] = {"f32", "f64", "f16", "bf16", "i8", "u8"};
    static const size_t sizes[] = {1, 7, 100, 1000, 4097, 65549, 1000003};
    uint64_t total = 0xcbf29ce484222325ULL;
    for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b) {
            uint64_t pair = 0xcbf29ce484222325ULL;
            state = 0x9e3779b97f4a7c15ULL + (uint64_t)(a * 6 + b); /* each pair its own fixed stream */
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
                const size_t n = sizes[s];
                cudot_config config = CUDOT_CONFIG_INIT;
                config.dtype = types[a];
                config.y_dtype = types[b];
                config.memory = CUDOT_MEMORY_HOST;
                cudot_ctx *ctx = NULL;
                void *x, *y;
                if (cudot_init(&ctx, n, &config) != CUDOT_OK || cudot_get_inputs(ctx, &x, &y) != CUDOT_OK) {
                    fprintf(stderr, "bits_digest: %s x %s n=%zu: %s\n", names[a], names[b], n, cudot_last_error(ctx));
                    return 2;
                }
                fill(types[a], x, n);
                fill(types[b], y, n);
                double r = 0;
                if (cudot_dot(ctx, &r) != CUDOT_OK) return 2;
                pair = fnv1a(pair, r);
                for (size_t m = n / 3; m > 0; m /= 5) { /* prefixes: tails that end inside a tile */
                    if (cudot_dot_n(ctx, m, &r) != CUDOT_OK) return 2;
                    pair = fnv1a(pair, r);
                }
                cudot_deinit(ctx);
            }
            printf("bits_digest: %-4s x %-4s %016" PRIx64 "\n", names[a], names[b], pair);
            total = fnv1a_bits(total, pair);
        }
    printf("bits_digest: total %016" PRIx64 "\n", total);
    if (argc > 1) {
        char text[17];
        snprintf(text, sizeof text, "%016" PRIx64, total);
        if (strcmp(text, argv[1]) != 0) {
            printf("bits_digest: FAILED: total %s, expected %s (the same inputs gave other bits)\n", text, argv[1]);
            return 1;
        }
        printf("bits_digest: total matches the expected %s\n", argv[1]);
    }
    return 0;
}
