// rows_kernel.cuh - the kernels of a batch of dots (cudot_dot_rows on a GPU): every row of the batch in
// one launch, each row with the bits of its own dot (dot_kernel.cuh computes a single dot).
//
// A row's bits are fixed by its tiles, lanes and trees (src/core/order.hpp), not by who computes them, so
// each kind of row goes to whoever keeps the GPU busiest while walking the same lanes and trees:
//  - rows_short_kernel, rows of at most 1024 elements (one step of one tile), a batch of equal rows:
//     - up to 256 elements, several rows to a warp: a group of `group` threads per row, each thread
//       holding 4 or 8 adjacent lanes. The lane tree over lanes 0 .. 4 * group * sub - 1 is walked in the
//       thread and then across the group by shuffles; the levels above it merge that root with empty
//       subtrees, which changes nothing finish() can see (order.hpp), so they are skipped, as the CPU
//       skips them;
//     - up to 1024, a warp per row: the eight 128-lane subtrees a block's eight warps would compute
//       (dot_kernel's LaneMap, warp w's lanes), loaded together, then the three levels above them.
//    Dense rows of the float and double pairs mostly take rows_staged_kernel (rows_staged_kernel.cuh)
//    instead: the same walk, its loads staged through shared memory.
//  - rows_tile_kernel, every other batch: a block per tile, exactly as dot_kernel computes a tile
//    (full_tile, partial_tile, strided_tile, block_tree). A row of one tile is finished by its block;
//    the tiles of a longer row leave partials, and the block that takes the row's last ticket joins them
//    (join_tiles, the single dot's join).
// Warps and blocks take contiguous runs of rows or tiles, so a segmented batch finds its first row once.
// Each result is one 8-byte store, into device memory or into mapped host memory the host polls (a
// blocking batch of few rows: dot_kernel.cuh's Completion protocol, one slot per row).
#pragma once

#include "dot_kernel.cuh"

