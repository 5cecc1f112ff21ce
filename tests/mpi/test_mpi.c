/* test_mpi.c - cudot_mpi_dot under mpirun: for many global vectors (every element type pair, sizes from
 * 0 to 2^20 + 7) and many ways of splitting them over the ranks (even, uneven, empty ranks, pieces
 * smaller than a tile, one rank holding everything), every rank's result must be bitwise equal to
 * cudot_dot of one (HOST) context holding the whole vectors. Then collective error handling. Run with any
 * number of ranks; exits non-zero (on every rank) if any check failed. The same in the exact mode
 * (CUDOT_MODE_EXACT contexts on every rank), against one exact HOST context.
 * The ranks' own contexts are HOST unless the environment says otherwise (GPU machines):
 *   CUDOT_MPI_TEST_MEMORY=pinned|mapped|managed|auto   the strategy of every rank's context
 *   CUDOT_MPI_TEST_GPUS=k                             rank r uses GPU r % k (default 1: GPU 0) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudot_mpi.h"
#include "primary_contexts.h"

static int failures = 0, checks = 0;
static int rank = 0, ranks = 1;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        ++checks;                                                         \
        if (!(cond)) {                                                    \
            ++failures;                                                   \
            fprintf(stderr, "rank %d: FAILED %s: ", rank, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                 \
            fprintf(stderr, "\n");                                        \
        }                                                                 \
    } while (0)

static size_t dtype_size(int32_t d) {
    return d == CUDOT_F64 ? 8 : d == CUDOT_F32 ? 4 : (d == CUDOT_F16 || d == CUDOT_BF16) ? 2 : 1;
}

static uint64_t mix(uint64_t v) { /* a fixed hash: element i of every vector is the same on every rank */
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    v *= 0xc4ceb9fe1a85ec53ULL;
    return v ^ (v >> 33);
}

/* Element i of a global vector of type d: random bits, with Inf/NaN patterns made finite, so sums are
 * meaningful; wide exponent ranges for the float types make cancellation and rounding matter. */
static void element(int32_t d, uint64_t seed, uint64_t i, unsigned char *out) {
    uint64_t h = mix(seed * 0x9e3779b97f4a7c15ULL + i);
    if (d == CUDOT_F64) {
        double v = (double)(int64_t)(h >> 11) * 0x1p-52 * (double)(1ULL << (h % 40));
        memcpy(out, &v, 8);
    } else if (d == CUDOT_F32) {
        float v = (float)((double)(int32_t)(h >> 32) * 0x1p-31 * (double)(1u << (h % 20)));
        memcpy(out, &v, 4);
    } else if (d == CUDOT_F16 || d == CUDOT_BF16) {
        uint16_t b = (uint16_t)h;
        uint16_t exp_mask = d == CUDOT_F16 ? 0x7c00 : 0x7f80;
        if ((b & exp_mask) == exp_mask) b ^= 0x4000;
        memcpy(out, &b, 2);
    } else {
        *out = (unsigned char)h;
    }
}

static void fill(int32_t d, uint64_t seed, uint64_t first, size_t n, unsigned char *p) {
    const size_t s = dtype_size(d);
    for (size_t i = 0; i < n; ++i) element(d, seed, first + i, p + i * s);
}

static int32_t local_memory = CUDOT_MEMORY_HOST, local_device = 0;

static void read_environment(void) {
    const char *m = getenv("CUDOT_MPI_TEST_MEMORY"), *g = getenv("CUDOT_MPI_TEST_GPUS");
    if (m && strcmp(m, "pinned") == 0) local_memory = CUDOT_MEMORY_PINNED;
    else if (m && strcmp(m, "mapped") == 0) local_memory = CUDOT_MEMORY_MAPPED;
    else if (m && strcmp(m, "managed") == 0) local_memory = CUDOT_MEMORY_MANAGED;
    else if (m && strcmp(m, "auto") == 0) local_memory = CUDOT_MEMORY_AUTO;
    const int gpus = g ? atoi(g) : 1;
    local_device = gpus > 0 ? rank % gpus : 0;
}

static int32_t case_mode = CUDOT_MODE_CANONICAL;  /* the mode of every context a case makes */

