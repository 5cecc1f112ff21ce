// exact_lanes.hpp - the exact mode's CPU accumulator (exact_dot.cpp) and the inner loop that fills it
// (exact_loop.inc, one copy per instruction set beside tile_kernels.inc's).
//
// kExactLanes expansions (exact_sum.hpp) side by side, one vector register's worth per term: element i of
// a run goes to lane i % kExactLanes, so the loop adds a vector of products at a time (contiguous runs
// a block of them at a time, by extraction: exact_loop.inc). What the
// expansions cannot hold, and products outside their range, go to a fixed-point Sum, cleared the first
// time it is needed: data of moderate range never touches it, and a short dot pays nothing for it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../core/exact_sum.hpp"

namespace cudot {
namespace cpu {

constexpr int kExactLanes = 8;  // one AVX-512 vector, two AVX2 ones, four SSE2 ones
// Doubles per expansion: moderate data leaves nothing over after two for pairs without an F64 side (their
// products are exact doubles), after three with one (a product and its fma error span 106 bits).
constexpr int kExactTerms = 3;
template <bool kWide> constexpr int kExactTermsOf = kWide ? 3 : 2;

struct ExactLanes {
    alignas(64) double term[kExactTerms][kExactLanes];
    exact::Sum *sum;        // what the expansions do not hold; valid once sum_used
    bool sum_used = false;  // sum cleared and holding something
};

// acc.sum += v (v finite); acc.sum += a * b exactly (any doubles). Out of line: the rare paths.
void exact_spill(ExactLanes &acc, double v);
void exact_add_directly(ExactLanes &acc, double a, double b);

// Adds x[i] * y[i], i in [first, last), to acc: element i of x at x + i * x_stride (bytes), likewise y.
// Contiguous aligned arrays go through the vector loop, any others one element at a time.
using ExactFn = void (*)(const unsigned char *x, std::ptrdiff_t x_stride, const unsigned char *y,
                         std::ptrdiff_t y_stride, std::size_t first, std::size_t last, ExactLanes &acc);

}  // namespace cpu
}  // namespace cudot