namespace cudot {
namespace cuda {

enum RowsLayoutCode : int { kRowsStrided = 0, kRowsSegmented = 1, kRowsPointers = 2 };

// One launch over a batch, without its element types.
struct RowsParams {
    const unsigned char *x, *y;        // Strided: row 0's element 0; Segmented: element 0 of the long vectors
    long long x_row_bytes, y_row_bytes;  // Strided: bytes from row i's element 0 to row i + 1's (signed)
    long long x_step, y_step;          // bytes from element i of a row to element i + 1 (signed)
    const long long *offsets;          // Segmented: count + 1 (device copy)
    const unsigned long long *first_item;  // Segmented: count + 1, the tiles of the rows before row i
    const unsigned char *const *x_rows;    // Pointers: count each (device copies)
    const unsigned char *const *y_rows;
    unsigned long long n;              // Strided, Pointers: elements of every row
    unsigned long long count;          // rows
    unsigned long long items;          // rows_short_kernel: rows; rows_tile_kernel: the tiles of all rows
                                       // (an empty row has one)
    unsigned long long tiles_per_row;  // Strided, Pointers: tile_count(n) (at least 1); exact_rows_kernel:
                                       // the parts of every row
    unsigned long long part;           // exact_rows_kernel: elements of a part of a row (items are parts)
    int layout;                        // RowsLayoutCode
    int group;                         // rows_short_kernel: threads per row (1..32); 0: a warp per row
    int sub;                           // group > 0: 1 (4 lanes per thread) or 2 (8 lanes)
    int dense;                         // every row 16-byte aligned with steps of one element: vector loads
    int contiguous;                    // steps of one element, elements aligned to their type
    int tile_major;                    // rows_tile_kernel: items run over the rows of tile 0, then tile 1..
                                       // (a repeated operand's tile is read once and then found in L2)
    int x_aligned, y_aligned;          // not dense: elements aligned to their type
    void *partials;                    // one per item, for rows of several tiles
    unsigned *tickets;                 // one per row, 0 before the launch (rows of several tiles)
    double *results;                   // count: device memory, or mapped host memory the host polls
};

struct RowView {
    const unsigned char *x, *y;
    unsigned long long n;
};

__device__ __forceinline__ RowView row_view(const RowsParams &p, unsigned long long r) {
    if (p.layout == kRowsStrided)
        return RowView{p.x + static_cast<long long>(r) * p.x_row_bytes, p.y + static_cast<long long>(r) * p.y_row_bytes,
                       p.n};
    if (p.layout == kRowsSegmented) {
        const long long b = p.offsets[r], e = p.offsets[r + 1];
        return RowView{p.x + b * p.x_step, p.y + b * p.y_step, static_cast<unsigned long long>(e - b)};
    }
    return RowView{p.x_rows[r], p.y_rows[r], p.n};
}

// Element i of a row: a plain load when the batch is dense, else load_element's (strides, alignment).
template <class T>
__device__ __forceinline__ T row_element(const unsigned char *row, unsigned long long i, long long step, int dense,
                                         int aligned) {
    if (dense) return reinterpret_cast<const T *>(row)[i];
    return load_element<T>(StridedView{row, step, aligned != 0}, i);
}

// Four adjacent elements from an address aligned to 16 bytes (or to 4 elements, if less).
template <class T> __device__ __forceinline__ void load_four(const T *p, T (&v)[4]) {
    if constexpr (sizeof(T) * 4 <= 16) {
        load_run<4>(p, v);
    } else {
        T a[2], b[2];
        load_run<2>(p, a);
        load_run<2>(p + 2, b);
        v[0] = a[0]; v[1] = a[1]; v[2] = b[0]; v[3] = b[1];
    }
}

// The result as every backend returns it: one NaN.
__device__ __forceinline__ double canonical(double r) {
    return r != r ? __longlong_as_double(static_cast<long long>(kDefaultNaN)) : r;
}

// ---- short rows: `group` threads a row ----

// How many row groups a warp loads before it adds: enough bytes in flight without spilling registers.
template <class Tx, class Ty, int Sub> struct ShortBatch {
    static constexpr int value = (sizeof(Tx) + sizeof(Ty) >= 12 ? 2 : 4) / Sub;
};

// Rows [first, end) of at most 128 * Sub elements, `group` threads a row, 4 * Sub adjacent lanes a thread.
template <class Tx, class Ty, int Sub>
__device__ void short_rows(const RowsParams &p, unsigned long long first, unsigned long long end) {
    using P = PairOf<Tx, Ty>;
    using A = typename P::A;
    using Acc = typename P::Acc;
    constexpr int kBatch = ShortBatch<Tx, Ty, Sub>::value, kLanes = 4 * Sub;
    const int lane_id = threadIdx.x % 32, group = p.group, in_group = lane_id % group;
    const unsigned long long per_pass = 32 / group, at0 = static_cast<unsigned long long>(kLanes) * in_group;
    for (unsigned long long base = first; base < end; base += kBatch * per_pass) {
        Tx xv[kBatch][kLanes];
        Ty yv[kBatch][kLanes];
        unsigned long long n_of[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const unsigned long long r = base + b * per_pass + lane_id / group;
            n_of[b] = 0;
            if (r >= end) continue;
            const RowView v = row_view(p, r);
            n_of[b] = v.n;
#pragma unroll
            for (int s = 0; s < Sub; ++s) {
                const unsigned long long at = at0 + 4 * s;  // this thread's lanes at .. at + 3
                if (p.dense && at + 4 <= v.n) {
                    Tx x4[4];
                    Ty y4[4];
                    load_four(reinterpret_cast<const Tx *>(v.x) + at, x4);
                    load_four(reinterpret_cast<const Ty *>(v.y) + at, y4);
#pragma unroll
                    for (int k = 0; k < 4; ++k) {
                        xv[b][4 * s + k] = x4[k];
                        yv[b][4 * s + k] = y4[k];
                    }
                } else {
#pragma unroll
                    for (int k = 0; k < 4; ++k)
                        if (at + k < v.n) {
                            xv[b][4 * s + k] = row_element<Tx>(v.x, at + k, p.x_step, p.dense, p.x_aligned);
                            yv[b][4 * s + k] = row_element<Ty>(v.y, at + k, p.y_step, p.dense, p.y_aligned);
                        }
                }
            }
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            // Lanes past the row's end stay empty (+0), as the canonical order leaves them.
            Acc lane[kLanes];
#pragma unroll
            for (int k = 0; k < kLanes; ++k) {
                lane[k] = A::zero();
                if (at0 + k < n_of[b]) add_one<Tx, Ty>(lane[k], xv[b][k], yv[b][k]);
            }
            Acc v = A::merge(A::merge(lane[0], lane[1]), A::merge(lane[2], lane[3]));
            if constexpr (Sub == 2) v = A::merge(v, A::merge(A::merge(lane[4], lane[5]), A::merge(lane[6], lane[7])));
            for (int offset = 1; offset < group; offset *= 2) v = A::merge(v, shuffle_down(v, offset));
            const unsigned long long r = base + b * per_pass + lane_id / group;
            if (in_group == 0 && r < end) p.results[r] = canonical(A::finish(A::merge(A::zero(), v)));
        }
    }
}

// ---- rows of one step: a warp a row ----

// The root of a row of `count` elements (at most kLanes) in lane 0 of the warp: warp w's 128-lane
// subtrees of dot_kernel, w = 0..7, their loads issued together (kBatch subtrees at a time), then the
// three levels above them, as block_tree's warp 0 walks them.
template <class Tx, class Ty>
__device__ typename PairOf<Tx, Ty>::Acc warp_row(const RowsParams &p, const RowView &v, unsigned count) {
    using P = PairOf<Tx, Ty>;
    using A = typename P::A;
    using Acc = typename P::Acc;
    constexpr bool kSplit = SplitLanes<Tx, Ty>::value;
    using Map = LaneMap<kSplit>;
    constexpr int kBatch = LoadBatch<Tx, Ty>::value;
    const unsigned lane_id = threadIdx.x % 32;
    const Tx *xd = reinterpret_cast<const Tx *>(v.x);
    const Ty *yd = reinterpret_cast<const Ty *>(v.y);
    Acc roots[kWarps];
#pragma unroll
    for (int w0 = 0; w0 < kWarps; w0 += kBatch) {
        Tx xv[kBatch][4];
        Ty yv[kBatch][4];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
            const unsigned w = w0 + j, vt = 32 * w + lane_id;
            if (128 * w >= count) continue;
            if (p.dense && 128 * w + 128 <= count) {
                Map::load(xd, vt, xv[j]);
                Map::load(yd, vt, yv[j]);
            } else {
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    const unsigned e = Map::lane(vt, k);
                    if (e < count) {
                        xv[j][k] = row_element<Tx>(v.x, e, p.x_step, p.dense, p.x_aligned);
                        yv[j][k] = row_element<Ty>(v.y, e, p.y_step, p.dense, p.y_aligned);
                    }
                }
            }
        }
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
            const unsigned w = w0 + j, vt = 32 * w + lane_id;
            Acc lane[kLanesPerThread];
#pragma unroll
            for (int k = 0; k < kLanesPerThread; ++k) {
                lane[k] = A::zero();
                if (Map::lane(vt, k) < count) add_one<Tx, Ty>(lane[k], xv[j][k], yv[j][k]);
            }
            roots[w] = 128 * w < count ? warp_tree<A, kSplit>(lane) : A::zero();
        }
    }
    return A::merge(A::merge(A::merge(roots[0], roots[1]), A::merge(roots[2], roots[3])),
                    A::merge(A::merge(roots[4], roots[5]), A::merge(roots[6], roots[7])));
}

