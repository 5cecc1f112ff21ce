/* mpi_dot.c - a dot product of vectors spread over MPI ranks, as a distributed solver computes one.
 *
 *   mpirun -np 4 ./build/mpi_dot 1000003            every rank on the CPU (HOST)
 *   mpirun -np 2 ./build/mpi_dot 1000003 mapped     one GPU per rank: the node-local rank picks the GPU
 *
 * Every rank owns a contiguous, deliberately uneven part of x and y (here x[i] = 1, y[i] = i, filled
 * locally, as a solver's ranks would hold their own rows). Rank 0 prints the global dot, which is the
 * same bits for any number of ranks and any strategy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudot_mpi.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const long long n = argc > 1 ? atoll(argv[1]) : 1000003;

    /* Rank r owns [begin, end): uneven on purpose (later ranks own more). */
    const long long weight_total = (long long)ranks * (ranks + 1) / 2;
    long long begin = 0;
    for (int r = 0; r < rank; ++r) begin += n * (r + 1) / weight_total;
    long long end = rank == ranks - 1 ? n : begin + n * (rank + 1) / weight_total;

    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = CUDOT_F64;
    const char *memory = argc > 2 ? argv[2] : "host";
    cfg.memory = strcmp(memory, "pinned") == 0    ? CUDOT_MEMORY_PINNED
                 : strcmp(memory, "mapped") == 0  ? CUDOT_MEMORY_MAPPED
                 : strcmp(memory, "managed") == 0 ? CUDOT_MEMORY_MANAGED
                 : strcmp(memory, "auto") == 0    ? CUDOT_MEMORY_AUTO
                                                  : CUDOT_MEMORY_HOST;
    /* One GPU per rank on each node: the rank's index among the ranks of its own node. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &cfg.device);
    MPI_Comm_free(&node);
    cudot_ctx *ctx = NULL;
    if (cudot_init(&ctx, (size_t)(end - begin), &cfg) != CUDOT_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, cudot_last_error(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double *x, *y;
    cudot_get_inputs(ctx, (void **)&x, (void **)&y);
    for (long long i = begin; i < end; ++i) {
        x[i - begin] = 1.0;
        y[i - begin] = (double)i;
    }

    double dot = 0;
    cudot_status s = cudot_mpi_dot(ctx, MPI_COMM_WORLD, &dot);
    if (s != CUDOT_OK) fprintf(stderr, "rank %d: %s\n", rank, cudot_mpi_last_error());
    else if (rank == 0)
        printf("%d rank(s), n = %lld: dot = %.17g (expected %.17g)\n", ranks, n, dot, (double)n * (double)(n - 1) / 2);
    cudot_deinit(ctx);
    MPI_Finalize();
    return s == CUDOT_OK ? 0 : 1;
}
