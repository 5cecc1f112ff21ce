// exact_rows_kernel.cuh - a batch of dots in the exact mode (cudot_dot_rows with CUDOT_MODE_EXACT on a
// GPU), in one launch. Each row's result is its exact dot rounded once, which is one number whoever sums
// it, so the kernel is free to cut the rows as the GPU likes best (exact_kernel.cuh has the arithmetic):
//  - short rows of a strided or pointer batch (p.group > 0): `group` threads of a warp a row, each
//    with its expansion; the group's expansions merged by shuffles; the row's value is then those two or
//    three terms, rounded by exact::round_terms with no fixed-point sum at all. A row whose terms could
//    not hold everything (very wide ranges of magnitudes, infinities, NaNs) is done again by its whole
//    warp with a fixed-point sum in shared memory, the warp's;
//  - every other batch: a block per item, an item being a part of `p.part` elements of one row. A row of
//    one part is finished by its block; the parts of a longer row leave their terms in a slot (and, if they
//    used their fixed-point sum, its words in a spill slot beside it), and the block that takes the
//    row's last ticket adds them up and rounds.
// Each result is one 8-byte store, as rows_kernel.cuh writes its results.
#pragma once

#include "exact_kernel.cuh"
#include "rows_kernel.cuh"

namespace cudot {
namespace cuda {

// One part's slot: its terms, then its Special bits and whether its words went to its spill slot.
struct ExactRowSlot {
    double term[kExpansion];
    unsigned special;
    unsigned used;
};
constexpr std::size_t kExactSpillBytes = exact::kDigits * sizeof(long long);

// The warp's (or block's) fixed-point sum in shared memory, zero between uses; its words take atomic
// additions as unsigned words (two's complement), as exact_dot_kernel's do.
using ExactScratch = exact::Sum;
__device__ __forceinline__ unsigned long long *words(ExactScratch &s) {
    return reinterpret_cast<unsigned long long *>(s.digit);
}

// Rounds a fixed-point sum in shared memory that `lanes` threads (a warp, or a block's threads) share,
// and zeroes it again; the value goes to thread 0 of them. `index` is the thread's place among them.
// Callers synchronise before (the sum complete) and after (the sum zero again).
__device__ __forceinline__ void scan_words(const ExactScratch &s, unsigned index, unsigned lanes, int &lo, int &hi) {
    lo = exact::kDigits;
    hi = -1;
    for (int i = index; i < exact::kDigits; i += lanes)
        if (s.digit[i] != 0) {
            lo = min(lo, i);
            hi = max(hi, i);
        }
}

__device__ __forceinline__ int warp_min(int v) {
    for (int o = 16; o > 0; o /= 2) v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ int warp_max(int v) {
    for (int o = 16; o > 0; o /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Rounds the sum held in `s` (words lo..hi) with the Special bits, on one thread; `s` is scratch then.
__device__ __forceinline__ double round_scratch(ExactScratch &s, unsigned special, int lo, int hi) {
    if (special) return exact::special_result(special);
    return exact::round_in_place(s, lo, hi);  // s.special is 0: it is never set
}

template <class Tx, class Ty> __device__ __forceinline__ void start(ExactThread<Tx, Ty> &t, unsigned long long *digits) {
#pragma unroll
    for (int k = 0; k < ExactThread<Tx, Ty>::K; ++k) t.e.a[k] = 0.0;
    t.special = 0;
    t.digits = digits;
    t.used = false;
}

// The elements [begin, begin + count) of a row into t: vector loads where the batch is dense (begin
// a multiple of G), else element by element; thread `index` of `lanes` takes every lanes-th load.
// kLoads loads are issued before their products are added: bytes in flight.
template <int kLoads, class Tx, class Ty>
__device__ __forceinline__ void add_range(ExactThread<Tx, Ty> &t, const RowsParams &p, const RowView &v,
                                          unsigned long long begin, unsigned long long count, unsigned index,
                                          unsigned lanes) {
    constexpr int G = kExactGroup<Tx, Ty>;
    const Tx *x = reinterpret_cast<const Tx *>(v.x) + begin;
    const Ty *y = reinterpret_cast<const Ty *>(v.y) + begin;
    if (p.dense) {
        const unsigned long long groups = count / G;
        unsigned long long g = index;
        for (; g + (kLoads - 1) * lanes < groups; g += kLoads * lanes) {
            Tx xv[kLoads][G];
            Ty yv[kLoads][G];
#pragma unroll
            for (int u = 0; u < kLoads; ++u) {
                load_run<G>(x + (g + u * lanes) * G, xv[u]);
                load_run<G>(y + (g + u * lanes) * G, yv[u]);
            }
#pragma unroll
            for (int u = 0; u < kLoads; ++u)
#pragma unroll
                for (int k = 0; k < G; ++k) t.add(xv[u][k], yv[u][k]);
        }
        for (; g < groups; g += lanes) {
            Tx xv[G];
            Ty yv[G];
            load_run<G>(x + g * G, xv);
            load_run<G>(y + g * G, yv);
#pragma unroll
            for (int k = 0; k < G; ++k) t.add(xv[k], yv[k]);
        }
        for (unsigned long long i = groups * G + index; i < count; i += lanes) t.add(x[i], y[i]);
    } else {
        for (unsigned long long i = index; i < count; i += lanes)
            t.add(row_element<Tx>(v.x, begin + i, p.x_step, 0, p.x_aligned),
                  row_element<Ty>(v.y, begin + i, p.y_step, 0, p.y_aligned));
    }
}

// Row r done by the whole warp with the warp's fixed-point sum `s` (zero before and after).
template <class Tx, class Ty> __device__ __noinline__ void warp_exact_row(const RowsParams &p, unsigned long long r, ExactScratch &s) {
    const unsigned lane = threadIdx.x % 32;
    ExactThread<Tx, Ty> t;
    start(t, words(s));
    const RowView v = row_view(p, r);
    RowsParams q = p;
    q.dense = 0;  // element by element: this is the rare road
    add_range<2>(t, q, v, 0, v.n, lane, 32);
    merge_lanes(t, lane, 32);
    if (lane == 0)
#pragma unroll
        for (int k = 0; k < ExactThread<Tx, Ty>::K; ++k)
            if (t.e.a[k] != 0) spill(words(s), t.e.a[k]);
    unsigned special = t.special;
    for (int o = 16; o > 0; o /= 2) special |= __shfl_xor_sync(0xffffffffu, special, o);
    __syncwarp();
    int lo, hi;
    scan_words(s, lane, 32, lo, hi);
    lo = warp_min(lo);
    hi = warp_max(hi);
    if (lane == 0) p.results[r] = canonical(round_scratch(s, special, lo, hi));
    __syncwarp();
    for (int i = lane; i < exact::kDigits; i += 32) s.digit[i] = 0;
    __syncwarp();
}

// Rows [first, end) of a strided or pointer batch, `group` threads a row.
template <class Tx, class Ty>
__device__ void exact_group_rows(const RowsParams &p, unsigned long long first, unsigned long long end, ExactScratch &s) {
    const unsigned lane = threadIdx.x % 32, group = static_cast<unsigned>(p.group), in_group = lane % group;
    const unsigned long long per_pass = 32 / group;
    for (unsigned long long base = first; base < end; base += per_pass) {
        const unsigned long long r = base + lane / group;
        ExactThread<Tx, Ty> t;
        start(t, static_cast<unsigned long long *>(nullptr));
        if (r < end) {
            const RowView v = row_view(p, r);
            add_range<4>(t, p, v, 0, v.n, in_group, group);
        }
        merge_lanes(t, in_group, group);
        unsigned special = t.special;
        if (__any_sync(0xffffffffu, special != 0))
            for (unsigned o = 1; o < group; o *= 2) special |= __shfl_xor_sync(0xffffffffu, special, o);
        const unsigned used = __ballot_sync(0xffffffffu, t.used);
        const unsigned mine = (group == 32 ? 0xffffffffu : ((1u << group) - 1)) << (lane - in_group);
        const bool redo = (used & mine) != 0;
        if (in_group == 0 && r < end && !redo)
            p.results[r] = canonical(special ? exact::special_result(special) : exact::round_terms(t.e));
        unsigned again = __ballot_sync(0xffffffffu, in_group == 0 && r < end && redo);
        while (again) {
            const unsigned leader = __ffs(again) - 1;
            again &= again - 1;
            warp_exact_row<Tx, Ty>(p, base + leader / group, s);
        }
    }
}

// The part `part` of row `row`, its `count` elements from `begin`, by the whole block: the block's
// expansion in thread 0, its Special bits in `special`; returns whether anything went to the block's
// fixed-point sum `s`.
template <class Tx, class Ty>
__device__ bool block_part(const RowsParams &p, const RowView &v, unsigned long long begin, unsigned long long count,
                           ExactThread<Tx, Ty> &t, ExactScratch &s, double *warp_terms, unsigned &special) {
    start(t, words(s));
    RowsParams q = p;
    q.dense = p.dense || (p.contiguous && reinterpret_cast<std::uintptr_t>(v.x) % 16 == 0 &&
                          reinterpret_cast<std::uintptr_t>(v.y) % 16 == 0);
    if (!q.dense && p.contiguous) {  // elements one apart on no 16-byte grid: plain loads, not strided ones
        const Tx *x = reinterpret_cast<const Tx *>(v.x) + begin;
        const Ty *y = reinterpret_cast<const Ty *>(v.y) + begin;
        for (unsigned long long i = threadIdx.x; i < count; i += kThreads) t.add(x[i], y[i]);
    } else {
        add_range<2>(t, q, v, begin, count, threadIdx.x, kThreads);
    }
    if (t.special) atomicOr(&special, t.special);
    merge_block(t, warp_terms);
    return __syncthreads_or(t.used) != 0;
}

// Thread 0's expansion (with the block's fixed-point sum when `used`) rounded into results[row]; the
// sum is zero again after.
template <class Tx, class Ty>
__device__ void finish_block_row(const RowsParams &p, unsigned long long row, ExactThread<Tx, Ty> &t, bool used,
                                 unsigned special, ExactScratch &s, int *bounds) {
    if (!used) {
        if (threadIdx.x == 0)
            p.results[row] = canonical(special ? exact::special_result(special) : exact::round_terms(t.e));
        return;
    }
    if (threadIdx.x == 0) {
#pragma unroll
        for (int k = 0; k < ExactThread<Tx, Ty>::K; ++k)
            if (t.e.a[k] != 0) spill(words(s), t.e.a[k]);
        bounds[0] = exact::kDigits;
        bounds[1] = -1;
    }
    __syncthreads();
    int lo, hi;
    scan_words(s, threadIdx.x, kThreads, lo, hi);
    if (hi >= 0) atomicMin(&bounds[0], lo), atomicMax(&bounds[1], hi);
    __syncthreads();
    if (threadIdx.x == 0) p.results[row] = canonical(round_scratch(s, special, bounds[0], bounds[1]));
    __syncthreads();
    for (int i = threadIdx.x; i < exact::kDigits; i += kThreads) s.digit[i] = 0;
    __syncthreads();
}

// Every block takes the run [first, end) of the batch's parts, row by row.
template <class Tx, class Ty>
__device__ void exact_block_rows(const RowsParams &p, ExactScratch &s) {
    constexpr int K = ExactThread<Tx, Ty>::K;
    __shared__ double warp_terms[kWarps * kExpansion];
    __shared__ unsigned special;
    __shared__ int bounds[2];
    __shared__ bool is_last, slots_used;
    ExactRowSlot *slots = static_cast<ExactRowSlot *>(p.partials);
    unsigned long long *spills = reinterpret_cast<unsigned long long *>(slots + p.items);
    const unsigned long long first = p.items * blockIdx.x / gridDim.x, end = p.items * (blockIdx.x + 1) / gridDim.x;
    if (first >= end) return;
    unsigned long long row = p.layout == kRowsSegmented ? row_of_item(p, first) : first / p.tiles_per_row;
    for (unsigned long long item = first; item < end; ++item) {
        unsigned long long row_first, parts;
        if (p.layout == kRowsSegmented) {
            while (p.first_item[row + 1] <= item) ++row;
            row_first = p.first_item[row];
            parts = p.first_item[row + 1] - row_first;
        } else {
            row = item / p.tiles_per_row;
            row_first = row * p.tiles_per_row;
            parts = p.tiles_per_row;
        }
        const unsigned long long part = item - row_first;
        const RowView v = row_view(p, row);
        const unsigned long long begin = part * p.part;
        const unsigned long long count = v.n > begin ? (v.n - begin < p.part ? v.n - begin : p.part) : 0;
        if (threadIdx.x == 0) special = 0;
        __syncthreads();
        ExactThread<Tx, Ty> t;
        bool used = block_part(p, v, begin, count, t, s, warp_terms, special);
        if (parts == 1) {
            finish_block_row(p, row, t, used, special, s, bounds);
            continue;
        }
        // A part of a longer row: its terms to its slot, its words (carried once) to its spill slot.
        if (used) {
            unsigned long long *spill_slot = spills + item * exact::kDigits;
            for (int i = threadIdx.x; i < exact::kDigits; i += kThreads) {
                const std::int64_t word = s.digit[i];
                const std::int64_t below = i > 0 ? static_cast<std::int64_t>(s.digit[i - 1]) >> exact::kDigitBits : 0;
                spill_slot[i] = static_cast<unsigned long long>((i + 1 < exact::kDigits ? word & 0xffffffff : word) + below);
            }
            __syncthreads();
            for (int i = threadIdx.x; i < exact::kDigits; i += kThreads) s.digit[i] = 0;
        }
        if (threadIdx.x == 0) {
            ExactRowSlot &slot = slots[item];
#pragma unroll
            for (int k = 0; k < kExpansion; ++k) slot.term[k] = k < K ? t.e.a[k] : 0.0;
            slot.special = special;
            slot.used = used ? 1u : 0u;
            __threadfence();
            is_last = atomicAdd(p.tickets + row, 1u) == parts - 1;
            slots_used = false;
        }
        __syncthreads();
        if (!is_last) continue;
        __threadfence();
        // The row's last block: every part's terms through the threads' expansions, then merged.
        start(t, words(s));
        unsigned any_special = 0;
        for (unsigned long long j = threadIdx.x; j < parts; j += kThreads) {
            const ExactRowSlot *slot = slots + row_first + j;
#pragma unroll
            for (int k = 0; k < K; ++k) t.absorb(__ldcg(slot->term + k));
            any_special |= __ldcg(&slot->special);
            if (__ldcg(&slot->used)) slots_used = true;
        }
        if (any_special) atomicOr(&special, any_special);
        merge_block(t, warp_terms);
        used = __syncthreads_or(t.used) != 0 || slots_used;
        if (slots_used)
            for (unsigned long long j = 0; j < parts; ++j) {
                if (!__ldcg(&slots[row_first + j].used)) continue;
                const unsigned long long *spill_slot = spills + (row_first + j) * exact::kDigits;
                for (int i = threadIdx.x; i < exact::kDigits; i += kThreads) {
                    const unsigned long long w = __ldcg(spill_slot + i);
                    if (w != 0) add_digit(words(s), i, static_cast<std::int64_t>(w));
                }
            }
        if (threadIdx.x == 0) p.tickets[row] = 0;
        finish_block_row(p, row, t, used, special, s, bounds);
    }
}

// Two kernels, one per road, so that each gets the registers of its own road. A group's thread holds
// four loads in flight without spilling at three blocks a multiprocessor. A part's thread keeps one
// expansion at four blocks: for long rows more threads in flight did more than a second expansion each.
template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreads, 3) exact_group_rows_kernel(const RowsParams p) {
    __shared__ ExactScratch scratch[kWarps];  // each warp's, for its rows done again
    for (int i = threadIdx.x; i < kWarps * exact::kDigits; i += kThreads) scratch[i / exact::kDigits].digit[i % exact::kDigits] = 0;
    if (threadIdx.x < kWarps) scratch[threadIdx.x].special = scratch[threadIdx.x].adds = 0;
    __syncthreads();
    const unsigned long long warps = static_cast<unsigned long long>(gridDim.x) * kWarps;
    const unsigned long long warp = static_cast<unsigned long long>(blockIdx.x) * kWarps + threadIdx.x / 32;
    exact_group_rows<Tx, Ty>(p, p.items * warp / warps, p.items * (warp + 1) / warps, scratch[threadIdx.x / 32]);
}

template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreads, 4) exact_part_rows_kernel(const RowsParams p) {
    __shared__ ExactScratch scratch;
    for (int i = threadIdx.x; i < exact::kDigits; i += kThreads) scratch.digit[i] = 0;
    if (threadIdx.x == 0) scratch.special = scratch.adds = 0;
    __syncthreads();
    exact_block_rows<Tx, Ty>(p, scratch);
}

}  // namespace cuda
}  // namespace cudot
