// exact_dot.hpp - the exact mode's dot on the CPU: the exact sum of the exact products, rounded once.
#pragma once

#include "../core/exact_sum.hpp"
#include "../core/operands.hpp"
#include "../core/types.hpp"

namespace cudot {
namespace cpu {

struct TileKernels;

// *result = the sum of ops.x[i] * ops.y[i], i < ops.n, computed exactly and rounded once to the nearest
// double (exact_sum.hpp's round()). On the pool's threads from a few pieces of 2^16 elements on, with
// the inner loop of `kernels` (null: the processor's own, tile_kernels()); every copy gives the same bits.
// Not `share`: on the calling thread alone, whatever n (a pool task's row). OUT_OF_MEMORY when the
// pieces' sums cannot be allocated (never when not sharing).
cudot_status exact_dot(const Operands &ops, double *result, const TileKernels *kernels = nullptr, bool share = true);

// sum = the same exact sum, not rounded (carried: exact_sum.hpp's normalize), for a partial to be joined
// with others (exact::to_partial, exact::add_partial). OUT_OF_MEMORY as exact_dot.
cudot_status exact_sum(const Operands &ops, exact::Sum &sum);

}  // namespace cpu
}  // namespace cudot
