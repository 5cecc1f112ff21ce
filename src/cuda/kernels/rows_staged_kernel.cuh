// rows_staged_kernel.cuh - equal dense rows (16-byte aligned, elements one apart) of at most 1024
// elements of the float and double pairs, as the plan picks them (rows_plan.cu: a warp a row from 129
// elements on, float rows of up to 128 in groups of threads): the same lanes, trees and bits as
// rows_short_kernel, but each thread's loads go into its own slots of shared memory (cp.async) several
// passes ahead of its arithmetic.
//
// Why: rows_short_kernel loads a pass into registers and then adds it, so a warp has bytes in flight only
// between its passes, and the registers that hold them cap the warps a multiprocessor runs; its short
// rows wait on memory (L1TEX scoreboard) at about two thirds of the device's bandwidth. Here the bytes of
// the next passes are in flight while a pass is added, without registers to hold them. A thread reads
// back only what it copied itself, so no barrier is needed: waiting for its own copies is enough. The
// slots' 16-byte pieces are interleaved across the block's threads: with each thread's slot contiguous,
// bank conflicts held the kernel to half the device's bandwidth.
#pragma once

#include "rows_kernel.cuh"

namespace cudot {
namespace cuda {

// The shared memory a block of the staged kernel takes: three blocks a multiprocessor on Hopper.
constexpr std::size_t kStagedBlockBytes = 64 * 1024;
constexpr int kStagedThreadBytes = static_cast<int>(kStagedBlockBytes / kThreads);

// A thread's slot for one pass of `Lanes` elements of x and of y, and how many slots it cycles through.
template <class Tx, class Ty, int Lanes> struct Staging {
    static constexpr int kXBytes = Lanes * static_cast<int>(sizeof(Tx));
    static constexpr int kBytes = (Lanes * static_cast<int>(sizeof(Tx) + sizeof(Ty)) + 15) / 16 * 16;
    static constexpr int kStages = kStagedThreadBytes / kBytes < 16 ? kStagedThreadBytes / kBytes : 16;
    static constexpr std::size_t kStageStride = static_cast<std::size_t>(kThreads) * kBytes;
    static_assert(kStages >= 2, "a slot to add from and one in flight");
};

// Byte `o` of this thread's slot, `slot` being the stage plus 16 * threadIdx.x: a slot's 16-byte pieces
// are interleaved with the other threads' (piece j of thread t at 16 * (j * kThreads + t)), so that a
// warp's copies and reads of one piece touch every bank once.
__device__ __forceinline__ unsigned char *slot_byte(unsigned char *slot, int o) {
    return slot + (o / 16) * (kThreads * 16) + o % 16;
}
__device__ __forceinline__ const unsigned char *slot_byte(const unsigned char *slot, int o) {
    return slot + (o / 16) * (kThreads * 16) + o % 16;
}

// Bytes (4, 8, 16 or 32, aligned to their size, at most 16) from global memory to byte `o` of a slot,
// asynchronously where the GPU can (compute capability 8.0 on), else through a register.
template <int Bytes> __device__ __forceinline__ void copy_async(unsigned char *slot, int o, const void *from) {
    if constexpr (Bytes == 32) {
        copy_async<16>(slot, o, from);
        copy_async<16>(slot, o + 16, static_cast<const unsigned char *>(from) + 16);
    } else {
        unsigned char *to = slot_byte(slot, o);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(to));
        if constexpr (Bytes == 16)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(at), "l"(from) : "memory");
        else
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(at), "l"(from), "n"(Bytes) : "memory");
#else
        using W = typename Word<Bytes>::type;
        *reinterpret_cast<W *>(to) = __ldg(reinterpret_cast<const W *>(from));
#endif
    }
}

__device__ __forceinline__ void commit_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Until at most `Pending` of this thread's committed groups of copies are still in flight.
template <int Pending> __device__ __forceinline__ void wait_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

// N elements of T from byte `o` of a slot (aligned to N * sizeof(T), up to 16 bytes, or two pieces).
template <int N, class T> __device__ __forceinline__ void read_slot(const unsigned char *slot, int o, T *v) {
    constexpr int kBytes = N * static_cast<int>(sizeof(T));
    if constexpr (kBytes == 32) {
        const uint4 a = *reinterpret_cast<const uint4 *>(slot_byte(slot, o));
        const uint4 b = *reinterpret_cast<const uint4 *>(slot_byte(slot, o + 16));
        memcpy(v, &a, 16);
        memcpy(reinterpret_cast<unsigned char *>(v) + 16, &b, 16);
    } else {
        using W = typename Word<kBytes>::type;
        const W w = *reinterpret_cast<const W *>(slot_byte(slot, o));
        memcpy(v, &w, sizeof w);
    }
}

// The slot after `s` in a cycle of `Stages`.
template <int Stages> __device__ __forceinline__ int next_slot(int s) { return s + 1 == Stages ? 0 : s + 1; }

