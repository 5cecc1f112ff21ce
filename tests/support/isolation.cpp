// isolation.cpp - the check after every test case (isolation.hpp): a Catch2 listener that notes, when a
// case starts, the process state a case could change and leave behind, and compares it after each run of
// the case (a case with sections runs once per leaf section). Each difference is a failed assertion of
// that case, naming what changed; then the state is put back as it was, so that the cases after it run
// as they would alone and only the case that leaked fails.
//
// Checked, on the thread that runs the cases: the environment, the floating-point control register, the
// current CUDA device (in programs that use CUDA) and the process-wide test knobs (those that are
// per-context end with their context). Knobs are only named: the testing unit says which are changed,
// not how to set each back; the guards of knobs.hpp do that inside the cases. A run of a case in which
// no assertion ran fails too, unless the case skipped (TEST_SKIP): it could not have failed.
#define CATCH_CONFIG_EXTERNAL_INTERFACES  // the listener's base class, in a file other than main()'s
#include <catch2/catch.hpp>

#include "isolation.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "caller_fp_mode.h"
#include "testing.hpp"
#if defined(CUDOT_TESTS_WITH_CUDA)
#include <cuda_runtime.h>
#endif

#if defined(_WIN32)
#include <stdlib.h>  // _environ, _putenv_s
#else
extern char **environ;
#endif

namespace test {

namespace {

bool g_check = false;           // check_after_every_case was called
bool g_check_device = false;    // ... and asked for the current CUDA device
std::string g_skip;             // the running case's TEST_SKIP reason ("" : it did not skip)

// ---- environment -----------------------------------------------------------------------------------

using Environment = std::map<std::string, std::string>;

Environment environment() {
    Environment env;
#if defined(_WIN32)
    char **entries = _environ;
#else
    char **entries = environ;
#endif
    for (char **p = entries; p && *p; ++p) {
        // Windows keeps a current directory per drive as variables named "=C:": a name may start with '='.
        const char *eq = (*p)[0] ? std::strchr(*p + 1, '=') : nullptr;
        if (eq) env[std::string(*p, static_cast<std::size_t>(eq - *p))] = eq + 1;
        else env[*p] = "";
    }
    return env;
}

void set_env(const std::string &name, const char *value) {
#if defined(_WIN32)
    _putenv_s(name.c_str(), value ? value : "");  // "" removes it: Windows has no empty variables
#else
    if (value) setenv(name.c_str(), value, 1);
    else unsetenv(name.c_str());
#endif
}

// "NAME=value (was unset)" and the like, for every variable that differs.
std::string env_changes(const Environment &before, const Environment &after) {
    std::string out;
    auto add = [&](const std::string &text) { out += (out.empty() ? "" : "; ") + text; };
    for (const auto &now : after) {
        const auto was = before.find(now.first);
        if (was == before.end()) add(now.first + "=" + now.second + " (was unset)");
        else if (was->second != now.second) add(now.first + "=" + now.second + " (was " + was->second + ")");
    }
    for (const auto &was : before)
        if (!after.count(was.first)) add(was.first + " unset (was " + was.second + ")");
    return out;
}

void restore_env(const Environment &before, const Environment &after) {
    for (const auto &now : after) {
        const auto was = before.find(now.first);
        if (was == before.end()) set_env(now.first, nullptr);
        else if (was->second != now.second) set_env(now.first, was->second.c_str());
    }
    for (const auto &was : before)
        if (!after.count(was.first)) set_env(was.first, was.second.c_str());
}

// ---- the rest of the state -------------------------------------------------------------------------

struct State {
    Environment env;
    std::uint64_t fp_control = 0;
    int device = -1;    // the current CUDA device (-1: not checked, or CUDA could not say)
    std::string knobs;  // the process-wide test knobs not at their defaults
};

int current_device() {
#if defined(CUDOT_TESTS_WITH_CUDA)
    int device = -1;
    if (g_check_device && cudaGetDevice(&device) == cudaSuccess) return device;
#endif
    return -1;
}

State state_now() {
    State s;
    s.env = environment();
#if CALLER_FP_MODE_AVAILABLE
    s.fp_control = caller_fp_control();
#endif
    s.device = current_device();
    s.knobs = cudot::testing::changed_knobs();
    return s;
}

// A failed assertion of the running case: Catch2 counts it, and so the case, as failed, and prints it
// under the case's name. The case is still the active one while the listener hears that a run of it
// ended, before Catch2 adds up its totals. An assertion may throw to abort the run (--abort): the run
// has ended already, so that is ignored.
void fail_case(const std::string &what, const std::string &sections) {
    try {
        FAIL_CHECK(what << (sections.empty() ? "" : " (in the run through section " + sections + ")"));
    } catch (...) {
    }
}

std::string hex(std::uint64_t v) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
    return text;
}

class CaseIsolation : public Catch::TestEventListenerBase {
   public:
    using TestEventListenerBase::TestEventListenerBase;

