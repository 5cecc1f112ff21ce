// exact_dot.cpp - the exact mode on the CPU (exact_dot.hpp): the products run into the lanes'
// expansions (exact_lanes.hpp, exact_loop.inc: blocks by extraction, the rest by TwoSum), the elements
// cut into pieces for the pool's threads, the pieces merged, and the whole put into a fixed-point sum
// (src/core/exact_sum.hpp) and rounded once. No step rounds, so the cut and the number of threads change
// nothing.
#include "exact_dot.hpp"

#include <algorithm>
#include <new>
#include <vector>

#include "exact_lanes.hpp"
#include "thread_pool.hpp"
#include "tile_kernels.hpp"

namespace cudot {
namespace cpu {

namespace {

// Below this many elements a dot stays on the calling thread.
constexpr std::size_t kPieceElements = std::size_t(1) << 16;

exact::Sum &sum_of(ExactLanes &acc) {
    if (!acc.sum_used) {
        exact::clear(*acc.sum);
        acc.sum_used = true;
    }
    return *acc.sum;
}

void start(ExactLanes &acc, exact::Sum *sum) {
    for (auto &lanes : acc.term)
        for (double &t : lanes) t = 0.0;
    acc.sum = sum;
    acc.sum_used = false;
}

void add_range(ExactFn loop, ExactLanes &acc, const Operands &ops, std::size_t first, std::size_t last) {
    loop(ops.x.data, ops.x.stride_bytes(), ops.y.data, ops.y.stride_bytes(), first, last, acc);
}

// into += every term and the sum of `from` (exact).
void merge_into(ExactLanes &into, ExactLanes &from) {
    if (from.sum_used) exact::merge(sum_of(into), *from.sum);
    for (const auto &lanes : from.term)
        for (double t : lanes) {
            for (int k = 0; k < kExactTerms; ++k) exact::two_sum(into.term[k][0], t, into.term[k][0], t);
            if (t != 0) exact_spill(into, t);
        }
}

// The lanes' terms and sum, rounded once. When nothing went to the sum, only the words the terms reach
// are cleared and carried: a short dot never touches the rest of the sum's 1.1 KiB.
double finish(ExactLanes &acc) {
    for (int j = 1; j < kExactLanes; ++j)  // every lane into lane 0 (exact; leftovers to the sum)
        for (auto &lanes : acc.term) {
            double t = lanes[j];
            if (t == 0) continue;
            lanes[j] = 0.0;
            for (int k = 0; k < kExactTerms; ++k) exact::two_sum(acc.term[k][0], t, acc.term[k][0], t);
            if (t != 0) exact_spill(acc, t);
        }
    if (acc.sum_used) {
        for (const auto &lanes : acc.term)
            for (double t : lanes) exact::add_double(*acc.sum, t);
        return exact::round(*acc.sum);
    }
    int lo = exact::kDigits, hi = -1;
    for (const auto &lanes : acc.term)
        for (double t : lanes)
            if (t != 0) {
                std::uint64_t m;
                int q;
                exact::split(exact::bits_of(t), m, q);
                const int word = (q - exact::kLowestBit) / exact::kDigitBits;  // m reaches words word .. word + 2
                lo = std::min(lo, word);
                hi = std::max(hi, word + 2);
            }
    if (hi < 0) return 0.0;
    exact::Sum &s = *acc.sum;
    const int top = hi + 4;  // the carries of at most 2^4 terms of 85 bits stay below it
    for (int i = lo; i <= top; ++i) s.digit[i] = 0;
    s.special = 0;
    s.adds = 0;
    for (const auto &lanes : acc.term)
        for (double t : lanes)
            if (t != 0) exact::add_double(s, t);
    return exact::round_in_place(s, lo, top - 1);
}

struct Job {
    ExactFn loop;
    const Operands *ops;
    std::size_t pieces;
    ExactLanes *lanes;
    exact::Sum *sums;
    static void task(void *self, std::size_t i) {
        Job &job = *static_cast<Job *>(self);
        const std::size_t n = job.ops->n;
        start(job.lanes[i], &job.sums[i]);
        add_range(job.loop, job.lanes[i], *job.ops, n * i / job.pieces, n * (i + 1) / job.pieces);
    }
};

}  // namespace

void exact_spill(ExactLanes &acc, double v) { exact::add_double(sum_of(acc), v); }

void exact_add_directly(ExactLanes &acc, double a, double b) { exact::add_product(sum_of(acc), a, b); }

// acc (started on `sum`) += every product of ops.
static cudot_status accumulate(const Operands &ops, ExactLanes &acc, const TileKernels *kernels, bool share) {
    const ExactFn loop = (kernels ? *kernels : tile_kernels()).exact(ops.x.dtype, ops.y.dtype);
    ThreadPool &pool = ThreadPool::instance();
    if (!share || ops.n < 2 * kPieceElements || pool.threads() == 1) {
        add_range(loop, acc, ops, 0, ops.n);
        return CUDOT_OK;
    }
    const std::size_t pieces = std::min<std::size_t>(ops.n / kPieceElements, std::size_t(pool.threads()) * 4);
    Job job{loop, &ops, pieces, nullptr, nullptr};
    // The pieces' accumulators, kept by the thread for its next dot: a Sum is 1.1 KiB a piece.
    thread_local std::vector<ExactLanes> lanes;
    thread_local std::vector<exact::Sum> sums;
    try {
        if (lanes.size() < pieces) lanes.resize(pieces);
        if (sums.size() < pieces) sums.resize(pieces);
    } catch (const std::bad_alloc &) {
        return CUDOT_ERROR_OUT_OF_MEMORY;
    }
    job.lanes = lanes.data();
    job.sums = sums.data();
    pool.run(job.pieces, 0, &Job::task, &job);
    for (std::size_t i = 0; i < pieces; ++i) merge_into(acc, lanes[i]);
    return CUDOT_OK;
}

cudot_status exact_dot(const Operands &ops, double *result, const TileKernels *kernels, bool share) {
    exact::Sum sum;  // not cleared: finish() clears what it uses
    ExactLanes acc;
    start(acc, &sum);
    if (cudot_status status = accumulate(ops, acc, kernels, share)) return status;
    *result = finish(acc);
    return CUDOT_OK;
}

cudot_status exact_sum(const Operands &ops, exact::Sum &sum) {
    ExactLanes acc;
    start(acc, &sum);
    if (cudot_status status = accumulate(ops, acc, nullptr, true)) return status;
    exact::Sum &s = sum_of(acc);  // cleared here if nothing spilled
    for (const auto &lanes : acc.term)
        for (double t : lanes) exact::add_double(s, t);
    exact::normalize(s);
    return CUDOT_OK;
}

}  // namespace cpu
}  // namespace cudot
