/* test_mpi_limit.c - cudot_mpi_dot refuses, on every rank, a gather that MPI's int counts and
 * displacements cannot address. Built with cudot_mpi.c's limit lowered to 20,000 bytes
 * (CUDOT_MPI_GATHER_LIMIT), so 3 ranks reach it: each rank holds 5,000 f32 elements, all of them in
 * tiles that straddle ranks, 60,000 bytes for rank 0 to gather. With 1,000 elements a rank (12,000
 * bytes) the same call succeeds and equals one context's dot. Exits non-zero on any failed check. */
#include <stdio.h>
#include <string.h>

#include "cudot_mpi.h"

static int run(size_t n, cudot_status want, int rank) {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = NULL;
    if (cudot_init(&ctx, n, &c) != CUDOT_OK) return 1;
    float *x, *y;
    cudot_get_inputs(ctx, (void **)&x, (void **)&y);
    for (size_t i = 0; i < n; ++i) {
        x[i] = (float)((rank * n + i) % 7);
        y[i] = 0.5f;
    }
    double r = -1;
    const cudot_status got = cudot_mpi_dot(ctx, MPI_COMM_WORLD, &r);
    int bad = got != want;
    if (got == CUDOT_ERROR_UNSUPPORTED && !strstr(cudot_mpi_last_error(), rank == 0 ? "MPI gather" : "rank 0"))
        bad = 1;
    if (bad)
        fprintf(stderr, "rank %d, n %zu: got %s (%s), want %s\n", rank, n, cudot_status_string(got),
                cudot_mpi_last_error(), cudot_status_string(want));
    cudot_deinit(ctx);
    return bad;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int bad = ranks != 3;
    bad |= run(1000, CUDOT_OK, rank);
    bad |= run(5000, CUDOT_ERROR_UNSUPPORTED, rank);
    bad |= run(1000, CUDOT_OK, rank);  /* and the next call works again */
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("mpi gather limit: %s\n", any ? "FAILED" : "ok");
    MPI_Finalize();
    return any;
}
