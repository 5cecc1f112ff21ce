/* cudot_mpi.c - cudot_mpi_dot (include/cudot_mpi.h), on top of the public API only.
 *
 * Why it gives the single-process bits: the canonical order cuts the global vector into tiles of
 * CUDOT_TILE_ELEMENTS and joins the tiles' partial sums in tile order. Floating-point addition does not
 * associate, so neither a tile's lanes nor the join can be split between ranks and recombined. So:
 *   1. each rank computes the partials of the global tiles it holds whole (cudot_tile_partials);
 *   2. the elements of tiles that straddle a rank boundary (at most one tile at each end of a rank's
 *      range) go to rank 0, which reassembles those tiles and computes their partials the same way;
 *   3. rank 0 gathers every partial in tile order, joins them (cudot_join_partials), broadcasts.
 * Every tile's partial is computed from exactly its elements by the same code, and the join sees the
 * same partials in the same order as in one process: the same bits, for any number of ranks and split.
 */
#include "cudot_mpi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPI counts and displacements are int: what rank 0 gathers in one MPI_Gatherv (the partials, or the
 * elements of every rank's straddling tiles, up to two tiles' worth per rank) must stay below this.
 * A test build lowers it to reach the limit with a few ranks. */
#ifndef CUDOT_MPI_GATHER_LIMIT
#define CUDOT_MPI_GATHER_LIMIT 0x7fffffffULL
#endif

#define TILE ((uint64_t)CUDOT_TILE_ELEMENTS)

static _Thread_local char last_error[512];

const char *cudot_mpi_last_error(void) { return last_error; }

static cudot_status fail(cudot_status status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    return status;
}

static size_t dtype_size(int32_t d) {
    return d == CUDOT_F64 ? 8 : d == CUDOT_F32 ? 4 : (d == CUDOT_F16 || d == CUDOT_BF16) ? 2 : 1;
}

