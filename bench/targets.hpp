// targets.hpp - the targets of issue 14 ("fast at every size"), evaluated on one run's rows.
#pragma once

#include <string>
#include <vector>

#include "ceilings.hpp"
#include "rows.hpp"

namespace bench {

struct Target {
    enum class Goal { AtLeast, AtMost, Report };  // Report: a figure to read, no goal
    std::string name, measure;
    Goal kind = Goal::AtLeast;
    double goal = 0;
    double value = 0;        // the worst over what the target covers
    std::string worst_at;    // where that worst value was seen ("2^20 fresh")
    bool measured = false;   // false: none of its rows ran (no GPU, --only, --quick sizes)

    // Folds one observation in, keeping the worst.
    void see(double v, const std::string &where);
    const char *verdict() const;  // "met", "MISSED", "reported" or "not run"
};

// Every target of issue 14 for f32 and f64 (T7 once), in order; targets without rows are kept with
// measured = false so that the summary says what was not run.
std::vector<Target> evaluate_targets(const std::vector<Row> &rows, const std::vector<ScalingRun> &scaling,
                                     const Ceilings &c);

void print_targets(const std::vector<Target> &targets);

}  // namespace bench
