// rows_call.hpp - cudot_dot_rows into host results as every rows test calls it: the call must succeed
// and write nothing past the batch.
#pragma once

#include <catch2/catch.hpp>

#include <vector>

#include "cudot.h"
#include "reference.hpp"

namespace test {

inline std::vector<double> dot_rows(const cudot_rows &r) {
    std::vector<double> out(r.count + 1, -7.0);  // one more: nothing is written past count
    const cudot_status s = cudot_dot_rows(&r, out.data());
    INFO(cudot_last_error(nullptr));
    REQUIRE(s == CUDOT_OK);
    CHECK(bits(out[r.count]) == bits(-7.0));
    out.pop_back();
    return out;
}

}  // namespace test
