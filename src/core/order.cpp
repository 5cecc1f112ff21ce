// order.cpp - the host's join of packed tile partials (order.hpp).
#include "order.hpp"

namespace cudot {
namespace order {

template <Kind K>
static double join_kind(const void *partials, std::size_t tiles) {
    using A = Arith<K>;
    const auto *p = static_cast<const typename A::Acc *>(partials);
    // One tile: what join_tiles computes (the partial merged into an empty join lane, a one-node tree),
    // without its kLanes-node array.
    if (tiles == 1) return A::finish(A::merge(A::zero(), p[0]));
    return A::finish(join_tiles<A>(p, tiles));
}

double join_packed_partials(Kind kind, const void *partials, std::size_t tiles) {
    switch (kind) {
        case Kind::Dot2: return join_kind<Kind::Dot2>(partials, tiles);
        case Kind::Exact: return join_kind<Kind::Exact>(partials, tiles);
        default: return join_kind<Kind::Double>(partials, tiles);
    }
}

}  // namespace order
}  // namespace cudot