// Strided and pointer batches of rows of at most 1024 elements; every warp takes the run [first, end)
// of the rows.
template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreads, 4) rows_short_kernel(const RowsParams p) {
    using A = typename PairOf<Tx, Ty>::A;
    const unsigned long long warps = static_cast<unsigned long long>(gridDim.x) * kWarps;
    const unsigned long long warp = static_cast<unsigned long long>(blockIdx.x) * kWarps + threadIdx.x / 32;
    const unsigned long long first = p.items * warp / warps, end = p.items * (warp + 1) / warps;
    if (p.group > 0) {
        if (p.sub == 1) short_rows<Tx, Ty, 1>(p, first, end);
        else short_rows<Tx, Ty, 2>(p, first, end);
        return;
    }
    for (unsigned long long r = first; r < end; ++r) {
        const RowView v = row_view(p, r);
        const auto root = warp_row<Tx, Ty>(p, v, static_cast<unsigned>(v.n));
        if (threadIdx.x % 32 == 0) p.results[r] = canonical(A::finish(A::merge(A::zero(), root)));
    }
}

// ---- every other batch: a block a tile ----

// The lanes of one tile of `count` elements of two arrays whose elements are one apart but whose rows do not
// start on the 16-byte grid (segments at any offset): one element per load, a batch of steps issued
// before any addition, as full_tile does.
template <class Tx, class Ty>
__device__ __forceinline__ void contiguous_tile(const Tx *__restrict__ x, const Ty *__restrict__ y, unsigned count,
                                                typename PairOf<Tx, Ty>::Acc (&lane)[kLanesPerThread]) {
    using Map = LaneMap<SplitLanes<Tx, Ty>::value>;
    constexpr int kBatch = LoadBatch<Tx, Ty>::value;
#pragma unroll
    for (int j0 = 0; j0 < static_cast<int>(order::kSteps); j0 += kBatch) {
        if (static_cast<unsigned>(j0) * order::kLanes >= count) break;
        Tx xv[kBatch][4];
        Ty yv[kBatch][4];
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const unsigned e = (j0 + j) * order::kLanes + Map::lane(threadIdx.x, k);
                if (e < count) {
                    xv[j][k] = x[e];
                    yv[j][k] = y[e];
                }
            }
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if ((j0 + j) * order::kLanes + Map::lane(threadIdx.x, k) < count) add_one<Tx, Ty>(lane[k], xv[j][k], yv[j][k]);
    }
}

