// measure.hpp - timing helpers shared by the benchmark's parts: wall-clock samples and their quantiles.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <random>
#include <thread>
#include <vector>

namespace bench {

struct Stats {
    double median_us = 0, p10_us = 0, p90_us = 0;
    int samples = 0;
};

inline double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline Stats summarize(std::vector<double> t) {
    Stats s;
    if (t.empty()) return s;
    std::sort(t.begin(), t.end());
    auto at = [&](double q) { return t[static_cast<std::size_t>(q * (t.size() - 1) + 0.5)]; };
    s.median_us = at(0.5);
    s.p10_us = at(0.1);
    s.p90_us = at(0.9);
    s.samples = static_cast<int>(t.size());
    return s;
}

// Runs prepare() (untimed) then body() (timed), warmup + reps times; returns the timed quantiles.
// body returns false to abort (the failure is the caller's to report).
inline Stats time_calls(int warmup, int reps, const std::function<void(int)> &prepare,
                        const std::function<bool()> &body, bool *ok = nullptr) {
    std::vector<double> t;
    t.reserve(reps);
    for (int i = 0; i < warmup + reps; ++i) {
        if (prepare) prepare(i);
        double t0 = now_us();
        bool good = body();
        double dt = now_us() - t0;
        if (!good) {
            if (ok) *ok = false;
            return summarize(t);
        }
        if (i >= warmup) t.push_back(dt);
    }
    if (ok) *ok = true;
    return summarize(t);
}

// One of several calls timed in turn by time_interleaved.
struct Contender {
    std::function<void(int)> prepare;  // untimed, before each call (null: inputs left as they are)
    std::function<bool()> call;        // timed; false stops this contender
    std::vector<double> samples = {};  // the timed calls after warm-up, in microseconds
    bool ok = true;
};

// warmup + reps rounds; each round prepares and times every contender once, in order. Timed in turn,
// the contenders see the same minutes of a shared machine, so their ratio holds where their absolute
// times drift. prepare gets a number unique to the round and contender, so inputs shared by two
// contenders are rewritten between them. settle_us > 0: a pause before each contender's turn, so that
// worker threads the previous one left spinning (HOST's read and the library each have a pool, and
// OpenBLAS one more) have gone to sleep and do not share the cores with the next timed call.
// settle_busy: the calling thread spins through the pause instead of sleeping, so that its core is not
// idle when the call starts (a sleep of 2 ms lets it drop into a deep idle state, and waking it adds
// tens of microseconds to a GPU dot's launch and wait, whose rows then measure the wake-up).
// order: which contender goes when in a round. A call's time depends on what ran just before it (what
// the caches hold, how long the GPU or the CPU pool has been idle, what the driver is still doing for the
// previous call): in a fixed order a row always follows the same neighbour and carries that neighbour's
// effect in every sample, so two rows' ratio measures their places, not their speeds. Rotated (each
// round starts one contender later) changes who goes first but not who follows whom: contender k still
// follows k - 1 in all but one call per round. Shuffled: a new order every round (a fixed seed, so runs
// repeat it), so every contender follows each of the others about equally often.
enum class Order { kFixed, kRotated, kShuffled };
inline void time_interleaved(int warmup, int reps, std::vector<Contender> &contenders, int settle_us = 0,
                             bool settle_busy = false, Order order = Order::kFixed) {
    const int count = static_cast<int>(contenders.size());
    std::vector<int> place(count);
    std::mt19937 random(20261127u);
    for (int round = 0; round < warmup + reps; ++round) {
        for (int step = 0; step < count; ++step) place[step] = order == Order::kRotated ? (step + round) % count : step;
        if (order == Order::kShuffled) std::shuffle(place.begin(), place.end(), random);
        for (int step = 0; step < count; ++step) {
            const int k = place[step];
            Contender &c = contenders[k];
            if (!c.ok) continue;
            if (settle_us > 0 && settle_busy) {
                const double until = now_us() + settle_us;
                while (now_us() < until) {
                }
            } else if (settle_us > 0) {
                std::this_thread::sleep_for(std::chrono::microseconds(settle_us));
            }
            if (c.prepare) c.prepare(round * count + k);
            const double t0 = now_us();
            c.ok = c.call();
            const double dt = now_us() - t0;
            if (c.ok && round >= warmup) c.samples.push_back(dt);
        }
    }
}

// Fills [0, n) with fn(i) on several threads (untimed preparation of "fresh" inputs; measure.cpp).
void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)> &fn);

}  // namespace bench
