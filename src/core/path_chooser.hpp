// path_chooser.hpp - picks, per size class, the fastest of a few paths that give the same bits, from
// their measured times (AUTO: CPU, GPU or both; PINNED: copy the inputs or read them in place; HOST:
// the calling thread or the pool, in the band of sizes where either can win).
//
// Per size class (n's power of two) each path that can serve the size is tried kTriesEach times, in
// turn (every path's first try before any second, so that the one-time costs of a context's first dots
// cannot fall on both tries of one path; its best time is kept); then the
// fastest is taken, and one of the others runs again after 4, 8 and 16 dots and then every
// kRecheckEvery, so the choice follows a change of machine load or of how the caller uses its buffers,
// and an estimate left stale by its tries (a try that met a cold cache or a sleeping thread) is
// corrected within a few dots rather than after dozens.
//
// A path's estimate falls at once to a faster time and rises slowly toward slower ones. On a shared
// machine noise only ever adds time (another process, an interrupt, a page fault), so a path's fast
// times say what it can do; with a symmetric average, one burst of noise during a path's tries would
// keep it off for as long as its rechecks take to undo it. A path that has really become slower is the
// one being chosen, so its own dots raise its estimate within a few calls.
#pragma once

#include <algorithm>
#include <cstddef>

namespace cudot {

template <int Paths> class PathChooser {
   public:
    static constexpr unsigned kTriesEach = 2;
    static constexpr unsigned kRecheckEvery = 32;
    static constexpr unsigned kConfirmAfter = 8;
    static constexpr double kWeight = 0.25;  // of a new, slower time in the running estimate

    // The path for the next dot of n elements; usable(p) says whether path p can serve it.
    template <class Usable> int choose(std::size_t n, Usable usable) {
        Class &c = classes_[size_class(n)];
        int fewest = -1;  // the usable path with the fewest tries, while any lacks its tries
        for (int p = 0; p < Paths; ++p)
            if (usable(p) && c.tries[p] < kTriesEach && (fewest < 0 || c.tries[p] < c.tries[fewest])) fewest = p;
        if (fewest >= 0) return fewest;
        ++c.calls;
        if (recheck_at(c.calls)) {
            const unsigned turn = c.rechecks++;  // the others in turn
            for (unsigned k = 0; k < Paths; ++k) {
                const int p = static_cast<int>((turn + k) % Paths);
                if (p != c.best && usable(p)) return p;
            }
        }
        return c.best;
    }

    // Records that path p took `us` microseconds for a dot of n elements.
    template <class Usable> void record(std::size_t n, int p, double us, Usable usable) {
        Class &c = classes_[size_class(n)];
        if (c.tries[p] < kTriesEach) {
            c.us[p] = c.tries[p] == 0 ? us : std::min(c.us[p], us);
            ++c.tries[p];
        } else {
            c.us[p] = us < c.us[p] ? us : c.us[p] + kWeight * (us - c.us[p]);
        }
        int best = -1;
        for (int q = 0; q < Paths; ++q)
            if (usable(q) && c.tries[q] > 0 && (best < 0 || c.us[q] < c.us[best])) best = q;
        if (best >= 0) c.best = best;
    }

    // Whether every usable path has had its tries for this size, and the chosen path's estimate (us).
    template <class Usable> bool settled(std::size_t n, Usable usable) const {
        const Class &c = classes_[size_class(n)];
        for (int p = 0; p < Paths; ++p)
            if (usable(p) && c.tries[p] < kTriesEach) return false;
        return true;
    }
    // Forgets the times of n's size class: each usable path is tried afresh. For a change in how the
    // caller uses its inputs that makes every time so far stale at once (AUTO: inputs that stop changing
    // are read from cache by the CPU, while its times of fresh ones were of memory).
    void retry(std::size_t n) { classes_[size_class(n)] = Class{}; }
    // Whether the size class's estimates can carry a decision that is dear to undo (AUTO's move into GPU
    // memory): its tries and kConfirmAfter chosen dots since, so that the early rechecks (after 4 and 8
    // dots) have run each other path again. A try may be the first read of inputs that are not in the
    // CPU's caches yet, and where a path is itself a choice (the CPU road's thread or pool) one try of
    // each inner path is all the outer tries give.
    template <class Usable> bool confirmed(std::size_t n, Usable usable) const {
        return settled(n, usable) && classes_[size_class(n)].calls >= kConfirmAfter;
    }
    double best_us(std::size_t n) const { return classes_[size_class(n)].us[classes_[size_class(n)].best]; }
    // Path p's estimate for n's size class (0: not tried yet).
    double estimate_us(std::size_t n, int p) const { return classes_[size_class(n)].us[p]; }

    // Whether the calls-th dot after the tries reruns another path: the 4th, 8th, 16th, then every
    // kRecheckEvery-th.
    static bool recheck_at(unsigned calls) {
        if (calls < kRecheckEvery) return calls >= 4 && (calls & (calls - 1)) == 0;
        return calls % kRecheckEvery == 0;
    }

    static int size_class(std::size_t n) {
        int k = 0;
        while (n >>= 1) ++k;
        return k;
    }

   private:
    struct Class {
        double us[Paths] = {};
        unsigned tries[Paths] = {};
        unsigned calls = 0, rechecks = 0;
        int best = 0;
    };
    Class classes_[64];
};

}  // namespace cudot
