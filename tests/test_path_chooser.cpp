// test_path_chooser.cpp - the measured choice between paths that give the same bits (AUTO's CPU / GPU /
// split, PINNED's copy / in place, HOST's calling thread / pool): it settles on the fastest, follows a
// change, and is not held on a slow path by a burst of noise in the first measurements (issue 24, T5).
#include <catch2/catch.hpp>

#include "core/path_chooser.hpp"

namespace {

using Chooser = cudot::PathChooser<3>;
constexpr std::size_t kN = std::size_t(1) << 22;

// One dot: asks the chooser, "runs" the path it names at the time `time_of` gives, records it.
template <class Time, class Usable> int step(Chooser &c, Time time_of, Usable usable) {
    const int p = c.choose(kN, usable);
    c.record(kN, p, time_of(p), usable);
    return p;
}
auto all = [](int) { return true; };

}  // namespace

TEST_CASE("path chooser: tries every usable path, then keeps the fastest", "[api][chooser]") {
    Chooser c;
    const double times[3] = {500, 200, 900};
    int tried[3] = {0, 0, 0};
    for (int i = 0; i < 6; ++i) ++tried[step(c, [&](int p) { return times[p]; }, all)];
    CHECK(tried[0] == 2);
    CHECK(tried[1] == 2);
    CHECK(tried[2] == 2);
    int chosen[3] = {0, 0, 0};
    for (int i = 0; i < 100; ++i) ++chosen[step(c, [&](int p) { return times[p]; }, all)];
    CHECK(chosen[1] >= 90);              // the fastest, but for the rechecks
    CHECK(chosen[0] + chosen[2] >= 6);   // after 4, 8, 16 dots, then every kRecheckEvery, another runs again
}

TEST_CASE("path chooser: tries go round the paths, every first try before any second", "[api][chooser]") {
    Chooser c;
    const double times[3] = {500, 200, 900};
    int order[6];
    for (int &p : order) p = step(c, [&](int q) { return times[q]; }, all);
    const int expected[6] = {0, 1, 2, 0, 1, 2};
    for (int i = 0; i < 6; ++i) CHECK(order[i] == expected[i]);
    // A path that cannot serve the size is left out of the round.
    Chooser d;
    auto no_gpu = [](int p) { return p != 1; };
    int first[4];
    for (int &p : first) p = step(d, [&](int q) { return times[q]; }, no_gpu);
    CHECK(first[0] == 0);
    CHECK(first[1] == 2);
    CHECK(first[2] == 0);
    CHECK(first[3] == 2);
}

TEST_CASE("path chooser: rechecks come after 4, 8 and 16 dots, then every kRecheckEvery", "[api][chooser]") {
    CHECK(Chooser::recheck_at(4));
    CHECK(Chooser::recheck_at(8));
    CHECK(Chooser::recheck_at(16));
    CHECK_FALSE(Chooser::recheck_at(12));
    CHECK_FALSE(Chooser::recheck_at(2));
    CHECK(Chooser::recheck_at(Chooser::kRecheckEvery));
    CHECK(Chooser::recheck_at(3 * Chooser::kRecheckEvery));
    CHECK_FALSE(Chooser::recheck_at(Chooser::kRecheckEvery + 16));
}

TEST_CASE("path chooser: a path that cannot serve the size is never chosen", "[api][chooser]") {
    Chooser c;
    auto no_split = [](int p) { return p != 2; };
    for (int i = 0; i < 200; ++i) CHECK(step(c, [](int p) { return p == 2 ? 1.0 : 100.0 + p; }, no_split) != 2);
}

TEST_CASE("path chooser: noise in a path's first tries does not hold the choice on a slower one", "[api][chooser]") {
    Chooser c;
    // Path 0 really takes 230 us, but both of its tries met a burst of noise (2000 us); path 1 takes
    // 690 us. One recheck of path 0 must be enough to move the choice to it, and the early rechecks
    // (after 4, 8 and 16 dots, visiting the other paths in turn) reach it within 16 dots.
    bool noisy = true;
    auto time_of = [&](int p) { return p == 0 ? (noisy ? 2000.0 : 230.0) : p == 1 ? 690.0 : 5000.0; };
    for (int i = 0; i < 6; ++i) step(c, time_of, all);
    noisy = false;
    int calls = 0;
    while (step(c, time_of, all) != 0 && ++calls < 16) {
    }
    REQUIRE(calls < 16);
    // From that one recheck on, path 0 is taken on every dot but the rechecks of the others.
    const int window = 2 * static_cast<int>(Chooser::kRecheckEvery);
    int on_zero = 0;
    for (int i = 0; i < window; ++i) on_zero += step(c, time_of, all) == 0;
    CHECK(on_zero >= window - 4);  // the rechecks: at most two early ones (8th, 16th dot) and two of every kRecheckEvery
}

TEST_CASE("path chooser: a path that becomes slower loses the choice within a few dots", "[api][chooser]") {
    Chooser c;
    bool slow = false;
    auto time_of = [&](int p) { return p == 0 ? (slow ? 2000.0 : 200.0) : p == 1 ? 600.0 : 5000.0; };
    for (int i = 0; i < 20; ++i) step(c, time_of, all);
    REQUIRE(c.choose(kN, all) == 0);
    slow = true;
    int on_zero = 0;
    for (int i = 0; i < 10; ++i) on_zero += step(c, time_of, all) == 0;
    CHECK(on_zero <= 3);  // 200 -> 650 after one slow dot at weight 0.25: above 600, so path 1 is next
}

TEST_CASE("path chooser: retry times every path afresh, after a change that made all times stale", "[api][chooser]") {
    Chooser c;
    // Before: path 1 is fastest (200 us against 500 and 900). After the change path 0 takes 50 us, which
    // its estimate of 500 would hide until a recheck reached it; a retry tries every path at once.
    double times[3] = {500, 200, 900};
    auto time_of = [&](int p) { return times[p]; };
    for (int i = 0; i < 10; ++i) step(c, time_of, all);
    REQUIRE(c.choose(kN, all) == 1);
    REQUIRE(c.settled(kN, all));
    times[0] = 50;
    c.retry(kN);
    CHECK_FALSE(c.settled(kN, all));
    int order[6];
    for (int &p : order) p = step(c, time_of, all);
    const int expected[6] = {0, 1, 2, 0, 1, 2};
    for (int i = 0; i < 6; ++i) CHECK(order[i] == expected[i]);
    CHECK(c.settled(kN, all));
    CHECK(c.choose(kN, all) == 0);
    CHECK(c.best_us(kN) == 50);
    // Other size classes keep their times.
    Chooser d;
    for (int i = 0; i < 10; ++i) {
        const int p = d.choose(kN / 4, all);
        d.record(kN / 4, p, times[p], all);
    }
    d.retry(kN);
    CHECK(d.settled(kN / 4, all));
    CHECK(d.best_us(kN / 4) == 50);
}

TEST_CASE("path chooser: estimates are confirmed after the tries and kConfirmAfter chosen dots", "[api][chooser]") {
    Chooser c;
    const double times[3] = {500, 200, 900};
    auto time_of = [&](int p) { return times[p]; };
    for (int i = 0; i < 6; ++i) step(c, time_of, all);  // the tries
    CHECK(c.settled(kN, all));
    for (unsigned i = 0; i < Chooser::kConfirmAfter; ++i) {
        CHECK_FALSE(c.confirmed(kN, all));
        step(c, time_of, all);
    }
    CHECK(c.confirmed(kN, all));
    c.retry(kN);  // a retry starts over
    CHECK_FALSE(c.confirmed(kN, all));
}
