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

    __device__ __forceinline__ void absorb(double p) { keep_aside(exact::absorb(e, p)); }

    // What the expansion does not hold, to the digits.
    __device__ __forceinline__ void keep_aside(double left) {
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
            } else if ((a == 0 && isfinite(b)) || (b == 0 && isfinite(a))) {
                // an exact zero (and a zero fma error): nothing to add. Data with zeros among the factors
                // would otherwise send every such product down the slow road below.
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

// ---- a block's expansions summed as integers ----
//
// Merging expansions by TwoSum trees costs a chain of dependent additions at every level (K * K TwoSums
// of six additions each). A block instead places every thread's terms in one fixed-point window, a
// 192-bit two's-complement integer whose lowest bit has weight 2^low, and adds the integers: a few
// integer additions a level. The window's top is the block's highest term bit E, low = E - 180: below
// 2^191 the sum of 256 * 3 terms under 2^(E + 1) cannot overflow. A term with bits below 2^low (far
// below the block's largest) goes to the digits whole, so nothing is ever rounded.
constexpr int kWindowBits = 180;    // E - low
constexpr int kNoTerm = -100000;    // the highest term bit of a thread or block without terms

struct Wide {
    unsigned long long w0, w1, w2;  // w2 holds the sign
};

__device__ __forceinline__ void wide_add(Wide &a, const Wide &b) {
    const unsigned long long s0 = a.w0 + b.w0;
    const unsigned long long c0 = s0 < a.w0;
    const unsigned long long t1 = a.w1 + b.w1;
    const unsigned long long s1 = t1 + c0;
    const unsigned long long c1 = (t1 < a.w1) | (s1 < t1);
    a.w2 = a.w2 + b.w2 + c1;
    a.w1 = s1;
    a.w0 = s0;
}

__device__ __forceinline__ void wide_negate(Wide &a) {
    a.w0 = ~a.w0 + 1;
    const unsigned long long c0 = a.w0 == 0;
    a.w1 = ~a.w1 + c0;
    a.w2 = ~a.w2 + (c0 & (a.w1 == 0));
}

__device__ __forceinline__ Wide wide_shuffle_down(const Wide &a, unsigned offset) {
    return Wide{__shfl_down_sync(0xffffffffu, a.w0, offset), __shfl_down_sync(0xffffffffu, a.w1, offset),
                __shfl_down_sync(0xffffffffu, a.w2, offset)};
}

// The weight of a nonzero finite double's highest bit (2^top).
__device__ __forceinline__ int top_bit(double v) {
    std::uint64_t m;
    int q;
    exact::split(exact::bits_of(v), m, q);
    return q + 63 - __clzll(static_cast<long long>(m));
}

// a += v for a finite v whose highest bit is at most 2^(low + kWindowBits); false where v has bits below
// 2^low (a is unchanged).
__device__ __forceinline__ bool add_to_window(Wide &a, double v, int low) {
    const std::uint64_t bits = exact::bits_of(v);
    std::uint64_t m;
    int q;
    exact::split(bits, m, q);
    if (m == 0) return true;
    int at = q - low;
    if (at < 0) {
        if (__ffsll(static_cast<long long>(m)) - 1 < -at) return false;
        m >>= -at;
        at = 0;
    }
    const int word = at >> 6, bit = at & 63;  // the highest bit lands at most at 180: word 2, bit 52
    const unsigned long long up = bit ? m >> (64 - bit) : 0;
    Wide t{0, 0, 0};
    if (word == 0) t.w0 = m << bit, t.w1 = up;
    else if (word == 1) t.w1 = m << bit, t.w2 = up;
    else t.w2 = m << bit;
    if (bits >> 63) wide_negate(t);
    wide_add(a, t);
    return true;
}

// Thread 0: the block's integer a * 2^low back into the expansion, its highest 53 bits first, then the
// next; what the expansion's K terms cannot hold goes to the digits. Every piece is a double exactly:
// the sum is a multiple of 2^-1074 (each term is) below 2^1012.
template <class Tx, class Ty> __device__ void window_to_terms(ExactThread<Tx, Ty> &t, Wide a, int low) {
    constexpr int K = ExactThread<Tx, Ty>::K;
    const bool negative = static_cast<long long>(a.w2) < 0;
    if (negative) wide_negate(a);
    for (int k = 0; k < K; ++k) t.e.a[k] = 0.0;
    for (int k = 0; k < 4 && (a.w0 | a.w1 | a.w2) != 0; ++k) {
        const int top = a.w2 ? 191 - __clzll(static_cast<long long>(a.w2))
                      : a.w1 ? 127 - __clzll(static_cast<long long>(a.w1))
                             : 63 - __clzll(static_cast<long long>(a.w0));
        int lsb = top - 52 > 0 ? top - 52 : 0;
        if (lsb + low < -1074) lsb = -1074 - low;  // (no bits lie below 2^-1074)
        const int word = lsb >> 6, bit = lsb & 63;
        const unsigned long long here = word == 0 ? a.w0 : word == 1 ? a.w1 : a.w2;
        const unsigned long long next = word == 0 ? a.w1 : word == 1 ? a.w2 : 0;
        const unsigned long long m = (here >> bit) | (bit ? next << (64 - bit) : 0);  // bits lsb .. top
        // Keep only the bits below lsb.
        const unsigned long long keep = bit ? (1ull << bit) - 1 : 0;
        if (word == 0) a.w0 &= keep, a.w1 = 0, a.w2 = 0;
        else if (word == 1) a.w1 &= keep, a.w2 = 0;
        else a.w2 &= keep;
        double piece = ldexp(static_cast<double>(m), lsb + low);
        if (negative) piece = -piece;
        if (k < K) t.e.a[k] = piece;
        else t.keep_aside(piece);
    }
}

// Merges every thread's expansion of the block into thread 0's (every thread calls): the block's highest
// term bit, each thread's terms in the window, the integers summed by a shuffle tree in each warp and
// then across the warps in warp 0, and thread 0's integer back into terms. `scratch` holds kWarps *
// kExpansion doubles. Terms below the window go to the digits (ExactThread::keep_aside).
template <class Tx, class Ty>
__device__ __forceinline__ void merge_block(ExactThread<Tx, Ty> &t, double *scratch) {
    constexpr int K = ExactThread<Tx, Ty>::K;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int top = kNoTerm;
#pragma unroll
    for (int k = 0; k < K; ++k)
        if (t.e.a[k] != 0) top = max(top, top_bit(t.e.a[k]));
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset /= 2) top = max(top, __shfl_xor_sync(0xffffffffu, top, offset));
    int *tops = reinterpret_cast<int *>(scratch);
    if (lane == 0) tops[warp] = top;
    __syncthreads();
#pragma unroll
    for (int w = 0; w < kWarps; ++w) top = max(top, tops[w]);
    __syncthreads();  // (tops read by every thread before the words below overwrite them)
    if (top == kNoTerm) return;  // every term zero: so is thread 0's expansion
    const int low = top - kWindowBits;
    Wide a{0, 0, 0};
#pragma unroll
    for (int k = 0; k < K; ++k)
        if (!add_to_window(a, t.e.a[k], low)) t.keep_aside(t.e.a[k]);
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset /= 2) {
        const Wide other = wide_shuffle_down(a, offset);
        wide_add(a, other);
    }
    unsigned long long *words = reinterpret_cast<unsigned long long *>(scratch);
    if (lane == 0) words[3 * warp] = a.w0, words[3 * warp + 1] = a.w1, words[3 * warp + 2] = a.w2;
    __syncthreads();
    if (warp == 0) {
        a = lane < kWarps ? Wide{words[3 * lane], words[3 * lane + 1], words[3 * lane + 2]} : Wide{0, 0, 0};
#pragma unroll
        for (unsigned offset = kWarps / 2; offset > 0; offset /= 2) {
            const Wide other = wide_shuffle_down(a, offset);
            wide_add(a, other);
        }
        if (lane == 0) window_to_terms(t, a, low);
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
    // Where nothing went to any digits (this block's, or the workspace's from other blocks), thread 0's
    // expansion is the exact sum: its terms rounded once (exact_sum.hpp), without the digits.
    const bool digits_used = __syncthreads_or(t.used) != 0 || (block_special & kDigitsUsed) != 0;
    if (!digits_used && !p.partial) {
        if (threadIdx.x == 0) {
            const unsigned special = block_special & ~kDigitsUsed;
            const double r = special ? exact::special_result(special) : exact::round_terms(t.e);
            publish(p.done, r == 0 ? 0.0 : r);  // an exact zero is +0.0
        }
        return;
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
