// exact_kernel.cuh - the exact mode's dot on a GPU (src/core/exact_sum.hpp), in one launch:
//  1. each thread runs its products through an expansion of kExpansion doubles (TwoSum, exact);
//  2. what an expansion cannot hold, and the rare product outside the expansions' range (subnormal or
//     huge f64 products, infinities and NaNs), go into the block's fixed-point digits in shared memory,
//     by 64-bit atomic additions: integers, so their order does not matter;
//  3. the block's expansions merge into one (each absorbed into another by TwoSum: exact, leftovers to
//     the digits), warp by warp and then across warps, and the block leaves it in its slot; a block
//     that used its digits adds them, carried once, to the workspace's; then it takes a ticket;
//  4. the last block merges every block's slot the same way, takes the workspace's digits if any block
//     left some (leaving them zero for the next launch), rounds the whole once on one thread, and
//     publishes the result as dot_kernel does (Completion); or, asked for a partial, writes the whole
//     unrounded (exact::Partial) for the host to join with others.
// No step rounds, so the result is the correctly rounded exact dot whatever the grid, the order in
// which blocks finish, or the GPU.
#pragma once

#include "../../core/exact_sum.hpp"
#include "dot_kernel.cuh"

namespace cudot {
namespace cuda {

// Doubles per thread's expansion: data of moderate range leaves nothing over after two for pairs without
// an F64 side (exact products), after three with one (a product and its fma error span 106 bits).
constexpr int kExpansion = 3;
template <class Tx, class Ty> constexpr int kTermsOf = PairOf<Tx, Ty>::kind == types::Kind::Dot2 ? 3 : 2;

constexpr unsigned kDigitsUsed = 1u << 8;  // some block added to the workspace's digits

// The exact mode's part of a workspace's head (launch.hpp): zero before and after every launch.
struct ExactWorkspace {
    unsigned ticket;   // the same word as the canonical join's ticket: both kernels leave it zero
    unsigned special;  // exact::Special bits of every block, and kDigitsUsed
    unsigned long long reserved[31];
    unsigned long long digit[exact::kDigits];  // int64 words (two's complement), added atomically
};

template <class Tx, class Ty> struct ExactParams {
    const Tx *x;
    const Ty *y;
    std::size_t n;
    StridedView xs, ys;  // the same operands when they are not dense
    bool dense;          // both 16-byte aligned with elements one apart: vector loads
    ExactWorkspace *workspace;
    double *slots;  // kExpansion doubles a block (after the workspace's head): no zeroing needed
    Completion *done;
    exact::Partial *partial;  // set: the sum goes there unrounded, and done is not written
};

// Elements of a dense operand pair per vector load: 16 bytes of the wider type.
template <class Tx, class Ty> constexpr int kExactGroup = 16 / (sizeof(Tx) > sizeof(Ty) ? sizeof(Tx) : sizeof(Ty));
constexpr int kExactUnroll = 2;  // groups loaded before the first is added: loads in flight

__device__ __forceinline__ void add_digit(unsigned long long *digits, int i, std::int64_t d) {
    atomicAdd(digits + i, static_cast<unsigned long long>(d));
}

// digits += v, for a finite double v.
static __device__ __noinline__ void spill(unsigned long long *digits, double v) {
    const std::uint64_t b = exact::bits_of(v);
    std::uint64_t m;
    int q;
    exact::split(b, m, q);
    exact::for_each_digit(0, m, q, (b >> 63) != 0, [digits](int i, std::int64_t d) { add_digit(digits, i, d); });
}

// digits += x * y for any two doubles (the special bits of an infinite or NaN product instead).
static __device__ __noinline__ unsigned add_product_directly(unsigned long long *digits, double x, double y) {
    return exact::product_terms(x, y, [digits](std::uint64_t hi, std::uint64_t lo, int q, bool negative) {
        exact::for_each_digit(hi, lo, q, negative, [digits](int i, std::int64_t d) { add_digit(digits, i, d); });
    });
}

// One thread's share of the products.
template <class Tx, class Ty> struct ExactThread {
    static constexpr int K = kTermsOf<Tx, Ty>;
    exact::Expansion<K> e;
    unsigned special;
    unsigned long long *digits;  // the block's; nullptr: none (a row of exact_rows_kernel's groups), and
                                 // what would go there only sets `used`, for the row to be done again
    bool used;                   // something went, or would have gone, to the digits

    __device__ __forceinline__ void absorb(double p) {
        const double left = exact::absorb(e, p);
        if (left != 0) {
            used = true;
            if (digits) spill(digits, left);
        }
    }

    __device__ __forceinline__ void add(Tx xv, Ty yv) {
        const double a = types::to_double(xv), b = types::to_double(yv);
        const double p = order::mul_rn(a, b);
        if constexpr (PairOf<Tx, Ty>::kind == types::Kind::Dot2) {  // an F64 side: p rounded, fma's error exact
            const double m = fabs(p);
            if (m >= exact::kExpansionLow && m <= exact::kExpansionHigh) {
                absorb(p);
                absorb(order::fma_rn(a, b, -p));
            } else {
                used = true;
                if (digits) special |= add_product_directly(digits, a, b);
            }
        } else {  // at most 24 + 24 bits within 2^-298 .. 2^256: p is exact
            if (isfinite(p)) absorb(p);
            else special |= exact::special_of(p);
        }
    }
};

// Merges the expansions of lanes [0, width) of a warp into lane 0's (a shuffle tree; every lane calls).
template <class Tx, class Ty>
__device__ __forceinline__ void merge_lanes(ExactThread<Tx, Ty> &t, unsigned lane, unsigned width) {
    constexpr int K = ExactThread<Tx, Ty>::K;
#pragma unroll
    for (unsigned offset = width / 2; offset > 0; offset /= 2) {
        double other[K];
#pragma unroll
        for (int k = 0; k < K; ++k) other[k] = __shfl_down_sync(0xffffffffu, t.e.a[k], offset);
        if (lane < offset)
#pragma unroll
            for (int k = 0; k < K; ++k) t.absorb(other[k]);
    }
}

// Merges every thread's expansion of the block into thread 0's, in two shuffle trees: each warp's, then
// the warps' in warp 0 (warp_terms: kWarps * kExpansion doubles of shared memory).
template <class Tx, class Ty>
__device__ __forceinline__ void merge_block(ExactThread<Tx, Ty> &t, double *warp_terms) {
    constexpr int K = ExactThread<Tx, Ty>::K;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    merge_lanes(t, lane, 32);
    if (lane == 0)
#pragma unroll
        for (int k = 0; k < K; ++k) warp_terms[warp * K + k] = t.e.a[k];
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int k = 0; k < K; ++k) t.e.a[k] = lane < kWarps ? warp_terms[lane * K + k] : 0.0;
        merge_lanes(t, lane, kWarps);
    }
}