// The row of tile `item` of a segmented batch: the last row whose first item is at most `item`.
__device__ __forceinline__ unsigned long long row_of_item(const RowsParams &p, unsigned long long item) {
    unsigned long long lo = 0, hi = p.count - 1;
    while (lo < hi) {
        const unsigned long long mid = lo + (hi - lo + 1) / 2;
        if (p.first_item[mid] <= item) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// Every block takes the run [first, end) of the batch's tiles, row by row.
template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM) rows_tile_kernel(const RowsParams p) {
    using P = PairOf<Tx, Ty>;
    using A = typename P::A;
    using Acc = typename P::Acc;
    constexpr bool kSplit = SplitLanes<Tx, Ty>::value;
    __shared__ Acc warp_roots[kWarps];
    __shared__ int is_last;
    Acc *partials = static_cast<Acc *>(p.partials);
    const unsigned long long first = p.items * blockIdx.x / gridDim.x, end = p.items * (blockIdx.x + 1) / gridDim.x;
    if (first >= end) return;
    unsigned long long row = p.layout == kRowsSegmented ? row_of_item(p, first) : first / p.tiles_per_row;
    for (unsigned long long item = first; item < end; ++item) {
        unsigned long long row_first, row_tiles;
        if (p.layout == kRowsSegmented) {
            while (p.first_item[row + 1] <= item) ++row;
            row_first = p.first_item[row];
            row_tiles = p.first_item[row + 1] - row_first;
        } else {
            row = p.tile_major ? item % p.count : item / p.tiles_per_row;
            row_first = row * p.tiles_per_row;
            row_tiles = p.tiles_per_row;
        }
        const unsigned long long tile = p.tile_major ? item / p.count : item - row_first;
        const RowView v = row_view(p, row);
        const unsigned long long begin = tile * order::kTile;
        const unsigned long long count = v.n > begin ? (v.n - begin < order::kTile ? v.n - begin : order::kTile) : 0;
        Acc lane[kLanesPerThread];
#pragma unroll
        for (int k = 0; k < kLanesPerThread; ++k) lane[k] = A::zero();
        const Tx *xt = reinterpret_cast<const Tx *>(v.x) + begin;
        const Ty *yt = reinterpret_cast<const Ty *>(v.y) + begin;
        const bool dense = p.dense || (p.contiguous && reinterpret_cast<std::uintptr_t>(v.x) % 16 == 0 &&
                                       reinterpret_cast<std::uintptr_t>(v.y) % 16 == 0);
        if (dense && count == order::kTile) {
            full_tile<Tx, Ty>(xt, yt, threadIdx.x, lane);
        } else if (dense) {
            partial_tile<Tx, Ty>(xt, yt, count, threadIdx.x, lane);
        } else if (p.contiguous) {
            contiguous_tile<Tx, Ty>(xt, yt, static_cast<unsigned>(count), lane);
        } else {
            strided_tile<Tx, Ty>(StridedView{v.x, p.x_step, p.x_aligned != 0}, StridedView{v.y, p.y_step, p.y_aligned != 0},
                                 begin, count, lane);
        }
        const Acc root = block_tree<A, kSplit>(lane, warp_roots);
        if (row_tiles == 1) {  // the join of one partial: merged into an empty join lane (order.hpp)
            if (threadIdx.x == 0) p.results[row] = canonical(A::finish(A::merge(A::zero(), root)));
            continue;
        }
        if (threadIdx.x == 0) {
            partials[row_first + tile] = root;
            __threadfence();
            is_last = atomicAdd(p.tickets + row, 1u) == row_tiles - 1;
        }
        __syncthreads();
        if (!is_last) continue;
        __threadfence();
        const Acc joined = join_tiles<Tx, Ty>(partials + row_first, row_tiles, warp_roots);
        if (threadIdx.x == 0) {
            p.tickets[row] = 0;
            p.results[row] = canonical(A::finish(joined));
        }
    }
}

}  // namespace cuda
}  // namespace cudot