static cudot_ctx *make_context(size_t n, int32_t xd, int32_t yd, int32_t memory, int32_t device) {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.mode = case_mode;
    c.dtype = xd;
    c.y_dtype = yd;
    c.memory = memory;
    c.device = device;
    cudot_ctx *ctx = NULL;
    if (cudot_init(&ctx, n, &c) != CUDOT_OK) {
        fprintf(stderr, "rank %d: cudot_init(%zu): %s\n", rank, n, cudot_last_error(NULL));
        return NULL;
    }
    return ctx;
}

static cudot_ctx *host_context(size_t n, int32_t xd, int32_t yd) {
    return make_context(n, xd, yd, CUDOT_MEMORY_HOST, 0);
}

static uint64_t bits(double v) {
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

/* Split pattern p of n elements over the ranks: rank r gets [starts[r], starts[r + 1]). */
static void split(int pattern, size_t n, uint64_t seed, size_t *starts) {
    starts[0] = 0;
    starts[ranks] = n;
    for (int r = 1; r < ranks; ++r) {
        size_t cut;
        switch (pattern) {
            case 0: cut = n * (size_t)r / (size_t)ranks; break;                              /* even */
            case 1: cut = (size_t)(mix(seed + (uint64_t)r) % (n + 1)); break;                /* random */
            case 2: /* pieces of 3000 (< a tile) at the end */
                cut = n >= 3000 * (size_t)(ranks - r) ? n - 3000 * (size_t)(ranks - r) : 0;
                break;
            case 3: cut = 0; break;                                                          /* last rank all */
            default: cut = (n / 8192) * 8192 * (size_t)r / (size_t)ranks / 8192 * 8192;     /* tile-aligned */
        }
        starts[r] = cut;
    }
    for (int r = 1; r <= ranks; ++r) /* random cuts come unsorted */
        for (int q = r; q > 0 && starts[q - 1] > starts[q]; --q) {
            size_t t = starts[q];
            starts[q] = starts[q - 1];
            starts[q - 1] = t;
        }
}

static void check_case(int32_t xd, int32_t yd, size_t n, int pattern, uint64_t seed) {
    /* The single-process reference, on every rank. */
    cudot_ctx *whole = host_context(n, xd, yd);
    CHECK(whole != NULL, "reference context");
    if (!whole) return;
    void *wx, *wy;
    cudot_get_inputs(whole, &wx, &wy);
    fill(xd, seed, 0, n, wx);
    fill(yd, seed + 1, 0, n, wy);
    double expected = -1;
    CHECK(cudot_dot(whole, &expected) == CUDOT_OK, "reference dot");
    cudot_deinit(whole);

    size_t *starts = malloc(sizeof(size_t) * (size_t)(ranks + 1));
    split(pattern, n, seed, starts);
    const size_t mine = starts[rank + 1] - starts[rank];
    cudot_ctx *ctx = make_context(mine, xd, yd, local_memory, local_device);
    CHECK(ctx != NULL, "local context");
    if (ctx) {
        void *x, *y;
        cudot_get_inputs(ctx, &x, &y);
        fill(xd, seed, starts[rank], mine, x);
        fill(yd, seed + 1, starts[rank], mine, y);
    }
    double r = -1;
    const cudot_status s = cudot_mpi_dot(ctx, MPI_COMM_WORLD, &r);
    CHECK(s == CUDOT_OK, "mode %d, types %d x %d, n %zu, pattern %d: %s", (int)case_mode, xd, yd, n, pattern,
          cudot_mpi_last_error());
    CHECK(bits(r) == bits(expected),
          "mode %d, types %d x %d, n %zu, pattern %d, rank holds [%zu, %zu): %.17g, expected %.17g", (int)case_mode, xd,
          yd, n, pattern, starts[rank], starts[rank + 1], r, expected);
    cudot_deinit(ctx);
    free(starts);
}

static void check_errors(void) {
    /* One rank with different element types: every rank is told. */
    cudot_ctx *ctx = host_context(1000, rank == ranks - 1 && ranks > 1 ? CUDOT_F64 : CUDOT_F32, 0);
    double r = 7;
    cudot_status s = cudot_mpi_dot(ctx, MPI_COMM_WORLD, &r);
    if (ranks > 1) {
        CHECK(s == CUDOT_ERROR_INVALID_ARGUMENT, "mismatched types gave %s", cudot_status_string(s));
        CHECK(strstr(cudot_mpi_last_error(), "element types") != NULL, "message: %s", cudot_mpi_last_error());
        CHECK(r == 7, "result untouched");
    }
    /* One rank passes NULL for the result: every rank fails, none hangs. */
    s = cudot_mpi_dot(ctx, MPI_COMM_WORLD, rank == 0 ? NULL : &r);
    CHECK(s == CUDOT_ERROR_INVALID_ARGUMENT, "NULL result on rank 0 gave %s", cudot_status_string(s));
    if (rank != 0)
        CHECK(strstr(cudot_mpi_last_error(), "rank 0 failed") != NULL, "message: %s", cudot_mpi_last_error());
    /* A rank with a destroyed context (the new one is made first, so it cannot reuse the address). */
    cudot_ctx *fresh = host_context(10, CUDOT_F32, 0);
    cudot_deinit(ctx);
    s = cudot_mpi_dot(rank == ranks - 1 ? ctx : fresh, MPI_COMM_WORLD, &r);
    CHECK(s == CUDOT_ERROR_INVALID_ARGUMENT, "dead context gave %s", cudot_status_string(s));
    cudot_deinit(fresh);
    /* One rank in the exact mode, the others not: every rank is told. */
    if (ranks > 1) {
        case_mode = rank == 0 ? CUDOT_MODE_EXACT : CUDOT_MODE_CANONICAL;
        cudot_ctx *mixed = host_context(1000, CUDOT_F32, 0);
        case_mode = CUDOT_MODE_CANONICAL;
        r = 7;
        s = cudot_mpi_dot(mixed, MPI_COMM_WORLD, &r);
        CHECK(s == CUDOT_ERROR_INVALID_ARGUMENT, "mixed modes gave %s", cudot_status_string(s));
        CHECK(strstr(cudot_mpi_last_error(), "modes") != NULL, "message: %s", cudot_mpi_last_error());
        CHECK(r == 7, "result untouched");
        cudot_deinit(mixed);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    read_environment();
    {
        cudot_ctx *probe = make_context(1, CUDOT_F32, 0, local_memory, local_device);
        int32_t memory = -1, device = -1;
        if (probe) cudot_get_memory(probe, &memory, &device);
        printf("rank %d of %d: local contexts use memory %d, device %d\n", rank, ranks, (int)memory, (int)device);
        fflush(stdout);
        cudot_deinit(probe);
    }
    const int32_t types[] = {CUDOT_F32, CUDOT_F64, CUDOT_F16, CUDOT_BF16, CUDOT_I8, CUDOT_U8};
    const size_t sizes[] = {0, 1, 1000, 8192, 8193, 3 * 8192 + 5, 100003, (1u << 20) + 7};
    int cases = 0;
    for (int xi = 0; xi < 6; ++xi)
        for (int yi = 0; yi < 6; ++yi)
            for (int p = 0; p < 5; ++p, ++cases) check_case(types[xi], types[yi], 3 * 8192 + 77, p, 100 + (uint64_t)cases);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
        for (int p = 0; p < 5; ++p)
            for (int d = 0; d < 2; ++d, ++cases) check_case(types[d], types[d], sizes[k], p, 500 + (uint64_t)cases);
    /* The exact mode: each rank's whole share is one exact partial, whatever the tiles. */
    case_mode = CUDOT_MODE_EXACT;
    for (int xi = 0; xi < 6; ++xi)
        for (int yi = 0; yi < 6; ++yi)
            for (int p = 0; p < 2; ++p, ++cases) check_case(types[xi], types[yi], 3 * 8192 + 77, p, 900 + (uint64_t)cases);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
        for (int p = 0; p < 5; ++p)
            for (int d = 0; d < 2; ++d, ++cases) check_case(types[d], types[d], sizes[k], p, 1300 + (uint64_t)cases);
    case_mode = CUDOT_MODE_CANONICAL;
    check_errors();
    if (local_memory != CUDOT_MEMORY_HOST) {
        /* One CUDA context per rank, on the rank's own GPU: none on a GPU the rank never asked for
         * (issue 22: every rank used to leave one on GPU 0). */
        int devices = 0;
        const long long active = cudot_test_active_primaries(&devices);
        CHECK(active == (1LL << local_device), "active primary contexts 0x%llx, expected only GPU %d's (of %d)",
              active, (int)local_device, devices);
    }
    int total_failures = 0, total_checks = 0;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&checks, &total_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("cudot_mpi_dot on %d rank(s): %d cases, %d checks, %d failed\n", ranks, cases, total_checks,
               total_failures);
    MPI_Finalize();
    return total_failures ? 1 : 0;
}
