// rows_plan.hpp - what the host computes for a batch before stream_dot.cu queues it: which kernel and
// its launch's shape, the workspace's layout, and the tables copied into the workspace.
#pragma once

#include <cstddef>
#include <vector>

#include "cuda_backend.hpp"
#include "kernels/launchers.hpp"
#include "kernels/rows_kernel.cuh"
#include "launch.hpp"

namespace cudot {
namespace cuda {

// Host memory copied into a workspace before the launch (a batch's tables).
struct WorkspaceFill {
    std::size_t at = 0;
    const void *from = nullptr;
    std::size_t bytes = 0;
};

// A blocking batch of at most this many rows has its results written into mapped host memory, one slot
// a row, which the host polls; a larger one into the workspace, copied back in one transfer (each
// 8-byte write over the bus costs about as much as a large copy's 256 bytes).
constexpr std::size_t kPolledResults = 16384;

// Equal rows up to this long go to rows_short_kernel (a warp a row above 256 elements); longer ones, and
// segments, to rows_tile_kernel.
constexpr std::size_t kWarpRowsUpTo = order::kLanes;

// What the host computes per batch: which kernel, the launch's shape, the workspace's layout and the
// tables it copies.
struct RowsPlan {
    bool one = false;  // a single row: the single-dot kernels (dot_launch, exact_launch) on `row`
    Operands row;
    RowsParams p{};    // else the batch kernels'
    // The batch kernel: rows_tile_kernel, rows_short_kernel or rows_staged_kernel (dense short rows of the
    // float and double pairs). In the exact mode Short stands for exact_group_rows_kernel's groups and
    // Tile for exact_part_rows_kernel's parts.
    RowsKernel kernel = RowsKernel::Tile;
    std::size_t tickets_at = 0, partials_at = 0, tables_at = 0, results_at = 0, bytes = 0;
    bool joins = false;  // some row has several tiles: tickets to zero
    WorkspaceFill fill[2];  // the batch's two tables (Segmented, Pointers): `fills` of them
    int fills = 0;
    std::vector<unsigned long long> first_item;  // Segmented
};

// A batch of one row with elements: the single-dot kernel (rows_plan.cu says how its workspace is laid out).
void plan_one(const Rows &rows, std::size_t partial_bytes, unsigned resident, bool exact_partial,
              bool partials_elsewhere, RowsPlan &plan);
// Every other batch: the batch kernels; `results_in_workspace` where a blocking batch's results are copied
// back in one transfer; `exact_resident` the blocks the exact plan cuts rows by.
void plan_rows(const Rows &rows, std::size_t partial_bytes, bool results_in_workspace, unsigned exact_resident,
               RowsPlan &plan);
// Points the plan's launch at a workspace.
void aim_rows(RowsPlan &plan, void *workspace);
// The kernel a plan launches: a single row's dot (its result to `done`, or its partials to `partials`),
// or the batch kernels over every row.
void prepare_plan(const RowsPlan &plan, const Rows &rows, unsigned resident, void *workspace, Completion *done,
                  void *partials, KernelCall &kernel);

}  // namespace cuda
}  // namespace cudot
