// exact_dot.cpp - the exact mode on the CPU (exact_dot.hpp): every product added to an exact sum
// (src/core/exact_sum.hpp), the elements cut into pieces for the pool's threads, the pieces' sums merged.
// Exact sums do not depend on the order of additions, so the cut and the number of threads change nothing.
#include "exact_dot.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "../core/exact_sum.hpp"
#include "thread_pool.hpp"

namespace cudot {
namespace cpu {

namespace {

// Below this many elements a dot stays on the calling thread.
constexpr std::size_t kPieceElements = std::size_t(1) << 16;

template <class T>
T load(const Operand &o, std::size_t i) {
    T v;
    std::memcpy(&v, o.at(i), sizeof v);
    return v;
}

// s += x[i] * y[i] for i in [first, last). Without an F64 side a product is exact in a double (at most
// 24 + 24 significant bits, within 2^-298 .. 2^256); with one it needs add_product's 106 bits.
template <class Tx, class Ty>
void add_products(exact::Sum &s, const Operands &ops, std::size_t first, std::size_t last) {
    constexpr bool wide = types::kind_of<Tx, Ty>() == types::Kind::Dot2;
    for (std::size_t i = first; i < last; ++i) {
        const double a = types::to_double(load<Tx>(ops.x, i)), b = types::to_double(load<Ty>(ops.y, i));
        if (wide) exact::add_product(s, a, b);
        else exact::add_double(s, a * b);
    }
}

void add_range(exact::Sum &s, const Operands &ops, std::size_t first, std::size_t last) {
    types::with_type(ops.x.dtype, [&](auto xt) {
        types::with_type(ops.y.dtype, [&](auto yt) { add_products<decltype(xt), decltype(yt)>(s, ops, first, last); });
    });
}

struct Job {
    const Operands *ops;
    std::size_t pieces;
    exact::Sum *sums;
    static void task(void *self, std::size_t i) {
        Job &job = *static_cast<Job *>(self);
        const std::size_t n = job.ops->n;
        exact::clear(job.sums[i]);
        add_range(job.sums[i], *job.ops, n * i / job.pieces, n * (i + 1) / job.pieces);
    }
};

}  // namespace

cudot_status exact_dot(const Operands &ops, double *result) {
    exact::Sum sum;
    exact::clear(sum);
    ThreadPool &pool = ThreadPool::instance();
    if (ops.n < 2 * kPieceElements || pool.threads() == 1) {
        add_range(sum, ops, 0, ops.n);
    } else {
        Job job{&ops, std::min<std::size_t>(ops.n / kPieceElements, std::size_t(pool.threads()) * 4), nullptr};
        std::vector<exact::Sum> sums;
        try {
            sums.resize(job.pieces);
        } catch (const std::bad_alloc &) {
            return CUDOT_ERROR_OUT_OF_MEMORY;
        }
        job.sums = sums.data();
        pool.run(job.pieces, 0, &Job::task, &job);
        for (const exact::Sum &piece : sums) exact::merge(sum, piece);
    }
    *result = exact::round(sum);
    return CUDOT_OK;
}

}  // namespace cpu
}  // namespace cudot
