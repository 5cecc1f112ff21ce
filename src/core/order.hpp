// order.hpp - the canonical summation order and arithmetic, shared by the CPU and CUDA backends.
//
// Every backend must produce bit-for-bit the same result, so the order of every floating-point
// operation is fixed here and depends only on n (docs/DESIGN.md draws it):
//
//   1. The vector is cut into tiles of kTile = kLanes * kSteps elements; the last tile may be short.
//   2. Inside a tile, element i belongs to lane (i % kLanes). Each lane starts from zero and adds its
//      products in increasing index order (at most kSteps of them).
//   3. The kLanes lane sums are joined by a perfect binary tree of adjacent pairs:
//      level by level, value[i] = merge(value[2i], value[2i+1]). The root is the tile's partial.
//   4. Tile partials are dealt to kLanes join lanes (partial t goes to join lane t % kLanes), each join
//      lane merges its partials in increasing t, and the join lanes meet in the same tree as in step 3.
//   5. finish() turns the root into the double that is returned.
//
// The GPU maps a 256-thread block onto one tile, each thread owning 4 adjacent lanes; its warp
// shuffles and shared-memory steps are exactly the levels of the tree in step 3. The CPU computes
// the same lanes with SIMD and walks the same tree. Grid size, SM count, thread count and strategy
// change who computes a tile, never the order inside it.
//
// Arithmetic, by the pair of element types (types.hpp): Double - the product of two of F32, F16, BF16,
// I8, U8 is exact in double, so a lane is a plain double sum (fused or not, the same result). Dot2
// (either side F64) - Ogita, Rump & Oishi (2005): each product split exactly by TwoProduct (an fma),
// each addition by TwoSum, the errors summed alongside. Exact (both integer) - 64-bit integer sums.
// Multiplications and additions that must not be fused or reordered go through mul_rn/add_rn.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "types.hpp"

// Everything here is force-inlined: the CPU inner loop is compiled twice with different instruction
// sets (src/cpu/tile_kernels.inc), and an out-of-line copy shared between the two could hand AVX2
// code to a processor without it.
#if defined(__CUDACC__)
#define CUDOT_HD __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define CUDOT_HD inline __attribute__((always_inline))
#else
#define CUDOT_HD inline
#endif

namespace cudot {
namespace order {

constexpr std::size_t kLanes = 1024;  // lanes per tile; a power of two
constexpr std::size_t kSteps = 8;     // elements per lane per tile
constexpr std::size_t kTile = kLanes * kSteps;

CUDOT_HD constexpr std::size_t tile_count(std::size_t n) { return n / kTile + (n % kTile != 0); }

// Round-to-nearest multiply and add that the compiler may not contract into an fma.
// (Host code is also built with -ffp-contract=off; this keeps the device side honest too.)
CUDOT_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
CUDOT_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}
#if defined(__MINGW32__) && !defined(__FMA__) && !defined(__CUDACC__)
double mingw_fma(double a, double b, double c);  // src/cpu/fma_mingw.cpp
#endif
CUDOT_HD double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
    return __fma_rn(a, b, c);
#elif defined(__MINGW32__) && !defined(__FMA__)
    return mingw_fma(a, b, c);  // MinGW-w64's fma() is not correctly rounded (src/cpu/fma_mingw.cpp)
#else
    return std::fma(a, b, c);
#endif
}

// Accumulator of the Double kind (F32, F16, BF16, and integers with them): one double.
struct SumDouble {
    double s;
};

// Accumulator of the Dot2 kind (either side F64): a running sum and the running sum of its rounding errors.
struct SumF64 {
    double s;
    double c;
};

// Accumulator of the Exact kind (both sides integer): a 64-bit integer sum.
struct SumI64 {
    std::int64_t s;
};

using types::Kind;

template <Kind K> struct Arith;

template <> struct Arith<Kind::Double> {
    using Acc = SumDouble;
    CUDOT_HD static Acc zero() { return Acc{0.0}; }
    CUDOT_HD static void add_product(Acc &a, double x, double y) {
        // Exact product (at most 24 + 24 bits < 53), one rounding in the addition.
        a.s = add_rn(a.s, mul_rn(x, y));
    }
    CUDOT_HD static Acc merge(Acc a, Acc b) { return Acc{add_rn(a.s, b.s)}; }
    CUDOT_HD static double finish(Acc a) { return a.s; }
};

