// dot_kernel.cuh - the one kernel of a GPU dot: tile partials, then the join, in a single launch.
//
// A 256-thread block computes one tile at a time (grid-stride over tiles). Each thread owns four
// canonical lanes (src/order.hpp), chosen so every load instruction of a warp reads 512 contiguous
// bytes (LaneMap below), and the lane tree is walked exactly as order.hpp prescribes: the first level(s)
// inside the thread, then warp shuffles, then three levels across the eight warps.
// Each block then takes a ticket; the block that draws the last one joins all tile partials in the
// canonical order and writes the result straight into mapped host memory. No managed memory, no
// second launch, and the result does not depend on the grid size.
#pragma once

#include <cstddef>

#include "../../order.hpp"

namespace cudot {
namespace cuda {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kLanesPerThread = 4;
static_assert(kThreads * kLanesPerThread == static_cast<int>(order::kLanes), "a block spans one tile's lanes");

template <class T> using Acc = typename order::Arith<T>::Acc;

__device__ __forceinline__ order::SumF32 shuffle_down(order::SumF32 a, int offset) {
    return order::SumF32{__shfl_down_sync(0xffffffffu, a.s, offset)};
}
__device__ __forceinline__ order::SumF64 shuffle_down(order::SumF64 a, int offset) {
    return order::SumF64{__shfl_down_sync(0xffffffffu, a.s, offset), __shfl_down_sync(0xffffffffu, a.c, offset)};
}

// Partials are written by one block and read by another in the same launch: read them from L2 (.cg).
__device__ __forceinline__ order::SumF32 load_partial(const order::SumF32 *p) { return order::SumF32{__ldcg(&p->s)}; }
__device__ __forceinline__ order::SumF64 load_partial(const order::SumF64 *p) {
    double2 v = __ldcg(reinterpret_cast<const double2 *>(p));
    return order::SumF64{v.x, v.y};
}

// Which four canonical lanes thread t of the block owns (k = 0..3), and how it loads them.
//  F32: lanes 4t..4t+3 - one float4 per array per step; a warp's load covers 128 lanes, 512 bytes.
//  F64: lanes 128w+2l, +1 and 128w+64+2l, +1 (warp w, lane l) - two double2 per array per step, each
//       warp instruction covering 64 contiguous lanes (512 bytes). Four adjacent doubles per thread
//       would make each instruction read every other 16 bytes of a 1 KiB span, which costs bus
//       bandwidth when the data is read over PCIe (MAPPED).
template <class T> struct LaneMap;
template <> struct LaneMap<float> {
    __device__ static std::size_t lane(int k) { return kLanesPerThread * threadIdx.x + k; }
    __device__ static void load(const float *step, float (&v)[4]) {
        float4 q = __ldg(reinterpret_cast<const float4 *>(step + kLanesPerThread * threadIdx.x));
        v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
    }
};
template <> struct LaneMap<double> {
    __device__ static std::size_t lane(int k) {
        return 128 * (threadIdx.x / 32) + (k < 2 ? 0 : 64) + 2 * (threadIdx.x % 32) + (k & 1);
    }
    __device__ static void load(const double *step, double (&v)[4]) {
        const double *p = step + 128 * (threadIdx.x / 32) + 2 * (threadIdx.x % 32);
        double2 a = __ldg(reinterpret_cast<const double2 *>(p));
        double2 b = __ldg(reinterpret_cast<const double2 *>(p + 64));
        v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y;
    }
};

// The canonical tree over one warp's 128 lanes; the root lands in lane 0 of the warp. Lane L of the
// warp merges lane L + offset; lanes whose partner is out of range compute values nobody reads. After
// offset o, lanes that are multiples of 2o hold their subtree.
template <class T>
__device__ __forceinline__ Acc<T> warp_tree(const Acc<T> (&lane)[kLanesPerThread]) {
    using A = order::Arith<T>;
    if (sizeof(T) == 4) {  // lanes 4t..4t+3: two levels in the thread, five across the warp
        Acc<T> v = A::merge(A::merge(lane[0], lane[1]), A::merge(lane[2], lane[3]));
#pragma unroll
        for (int offset = 1; offset < 32; offset *= 2) v = A::merge(v, shuffle_down(v, offset));
        return v;
    }
    // Two runs of 64 lanes: one level in the thread, five across the warp, for each run; then the
    // seventh level joins the two runs.
    Acc<T> lo = A::merge(lane[0], lane[1]), hi = A::merge(lane[2], lane[3]);
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        lo = A::merge(lo, shuffle_down(lo, offset));
        hi = A::merge(hi, shuffle_down(hi, offset));
    }
    return A::merge(lo, hi);
}

// Joins the block's kLanes lane values (four per thread) by the canonical tree; the root lands in
// thread 0. Ends with a barrier so `warp_roots` can be reused.
template <class T>
__device__ __forceinline__ Acc<T> block_tree(const Acc<T> (&lane)[kLanesPerThread], Acc<T> *warp_roots) {
    using A = order::Arith<T>;
    Acc<T> v = warp_tree<T>(lane);
    int warp = threadIdx.x / 32, lane_id = threadIdx.x % 32;
    if (lane_id == 0) warp_roots[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane_id < kWarps ? warp_roots[lane_id] : A::zero();
#pragma unroll
        for (int offset = 1; offset < kWarps; offset *= 2) v = A::merge(v, shuffle_down(v, offset));
    }
    __syncthreads();
    return v;
}

// How many steps of a full tile each thread loads before it starts adding: all 8 for F32
// (16 loads in flight), 4 for F64 (also 16 loads, twice the registers each).
template <class T> struct LoadBatch { static constexpr int value = sizeof(T) == 4 ? 8 : 4; };

template <class T>
__device__ __forceinline__ void full_tile(const T *__restrict__ x, const T *__restrict__ y,
                                          Acc<T> (&lane)[kLanesPerThread]) {
    using A = order::Arith<T>;
    constexpr int kBatch = LoadBatch<T>::value;
#pragma unroll
    for (int j0 = 0; j0 < static_cast<int>(order::kSteps); j0 += kBatch) {
        T xv[kBatch][4], yv[kBatch][4];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
            LaneMap<T>::load(x + (j0 + j) * order::kLanes, xv[j]);
            LaneMap<T>::load(y + (j0 + j) * order::kLanes, yv[j]);
        }
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
#pragma unroll
            for (int k = 0; k < kLanesPerThread; ++k) A::add_product(lane[k], xv[j][k], yv[j][k]);
    }
}

