// dot_kernel.cuh - the one kernel of a GPU dot: tile partials, then the join, in a single launch.
//
// A 256-thread block computes one tile at a time (grid-stride over tiles). Each thread owns four
// canonical lanes (src/order.hpp), chosen so every load instruction of a warp reads contiguous bytes
// (LaneMap below), and the lane tree is walked exactly as order.hpp prescribes: the first level(s)
// inside the thread, then warp shuffles, then three levels across the eight warps.
// Each block then takes a ticket; the block that draws the last one joins all tile partials in the
// canonical order and writes the result straight into mapped host memory. No managed memory, no
// second launch, and the result does not depend on the grid size.
#pragma once

#include <cstddef>
#include <cstring>

#include "../../order.hpp"

namespace cudot {
namespace cuda {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kLanesPerThread = 4;
static_assert(kThreads * kLanesPerThread == static_cast<int>(order::kLanes), "a block spans one tile's lanes");

template <class Tx, class Ty> using PairOf = order::Pair<Tx, Ty>;

__device__ __forceinline__ order::SumF32 shuffle_down(order::SumF32 a, int offset) {
    return order::SumF32{__shfl_down_sync(0xffffffffu, a.s, offset)};
}
__device__ __forceinline__ order::SumF64 shuffle_down(order::SumF64 a, int offset) {
    return order::SumF64{__shfl_down_sync(0xffffffffu, a.s, offset), __shfl_down_sync(0xffffffffu, a.c, offset)};
}
__device__ __forceinline__ order::SumI64 shuffle_down(order::SumI64 a, int offset) {
    return order::SumI64{static_cast<std::int64_t>(
        __shfl_down_sync(0xffffffffu, static_cast<long long>(a.s), offset))};
}

// Partials are written by one block and read by another in the same launch: read them from L2 (.cg).
__device__ __forceinline__ order::SumF32 load_partial(const order::SumF32 *p) { return order::SumF32{__ldcg(&p->s)}; }
__device__ __forceinline__ order::SumF64 load_partial(const order::SumF64 *p) {
    double2 v = __ldcg(reinterpret_cast<const double2 *>(p));
    return order::SumF64{v.x, v.y};
}
__device__ __forceinline__ order::SumI64 load_partial(const order::SumI64 *p) {
    return order::SumI64{static_cast<std::int64_t>(__ldcg(reinterpret_cast<const long long *>(&p->s)))};
}

// One product added to a lane. The product of two of F16, I8 and U8 is exact in float
// (types::kExactFloatProduct): one float multiply and one conversion of the product to double give the
// same double as converting both operands and multiplying in double (order.hpp's Double kind), with one
// double conversion instead of two (the CPU's AVX loops do the same). On the H100, MANAGED resident at the
// same bytes, F16 x I8 went from 209-210 to 198-199 us (0.91 -> 0.96 of F32 x F32's ratio; 72 -> 44
// registers); the other pairs did not move.
__device__ __forceinline__ float exact_float(types::f16 v) { return __half2float(__ushort_as_half(v.bits)); }
__device__ __forceinline__ float exact_float(std::int8_t v) { return static_cast<float>(v); }
__device__ __forceinline__ float exact_float(std::uint8_t v) { return static_cast<float>(v); }

template <class Tx, class Ty>
__device__ __forceinline__ void add_one(typename PairOf<Tx, Ty>::Acc &a, Tx x, Ty y) {
    using P = PairOf<Tx, Ty>;
    if constexpr (P::kind == types::Kind::Double && types::kExactFloatProduct<Tx> && types::kExactFloatProduct<Ty>)
        a.s = __dadd_rn(a.s, static_cast<double>(__fmul_rn(exact_float(x), exact_float(y))));
    else
        P::add(a, x, y);
}

// N consecutive elements of T from an address aligned to N * sizeof(T), in one load instruction.
template <int Bytes> struct Word;
template <> struct Word<16> { using type = uint4; };
template <> struct Word<8> { using type = uint2; };
template <> struct Word<4> { using type = unsigned int; };
template <> struct Word<2> { using type = unsigned short; };
template <> struct Word<1> { using type = unsigned char; };

template <int N, class T>
__device__ __forceinline__ void load_run(const T *p, T (&v)[N]) {
    using W = typename Word<N * sizeof(T)>::type;
    W w = __ldg(reinterpret_cast<const W *>(p));
    memcpy(v, &w, sizeof w);
}

// Which four canonical lanes thread t of the block owns (k = 0..3), and how it loads them.
//  Adjacent: lanes 4t..4t+3, one load per array per step (16 bytes of F32, 8 of F16/BF16, 4 of I8/U8):
//            a warp instruction covers 128 contiguous lanes.
//  Split (used when either side is F64): lanes 128w+2l, +1 and 128w+64+2l, +1 (warp w, lane l), two
//            loads per array per step, each warp instruction covering 64 contiguous lanes. Four adjacent
//            doubles per thread would make each instruction read every other 16 bytes of a 1 KiB span,
//            which costs bus bandwidth when the data is read over PCIe (MAPPED).
template <bool Split> struct LaneMap;
template <> struct LaneMap<false> {
    __device__ static std::size_t lane(int k) { return kLanesPerThread * threadIdx.x + k; }
    template <class T> __device__ static void load(const T *step, T (&v)[4]) {
        load_run<4>(step + kLanesPerThread * threadIdx.x, v);
    }
};
template <> struct LaneMap<true> {
    __device__ static std::size_t lane(int k) {
        return 128 * (threadIdx.x / 32) + (k < 2 ? 0 : 64) + 2 * (threadIdx.x % 32) + (k & 1);
    }
    template <class T> __device__ static void load(const T *step, T (&v)[4]) {
        const T *p = step + 128 * (threadIdx.x / 32) + 2 * (threadIdx.x % 32);
        T lo[2], hi[2];
        load_run<2>(p, lo);
        load_run<2>(p + 64, hi);
        v[0] = lo[0]; v[1] = lo[1]; v[2] = hi[0]; v[3] = hi[1];
    }
};

template <class Tx, class Ty> struct SplitLanes {
    static constexpr bool value = PairOf<Tx, Ty>::kind == types::Kind::Dot2;
};

// The canonical tree over one warp's 128 lanes; the root lands in lane 0 of the warp. Lane L of the
// warp merges lane L + offset; lanes whose partner is out of range compute values nobody reads. After
// offset o, lanes that are multiples of 2o hold their subtree.
template <class A, bool Split>
__device__ __forceinline__ typename A::Acc warp_tree(const typename A::Acc (&lane)[kLanesPerThread]) {
    using Acc = typename A::Acc;
    if (!Split) {  // lanes 4t..4t+3: two levels in the thread, five across the warp
        Acc v = A::merge(A::merge(lane[0], lane[1]), A::merge(lane[2], lane[3]));
#pragma unroll
        for (int offset = 1; offset < 32; offset *= 2) v = A::merge(v, shuffle_down(v, offset));
        return v;
    }
    // Two runs of 64 lanes: one level in the thread, five across the warp, for each run; then the
    // seventh level joins the two runs.
    Acc lo = A::merge(lane[0], lane[1]), hi = A::merge(lane[2], lane[3]);
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        lo = A::merge(lo, shuffle_down(lo, offset));
        hi = A::merge(hi, shuffle_down(hi, offset));
    }
    return A::merge(lo, hi);
}

// Joins the block's kLanes lane values (four per thread) by the canonical tree; the root lands in
// thread 0. Ends with a barrier so `warp_roots` can be reused.
template <class A, bool Split>
__device__ __forceinline__ typename A::Acc block_tree(const typename A::Acc (&lane)[kLanesPerThread],
                                                      typename A::Acc *warp_roots) {
    typename A::Acc v = warp_tree<A, Split>(lane);
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

// How many steps of a full tile each thread loads before it starts adding: 4 when either side is F64
// (more registers per element), else all 8.
template <class Tx, class Ty> struct LoadBatch {
    static constexpr int value = SplitLanes<Tx, Ty>::value ? 4 : 8;
};

template <class Tx, class Ty>
__device__ __forceinline__ void full_tile(const Tx *__restrict__ x, const Ty *__restrict__ y,
                                          typename PairOf<Tx, Ty>::Acc (&lane)[kLanesPerThread]) {
    using Map = LaneMap<SplitLanes<Tx, Ty>::value>;
    constexpr int kBatch = LoadBatch<Tx, Ty>::value;
#pragma unroll
    for (int j0 = 0; j0 < static_cast<int>(order::kSteps); j0 += kBatch) {
        Tx xv[kBatch][4];
        Ty yv[kBatch][4];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
            Map::load(x + (j0 + j) * order::kLanes, xv[j]);
            Map::load(y + (j0 + j) * order::kLanes, yv[j]);
        }
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
#pragma unroll
            for (int k = 0; k < kLanesPerThread; ++k) add_one<Tx, Ty>(lane[k], xv[j][k], yv[j][k]);
    }
}

// Two full tiles at once, all 32 loads issued before any arithmetic: for narrow types one tile is only
// 4-12 bytes per thread and step (both arrays), too little in flight to cover memory latency.
template <class Tx, class Ty>
__device__ __forceinline__ void full_tile_pair(const Tx *__restrict__ xa, const Ty *__restrict__ ya,
                                               const Tx *__restrict__ xb, const Ty *__restrict__ yb,
                                               typename PairOf<Tx, Ty>::Acc (&a)[kLanesPerThread],
                                               typename PairOf<Tx, Ty>::Acc (&b)[kLanesPerThread]) {
    using Map = LaneMap<SplitLanes<Tx, Ty>::value>;
    constexpr int kSteps = static_cast<int>(order::kSteps);
    Tx xva[kSteps][4], xvb[kSteps][4];
    Ty yva[kSteps][4], yvb[kSteps][4];
#pragma unroll
    for (int j = 0; j < kSteps; ++j) {
        Map::load(xa + j * order::kLanes, xva[j]);
        Map::load(ya + j * order::kLanes, yva[j]);
        Map::load(xb + j * order::kLanes, xvb[j]);
        Map::load(yb + j * order::kLanes, yvb[j]);
    }
#pragma unroll
    for (int j = 0; j < kSteps; ++j)
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) {
            add_one<Tx, Ty>(a[k], xva[j][k], yva[j][k]);
            add_one<Tx, Ty>(b[k], xvb[j][k], yvb[j][k]);
        }
}

