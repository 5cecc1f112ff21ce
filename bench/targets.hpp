// targets.hpp - the performance targets ("fast at every size"; docs/PERFORMANCE.md lists them),
// evaluated on one run's rows, and the verdict lines every benchmark program prints (cudot-bench: T1..T8,
// cudot-bench-host: T3, cudot-bench-multigpu: M1..M4).
#pragma once

#include <cstddef>
#include <cstdio>
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
    // Set when the machine cannot answer the question ("not applicable: 1 GPU"): the verdict then says
    // so, whatever the value, rather than passing a target that was not really put to the test.
    std::string inapplicable;

    // Folds one observation in, keeping the worst.
    void see(double v, const std::string &where);
    // "met", "MISSED", "reported", "not run" or the inapplicable text.
    const char *verdict() const;
};

Target at_least(std::string name, std::string measure, double goal);
Target at_most(std::string name, std::string measure, double goal);
// A figure to read: the largest value folded in is kept and printed without a goal.
Target reported(std::string name, std::string measure);

// "2^20 fresh": where an observation was made (n a power of two; `what` a scenario, strategy, ...).
std::string where(std::size_t n, const std::string &what);

// The name of the HOST rows that T3 reads: a HOST context timed in the same rounds as OpenBLAS's
// one-thread rows (cudot-bench's T3 block, and every row of cudot-bench-host). Both programs and the
// verdicts use this one name (a row under any other name leaves the verdicts "not run").
constexpr const char *kT3HostRow = "host-t3";

// Target 3 on the rows of one dtype ("f32" or "f64"), every n <= 2^16 and every scenario in which both
// rows of a ratio ran: HOST f32 <= 0.8 x OpenBLAS dsdot on one thread (the same arithmetic: products
// and sum in double), HOST f64 <= 2.5 x ddot on one thread (Dot2 does about four times ddot's
// floating-point work), and, as information beside them, HOST f32 against OpenBLAS's float sdot and
// dsdot against sdot. Rows: kT3HostRow (above), "openblas-1t" (sdot or ddot), "openblas-dsdot-1t" (f32).
std::vector<Target> t3_targets(const std::vector<Row> &rows, const std::string &dtype);

// Every target of cudot-bench for f32 and f64 (T7 once), in order; targets without rows are kept
// with measured = false so that the summary says what was not run. t1: target 1's own block.
std::vector<Target> evaluate_targets(const std::vector<Row> &rows, const std::vector<T1Row> &t1,
                                     const std::vector<ScalingRun> &scaling, const Ceilings &c);

void print_targets(const std::vector<Target> &targets, const char *title = "target");
// The targets as the elements of a JSON array (the caller writes the brackets around them).
void json_targets(std::FILE *f, const std::vector<Target> &targets);

}  // namespace bench