template <class T>
__device__ __forceinline__ void partial_tile(const T *__restrict__ x, const T *__restrict__ y, std::size_t count,
                                             Acc<T> (&lane)[kLanesPerThread]) {
    using A = order::Arith<T>;
    for (std::size_t j = 0; j < order::kSteps; ++j)
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) {
            std::size_t i = j * order::kLanes + LaneMap<T>::lane(k);
            if (i < count) A::add_product(lane[k], x[i], y[i]);
        }
}

// x, y: n >= 1 elements, 16-byte aligned. partials: tile_count(n) slots. ticket: 0 on entry, 0 on exit.
// result: where the last block writes the dot (mapped host memory); nullptr means "partials only":
// the caller (the hybrid CPU+GPU path) joins them itself.
template <class T>
__global__ void __launch_bounds__(kThreads) dot_kernel(const T *__restrict__ x, const T *__restrict__ y, std::size_t n,
                                                       Acc<T> *__restrict__ partials, unsigned *ticket,
                                                       double *result) {
    using A = order::Arith<T>;
    __shared__ Acc<T> warp_roots[kWarps];
    __shared__ bool is_last;
    const std::size_t tiles = order::tile_count(n);

    for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        Acc<T> lane[kLanesPerThread];
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) lane[k] = A::zero();
        const std::size_t begin = tile * order::kTile;
        if (n - begin >= order::kTile)
            full_tile<T>(x + begin, y + begin, lane);
        else
            partial_tile<T>(x + begin, y + begin, n - begin, lane);
        Acc<T> root = block_tree<T>(lane, warp_roots);
        if (threadIdx.x == 0) {
            if (tiles == 1 && result) {  // one tile: the join is a single merge, no ticket needed
                *reinterpret_cast<volatile double *>(result) = A::finish(A::merge(A::zero(), root));
                return;
            }
            partials[tile] = root;
        }
    }
    if (!result || tiles == 1) return;

    // Publish this block's partials, then count finished blocks; the last one joins.
    if (threadIdx.x == 0) {
        __threadfence();
        is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last) return;
    __threadfence();

    Acc<T> lane[kLanesPerThread];
#pragma unroll
    for (int k = 0; k < kLanesPerThread; ++k) lane[k] = A::zero();
    for (std::size_t round = 0; round * order::kLanes < tiles; ++round)
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) {
            std::size_t t = round * order::kLanes + LaneMap<T>::lane(k);
            if (t < tiles) lane[k] = A::merge(lane[k], load_partial(partials + t));
        }
    Acc<T> root = block_tree<T>(lane, warp_roots);
    if (threadIdx.x == 0) {
        *reinterpret_cast<volatile double *>(result) = A::finish(root);
        *ticket = 0;  // ready for the next launch on this stream
    }
}

}  // namespace cuda
}  // namespace cudot
