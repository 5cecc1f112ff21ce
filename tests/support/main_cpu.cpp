// main_cpu.cpp - main() of the CPU test programs, with Catch2's implementation. Every case is checked
// for process state it leaves changed (isolation.hpp): a whole run must pass as each case alone does.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "isolation.hpp"

int main(int argc, char **argv) {
    test::check_after_every_case(false);  // no CUDA here: some cases need it unstarted
    return Catch::Session().run(argc, argv);
}