// short_rows (rows_kernel.cuh) on staged loads, for rows of at most 128 elements: rows [first, end),
// `group` threads a row, 4 adjacent lanes a thread; lanes of a row's ragged end are read from global
// memory when added.
template <class Tx, class Ty>
__device__ void staged_group_rows(const RowsParams &p, unsigned long long first, unsigned long long end,
                                  unsigned char *stage) {
    using P = PairOf<Tx, Ty>;
    using A = typename P::A;
    using Acc = typename P::Acc;
    using S = Staging<Tx, Ty, 4>;
    const int lane_id = threadIdx.x % 32, group = p.group, in_group = lane_id % group;
    const unsigned long long per_pass = 32 / group, at = 4ull * in_group;  // this thread's lanes at .. at + 3
    const unsigned long long passes = (end - first + per_pass - 1) / per_pass, n = p.n;
    unsigned char *const mine = stage + 16 * threadIdx.x;
    unsigned long long issued = 0;  // the next pass to copy
    int issue_slot = 0;
    const auto issue = [&]() {
        const unsigned long long r = first + issued * per_pass + lane_id / group;
        if (issued < passes && r < end && at + 4 <= n) {
            const RowView v = row_view(p, r);
            unsigned char *slot = mine + issue_slot * S::kStageStride;
            copy_async<4 * sizeof(Tx)>(slot, 0, reinterpret_cast<const Tx *>(v.x) + at);
            copy_async<4 * sizeof(Ty)>(slot, S::kXBytes, reinterpret_cast<const Ty *>(v.y) + at);
        }
        commit_copies();  // one group a pass, even an empty one, so that the count of groups is the passes'
        ++issued;
        issue_slot = next_slot<S::kStages>(issue_slot);
    };
#pragma unroll 1
    for (int i = 0; i < S::kStages - 1; ++i) issue();
    int slot_at = 0;
#pragma unroll 1
    for (unsigned long long i = 0; i < passes; ++i) {
        issue();
        wait_copies<S::kStages - 1>();  // pass i's copies are in
        const unsigned long long r = first + i * per_pass + lane_id / group;
        const unsigned long long n_row = r < end ? n : 0;
        const unsigned char *slot = mine + slot_at * S::kStageStride;
        slot_at = next_slot<S::kStages>(slot_at);
        Tx xv[4];
        Ty yv[4];
        if (at + 4 <= n_row) {
            read_slot<4>(slot, 0, xv);
            read_slot<4>(slot, S::kXBytes, yv);
        } else if (at < n_row) {
            const RowView v = row_view(p, r);
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (at + k < n_row) {
                    xv[k] = reinterpret_cast<const Tx *>(v.x)[at + k];
                    yv[k] = reinterpret_cast<const Ty *>(v.y)[at + k];
                }
        }
        // From here as short_rows: lanes past the row's end stay empty (+0).
        Acc lane[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            lane[k] = A::zero();
            if (at + k < n_row) add_one<Tx, Ty>(lane[k], xv[k], yv[k]);
        }
        Acc v = A::merge(A::merge(lane[0], lane[1]), A::merge(lane[2], lane[3]));
        for (int offset = 1; offset < group; offset *= 2) v = A::merge(v, shuffle_down(v, offset));
        if (in_group == 0 && r < end) p.results[r] = canonical(A::finish(A::merge(A::zero(), v)));
    }
}

