// isolation.hpp - what keeps the test cases of one program independent of each other, so that a whole
// run of the program (one process) passes exactly when every case run alone (CTest: one process each)
// passes:
//  - guards that set a piece of process state for a scope and give back what was there when the scope
//    ends, however it ends (a failed REQUIRE throws out of the middle of a case): environment variables
//    here, the test knobs in knobs.hpp, the current GPU in current_device.hpp;
//  - the check after every case (isolation.cpp) that fails a case which left the environment, the
//    floating-point control register, the current GPU or a process-wide test knob changed, and then puts
//    back what it can (all but the knobs) so that later cases run as they would alone; it also fails a
//    case in which no assertion ran, as such a case cannot fail;
//  - TEST_SKIP, for a case that cannot check anything on this machine.
#pragma once

#include <sstream>
#include <string>

namespace test {

// Turns the check after every case on for this program's Catch2 session; call it before running the
// session (main_cpu.cpp, main_gpu.cpp). current_device: also the calling thread's current CUDA device
// (programs that use CUDA only; elsewhere asking would start CUDA where a case must find it unstarted).
void check_after_every_case(bool current_device);

// Records that the running test case skips: what it needs is missing here (`why` says what). Use
// TEST_SKIP, which also ends the case.
void skip_case(const std::string &why);

// Sets environment variable `name` to `value` for the guard's scope (nullptr: unset), and gives back the
// value it had (or its absence) when the scope ends.
class EnvVar {
   public:
    EnvVar(const char *name, const char *value);
    ~EnvVar();
    EnvVar(const EnvVar &) = delete;
    EnvVar &operator=(const EnvVar &) = delete;

   private:
    std::string name_, old_;
    bool had_ = false;
};

}  // namespace test

// Ends the running test case as skipped, with a reason (streamed, as INFO takes it): nothing it checks can
// run on this machine. Catch2 v2 has no skip of its own, so the case returns at once, and the check after
// it prints "SKIPPED: <reason> (test case: <name>)" (CTest's SKIP_REGULAR_EXPRESSION then reports the
// case as skipped; scripts/gpu-check.sh accepts "SKIPPED: needs two GPUs" on a machine with one) and,
// at the end of a whole run, how many cases skipped (Catch2's own totals count them as passed). Only at
// the start of a case, before it checks anything: a case that already failed is reported as failed.
#define TEST_SKIP(why)                              \
    do {                                            \
        std::ostringstream test_skip_reason_;       \
        test_skip_reason_ << why;                   \
        ::test::skip_case(test_skip_reason_.str()); \
        return;                                     \
    } while (false)