template <> struct Arith<Kind::Dot2> {
    using Acc = SumF64;
    CUDOT_HD static Acc zero() { return Acc{0.0, 0.0}; }
    // TwoSum (Knuth): s + e == a + b exactly, for finite values without overflow.
    CUDOT_HD static double two_sum(double a, double b, double &e) {
        double s = add_rn(a, b);
        double bb = add_rn(s, -a);
        e = add_rn(add_rn(a, -add_rn(s, -bb)), add_rn(b, -bb));
        return s;
    }
    CUDOT_HD static void add_product(Acc &a, double x, double y) {
        double p = mul_rn(x, y);
        double ep = fma_rn(x, y, -p);  // TwoProduct: p + ep == x * y exactly
        double es;
        a.s = two_sum(a.s, p, es);
        a.c = add_rn(a.c, add_rn(ep, es));
    }
    CUDOT_HD static Acc merge(Acc a, Acc b) {
        double e;
        double s = two_sum(a.s, b.s, e);
        return Acc{s, add_rn(add_rn(a.c, b.c), e)};
    }
    // The plain sum s is the ordinary floating-point dot; the correction c is only meaningful while
    // everything is finite (Inf - Inf inside TwoSum would turn a genuine infinity into NaN).
    CUDOT_HD static double finish(Acc a) {
        if (!(a.s - a.s == 0.0) || !(a.c - a.c == 0.0)) return a.s;  // s or c is Inf or NaN
        return add_rn(a.s, a.c);
    }
};

template <> struct Arith<Kind::Exact> {
    using Acc = SumI64;
    CUDOT_HD static Acc zero() { return Acc{0}; }
    // |x * y| <= 128 * 128 or 255 * 255: the product fits in 32 bits (so the CPU loop vectorizes),
    // the sum is kept in 64.
    CUDOT_HD static void add_product(Acc &a, std::int32_t x, std::int32_t y) { a.s += static_cast<std::int64_t>(x * y); }
    CUDOT_HD static Acc merge(Acc a, Acc b) { return Acc{a.s + b.s}; }
    // Exact below 2^53 in magnitude, correctly rounded (to nearest, ties to even) beyond.
    CUDOT_HD static double finish(Acc a) { return static_cast<double>(a.s); }
};

// A pair of element types: its arithmetic, and one product added to an accumulator.
template <class Tx, class Ty> struct Pair {
    static constexpr Kind kind = types::kind_of<Tx, Ty>();
    using A = Arith<kind>;
    using Acc = typename A::Acc;
    // What an element becomes before the arithmetic: int32 for integer pairs, double otherwise.
    using Operand = typename std::conditional<kind == Kind::Exact, std::int32_t, double>::type;
    template <class T> CUDOT_HD static Operand operand(T v) {
        if constexpr (kind == Kind::Exact)
            return types::to_int(v);
        else
            return types::to_double(v);
    }
    CUDOT_HD static void add(Acc &a, Tx x, Ty y) { A::add_product(a, operand(x), operand(y)); }
};

// Bytes of the largest tile partial: what partial buffers are sized for, whatever the pair.
constexpr std::size_t kMaxPartialBytes = sizeof(SumF64);

// Host-side walk of steps 3 and 4 (the GPU does the same with shuffles; see cuda/kernels/).
//
// Joins v[0..used) in place by the adjacent-pair tree and returns the root, where lanes used..kLanes
// are known to be zero. Merging with a zero changes nothing that finish() can see: a sum that started
// at +0 is never -0, so s + 0 == s; and where s is Inf or NaN (the only case in which TwoSum with a
// zero disturbs the error term) it stays non-finite up the tree and finish() ignores the error term.
// So at each level a lone last value moves up unmerged, and the result equals the full tree over
// kLanes lanes bit for bit (tests/test_host_dot.cpp checks this against the literal full tree).
template <class A>
CUDOT_HD typename A::Acc lane_tree(typename A::Acc *v, std::size_t used = kLanes) {
    if (used == 0) return A::zero();
    for (std::size_t width = used; width > 1; width = (width + 1) / 2) {
        for (std::size_t i = 0; i < width / 2; ++i) v[i] = A::merge(v[2 * i], v[2 * i + 1]);
        if (width % 2) v[width / 2] = v[width - 1];
    }
    return v[0];
}

template <class A>
inline typename A::Acc join_tiles(const typename A::Acc *partials, std::size_t tiles) {
    typename A::Acc lanes[kLanes];
    const std::size_t used = tiles < kLanes ? tiles : kLanes;
    for (std::size_t l = 0; l < used; ++l) lanes[l] = A::merge(A::zero(), partials[l]);
    for (std::size_t t = kLanes; t < tiles; ++t) lanes[t % kLanes] = A::merge(lanes[t % kLanes], partials[t]);
    return lane_tree<A>(lanes, used);
}

// The dot from its `tiles` tile partials, packed in tile order (each the pair's accumulator, of kind
// `kind`): the join every road ends with, whoever computed the partials (the CPU, one GPU or several,
// AUTO's split, cudot_join_partials). In order.cpp, compiled once for the host: never in the files built
// for wider instruction sets.
double join_packed_partials(Kind kind, const void *partials, std::size_t tiles);

}  // namespace order
}  // namespace cudot
