/*
 * cudot_mpi.h - a dot product over vectors spread across the ranks of an MPI communicator, with the same
 * result bits as one process holding the whole vectors. Optional: libcudot_mpi is built where MPI is
 * found; link it and libcudot. Kept apart from cudot.h so that cudot.h stays free of MPI.
 *
 *     cudot_ctx *ctx;                                   every rank: a context for ITS part of x and y
 *     cudot_init(&ctx, local_n, &cfg);                  (any strategy and device; any local_n, 0 included)
 *     ... fill the buffers from cudot_get_inputs ...
 *     double r;
 *     cudot_mpi_dot(ctx, MPI_COMM_WORLD, &r);           collective: every rank gets the global dot
 */
#ifndef CUDOT_MPI_H
#define CUDOT_MPI_H

#include <mpi.h>

#include "cudot.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! cudot_mpi_dot: the dot product of the global vectors x and y, formed by concatenating, in rank order
 * of comm, the buffers of every rank's context (rank r holds elements [o_r, o_r + n_r), where n_r is its
 * context's capacity and o_r the sum of the capacities of ranks below r; a rank may hold 0 elements).
 *
 * Collective: every rank of comm must call it, with its own context. Every rank gets the same result,
 * bitwise equal to what cudot_dot returns for one context holding the whole vectors, whatever the
 * number of ranks and however the vectors are split (docs/DESIGN.md, "Distributed dots", says how).
 * Every context must have the same element types; strategies and devices may differ between ranks (a
 * rank's GPU context computes its tiles on its GPU(s): give each rank its own GPU, e.g. device = local
 * rank). Since 1.3; HOST only before.
 * Contexts in CUDOT_MODE_EXACT (every rank's, or none) give the exact mode's dot of the whole vectors:
 * each rank sends rank 0 one exact partial (CUDOT_EXACT_PARTIAL_BYTES) of all its elements, joined
 * exactly (since 1.13).
 * Cost: each rank computes the tiles it holds whole; rank 0 receives 16 bytes per tile of the global
 * vector plus the elements of tiles that straddle ranks (fewer than 8192 per rank boundary), joins,
 * and broadcasts the result.
 *
 * Errors are collective too: if any rank fails (NULL result, a context that is not live, element types
 * that differ between ranks, a GPU that fails, ...), every rank returns a failure status and
 * cudot_mpi_last_error() on each rank says why (a rank that did not fail itself names the lowest rank
 * that did). MPI errors follow comm's error handler: with MPI's default (MPI_ERRORS_ARE_FATAL)
 * MPI aborts the job; with MPI_ERRORS_RETURN, cudot returns CUDOT_ERROR_INTERNAL naming the MPI call,
 * and ranks may then disagree about the outcome.
 * @return CUDOT_OK; CUDOT_ERROR_INVALID_ARGUMENT; CUDOT_ERROR_OUT_OF_MEMORY; CUDOT_ERROR_CUDA (a rank's
 *         GPU failed); CUDOT_ERROR_INTERNAL (an MPI call failed). */
#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
cudot_status cudot_mpi_dot(cudot_ctx *ctx, MPI_Comm comm, double *result);

/*! cudot_mpi_last_error: the message of the calling thread's last failed cudot_mpi_dot ("" if none).
 * Thread-local storage, rewritten by the thread's next failure; never NULL. */
#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
const char *cudot_mpi_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* CUDOT_MPI_H */