template <class Tx, class Ty>
__global__ void __launch_bounds__(kThreads) exact_dot_kernel(const ExactParams<Tx, Ty> p) {
    constexpr int K = ExactThread<Tx, Ty>::K;
    __shared__ exact::Sum block_sum;
    __shared__ double warp_terms[kWarps * kExpansion];
    __shared__ unsigned block_special;
    __shared__ int lowest, highest;
    __shared__ bool is_last;
    unsigned long long *digits = reinterpret_cast<unsigned long long *>(block_sum.digit);
    for (int i = threadIdx.x; i < exact::kDigits; i += kThreads) block_sum.digit[i] = 0;
    if (threadIdx.x == 0) block_special = 0, lowest = exact::kDigits, highest = -1;
    __syncthreads();

    ExactThread<Tx, Ty> t;
    for (int k = 0; k < K; ++k) t.e.a[k] = 0.0;
    t.special = 0;
    t.digits = digits;
    t.used = false;
    const std::size_t first = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * kThreads;
    if (p.dense) {
        constexpr int G = kExactGroup<Tx, Ty>;
        const std::size_t groups = p.n / G;
        std::size_t g = first;
        for (; g + (kExactUnroll - 1) * step < groups; g += kExactUnroll * step) {
            Tx xv[kExactUnroll][G];
            Ty yv[kExactUnroll][G];
#pragma unroll
            for (int u = 0; u < kExactUnroll; ++u) {
                load_run<G>(p.x + (g + u * step) * G, xv[u]);
                load_run<G>(p.y + (g + u * step) * G, yv[u]);
            }
#pragma unroll
            for (int u = 0; u < kExactUnroll; ++u)
#pragma unroll
                for (int k = 0; k < G; ++k) t.add(xv[u][k], yv[u][k]);
        }
        for (; g < groups; g += step) {
            Tx xv[G];
            Ty yv[G];
            load_run<G>(p.x + g * G, xv);
            load_run<G>(p.y + g * G, yv);
#pragma unroll
            for (int k = 0; k < G; ++k) t.add(xv[k], yv[k]);
        }
        const std::size_t tail = groups * G + first;  // the last n % G elements
        if (tail < p.n) t.add(p.x[tail], p.y[tail]);
    } else {
        for (std::size_t i = first; i < p.n; i += step) t.add(load_element<Tx>(p.xs, i), load_element<Ty>(p.ys, i));
    }
    if (t.special) atomicOr(&block_special, t.special);
    merge_block(t, warp_terms);  // thread 0 holds the block's expansion

    ExactWorkspace *w = p.workspace;
    if (gridDim.x > 1) {
        // The block's words, each carried once (|word| < 2^33 then), into the workspace's: only where
        // the block spilled, which data of moderate range never does.
        __syncthreads();
        for (int i = threadIdx.x; i < exact::kDigits; i += kThreads) {
            const std::int64_t word = block_sum.digit[i];
            const std::int64_t below = i > 0 ? block_sum.digit[i - 1] >> exact::kDigitBits : 0;
            const std::int64_t v = (i + 1 < exact::kDigits ? word & 0xffffffff : word) + below;
            if (v != 0) {
                add_digit(w->digit, i, v);
                atomicOr(&block_special, kDigitsUsed);
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int k = 0; k < kExpansion; ++k) p.slots[blockIdx.x * kExpansion + k] = k < K ? t.e.a[k] : 0.0;
            if (block_special) atomicOr(&w->special, block_special);
            __threadfence();
            is_last = atomicAdd(&w->ticket, 1u) == gridDim.x - 1;
        }
        __syncthreads();
        if (!is_last) return;
        __threadfence();
        // The last block: every block's slot merged as a block's threads are, then the digits any
        // block left, taken (the workspace's are zero again for the next launch).
        for (int i = threadIdx.x; i < exact::kDigits; i += kThreads) block_sum.digit[i] = 0;
        __syncthreads();
        for (int k = 0; k < K; ++k) t.e.a[k] = 0.0;
        for (std::size_t i = threadIdx.x; i < std::size_t(gridDim.x) * kExpansion; i += kThreads)
            t.absorb(__ldcg(p.slots + i));
        merge_block(t, warp_terms);
        if (threadIdx.x == 0) {
            block_special = atomicExch(&w->special, 0u);
            w->ticket = 0;
        }
        __syncthreads();
        if (block_special & kDigitsUsed)
            for (int i = threadIdx.x; i < exact::kDigits; i += kThreads) {
                const unsigned long long v = atomicExch(w->digit + i, 0ull);
                if (v != 0) add_digit(digits, i, static_cast<std::int64_t>(v));
            }
    }
    if (threadIdx.x == 0)
        for (int k = 0; k < K; ++k)
            if (t.e.a[k] != 0) spill(digits, t.e.a[k]);
    __syncthreads();
    for (int i = threadIdx.x; i < exact::kDigits; i += kThreads)
        if (block_sum.digit[i] != 0) atomicMin(&lowest, i), atomicMax(&highest, i);
    __syncthreads();
    if (threadIdx.x == 0) {
        block_sum.special = block_special & ~kDigitsUsed;
        if (p.partial) {
            exact::to_partial(block_sum, *p.partial);
        } else {
            publish(p.done, exact::round_in_place(block_sum, lowest, highest));
        }
    }
}

}  // namespace cuda
}  // namespace cudot