// Pairs of at most 6 bytes an element take two tiles at a time; wider pairs already have 8 steps x 16
// bytes or more in flight per thread. Measured on an H100 with MANAGED resident data, every pair at the
// same bytes (docs/PERFORMANCE.md): F32 x F16 went from 0.90-0.94 of F32 x F32's ratio to 1.00 with two
// tiles. Tried and not taken: four tiles for 1- to 3-byte pairs (F16 x I8 17 % slower: 130 registers,
// one block per SM; U8 x U8 6 % slower, I8 x I8 6 % faster), and an L2 prefetch of the next tiles
// before the reductions (+3 % to -12 % for 2-byte pairs).
template <class Tx, class Ty> struct Narrow {
    static constexpr bool value = sizeof(Tx) + sizeof(Ty) <= 6;
};

template <class Tx, class Ty>
__device__ __forceinline__ void partial_tile(const Tx *__restrict__ x, const Ty *__restrict__ y, std::size_t count,
                                             typename PairOf<Tx, Ty>::Acc (&lane)[kLanesPerThread]) {
    using Map = LaneMap<SplitLanes<Tx, Ty>::value>;
    for (std::size_t j = 0; j < order::kSteps; ++j)
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) {
            std::size_t i = j * order::kLanes + Map::lane(k);
            if (i < count) add_one<Tx, Ty>(lane[k], x[i], y[i]);
        }
}

