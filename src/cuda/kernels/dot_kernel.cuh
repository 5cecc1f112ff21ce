// dot_kernel.cuh - the one kernel of a GPU dot: tile partials, then the join, in a single launch.
//
// A block of 256 threads computes one tile (src/core/order.hpp) at a time (grid-stride over tiles); each
// thread owns four canonical lanes, chosen so every load instruction of a warp reads contiguous bytes
// (LaneMap below). The lane tree is walked exactly as order.hpp prescribes: the first level(s) inside the
// thread, then warp shuffles, then the levels across the block's warps.
// Each block then takes a ticket; the block that draws the last one joins all partials in the
// canonical order and writes the result straight into mapped host memory, where the host polls it
// (Completion below). No managed memory, no second launch, and the result does not depend on the grid
// size or how the launches of one dot were cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../../core/order.hpp"

namespace cudot {
namespace cuda {

constexpr int kThreads = 256;  // threads of a block: one tile's lanes, four per thread
constexpr int kWarps = kThreads / 32;
constexpr int kLanesPerThread = 4;
static_assert(kThreads * kLanesPerThread == static_cast<int>(order::kLanes), "a block spans one tile's lanes");

template <class Tx, class Ty> using PairOf = order::Pair<Tx, Ty>;

// Where the last block leaves the result, in mapped host memory. Before each launch the host sets the
// slot to kNoResult, a signalling NaN, and polls until the slot holds anything else: the result is one
// aligned 8-byte store, so the host sees all of it or none, and needs no second word written after a
// system-wide fence, which costs the kernel more than the store itself. No dot can produce
// kNoResult, since every result passes through an addition, which quiets a signalling NaN; publish()
// still maps it to the default NaN, so the protocol does not rest on that.
struct Completion {
    std::uint64_t result_bits;
};
constexpr std::uint64_t kNoResult = 0x7ff4000000000001ull;
constexpr std::uint64_t kDefaultNaN = 0x7ff8000000000000ull;

// One launch's arguments: one launch computes every tile of a dot (or of a run of tiles whose partials
// the host joins).
template <class Tx, class Ty> struct DotParams {
    using Acc = typename PairOf<Tx, Ty>::Acc;
    const Tx *x;  // element 0 of the dot (16-byte aligned)
    const Ty *y;
    std::size_t n;       // elements of the whole dot (>= 1)
    std::size_t tiles;   // tiles of this launch, from tile 0 of x and y
    Acc *partials;       // one per tile
    unsigned *ticket;    // 0 before the launch; the join leaves it 0
    Completion *done;    // nullptr: partials only (the host joins them)
};

__device__ __forceinline__ order::SumDouble shuffle_down(order::SumDouble a, int offset) {
    return order::SumDouble{__shfl_down_sync(0xffffffffu, a.s, offset)};
}
__device__ __forceinline__ order::SumF64 shuffle_down(order::SumF64 a, int offset) {
    return order::SumF64{__shfl_down_sync(0xffffffffu, a.s, offset), __shfl_down_sync(0xffffffffu, a.c, offset)};
}
__device__ __forceinline__ order::SumI64 shuffle_down(order::SumI64 a, int offset) {
    return order::SumI64{static_cast<std::int64_t>(
        __shfl_down_sync(0xffffffffu, static_cast<long long>(a.s), offset))};
}

// Partials are written by one block and read by another in the same dot: read them from L2 (.cg).
__device__ __forceinline__ order::SumDouble load_partial(const order::SumDouble *p) { return order::SumDouble{__ldcg(&p->s)}; }
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
// double conversion instead of two (the CPU's AVX loops do the same).
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

// Which four canonical lanes thread t of a tile owns (k = 0..3),
// and how it loads them.
//  Adjacent: lanes 4t..4t+3, one load per array per step (16 bytes of F32, 8 of F16/BF16, 4 of I8/U8):
//            a warp instruction covers 128 contiguous lanes.
//  Split (used when either side is F64): lanes 128w+2l, +1 and 128w+64+2l, +1 (warp w, lane l), two
//            loads per array per step, each warp instruction covering 64 contiguous lanes. Four adjacent
//            doubles per thread would make each instruction read every other 16 bytes of a 1 KiB span,
//            which costs bus bandwidth when the data is read over PCIe (MAPPED).
// Either way warp w owns lanes [128w, 128w + 128): a whole subtree of the tile's lane tree.
template <bool Split> struct LaneMap;
template <> struct LaneMap<false> {
    __device__ static unsigned lane(unsigned t, int k) { return kLanesPerThread * t + k; }
    template <class T> __device__ static void load(const T *step, unsigned t, T (&v)[4]) {
        load_run<4>(step + kLanesPerThread * t, v);
    }
};
template <> struct LaneMap<true> {
    __device__ static unsigned lane(unsigned t, int k) {
        return 128 * (t / 32) + (k < 2 ? 0 : 64) + 2 * (t % 32) + (k & 1);
    }
    template <class T> __device__ static void load(const T *step, unsigned t, T (&v)[4]) {
        const T *p = step + 128 * (t / 32) + 2 * (t % 32);
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

// Joins the block's lane values (four per thread) by the canonical tree; the root lands in thread 0.
// The block's 8 warps are adjacent subtrees: their roots meet in the next levels of the same tree.
// Ends with a barrier so `warp_roots` can be reused.
template <class A, bool Split>
__device__ __forceinline__ typename A::Acc block_tree(const typename A::Acc (&lane)[kLanesPerThread],
                                                      typename A::Acc *warp_roots) {
    typename A::Acc v = warp_tree<A, Split>(lane);
    const int warp = threadIdx.x / 32, lane_id = threadIdx.x % 32;
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
__device__ __forceinline__ void full_tile(const Tx *__restrict__ x, const Ty *__restrict__ y, unsigned t,
                                          typename PairOf<Tx, Ty>::Acc (&lane)[kLanesPerThread]) {
    using Map = LaneMap<SplitLanes<Tx, Ty>::value>;
    constexpr int kBatch = LoadBatch<Tx, Ty>::value;
#pragma unroll
    for (int j0 = 0; j0 < static_cast<int>(order::kSteps); j0 += kBatch) {
        Tx xv[kBatch][4];
        Ty yv[kBatch][4];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
            Map::load(x + (j0 + j) * order::kLanes, t, xv[j]);
            Map::load(y + (j0 + j) * order::kLanes, t, yv[j]);
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
                                               const Tx *__restrict__ xb, const Ty *__restrict__ yb, unsigned ta,
                                               unsigned tb, typename PairOf<Tx, Ty>::Acc (&a)[kLanesPerThread],
                                               typename PairOf<Tx, Ty>::Acc (&b)[kLanesPerThread]) {
    using Map = LaneMap<SplitLanes<Tx, Ty>::value>;
    constexpr int kSteps = static_cast<int>(order::kSteps);
    Tx xva[kSteps][4], xvb[kSteps][4];
    Ty yva[kSteps][4], yvb[kSteps][4];
#pragma unroll
    for (int j = 0; j < kSteps; ++j) {
        Map::load(xa + j * order::kLanes, ta, xva[j]);
        Map::load(ya + j * order::kLanes, ta, yva[j]);
        Map::load(xb + j * order::kLanes, tb, xvb[j]);
        Map::load(yb + j * order::kLanes, tb, yvb[j]);
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
// bytes or more in flight per thread, enough to cover memory latency.
template <class Tx, class Ty> struct Narrow {
    static constexpr bool value = sizeof(Tx) + sizeof(Ty) <= 6;
};

// The last, short tile (count < kTile elements): its whole steps with full-width loads, one step at a
// time, then the lanes of the one ragged step that has elements.
template <class Tx, class Ty>
__device__ __forceinline__ void partial_tile(const Tx *__restrict__ x, const Ty *__restrict__ y, std::size_t count,
                                             unsigned t, typename PairOf<Tx, Ty>::Acc (&lane)[kLanesPerThread]) {
    using Map = LaneMap<SplitLanes<Tx, Ty>::value>;
    // The whole steps' loads are issued together, as full_tile's are: a short tile is the whole of a
    // small dot, whose time is these loads' latency, one round trip per batch instead of one per step.
    constexpr int kBatch = LoadBatch<Tx, Ty>::value;
    const int whole = static_cast<int>(count / order::kLanes);
#pragma unroll
    for (int j0 = 0; j0 < static_cast<int>(order::kSteps); j0 += kBatch) {
        Tx xv[kBatch][4];
        Ty yv[kBatch][4];
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
            if (j0 + j < whole) {
                Map::load(x + (j0 + j) * order::kLanes, t, xv[j]);
                Map::load(y + (j0 + j) * order::kLanes, t, yv[j]);
            }
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
            if (j0 + j < whole)
#pragma unroll
                for (int k = 0; k < kLanesPerThread; ++k) add_one<Tx, Ty>(lane[k], xv[j][k], yv[j][k]);
    }
    const std::size_t rest = count % order::kLanes, at = whole * order::kLanes;
#pragma unroll
    for (int k = 0; k < kLanesPerThread; ++k)
        if (Map::lane(t, k) < rest) add_one<Tx, Ty>(lane[k], x[at + Map::lane(t, k)], y[at + Map::lane(t, k)]);
}

// Writes the result where the host polls for it, in one store (Completion).
__device__ __forceinline__ void publish(Completion *done, double result) {
    std::uint64_t bits = static_cast<std::uint64_t>(__double_as_longlong(result));
    if (result != result) bits = kDefaultNaN;  // one NaN, the host's quiet_NaN(): also the asynchronous result's
    *reinterpret_cast<volatile std::uint64_t *>(&done->result_bits) = bits;
}

// The join (order.hpp, step 4): tile partials dealt to the kLanes join lanes, then the lane tree; the
// root lands in thread 0.
// (The `tiles` partials from `partials`: one dot's, or one row's of a batch, rows_kernel.cuh.)
template <class Tx, class Ty>
__device__ typename PairOf<Tx, Ty>::Acc join_tiles(const typename PairOf<Tx, Ty>::Acc *partials, std::size_t tiles,
                                                   typename PairOf<Tx, Ty>::Acc *warp_roots) {
    using A = typename PairOf<Tx, Ty>::A;
    using Acc = typename A::Acc;
    constexpr bool kSplit = SplitLanes<Tx, Ty>::value;
    Acc lane[kLanesPerThread];
#pragma unroll
    for (int k = 0; k < kLanesPerThread; ++k) lane[k] = A::zero();
    for (std::size_t round = 0; round * order::kLanes < tiles; ++round)
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) {
            const std::size_t tile = round * order::kLanes + LaneMap<kSplit>::lane(threadIdx.x, k);
            if (tile < tiles) lane[k] = A::merge(lane[k], load_partial(partials + tile));
        }
    return block_tree<A, kSplit>(lane, warp_roots);
}
template <class Tx, class Ty>
__device__ typename PairOf<Tx, Ty>::Acc join_partials(const DotParams<Tx, Ty> &p,
                                                      typename PairOf<Tx, Ty>::Acc *warp_roots) {
    return join_tiles<Tx, Ty>(p.partials, p.tiles, warp_roots);
}

// Narrow pairs take their tiles two at a time, tile and tile + gridDim.x (the same tiles per block as
// one at a time), so twice the bytes are in flight; each tile is still reduced on its own. They pair
// up only where the second tile is in this launch and full (then the first one is too).
template <class Tx, class Ty>
__device__ __forceinline__ bool pairs_up(const DotParams<Tx, Ty> &p, std::size_t tile) {
    const std::size_t other = tile + gridDim.x;
    return Narrow<Tx, Ty>::value && other < p.tiles && p.n - other * order::kTile >= order::kTile;
}

// After a launch's tiles, for a launch that joins on the device: the ticket and the join by the block
// that finishes last.
// `root` is the last tile's root (thread 0's): a dot of one tile in one block (n <= 8192)
// publishes it without reading it back, as the join of one partial computes it (the partial merged into
// an empty join lane: order.hpp; the CPU joins one tile the same way).
template <class Tx, class Ty>
__device__ __forceinline__ void finish_dot(const DotParams<Tx, Ty> &p, typename PairOf<Tx, Ty>::Acc *warp_roots,
                                           const typename PairOf<Tx, Ty>::Acc &root_of_last) {
    using A = typename PairOf<Tx, Ty>::A;
    using Acc = typename PairOf<Tx, Ty>::Acc;
    __shared__ bool is_last;
    if (!p.done) return;
    if (p.tiles == 1 && gridDim.x == 1) {
        if (threadIdx.x == 0) publish(p.done, A::finish(A::merge(A::zero(), root_of_last)));
        return;
    }

    // Publish this block's partials, then count finished blocks; the last one joins. A dot of one
    // block needs no ticket, only a barrier so its threads see what thread 0 wrote.
    if (gridDim.x > 1) {
        if (threadIdx.x == 0) {
            __threadfence();
            is_last = atomicAdd(p.ticket, 1u) == gridDim.x - 1;
        }
        __syncthreads();
        if (!is_last) return;
        __threadfence();
    } else {
        __syncthreads();
    }
    const Acc root = join_partials<Tx, Ty>(p, warp_roots);
    if (threadIdx.x == 0) {
        if (gridDim.x > 1) *p.ticket = 0;  // ready for the next dot on this stream
        publish(p.done, A::finish(root));
    }
}

// Blocks take the tiles blockIdx.x, then every gridDim.x-th one, below tiles.
// kMinBlocksPerSM: told that two blocks per SM are enough, the compiler keeps a whole tile's loads in
// registers and issues them before the first addition; left to itself it held 48 registers and
// interleaved loads with additions, several dependent round trips to memory per tile.
constexpr int kMinBlocksPerSM = 2;
template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM) dot_kernel(const DotParams<Tx, Ty> p) {
    using P = PairOf<Tx, Ty>;
    using A = typename P::A;
    using Acc = typename P::Acc;
    constexpr bool kSplit = SplitLanes<Tx, Ty>::value;
    __shared__ Acc warp_roots[kWarps];
    Acc root_of_last = A::zero();
    const unsigned t = threadIdx.x;

    for (std::size_t tile = blockIdx.x; tile < p.tiles; tile += (pairs_up(p, tile) ? 2 : 1) * gridDim.x) {
        const std::size_t begin = tile * order::kTile;
        Acc lane[kLanesPerThread];
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) lane[k] = A::zero();
        if (pairs_up(p, tile)) {
            const std::size_t other = tile + gridDim.x, other_begin = other * order::kTile;
            Acc lane_b[kLanesPerThread];
#pragma unroll
            for (int k = 0; k < kLanesPerThread; ++k) lane_b[k] = A::zero();
            full_tile_pair<Tx, Ty>(p.x + begin, p.y + begin, p.x + other_begin, p.y + other_begin, t, t, lane,
                                   lane_b);
            const Acc root_b = block_tree<A, kSplit>(lane_b, warp_roots);
            if (threadIdx.x == 0) p.partials[other] = root_b;
        } else if (p.n - begin >= order::kTile) {
            full_tile<Tx, Ty>(p.x + begin, p.y + begin, t, lane);
        } else {
            partial_tile<Tx, Ty>(p.x + begin, p.y + begin, p.n - begin, t, lane);
        }
        const Acc root = block_tree<A, kSplit>(lane, warp_roots);
        if (threadIdx.x == 0) p.partials[tile] = root;
        root_of_last = root;
    }
    finish_dot(p, warp_roots, root_of_last);
}

// Views that are not dense (a stride other than 1, or an address not 16-byte aligned): one element per
// load, at element i * stride (bytes) from element 0, and any address at all (an element not aligned to
// its type is read byte by byte). The same tiles, lanes, trees and join as dot_kernel,
// so the same bits; the vector loads are what it gives up.
struct StridedView {
    const unsigned char *data;  // element 0
    long long stride;           // bytes from element i to i + 1 (signed; 0 repeats element 0)
    bool aligned;               // data and stride are multiples of the element's size
};

template <class T>
__device__ __forceinline__ T load_element(const StridedView &v, std::size_t i) {
    const unsigned char *p = v.data + static_cast<long long>(i) * v.stride;
    if (v.aligned) return *reinterpret_cast<const T *>(p);
    unsigned char b[sizeof(T)];
#pragma unroll
    for (unsigned k = 0; k < sizeof(T); ++k) b[k] = p[k];
    T value;
    memcpy(&value, b, sizeof value);
    return value;
}

// The lanes of one tile of `count` elements (at most kTile) from element `begin` of two views, one element
// per load.
template <class Tx, class Ty>
__device__ __forceinline__ void strided_tile(const StridedView &x, const StridedView &y, std::size_t begin,
                                             std::size_t count, typename PairOf<Tx, Ty>::Acc (&lane)[kLanesPerThread]) {
    using Map = LaneMap<SplitLanes<Tx, Ty>::value>;
#pragma unroll
    for (int j = 0; j < static_cast<int>(order::kSteps); ++j)
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) {
            const std::size_t e = j * order::kLanes + Map::lane(threadIdx.x, k);
            if (e < count) add_one<Tx, Ty>(lane[k], load_element<Tx>(x, begin + e), load_element<Ty>(y, begin + e));
        }
}

template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM)
    strided_dot_kernel(const DotParams<Tx, Ty> p, const StridedView x, const StridedView y) {
    using P = PairOf<Tx, Ty>;
    using A = typename P::A;
    using Acc = typename P::Acc;
    constexpr bool kSplit = SplitLanes<Tx, Ty>::value;
    __shared__ Acc warp_roots[kWarps];
    Acc root_of_last = A::zero();

    for (std::size_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
        const std::size_t begin = tile * order::kTile;
        const std::size_t count = p.n - begin < order::kTile ? p.n - begin : order::kTile;
        Acc lane[kLanesPerThread];
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) lane[k] = A::zero();
        strided_tile<Tx, Ty>(x, y, begin, count, lane);
        const Acc root = block_tree<A, kSplit>(lane, warp_roots);
        if (threadIdx.x == 0) p.partials[tile] = root;
        root_of_last = root;
    }
    finish_dot(p, warp_roots, root_of_last);
}

}  // namespace cuda
}  // namespace cudot