// warp_row (rows_kernel.cuh) on staged loads: rows [first, end), a warp a row, its 128-lane subtrees
// copied in order, row after row; a subtree the row fills only in part is read from global memory.
template <class Tx, class Ty>
__device__ void staged_warp_rows(const RowsParams &p, unsigned long long first, unsigned long long end,
                                 unsigned char *stage) {
    using P = PairOf<Tx, Ty>;
    using A = typename P::A;
    using Acc = typename P::Acc;
    constexpr bool kSplit = SplitLanes<Tx, Ty>::value;
    using Map = LaneMap<kSplit>;
    using S = Staging<Tx, Ty, kLanesPerThread>;
    const unsigned lane_id = threadIdx.x % 32, count = static_cast<unsigned>(p.n);
    const unsigned subtrees = (count + 127) / 128;  // those with elements; the others' roots are empty
    unsigned char *const mine = stage + 16 * threadIdx.x;
    unsigned long long issue_row = first;
    unsigned issue_w = 0;
    int issue_slot = 0;
    const auto issue = [&]() {
        if (issue_row < end && 128 * issue_w + 128 <= count) {
            const RowView v = row_view(p, issue_row);
            const Tx *xd = reinterpret_cast<const Tx *>(v.x);
            const Ty *yd = reinterpret_cast<const Ty *>(v.y);
            unsigned char *slot = mine + issue_slot * S::kStageStride;
            if constexpr (!kSplit) {  // lanes 4t .. 4t + 3 of the subtree's thread t (LaneMap<false>)
                const unsigned at = 128 * issue_w + 4 * lane_id;
                copy_async<4 * sizeof(Tx)>(slot, 0, xd + at);
                copy_async<4 * sizeof(Ty)>(slot, S::kXBytes, yd + at);
            } else {  // lanes 2t, 2t + 1 and 64 + 2t, 65 + 2t (LaneMap<true>)
                const unsigned at = 128 * issue_w + 2 * lane_id;
                copy_async<2 * sizeof(Tx)>(slot, 0, xd + at);
                copy_async<2 * sizeof(Tx)>(slot, 2 * sizeof(Tx), xd + at + 64);
                copy_async<2 * sizeof(Ty)>(slot, S::kXBytes, yd + at);
                copy_async<2 * sizeof(Ty)>(slot, S::kXBytes + 2 * sizeof(Ty), yd + at + 64);
            }
        }
        commit_copies();
        if (++issue_w == subtrees) {
            issue_w = 0;
            ++issue_row;
        }
        issue_slot = next_slot<S::kStages>(issue_slot);
    };
#pragma unroll 1
    for (int i = 0; i < S::kStages - 1; ++i) issue();
    int slot_at = 0;
#pragma unroll 1
    for (unsigned long long r = first; r < end; ++r) {
        // Subtree w's root, its copies taken in order (subtrees without elements are empty roots).
        const auto subtree = [&](unsigned w) {
            if (w >= subtrees) return A::zero();
            issue();
            wait_copies<S::kStages - 1>();
            const unsigned char *slot = mine + slot_at * S::kStageStride;
            slot_at = next_slot<S::kStages>(slot_at);
            const unsigned vt = 32 * w + lane_id;
            Tx xv[4];
            Ty yv[4];
            if (128 * w + 128 <= count) {
                if constexpr (!kSplit) {
                    read_slot<4>(slot, 0, xv);
                    read_slot<4>(slot, S::kXBytes, yv);
                } else {
                    read_slot<2>(slot, 0, xv);
                    read_slot<2>(slot, 2 * sizeof(Tx), xv + 2);
                    read_slot<2>(slot, S::kXBytes, yv);
                    read_slot<2>(slot, S::kXBytes + 2 * sizeof(Ty), yv + 2);
                }
            } else {
                const RowView v = row_view(p, r);
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    const unsigned e = Map::lane(vt, k);
                    if (e < count) {
                        xv[k] = reinterpret_cast<const Tx *>(v.x)[e];
                        yv[k] = reinterpret_cast<const Ty *>(v.y)[e];
                    }
                }
            }
            Acc lane[kLanesPerThread];
#pragma unroll
            for (int k = 0; k < kLanesPerThread; ++k) {
                lane[k] = A::zero();
                if (Map::lane(vt, k) < count) add_one<Tx, Ty>(lane[k], xv[k], yv[k]);
            }
            return warp_tree<A, kSplit>(lane);
        };
        // warp_row's three levels above the eight subtrees, merged as the roots come (one statement
        // each: the subtrees must be taken in order, which function arguments are not).
        const Acc r0 = subtree(0);
        const Acc r1 = subtree(1);
        Acc low = A::merge(r0, r1);
        const Acc r2 = subtree(2);
        const Acc r3 = subtree(3);
        low = A::merge(low, A::merge(r2, r3));
        const Acc r4 = subtree(4);
        const Acc r5 = subtree(5);
        Acc high = A::merge(r4, r5);
        const Acc r6 = subtree(6);
        const Acc r7 = subtree(7);
        high = A::merge(high, A::merge(r6, r7));
        const Acc root = A::merge(low, high);
        if (lane_id == 0) p.results[r] = canonical(A::finish(A::merge(A::zero(), root)));
    }
}

// Dense strided and pointer batches of rows of at most 1024 elements, with kStagedBlockBytes of dynamic
// shared memory; every warp takes the run [first, end) of the rows, as rows_short_kernel's do.
template <class Tx, class Ty> struct StagedBlocks {  // a multiprocessor's blocks the registers are cut for
    static constexpr int value = sizeof(Tx) == 8 || sizeof(Ty) == 8 ? 2 : 3;
};
template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreads, StagedBlocks<Tx, Ty>::value) rows_staged_kernel(const RowsParams p) {
    extern __shared__ __align__(16) unsigned char stage[];
    const unsigned long long warps = static_cast<unsigned long long>(gridDim.x) * kWarps;
    const unsigned long long warp = static_cast<unsigned long long>(blockIdx.x) * kWarps + threadIdx.x / 32;
    const unsigned long long first = p.items * warp / warps, end = p.items * (warp + 1) / warps;
    // The plan stages groups for float rows of up to 128 elements only.
    if constexpr (sizeof(Tx) == 4 && sizeof(Ty) == 4)
        if (p.group > 0) return staged_group_rows<Tx, Ty>(p, first, end, stage);
    staged_warp_rows<Tx, Ty>(p, first, end, stage);
}

}  // namespace cuda
}  // namespace cudot