#define MPI_TRY(call)                                                                          \
    do {                                                                                       \
        int mpi_error_ = (call);                                                               \
        if (mpi_error_ != MPI_SUCCESS) {                                                       \
            char mpi_text_[MPI_MAX_ERROR_STRING];                                              \
            int mpi_len_ = 0;                                                                  \
            MPI_Error_string(mpi_error_, mpi_text_, &mpi_len_);                                \
            status = fail(CUDOT_ERROR_INTERNAL, "cudot_mpi_dot: %s failed: %s", #call, mpi_text_); \
            goto done;                                                                         \
        }                                                                                      \
    } while (0)

/* The exact mode: no tiles to respect, since the exact sum is the same in any order. Each rank sums its
 * whole share into one exact partial, rank 0 joins them exactly and tells everyone. */
static cudot_status exact_mpi_dot(cudot_ctx *ctx, size_t n, MPI_Comm comm, int rank, int ranks, double *result) {
    cudot_status status = CUDOT_OK;
    unsigned char mine[CUDOT_EXACT_PARTIAL_BYTES];
    unsigned char *all = NULL;
    cudot_status local = cudot_tile_partials(ctx, 0, n, mine);
    if (local != CUDOT_OK) fail(local, "cudot_mpi_dot: %s", cudot_last_error(ctx));
    if (rank == 0) {
        all = malloc((size_t)ranks * CUDOT_EXACT_PARTIAL_BYTES);
        if (!all && local == CUDOT_OK) local = fail(CUDOT_ERROR_OUT_OF_MEMORY, "cudot_mpi_dot: out of host memory on rank 0");
    }
    /* [failing rank + 1 as its negation, status] under MAX: every rank learns whether any failed. */
    long agree[2] = {local ? -(long)(rank + 1) : -(long)(ranks + 1), (long)local}, agreed[2];
    MPI_TRY(MPI_Allreduce(agree, agreed, 2, MPI_LONG, MPI_MAX, comm));
    if (agreed[1] != CUDOT_OK) {
        if (local == CUDOT_OK)
            fail((cudot_status)agreed[1], "cudot_mpi_dot: rank %ld failed (%s)", -agreed[0] - 1,
                 cudot_status_string((cudot_status)agreed[1]));
        status = local != CUDOT_OK ? local : (cudot_status)agreed[1];
        goto done;
    }
    MPI_TRY(MPI_Gather(mine, CUDOT_EXACT_PARTIAL_BYTES, MPI_BYTE, all, CUDOT_EXACT_PARTIAL_BYTES, MPI_BYTE, 0, comm));
    double message[2] = {0.0, (double)CUDOT_OK};
    if (rank == 0) {
        const cudot_status joined = cudot_join_exact_partials(all, (size_t)ranks, &message[0]);
        if (joined != CUDOT_OK) fail(joined, "cudot_mpi_dot: %s", cudot_last_error(NULL));
        message[1] = (double)joined;
    }
    MPI_TRY(MPI_Bcast(message, 2, MPI_DOUBLE, 0, comm));
    status = (cudot_status)(int)message[1];
    if (status == CUDOT_OK) *result = message[0];
    else if (rank != 0) fail(status, "cudot_mpi_dot: rank 0 failed (%s)", cudot_status_string(status));
done:
    free(all);
    return status;
}

/* A piece of the global vector a rank cannot finish alone: global elements [start, start + count). */
typedef struct {
    uint64_t start, count;
} Fragment;

/* What each rank tells rank 0. */
typedef struct {
    uint64_t first_tile, end_tile; /* the whole tiles it computed: [first_tile, end_tile) */
    Fragment fragments[2];         /* head and tail pieces of straddling tiles (count 0: none) */
} RankReport;

/* Rank 0: reassembles the straddling tiles from everyone's fragments and computes their partials.
 * covered[t] marks tiles some rank computed whole. */
static cudot_status finish_shared_tiles(int32_t xd, int32_t yd, uint64_t n_total, uint64_t tiles,
                                        const RankReport *reports, int ranks, const unsigned char *fx,
                                        const unsigned char *fy, const unsigned char *covered,
                                        unsigned char *partials) {
    const size_t sx = dtype_size(xd), sy = dtype_size(yd);
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.dtype = xd;
    cfg.y_dtype = yd;
    cfg.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *scratch = NULL;
    cudot_status status = cudot_init(&scratch, (size_t)TILE, &cfg);
    if (status != CUDOT_OK) return fail(status, "cudot_mpi_dot: scratch context: %s", cudot_last_error(NULL));
    void *sxp = NULL, *syp = NULL;
    cudot_get_inputs(scratch, &sxp, &syp);
    for (uint64_t t = 0; t < tiles && status == CUDOT_OK; ++t) {
        if (covered[t]) continue;
        const uint64_t begin = t * TILE, count = n_total - begin < TILE ? n_total - begin : TILE;
        /* Copy in every fragment that overlaps this tile (fragments arrive in rank order, concatenated). */
        uint64_t filled = 0;
        size_t offset = 0; /* element offset of the current fragment in fx/fy */
        for (int r = 0; r < ranks; ++r)
            for (int k = 0; k < 2; ++k) {
                const Fragment f = reports[r].fragments[k];
                const uint64_t lo = f.start > begin ? f.start : begin;
                const uint64_t hi = f.start + f.count < begin + count ? f.start + f.count : begin + count;
                if (f.count && lo < hi) {
                    memcpy((unsigned char *)sxp + (lo - begin) * sx, fx + (offset + (lo - f.start)) * sx, (hi - lo) * sx);
                    memcpy((unsigned char *)syp + (lo - begin) * sy, fy + (offset + (lo - f.start)) * sy, (hi - lo) * sy);
                    filled += hi - lo;
                }
                offset += f.count;
            }
        if (filled != count) {
            status = fail(CUDOT_ERROR_INTERNAL, "cudot_mpi_dot: tile %llu assembled from %llu of %llu elements",
                          (unsigned long long)t, (unsigned long long)filled, (unsigned long long)count);
            break;
        }
        status = cudot_tile_partials(scratch, 0, (size_t)count, partials + t * CUDOT_PARTIAL_BYTES);
        if (status != CUDOT_OK) fail(status, "cudot_mpi_dot: %s", cudot_last_error(scratch));
    }
    cudot_deinit(scratch);
    return status;
}

cudot_status cudot_mpi_dot(cudot_ctx *ctx, MPI_Comm comm, double *result) {
    cudot_status status = CUDOT_OK;
    int rank = 0, ranks = 1;
    unsigned char *local_partials = NULL, *partials = NULL, *covered = NULL, *fx = NULL, *fy = NULL;
    unsigned char *send_x = NULL, *send_y = NULL;
    RankReport *reports = NULL;
    int *counts = NULL, *displs = NULL;
    MPI_TRY(MPI_Comm_rank(comm, &rank));
    MPI_TRY(MPI_Comm_size(comm, &ranks));

    /* 1. Agree that every rank can go on, with the same element types. Every rank takes part in every
     *    collective below whatever happened locally, so no rank is left waiting. */
    int32_t xd = 0, yd = 0, mode = 0;
    size_t n = 0;
    cudot_status local = CUDOT_OK;
    if (!result) local = fail(CUDOT_ERROR_INVALID_ARGUMENT, "cudot_mpi_dot: result is NULL");
    else if (cudot_get_dtypes(ctx, &xd, &yd) != CUDOT_OK || cudot_get_capacity(ctx, &n) != CUDOT_OK ||
             cudot_get_mode(ctx, &mode) != CUDOT_OK)
        local = fail(CUDOT_ERROR_INVALID_ARGUMENT, "cudot_mpi_dot: ctx is not a live cudot context");
    /* [failing rank + 1 (0: none) as its negation for MIN, status, xd, yd, -xd, -yd, mode, -mode] under MAX. */
    long agree[8] = {local ? -(long)(rank + 1) : -(long)(ranks + 1), (long)local, xd, yd, -(long)xd, -(long)yd,
                     mode, -(long)mode};
    long agreed[8];
    MPI_TRY(MPI_Allreduce(agree, agreed, 8, MPI_LONG, MPI_MAX, comm));
    if (agreed[1] != CUDOT_OK) {
        const long first_failed = -agreed[0] - 1;
        if (local == CUDOT_OK)
            fail((cudot_status)agreed[1], "cudot_mpi_dot: rank %ld failed (%s)", first_failed,
                 cudot_status_string((cudot_status)agreed[1]));
        status = local != CUDOT_OK ? local : (cudot_status)agreed[1];
        goto done;
    }
    if (agreed[2] != -agreed[4] || agreed[3] != -agreed[5]) {
        status = fail(CUDOT_ERROR_INVALID_ARGUMENT, "cudot_mpi_dot: the ranks' contexts have different element types");
        goto done;
    }
    if (agreed[6] != -agreed[7]) {
        status = fail(CUDOT_ERROR_INVALID_ARGUMENT, "cudot_mpi_dot: the ranks' contexts have different modes");
        goto done;
    }
    if (mode == CUDOT_MODE_EXACT) {
        status = exact_mpi_dot(ctx, n, comm, rank, ranks, result);
        goto done;
    }

    /* 2. Where this rank's elements sit in the global vectors. */
    uint64_t mine = n, offset = 0, n_total = 0;
    MPI_TRY(MPI_Exscan(&mine, &offset, 1, MPI_UINT64_T, MPI_SUM, comm));
    if (rank == 0) offset = 0; /* MPI_Exscan leaves rank 0's output undefined */
    MPI_TRY(MPI_Allreduce(&mine, &n_total, 1, MPI_UINT64_T, MPI_SUM, comm));
    if (n_total == 0) {
        *result = 0.0;
        goto done;
    }
    const uint64_t tiles = (n_total + TILE - 1) / TILE, end = offset + mine;
    if (tiles > (uint64_t)(CUDOT_MPI_GATHER_LIMIT / CUDOT_PARTIAL_BYTES)) {
        status = fail(CUDOT_ERROR_UNSUPPORTED, "cudot_mpi_dot: %llu elements are more than this version gathers",
                      (unsigned long long)n_total);
        goto done; /* every rank sees the same n_total, so every rank stops here */
    }

    /* 3. The whole tiles this rank holds, and the pieces of the others. */
    RankReport report;
    memset(&report, 0, sizeof report);
    uint64_t first = (offset + TILE - 1) / TILE, last = end == n_total ? tiles : end / TILE;
    if (mine == 0 || first >= last) {
        first = last = 0;
        if (mine) report.fragments[0] = (Fragment){offset, mine};
    } else {
        report.fragments[0] = (Fragment){offset, first * TILE - offset};
        if (end != n_total) report.fragments[1] = (Fragment){last * TILE, end - last * TILE};
    }
    report.first_tile = first;
    report.end_tile = last;
    const size_t whole = (size_t)(last - first);
    local_partials = malloc(whole ? whole * CUDOT_PARTIAL_BYTES : 1);
    if (!local_partials) local = fail(CUDOT_ERROR_OUT_OF_MEMORY, "cudot_mpi_dot: out of host memory");
    else if (whole) {
        const uint64_t begin = first * TILE, stop = last * TILE < n_total ? last * TILE : n_total;
        local = cudot_tile_partials(ctx, (size_t)(begin - offset), (size_t)(stop - begin), local_partials);
        if (local != CUDOT_OK) fail(local, "cudot_mpi_dot: %s", cudot_last_error(ctx));
    }
    const uint64_t fragment_elements = report.fragments[0].count + report.fragments[1].count;
    const size_t sx = dtype_size(xd), sy = dtype_size(yd);
    send_x = malloc(fragment_elements * sx + 1);
    send_y = malloc(fragment_elements * sy + 1);
    if (!send_x || !send_y) local = fail(CUDOT_ERROR_OUT_OF_MEMORY, "cudot_mpi_dot: out of host memory");
    else {
        void *x = NULL, *y = NULL;
        cudot_get_inputs(ctx, &x, &y);
        size_t at = 0;
        for (int k = 0; k < 2; ++k) {
            const Fragment f = report.fragments[k];
            if (!f.count) continue;
            memcpy(send_x + at * sx, (const unsigned char *)x + (f.start - offset) * sx, f.count * sx);
            memcpy(send_y + at * sy, (const unsigned char *)y + (f.start - offset) * sy, f.count * sy);
            at += f.count;
        }
    }
    int ok_local = local == CUDOT_OK, ok_all = 0;
    MPI_TRY(MPI_Allreduce(&ok_local, &ok_all, 1, MPI_INT, MPI_MIN, comm));
    if (!ok_all) {
        if (local == CUDOT_OK) fail(CUDOT_ERROR_OUT_OF_MEMORY, "cudot_mpi_dot: another rank failed");
        status = local != CUDOT_OK ? local : CUDOT_ERROR_OUT_OF_MEMORY;
        goto done;
    }

    /* 4. Everything to rank 0: the reports, the fragments' elements, the partials in tile order. */
    if (rank == 0) {
        reports = malloc(sizeof(RankReport) * (size_t)ranks);
        counts = malloc(sizeof(int) * (size_t)ranks);
        displs = malloc(sizeof(int) * (size_t)ranks);
        partials = malloc(tiles * CUDOT_PARTIAL_BYTES);
        covered = calloc(tiles, 1);
    }
    MPI_TRY(MPI_Gather(&report, (int)sizeof report, MPI_BYTE, reports, (int)sizeof report, MPI_BYTE, 0, comm));
    uint64_t all_fragments = 0;
    if (rank == 0) {
        if (!reports || !counts || !displs || !partials || !covered) {
            status = fail(CUDOT_ERROR_OUT_OF_MEMORY, "cudot_mpi_dot: out of host memory on rank 0");
        }
        for (int r = 0; r < ranks; ++r) all_fragments += reports ? reports[r].fragments[0].count + reports[r].fragments[1].count : 0;
        const size_t widest = sx > sy ? sx : sy;
        if (status == CUDOT_OK && all_fragments > CUDOT_MPI_GATHER_LIMIT / widest)
            status = fail(CUDOT_ERROR_UNSUPPORTED,
                          "cudot_mpi_dot: the tiles that straddle ranks hold %llu elements in all, more than one "
                          "MPI gather can address (%d ranks; use fewer ranks or give each rank whole tiles)",
                          (unsigned long long)all_fragments, ranks);
        if (status == CUDOT_OK) {
            fx = malloc(all_fragments * sx + 1);
            fy = malloc(all_fragments * sy + 1);
            if (!fx || !fy) status = fail(CUDOT_ERROR_OUT_OF_MEMORY, "cudot_mpi_dot: out of host memory on rank 0");
        }
    }
    int status0 = (int)status;
    MPI_TRY(MPI_Bcast(&status0, 1, MPI_INT, 0, comm));
    if (status0 != CUDOT_OK) {
        if (rank != 0)
            status = fail((cudot_status)status0, "cudot_mpi_dot: rank 0 cannot gather (%s)",
                          cudot_status_string((cudot_status)status0));
        goto done;
    }
    for (int pass = 0; pass < 3; ++pass) {
        /* pass 0: x fragments, 1: y fragments, 2: partials */
        const size_t unit = pass == 0 ? sx : pass == 1 ? sy : CUDOT_PARTIAL_BYTES;
        const unsigned char *send = pass == 0 ? send_x : pass == 1 ? send_y : local_partials;
        const int send_count = (int)((pass < 2 ? fragment_elements : whole) * unit);
        unsigned char *recv = pass == 0 ? fx : pass == 1 ? fy : partials;
        if (rank == 0) {
            uint64_t at = 0;
            for (int r = 0; r < ranks; ++r) {
                const RankReport *p = &reports[r];
                const uint64_t elements =
                    pass < 2 ? p->fragments[0].count + p->fragments[1].count : p->end_tile - p->first_tile;
                counts[r] = (int)(elements * unit);
                displs[r] = (int)((pass < 2 ? at : p->first_tile) * unit);
                at += elements;
            }
        }
        MPI_TRY(MPI_Gatherv(send, send_count, MPI_BYTE, recv, counts, displs, MPI_BYTE, 0, comm));
    }

    /* 5. Rank 0 finishes the straddling tiles, joins, and tells everyone. */
    double value = 0.0;
    int final_status = CUDOT_OK;
    if (rank == 0) {
        for (int r = 0; r < ranks; ++r)
            for (uint64_t t = reports[r].first_tile; t < reports[r].end_tile; ++t) covered[t] = 1;
        final_status = finish_shared_tiles(xd, yd, n_total, tiles, reports, ranks, fx, fy, covered, partials);
        if (final_status == CUDOT_OK) {
            final_status = cudot_join_partials(xd, yd, partials, (size_t)tiles, &value);
            if (final_status != CUDOT_OK) fail((cudot_status)final_status, "cudot_mpi_dot: %s", cudot_last_error(NULL));
        }
    }
    double message[2] = {value, (double)final_status};
    MPI_TRY(MPI_Bcast(message, 2, MPI_DOUBLE, 0, comm));
    status = (cudot_status)(int)message[1];
    if (status == CUDOT_OK) *result = message[0];
    else if (rank != 0) fail(status, "cudot_mpi_dot: rank 0 failed (%s)", cudot_status_string(status));

done:
    free(local_partials);
    free(partials);
    free(covered);
    free(fx);
    free(fy);
    free(send_x);
    free(send_y);
    free(reports);
    free(counts);
    free(displs);
    return status;
}