// x, y: n >= 1 elements, aligned to 16 bytes. partials: tile_count(n) slots. ticket: 0 on entry, 0 on
// exit. result: where the last block writes the dot (mapped host memory); nullptr means "partials
// only": the caller (the hybrid CPU+GPU path) joins them itself.
template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreads)
    dot_kernel(const Tx *__restrict__ x, const Ty *__restrict__ y, std::size_t n,
               typename PairOf<Tx, Ty>::Acc *__restrict__ partials, unsigned *ticket, double *result) {
    using P = PairOf<Tx, Ty>;
    using A = typename P::A;
    using Acc = typename P::Acc;
    constexpr bool kSplit = SplitLanes<Tx, Ty>::value;
    __shared__ Acc warp_roots[kWarps];
    __shared__ bool is_last;
    const std::size_t tiles = order::tile_count(n);

    // Narrow pairs take their tiles two at a time (tile and tile + gridDim.x: the same tiles per block as
    // one at a time), so twice the bytes are in flight; each tile is still reduced on its own.
    constexpr bool kPairUp = Narrow<Tx, Ty>::value;
    for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        Acc lane[kLanesPerThread];
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) lane[k] = A::zero();
        const std::size_t begin = tile * order::kTile;
        const std::size_t next = tile + gridDim.x, next_begin = next * order::kTile;
        if (kPairUp && next < tiles && n - next_begin >= order::kTile) {
            Acc lane_b[kLanesPerThread];
#pragma unroll
            for (int k = 0; k < kLanesPerThread; ++k) lane_b[k] = A::zero();
            full_tile_pair<Tx, Ty>(x + begin, y + begin, x + next_begin, y + next_begin, lane, lane_b);
            Acc root_b = block_tree<A, kSplit>(lane_b, warp_roots);
            if (threadIdx.x == 0) partials[next] = root_b;
            // `tile` (a full tile, since the later one is) is reduced below; skip `next` in the loop.
            Acc root = block_tree<A, kSplit>(lane, warp_roots);
            if (threadIdx.x == 0) partials[tile] = root;
            tile += gridDim.x;
            continue;
        }
        if (n - begin >= order::kTile)
            full_tile<Tx, Ty>(x + begin, y + begin, lane);
        else
            partial_tile<Tx, Ty>(x + begin, y + begin, n - begin, lane);
        Acc root = block_tree<A, kSplit>(lane, warp_roots);
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

    Acc lane[kLanesPerThread];
#pragma unroll
    for (int k = 0; k < kLanesPerThread; ++k) lane[k] = A::zero();
    for (std::size_t round = 0; round * order::kLanes < tiles; ++round)
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) {
            std::size_t t = round * order::kLanes + LaneMap<kSplit>::lane(k);
            if (t < tiles) lane[k] = A::merge(lane[k], load_partial(partials + t));
        }
    Acc root = block_tree<A, kSplit>(lane, warp_roots);
    if (threadIdx.x == 0) {
        *reinterpret_cast<volatile double *>(result) = A::finish(root);
        *ticket = 0;  // ready for the next launch on this stream
    }
}

}  // namespace cuda
}  // namespace cudot