    void testCaseStarting(Catch::TestCaseInfo const &info) override {
        TestEventListenerBase::testCaseStarting(info);
        g_skip.clear();
        depth_ = 0;
        if (g_check) before_ = state_now();
    }

    void sectionStarting(Catch::SectionInfo const &info) override {
        TestEventListenerBase::sectionStarting(info);
        if (++depth_ == 1) path_.clear();
        else path_ += (path_.size() ? " / " : "") + info.name;
    }

    // The outermost section is the case itself: its end is the end of one run of the case.
    void sectionEnded(Catch::SectionStats const &stats) override {
        TestEventListenerBase::sectionEnded(stats);
        if (--depth_ != 0) return;
        // A run that checked nothing passes whatever the code under test did (short of a crash): a case
        // that has nothing to check on this machine says so with TEST_SKIP instead.
        if (stats.assertions.total() == 0 && g_skip.empty())
            fail_case("the case checked nothing: no assertion ran (TEST_SKIP says why a case cannot check here)",
                      path_);
        if (g_check) check_run();
    }

    void testCaseEnded(Catch::TestCaseStats const &stats) override {
        if (!g_skip.empty() && stats.totals.assertions.failed == 0) {
            stream << "SKIPPED: " << g_skip << " (test case: " << stats.testInfo.name << ")" << std::endl;
            skipped_.push_back(stats.testInfo.name);
        }
        g_skip.clear();
        TestEventListenerBase::testCaseEnded(stats);
    }

    void testRunEnded(Catch::TestRunStats const &stats) override {
        if (!skipped_.empty()) {
            stream << "test cases skipped: " << skipped_.size() << " of " << stats.totals.testCases.total()
                   << " (Catch2's totals below count them as passed):\n";
            for (const std::string &name : skipped_) stream << "  " << name << "\n";
            stream.flush();
        }
        TestEventListenerBase::testRunEnded(stats);
    }

   private:
    void check_run() {
        const State after = state_now();
        const std::string env = env_changes(before_.env, after.env);
        if (!env.empty()) {
            fail_case("the case left environment variables changed: " + env, path_);
            restore_env(before_.env, after.env);
        }
#if CALLER_FP_MODE_AVAILABLE
        if (after.fp_control != before_.fp_control) {
            fail_case("the case left the floating-point control register (" CALLER_FP_MODE_NAME ") at " +
                          hex(after.fp_control) + ", not " + hex(before_.fp_control),
                      path_);
            caller_fp_set_control(before_.fp_control);
        }
#endif
#if defined(CUDOT_TESTS_WITH_CUDA)
        if (after.device != before_.device) {
            fail_case("the case left CUDA device " + std::to_string(after.device) + " current, not " +
                          std::to_string(before_.device),
                      path_);
            if (before_.device >= 0) cudaSetDevice(before_.device);
        }
#endif
        if (after.knobs != before_.knobs) {
            auto named = [](const std::string &knobs) { return knobs.empty() ? std::string("none") : knobs; };
            fail_case("the case left test knobs changed (set them with the guards of knobs.hpp): not at their "
                      "defaults now: " + named(after.knobs) + "; before the case: " + named(before_.knobs),
                      path_);
        }
    }

    State before_;
    int depth_ = 0;
    std::string path_;  // the sections this run of the case went through ("" : none)
    std::vector<std::string> skipped_;
};

CATCH_REGISTER_LISTENER(CaseIsolation)

}  // namespace

void check_after_every_case(bool current_device) {
    g_check = true;
    g_check_device = current_device;
}

void skip_case(const std::string &why) { g_skip = why.empty() ? "(no reason given)" : why; }

EnvVar::EnvVar(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) {
        had_ = true;
        old_ = old;
    }
    set_env(name_, value);
}

EnvVar::~EnvVar() { set_env(name_, had_ ? old_.c_str() : nullptr); }

}  // namespace test
